#!/usr/bin/env python3
"""``make deploy-local``: deploy the default app with the real cdk CLI into a local endpoint.

No AWS account needed. The loop:

1. synthesize the app once into a temporary cloud assembly (``cdk synth``);
2. start moto's server (``ThreadedMotoServer``) on 127.0.0.1, on a free port;
3. ``cdk bootstrap aws://<account moto reports>/<region>``;
4. register the CloudFormation test doubles (tests/cfn_doubles: handlers moto 5.2.5 lacks
   or gets wrong; they call moto's own service backends);
5. ``cdk deploy --method=direct`` and write ``cdk-outputs.json``;
6. check that every resource of the template exists in the stack (moto skips types it
   cannot handle and still says CREATE_COMPLETE);
7. print ``smddp-infra job-config --format boto3`` for the outputs file;
8. the update guard, end to end: grow the cluster (4 -> 8 x p4d at 200 MB/s per GPU) and run
   ``smddp-infra guard --deployed-stack`` as ``make deploy`` does: refused (the calculator's
   new PERSISTENT_2 would be a new, empty file system); pin ``smddp:deploymentType=SCRATCH_2``
   and grow again: the guard passes and the update keeps the file system id (``--no-grow``
   skips this step);
9. the throughput loop (issue 20): read the alarms, topic and dashboard back (DescribeAlarms,
   GetTopicAttributes, GetDashboard), write three synthetic days of ``AWS/FSx`` datapoints with
   PutMetricData (I/O bound, right-sized, over-sized) and run ``smddp-infra observe`` on each
   window through the CLI; each verdict must be the expected one and each re-plan what
   ``smddp-infra size`` prints for the observed requirement (``--no-observe`` skips this step);
10. stop the endpoint (everything in it is gone: it lives in this process's memory).

Why these choices (details in docs/deploy-local.md):
- ``AWS_ENDPOINT_URL=http://localhost:<port>``: with the default synthesizer the CLI hands
  CloudFormation an S3 URL for the template; moto parses it correctly only for
  ``localhost``, not ``127.0.0.1``.
- ``--method=direct``: moto's change-set path leaves the stack's Outputs empty.
- ``--no-version-reporting``: no ``AWS::CDK::Metadata`` resource (moto has no handler for
  it; the Makefile passes the same flag to real deployments).

The functions are reused by tests/test_deploy_local.py, so the test proves this loop.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CDK = ROOT / "node_modules" / ".bin" / "cdk"
CDK_FLAGS = ("--no-notices", "--no-version-reporting", "--ci")
#: Each CLI call gets this long before it is killed: a local loop must never hang.
CLI_TIMEOUT_S = 300
#: Dummy credentials: moto accepts any; the CLI and boto3 need something to sign with.
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


class LocalDeployError(RuntimeError):
    """A step of the local loop failed; the message names the step and carries the CLI output."""


@dataclass
class CliRun:
    args: list[str]
    returncode: int
    output: str
    seconds: float


@dataclass
class LocalDeployment:
    """What one local deploy produced, and what it took."""

    endpoint_url: str
    account: str
    region: str
    stack_name: str
    assembly_dir: Path
    template: dict[str, Any]
    outputs_file: Path
    outputs: dict[str, str]
    doubles: dict[str, Any]
    seconds: dict[str, float] = field(default_factory=dict)
    runs: list[CliRun] = field(default_factory=list)


def _on_path_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(ROOT / ".venv" / "bin"), str(ROOT / "node_modules" / ".bin"), env.get("PATH", "")])
    return env


def cli_env(endpoint_url: str, region: str) -> dict[str, str]:
    """The environment for the cdk CLI and boto3: the local endpoint, dummy credentials only.

    Profiles, session tokens and other endpoint settings of the caller are removed so that
    nothing can reach a real account by accident.
    """
    env = {k: v for k, v in _on_path_env().items() if not k.startswith("AWS_")}
    env.update(DUMMY_CREDENTIALS)
    env.update(
        AWS_ENDPOINT_URL=endpoint_url,
        AWS_DEFAULT_REGION=region,
        AWS_REGION=region,
        AWS_EC2_METADATA_DISABLED="true",
        CDK_DISABLE_CLI_TELEMETRY="true",
        JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION="1",
    )
    return env


def run_cdk(args: list[str], *, env: dict[str, str], echo: Callable[[str], None] | None = None,
            timeout: float = CLI_TIMEOUT_S) -> CliRun:
    """Run the pinned cdk CLI; raise LocalDeployError on failure or timeout."""
    cmd = [str(CDK), *args]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LocalDeployError(f"`cdk {' '.join(args)}` did not finish within {timeout:.0f} s") from exc
    run = CliRun(args=args, returncode=proc.returncode, output=proc.stdout, seconds=time.monotonic() - started)
    if echo is not None:
        echo(proc.stdout)
    return run


def _checked(run: CliRun, step: str) -> CliRun:
    if run.returncode != 0:
        raise LocalDeployError(f"{step} failed (exit {run.returncode}):\n{run.output}")
    return run


def start_endpoint() -> tuple[Any, str]:
    """moto's server on 127.0.0.1, on a port the OS picks; returns (server, endpoint URL)."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _host, port = server.get_host_and_port()
    return server, f"http://localhost:{port}"


@functools.lru_cache(maxsize=None)
def _session(region: str) -> Any:
    """One boto3 Session per region for the whole run: each new Session parsed the services' JSON
    models again (megabytes for EC2 and CloudFormation)."""
    import boto3

    return boto3.session.Session(
        aws_access_key_id=DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region_name=region,
    )


def boto3_client(service: str, endpoint_url: str, region: str) -> Any:
    """A boto3 client for the local endpoint, with short timeouts and few retries."""
    from botocore.config import Config

    return _session(region).client(service, endpoint_url=endpoint_url,
                                   config=Config(connect_timeout=5, read_timeout=60, retries={"max_attempts": 2, "mode": "standard"}))


def context_args(context: dict[str, Any] | None) -> list[str]:
    """``{"smddp:instanceCount": 8}`` -> ``["-c", "smddp:instanceCount=8"]`` (booleans as true/false)."""
    args: list[str] = []
    for key, value in (context or {}).items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        args += ["-c", f"{key}={text}"]
    return args


def synthesize(assembly_dir: Path, *, echo: Callable[[str], None] | None = None,
               context: dict[str, Any] | None = None) -> tuple[CliRun, str, str, dict[str, Any]]:
    """``cdk synth`` the default app into ``assembly_dir``: (run, stack name, region, template)."""
    run = _checked(run_cdk(["synth", *CDK_FLAGS, "--quiet", "--output", str(assembly_dir), *context_args(context)],
                           env=_on_path_env(), echo=echo), "cdk synth")
    manifest = json.loads((assembly_dir / "manifest.json").read_text())
    stacks = {name: a for name, a in manifest["artifacts"].items() if a["type"] == "aws:cloudformation:stack"}
    if len(stacks) != 1:
        raise LocalDeployError(f"expected one stack in the default app, found {sorted(stacks)}")
    (artifact_id, artifact), = stacks.items()
    region = artifact["environment"].rsplit("/", 1)[-1]
    if region == "unknown-region":
        raise LocalDeployError("the stack has no region; set smddp:region in cdk.json")
    template_file = artifact["properties"]["templateFile"]
    template = json.loads((assembly_dir / template_file).read_text())
    stack_name = artifact["properties"].get("stackName", artifact_id)
    return run, stack_name, region, template


def deploy(assembly_dir: Path, outputs_file: Path, *, endpoint_url: str,
           echo: Callable[[str], None] | None = None) -> LocalDeployment:
    """Synthesize, bootstrap, register the doubles and deploy; the endpoint must be running."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    import cfn_doubles

    seconds: dict[str, float] = {}
    synth_run, stack_name, region, template = synthesize(assembly_dir, echo=echo)
    seconds["synth"] = synth_run.seconds
    env = cli_env(endpoint_url, region)
    account = boto3_client("sts", endpoint_url, region).get_caller_identity()["Account"]

    boot_run = _checked(run_cdk(["bootstrap", f"aws://{account}/{region}", *CDK_FLAGS], env=env, echo=echo),
                        "cdk bootstrap")
    seconds["bootstrap"] = boot_run.seconds
    # After bootstrap, not before: see tests/cfn_doubles/__init__.py.
    doubles = cfn_doubles.register()

    deploy_run = _checked(run_cdk(["deploy", "--app", str(assembly_dir), *CDK_FLAGS, "--method=direct",
                                   "--require-approval", "never", "--outputs-file", str(outputs_file), stack_name],
                                  env=env, echo=echo), "cdk deploy")
    seconds["deploy"] = deploy_run.seconds
    outputs = json.loads(outputs_file.read_text()).get(stack_name, {})
    return LocalDeployment(endpoint_url=endpoint_url, account=account, region=region, stack_name=stack_name,
                           assembly_dir=assembly_dir, template=template, outputs_file=outputs_file, outputs=outputs,
                           doubles=doubles, seconds=seconds, runs=[synth_run, boot_run, deploy_run])


def guard(new: Path, deployment: LocalDeployment) -> subprocess.CompletedProcess[str]:
    """What ``make deploy`` runs before ``cdk deploy``: ``smddp-infra guard --deployed-stack``.

    The deployed template comes from the local endpoint's GetTemplate (boto3 honours
    ``AWS_ENDPOINT_URL``), exactly as it comes from CloudFormation with a user's credentials.
    """
    return subprocess.run([sys.executable, "-m", "smddp_infra.cli", "guard", "--deployed-stack", deployment.stack_name,
                           "--region", deployment.region, str(new)],
                          cwd=ROOT, env=cli_env(deployment.endpoint_url, deployment.region), capture_output=True,
                          text=True, timeout=120, check=False)


def update(deployment: LocalDeployment, assembly_dir: Path, *, echo: Callable[[str], None] | None = None) -> CliRun:
    """``cdk deploy`` of another synthesized assembly onto the deployed stack (an UpdateStack)."""
    env = cli_env(deployment.endpoint_url, deployment.region)
    return _checked(run_cdk(["deploy", "--app", str(assembly_dir), *CDK_FLAGS, "--method=direct",
                             "--require-approval", "never", "--outputs-file", str(deployment.outputs_file),
                             deployment.stack_name], env=env, echo=echo), "cdk deploy (update)")


def physical_ids(deployment: LocalDeployment) -> dict[str, str]:
    """Logical id -> physical id of every resource the stack holds now."""
    cfn = boto3_client("cloudformation", deployment.endpoint_url, deployment.region)
    return {r["LogicalResourceId"]: r.get("PhysicalResourceId", "")
            for r in cfn.describe_stack_resources(StackName=deployment.stack_name)["StackResources"]}


#: The growth the guard must stop (issue 13): 4 -> 8 x p4d at 200 MB/s per GPU makes the
#: calculator switch SCRATCH_2 -> PERSISTENT_2, a new empty file system.
GROW = {"smddp:instanceCount": 8, "smddp:readMBpsPerGpu": 200}
#: The same growth with the deployed type pinned: the file system grows in place.
PIN = {"smddp:deploymentType": "SCRATCH_2"}


def grow_scenario(deployment: LocalDeployment, workdir: Path, *, echo: Callable[[str], None] | None = None) -> list[str]:
    """Deploy, grow (refused), pin and grow (deployed in place); returns the problems found ([] = as designed)."""
    say = echo or (lambda text: None)
    problems: list[str] = []
    before = physical_ids(deployment)
    fs_logical = next(lid for lid, r in deployment.template["Resources"].items() if r["Type"] == "AWS::FSx::FileSystem")

    synthesize(workdir / "grown", context=GROW)
    say(f"$ smddp-infra guard --deployed-stack {deployment.stack_name} <cdk.out with {' '.join(context_args(GROW))}>")
    refused = guard(workdir / "grown", deployment)
    say(refused.stdout.rstrip() + refused.stderr.rstrip())
    if refused.returncode != 1:
        problems.append(f"the guard let the unpinned growth through (exit {refused.returncode})")

    synthesize(workdir / "pinned", context={**GROW, **PIN})
    say(f"$ smddp-infra guard --deployed-stack {deployment.stack_name} <cdk.out with {' '.join(context_args({**GROW, **PIN}))}>")
    passed = guard(workdir / "pinned", deployment)
    say(passed.stdout.rstrip() + passed.stderr.rstrip())
    if passed.returncode != 0:
        problems.append(f"the guard refused the pinned growth (exit {passed.returncode})")
        return problems
    update(deployment, workdir / "pinned", echo=echo)
    after = physical_ids(deployment)
    fsx = boto3_client("fsx", deployment.endpoint_url, deployment.region)
    (fs,) = fsx.describe_file_systems(FileSystemIds=[after[fs_logical]])["FileSystems"]
    if after[fs_logical] != before[fs_logical]:
        problems.append(f"the file system was replaced: {before[fs_logical]} -> {after[fs_logical]}")
    say(f"Pinned growth deployed: file system {after[fs_logical]} kept, StorageCapacity now {fs['StorageCapacity']:,} GiB")
    return problems


#: Synthetic scenarios: share of the file system's baseline the jobs read (p95), and the verdict
#: ``smddp-infra observe`` must give. Each gets its own 6-hour window, days apart.
SCENARIOS = {"I/O bound": (0.97, "under-sized"), "right": (0.5, "right-sized"), "over-sized": (0.1, "over-sized")}
SCENARIO_PERIOD_S = 300
SCENARIO_HOURS = 6


def document_of(deployment: LocalDeployment) -> dict[str, Any]:
    """The network's job document as deployed (the TrainingJobConfig output)."""
    return dict(json.loads(deployment.outputs["TrainingJobConfig"]))


def scenario_window(index: int, *, now: datetime | None = None) -> tuple[datetime, datetime]:
    """The ``index``-th scenario's window: 6 hours, starting ``3 - index`` days before today 00:00 UTC."""
    today = (now or datetime.now(timezone.utc)).replace(hour=0, minute=0, second=0, microsecond=0)
    start = today - timedelta(days=3 - index)
    return start, start + timedelta(hours=SCENARIO_HOURS)


def put_scenario(deployment: LocalDeployment, share: float, start: datetime) -> int:
    """PutMetricData: read at ``share`` of the deployed baseline every period of the window, and a
    free capacity that falls by 1 GiB per period. Returns the number of periods written."""
    doc = document_of(deployment)
    baseline = float(doc["sizing"]["baselineThroughputMBps"])
    capacity = float(doc["sizing"]["storageCapacityGiB"])
    dims = [{"Name": "FileSystemId", "Value": doc["fileSystem"]["id"]}]
    periods = SCENARIO_HOURS * 3600 // SCENARIO_PERIOD_S
    data: list[dict[str, Any]] = []
    for i in range(periods):
        at = start + timedelta(seconds=i * SCENARIO_PERIOD_S)
        data.append({"MetricName": "DataReadBytes", "Dimensions": dims, "Timestamp": at, "Unit": "Bytes",
                     "Value": share * baseline * 1e6 * SCENARIO_PERIOD_S})
        data.append({"MetricName": "DataWriteBytes", "Dimensions": dims, "Timestamp": at, "Unit": "Bytes",
                     "Value": 0.05 * baseline * 1e6 * SCENARIO_PERIOD_S})
        data.append({"MetricName": "FreeDataStorageCapacity", "Dimensions": dims, "Timestamp": at, "Unit": "Bytes",
                     "Value": (0.6 * capacity - i) * 2**30})
    cloudwatch = boto3_client("cloudwatch", deployment.endpoint_url, deployment.region)
    for first in range(0, len(data), 500):
        cloudwatch.put_metric_data(Namespace="AWS/FSx", MetricData=data[first:first + 500])
    return periods


def cli(deployment: LocalDeployment, *args: str) -> subprocess.CompletedProcess[str]:
    """``smddp-infra ARGS`` against the local endpoint (same interpreter)."""
    return subprocess.run([sys.executable, "-m", "smddp_infra.cli", *args], cwd=ROOT,
                          env=cli_env(deployment.endpoint_url, deployment.region), capture_output=True, text=True,
                          timeout=120, check=False)


def observe(deployment: LocalDeployment, start: datetime, end: datetime, *, json_output: bool = True) -> subprocess.CompletedProcess[str]:
    return cli(deployment, "observe", "--outputs", str(deployment.outputs_file), "--since", start.isoformat(),
               "--until", end.isoformat(), *(["--json"] if json_output else []))


def read_back_monitoring(deployment: LocalDeployment, *, echo: Callable[[str], None] | None = None) -> list[str]:
    """DescribeAlarms, GetTopicAttributes and GetDashboard for what the document names; the problems found."""
    say = echo or (lambda text: None)
    monitoring = document_of(deployment).get("monitoring")
    if not monitoring:
        return ["the job document has no monitoring section (monitoring is on by default)"]
    problems: list[str] = []
    cloudwatch = boto3_client("cloudwatch", deployment.endpoint_url, deployment.region)
    names = [monitoring["throughputAlarm"], monitoring["capacityAlarm"]]
    found = cloudwatch.describe_alarms(AlarmNames=names)["MetricAlarms"]
    for alarm in found:
        say(f"  alarm {alarm['AlarmName']}: {alarm['ComparisonOperator']} {alarm['Threshold']:,g} "
            f"({alarm.get('DatapointsToAlarm', alarm['EvaluationPeriods'])} of {alarm['EvaluationPeriods']}) -> "
            f"{', '.join(alarm['AlarmActions'])}")
    if sorted(a["AlarmName"] for a in found) != sorted(names):
        problems.append(f"DescribeAlarms returned {[a['AlarmName'] for a in found]}, expected {names}")
    attributes = boto3_client("sns", deployment.endpoint_url, deployment.region).get_topic_attributes(
        TopicArn=monitoring["alarmTopicArn"])["Attributes"]
    say(f"  topic {monitoring['alarmTopicArn']}: KmsMasterKeyId {attributes.get('KmsMasterKeyId') or '(none)'}")
    if not attributes.get("KmsMasterKeyId"):
        problems.append("the alarm topic is not encrypted")
    body = json.loads(cloudwatch.get_dashboard(DashboardName=monitoring["dashboard"])["DashboardBody"])
    say(f"  dashboard {monitoring['dashboard']}: " + "; ".join(str(w["properties"].get("title")) for w in body["widgets"]))
    return problems


def observe_scenarios(deployment: LocalDeployment, *, echo: Callable[[str], None] | None = None) -> list[str]:
    """Write each scenario, observe it through the CLI, compare with the expected verdict and
    with ``smddp-infra size``; returns the problems found ([] = as designed)."""
    say = echo or (lambda text: None)
    problems: list[str] = []
    for index, (name, (share, expected)) in enumerate(SCENARIOS.items()):
        start, end = scenario_window(index)
        put_scenario(deployment, share, start)
        say(f"$ smddp-infra observe --outputs {deployment.outputs_file.name} --since {start:%Y-%m-%dT%H:%M} "
            f"--until {end:%Y-%m-%dT%H:%M}    # {name}: reads at {share:.0%} of the baseline")
        text = observe(deployment, start, end, json_output=False)
        say(text.stdout.rstrip() + text.stderr.rstrip())
        result = observe(deployment, start, end)
        if result.returncode not in (0, 1) or not result.stdout.strip():
            problems.append(f"{name}: observe failed (exit {result.returncode}): {result.stderr.strip()}")
            continue
        report = json.loads(result.stdout)
        if report["verdict"] != expected:
            problems.append(f"{name}: verdict {report['verdict']!r}, expected {expected!r}")
        for alternative in report["alternatives"]:
            size = cli(deployment, "size", *alternative["command"][2:], "--json")
            if size.returncode != 0 or json.loads(size.stdout) != alternative["plan"]:
                problems.append(f"{name}: an alternative differs from `smddp-infra size {' '.join(alternative['command'][2:])}`")
    return problems


def missing_resources(deployment: LocalDeployment) -> dict[str, str]:
    """Logical id -> type for every template resource the stack does NOT hold (a silent skip)."""
    cfn = boto3_client("cloudformation", deployment.endpoint_url, deployment.region)
    present = {r.get("LogicalResourceId") for r in
               cfn.describe_stack_resources(StackName=deployment.stack_name)["StackResources"]}
    return {lid: r["Type"] for lid, r in deployment.template["Resources"].items() if lid not in present}


def destroy(deployment: LocalDeployment, *, echo: Callable[[str], None] | None = None) -> CliRun:
    """``cdk destroy --force``; returns the run WITHOUT raising (moto cannot delete a VPC stack)."""
    env = cli_env(deployment.endpoint_url, deployment.region)
    return run_cdk(["destroy", "--app", str(deployment.assembly_dir), *CDK_FLAGS, "--force", deployment.stack_name],
                   env=env, echo=echo)


def job_config(outputs_file: Path, fmt: str = "boto3") -> subprocess.CompletedProcess[str]:
    """``smddp-infra job-config`` for the outputs file (same interpreter, no network)."""
    return subprocess.run([sys.executable, "-m", "smddp_infra.cli", "job-config", "--outputs", str(outputs_file),
                           "--format", fmt], cwd=ROOT, env=_on_path_env(), capture_output=True, text=True,
                          timeout=120, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy_local", description=__doc__.split("\n\n")[0])
    parser.add_argument("--outputs-file", default="cdk-outputs.json", type=Path,
                        help="where to write the stack outputs (default: cdk-outputs.json)")
    parser.add_argument("--quiet", action="store_true", help="do not echo the cdk CLI's output")
    parser.add_argument("--no-observe", action="store_true",
                        help="skip the throughput loop (synthetic FSx metrics, smddp-infra observe on three scenarios)")
    parser.add_argument("--no-grow", action="store_true",
                        help="skip the update guard scenario (grow: refused; pin and grow: deployed in place)")
    args = parser.parse_args(argv)
    echo = None if args.quiet else (lambda text: print(text.rstrip(), flush=True))
    outputs_file = args.outputs_file if args.outputs_file.is_absolute() else Path.cwd() / args.outputs_file

    # moto warns about every type it skips, including the bootstrap stack's bucket policy;
    # this tool checks the project's stack for skipped resources itself (below).
    warnings.filterwarnings("ignore", message="Tried to parse", category=UserWarning)
    logging.getLogger("moto").setLevel(logging.ERROR)
    workdir = Path(tempfile.mkdtemp(prefix="smddp-deploy-local-"))
    server, endpoint_url = start_endpoint()
    print(f"Local endpoint (moto): {endpoint_url}", flush=True)
    try:
        deployment = deploy(workdir / "cdk.out", outputs_file, endpoint_url=endpoint_url, echo=echo)
        skipped = missing_resources(deployment)
        print(f"\nDeployed {deployment.stack_name}: {len(deployment.template['Resources'])} resources, "
              f"{len(skipped)} missing from the stack; CloudFormation doubles used for: "
              f"{', '.join(sorted(deployment.doubles))}")
        for logical_id, type_name in sorted(skipped.items()):
            print(f"  MISSING {logical_id} ({type_name}): the local endpoint skipped it", file=sys.stderr)
        print(f"Outputs written to {outputs_file} (ids of the LOCAL endpoint, gone when it stops)\n")
        if (ROOT / "smddp_infra" / "commands" / "job_config.py").exists():
            print(f"$ smddp-infra job-config --outputs {outputs_file.name} --format boto3")
            result = job_config(outputs_file)
            sys.stdout.write(result.stdout)
            sys.stderr.write(result.stderr)
            if result.returncode != 0:
                return result.returncode
        else:
            print(json.dumps(deployment.outputs, indent=2))
        observe_problems: list[str] = []
        if not args.no_observe:
            print("\nThroughput loop: synthetic AWS/FSx datapoints, then smddp-infra observe on each scenario", flush=True)
            started = time.monotonic()
            observe_problems = read_back_monitoring(deployment, echo=lambda text: print(text, flush=True))
            observe_problems += observe_scenarios(deployment, echo=lambda text: print(text, flush=True))
            deployment.seconds["observe"] = time.monotonic() - started
            for problem in observe_problems:
                print(f"  PROBLEM: {problem}", file=sys.stderr)
        grow_problems: list[str] = []
        if not args.no_grow:
            print("\nUpdate guard: grow the cluster, first unpinned (must be refused), then pinned (in place)", flush=True)
            started = time.monotonic()
            grow_problems = grow_scenario(deployment, workdir, echo=lambda text: print(text, flush=True))
            deployment.seconds["grow"] = time.monotonic() - started
            for problem in grow_problems:
                print(f"  PROBLEM: {problem}", file=sys.stderr)
        timings = ", ".join(f"{k} {v:.1f} s" for k, v in deployment.seconds.items())
        print(f"\nTimings: {timings}")
        return 1 if skipped or grow_problems or observe_problems else 0
    except LocalDeployError as exc:
        print(f"deploy-local: error: {exc}", file=sys.stderr)
        return 1
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        print("Local endpoint stopped.", flush=True)


if __name__ == "__main__":
    sys.exit(main())

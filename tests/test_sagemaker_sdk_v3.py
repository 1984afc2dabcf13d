"""The real SageMaker Python SDK v3 starts our jobs from `job-config --format v3`, offline.

SDK v3 (``sagemaker-train``'s ModelTrainer) owns the ``sagemaker`` import name that SDK v2 in
.venv also uses, and pulls in about 1 GB, so it lives in its own venv, .venv-sdkv3, built by
``make test`` from requirements-sdkv3.txt (like checkov's). ONE subprocess there
(tests/_sdkv3_harness.py) builds a ModelTrainer from every configuration's real CLI output,
with the real v3 classes, and calls ``.train(wait=False)``; every AWS call is answered in
botocore's ``before-send`` event. This module synthesizes the default app once (the session
fixture), hands the harness the execution role's real policy and trust policy, and asserts on
the CreateTrainingJob the SDK sent, the uploads it made and the role check it ran.

The role check: v3 simulates ``_get_smoke_test_actions("training")`` (read from the installed
SDK) with no ResourceArns and no context. The harness answers with tests/_iam_simulator.py over
the synthesized policy, so the SDK's own verdict is what passes or fails here; a control run
with the earlier, scoped policy shows the SDK refusing it. Two callers are modelled: one that
may simulate (CI, administrators) and one that may not (the SDK then only warns), because
ModelTrainer also stages code differently for the two (docs/security.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from _iam_simulator import ALLOWED, evaluate, resolve
from _jobconfig_helpers import CONFIG_IDS, OLDER_STACK_ID, PLAN_CONFIG_ID, channel_of, emitted
from _sagemaker_shape_walker import all_problems
from conftest import ROOT

from smddp_infra.jobconfig.render import v3_session
from smddp_infra.preflight import known_keys

SDKV3_PYTHON = ROOT / ".venv-sdkv3" / "bin" / "python"
HARNESS = Path(__file__).resolve().parent / "_sdkv3_harness.py"
REGIONS = {"default-p4d": "us-east-1", "p5-64-node": "us-west-2", "govcloud-older-stack": "us-gov-west-1",
           "two-stacks": "us-east-1", "individual-outputs": "eu-west-1", "training-plan": "us-east-1"}
SIMULATES, CANNOT_SIMULATE = "simulates", "cannot-simulate"
#: The same job, launched by a caller that may not call iam:SimulatePrincipalPolicy.
DEFAULT_UNSIMULATED = "default-p4d/" + CANNOT_SIMULATE
#: Control: the default job with the role policy this project shipped before SDK v3 was tested.
OLD_POLICY = "default-p4d/old-scoped-policy"
#: Control: the default job with a role that trusts another service, not SageMaker.
UNTRUSTED = "default-p4d/trust-not-sagemaker"
#: Control: the default job with the SDK's telemetry switch left on.
TELEMETRY_ON = "default-p4d/telemetry-on"
#: Control: the default job without the stopping_condition job-config emits (what users built
#: before it did): the SDK fills in its own default.
NO_STOPPING_CONDITION = "default-p4d/no-stopping-condition"
#: sagemaker-train 1.27.0, sagemaker/train/defaults.py: DEFAULT_MAX_RUNTIME_IN_SECONDS.
SDK_V3_DEFAULT_MAX_RUNTIME = 3600

#: The earlier role statements that SDK v3's check refuses (resource-scoped ENI actions, a
#: conditioned PutMetricData), as they were synthesized (account/region resolved).
OLD_SCOPED_STATEMENTS = [
    {"Sid": "DescribeNetwork", "Effect": "Allow", "Resource": "*",
     "Action": ["ec2:DescribeDhcpOptions", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups",
                "ec2:DescribeSubnets", "ec2:DescribeVpcs"]},
    {"Sid": "CreateJobNetworkInterfaces", "Effect": "Allow", "Action": "ec2:CreateNetworkInterface",
     "Resource": ["arn:aws:ec2:us-east-1:123456789012:network-interface/*",
                  "arn:aws:ec2:us-east-1:123456789012:subnet/subnet-0123456789abcdef0",
                  "arn:aws:ec2:us-east-1:123456789012:security-group/sg-0123456789abcdef0"]},
    {"Sid": "ManageJobNetworkInterfaces", "Effect": "Allow",
     "Action": ["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
                "ec2:DeleteNetworkInterfacePermission"],
     "Resource": "arn:aws:ec2:us-east-1:123456789012:network-interface/*"},
    {"Sid": "TrainingMetrics", "Effect": "Allow", "Action": "cloudwatch:PutMetricData", "Resource": "*",
     "Condition": {"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}}},
    {"Sid": "EcrAuth", "Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"},
]


def _bucket(uri: str) -> str:
    return uri.removeprefix("s3://").split("/", 1)[0]


def role_documents(default_app: Any, config_id: str) -> tuple[list[dict], dict, str]:
    """The default app's execution-role policy and trust policy, resolved for the deployment
    one outputs fixture describes (its partition, account, region and job bucket)."""
    cfg = emitted(config_id, "v3")
    region, account = REGIONS[config_id], cfg["role"].split(":")[4]
    partition = cfg["role"].split(":")[1]
    bucket = _bucket(cfg["checkpoint_config"]["s3_uri"])
    resources = default_app.json["Resources"]
    # the execution role's policy (the launch guardrail is the other managed policy, attached to nobody)
    (policy,) = [r for r in resources.values() if r["Type"] == "AWS::IAM::ManagedPolicy" and "Roles" in r["Properties"]]
    (role,) = [r for r in resources.values() if r["Type"] == "AWS::IAM::Role"]
    (bucket_id,) = [k for k, r in resources.items() if r["Type"] == "AWS::S3::Bucket" and "Checkpoints" in k]
    refs = {"AWS::Partition": partition, "AWS::AccountId": account, "AWS::Region": region,
            "AWS::URLSuffix": "amazonaws.com", bucket_id: bucket}
    arns = {bucket_id: f"arn:{partition}:s3:::{bucket}"}
    statements = resolve(policy["Properties"]["PolicyDocument"]["Statement"], refs=refs, arns=arns)
    trust = resolve(role["Properties"]["AssumeRolePolicyDocument"], refs=refs, arns=arns)
    return statements, trust, bucket


def _job(default_app: Any, config_id: str, caller: str, name: str, statements: Any = None) -> dict[str, Any]:
    policy, trust, bucket = role_documents(default_app, config_id)
    cfg = emitted(config_id, "v3")
    account = cfg["role"].split(":")[4]
    # the SDK's own default bucket exists too: an older stack's job (no session block) uses it
    return {"name": name, "region": REGIONS[config_id], "v3": cfg, "caller": caller,
            "policy": policy if statements is None else statements, "trust": trust,
            "buckets": [bucket, f"sagemaker-{REGIONS[config_id]}-{account}"]}


@pytest.fixture(scope="module")
def v3_run(default_app, tmp_path_factory) -> dict[str, Any]:
    """ONE run of the harness in .venv-sdkv3 over the whole matrix, plus the controls."""
    assert SDKV3_PYTHON.exists(), "SDK v3 is missing: run `make test` (it installs .venv-sdkv3)"
    work = tmp_path_factory.mktemp("sdkv3")
    source = work / "src"
    source.mkdir()
    (source / "train.py").write_text("import torch.distributed as dist\ndist.init_process_group()\n")
    jobs = [_job(default_app, c, SIMULATES, c) for c in CONFIG_IDS]
    jobs.append(_job(default_app, "default-p4d", CANNOT_SIMULATE, DEFAULT_UNSIMULATED))
    jobs.append(_job(default_app, "default-p4d", SIMULATES, OLD_POLICY, statements=OLD_SCOPED_STATEMENTS))
    jobs.append(dict(_job(default_app, "default-p4d", SIMULATES, TELEMETRY_ON), telemetry_on=True))
    untrusted = _job(default_app, "default-p4d", SIMULATES, UNTRUSTED)
    untrusted["trust"] = json.loads(json.dumps(untrusted["trust"]).replace("sagemaker.amazonaws.com", "ec2.amazonaws.com"))
    jobs.append(untrusted)
    unstopped = _job(default_app, "default-p4d", SIMULATES, NO_STOPPING_CONDITION)
    del unstopped["v3"]["stopping_condition"]
    jobs.append(unstopped)
    spec = work / "spec.json"
    spec.write_text(json.dumps({"source_dir": str(source), "jobs": jobs}))
    config = work / "sagemaker-config.yaml"
    config.write_text("SchemaVersion: '1.0'\nSageMaker:\n  PythonSDK:\n    Modules:\n      TelemetryOptOut: true\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "SAGEMAKER_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update({
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(work / "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(work / "no-aws-credentials"),
        # the SDK's defaults config (read at import): only ours, telemetry off
        "SAGEMAKER_ADMIN_CONFIG_OVERRIDE": str(config), "SAGEMAKER_USER_CONFIG_OVERRIDE": str(config),
    })  # SAGEMAKER_VALIDATE_ROLE is NOT set: the SDK's role check runs
    started = time.monotonic()
    result = subprocess.run([str(SDKV3_PYTHON), str(HARNESS), str(spec)], capture_output=True, text=True,
                            env=env, cwd=work, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    run: dict[str, Any] = json.loads(result.stdout)
    run["seconds"] = time.monotonic() - started
    return run


def _request(v3_run: dict[str, Any], name: str) -> dict[str, Any]:
    job = v3_run["jobs"][name]
    assert job["error"] is None, f"{name}: {job['error']}\n{job.get('traceback')}"
    (request,) = job["requests"]
    return request


def _channels(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["ChannelName"]: c for c in request["InputDataConfig"]}


# --- nothing left the machine -------------------------------------------------------------------

def test_the_harness_answered_every_call_and_nothing_reached_the_network(v3_run):
    assert v3_run["guard_live"], "the harness's socket guard did not catch its probe"
    quiet = {name: job for name, job in v3_run["jobs"].items() if name != TELEMETRY_ON}
    assert {name: job["blocked"] for name, job in quiet.items() if job["blocked"]} == {}
    assert {name: job["escaped"] for name, job in quiet.items() if job["escaped"]} == {}
    print(f"\nSDK v3 harness: {len(v3_run['jobs'])} jobs in {v3_run['seconds']:.1f} s")  # a figure, not a bound


def test_the_guard_catches_real_sdk_telemetry_if_it_were_on(v3_run):
    """Control for the test above: ``train`` IS instrumented, so the SDK's TelemetryOptOut
    switch (set in the environment's SDK config) is what keeps every other job quiet."""
    job = v3_run["jobs"][TELEMETRY_ON]
    assert job["error"] is None
    assert job["blocked"], "with telemetry on the SDK tried nothing: the control proves nothing"


def test_the_v3_venv_has_the_pinned_sdk(v3_run):
    pins = dict(re.findall(r"^([\w-]+)==(\S+)$", (ROOT / "requirements-sdkv3.txt").read_text(), flags=re.MULTILINE))
    assert {name: pins[name] for name in v3_run["versions"]} == v3_run["versions"]


# --- the request: network, role, checkpoints, output, FSx, no Debugger -------------------------

@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_request_has_the_vpc_role_checkpoint_and_output(v3_run, config_id):
    request, cfg = _request(v3_run, config_id), emitted(config_id, "v3")
    assert request["VpcConfig"] == {"Subnets": cfg["networking"]["subnets"],
                                    "SecurityGroupIds": cfg["networking"]["security_group_ids"]}
    assert request["RoleArn"] == cfg["role"]
    assert request["CheckpointConfig"] == {"S3Uri": cfg["checkpoint_config"]["s3_uri"],
                                           "LocalPath": cfg["checkpoint_config"]["local_path"]}
    assert request["ResourceConfig"]["InstanceType"] == cfg["compute"]["instance_type"]
    assert request["ResourceConfig"]["InstanceCount"] == cfg["compute"]["instance_count"]
    if "output_data_config" in cfg:
        assert request["OutputDataConfig"]["S3OutputPath"] == cfg["output_data_config"]["s3_output_path"]
    networking = cfg["networking"]
    assert request.get("EnableInterContainerTrafficEncryption", False) is \
        networking["enable_inter_container_traffic_encryption"]
    assert request.get("EnableNetworkIsolation", False) is networking.get("enable_network_isolation", False)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_request_mounts_the_fsx_channel_in_file_mode(v3_run, config_id):
    request, cfg = _request(v3_run, config_id), emitted(config_id, "v3")
    (wanted,) = cfg["input_data_config"]
    assert wanted["channel_name"] == channel_of(config_id)
    channels = _channels(request)
    assert set(channels) == {wanted["channel_name"], "code", "sm_drivers"}
    fs = wanted["data_source"]
    assert channels[wanted["channel_name"]]["DataSource"] == {"FileSystemDataSource": {
        "FileSystemId": fs["file_system_id"], "FileSystemType": fs["file_system_type"],
        "DirectoryPath": fs["directory_path"], "FileSystemAccessMode": fs["file_system_access_mode"]}}
    mode = channels[wanted["channel_name"]].get("InputMode", request["AlgorithmSpecification"]["TrainingInputMode"])
    assert mode == cfg["training_input_mode"] == "File"


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_request_has_no_debugger_hook_and_passes_the_api_model(v3_run, config_id):
    request = _request(v3_run, config_id)
    assert not {"DebugHookConfig", "DebugRuleConfigurations", "ProfilerRuleConfigurations"} & set(request)
    assert all_problems(request) == []


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_job_runs_the_launcher_job_config_chose(v3_run, config_id):
    """``distributed`` names a class of sagemaker.train.distributed; the SDK writes it into the
    sm_drivers channel (distributed.json + its driver) and starts sm_train.sh. The backend is the
    script's choice (smddp on p4d/p4de, nccl on p5/p6), stated in the notes job-config emits."""
    request, cfg, job = _request(v3_run, config_id), emitted(config_id, "v3"), v3_run["jobs"][config_id]
    ((launcher, kwargs),) = cfg["distributed"].items()
    drivers = _channels(request)["sm_drivers"]["DataSource"]["S3DataSource"]["S3Uri"]
    (distributed_json,) = [v for k, v in job["small_files"].items() if k == f"{drivers}/distributed.json"]
    assert {k: distributed_json[k] for k in kwargs} == kwargs
    driver = {"Torchrun": "torchrun_driver.py", "MPI": "mpi_driver.py"}[launcher]
    assert f"{drivers}/distributed_drivers/{driver}" in job["uploads"]
    assert request["AlgorithmSpecification"]["ContainerArguments"][-1].endswith("/sm_drivers/sm_train.sh")
    assert not any("smdistributed" in k or "dataparallel" in k for k in request.get("HyperParameters", {}))
    smddp = cfg["compute"]["instance_type"] in ("ml.p4d.24xlarge", "ml.p4de.24xlarge")
    backend = 'backend="smddp"' if smddp else 'backend="nccl"'
    assert any(backend in note for note in cfg["notes"]), cfg["notes"]


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_request_carries_the_emitted_maximum_runtime_not_the_sdk_default(v3_run, config_id):
    """The first real job must not die after an hour: the request the real SDK sends carries
    job-config's StoppingCondition (24 h by default, the p5 network's own 5 days), not v3's 3600 s."""
    request, cfg = _request(v3_run, config_id), emitted(config_id, "v3")
    wanted = cfg["stopping_condition"]["max_runtime_in_seconds"]
    assert request["StoppingCondition"]["MaxRuntimeInSeconds"] == wanted
    assert wanted == (432000 if config_id == "p5-64-node" else 86400)
    assert wanted != SDK_V3_DEFAULT_MAX_RUNTIME


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_request_runs_on_the_training_plan_job_config_names(v3_run, config_id):
    """``Compute(training_plan_arn=...)`` reaches the request ModelTrainer sends as
    ResourceConfig.TrainingPlanArn; without a plan the request has none."""
    request, cfg = _request(v3_run, config_id), emitted(config_id, "v3")
    plan = request["ResourceConfig"].get("TrainingPlanArn")
    assert plan == cfg["compute"].get("training_plan_arn")
    assert (plan is not None) == (config_id == PLAN_CONFIG_ID)


def test_without_the_stopping_condition_the_sdk_sends_its_one_hour_default(v3_run):
    """Control: the same job without job-config's stopping_condition gets the SDK's 3600 s, so the
    test above passes because of what job-config emits, not because the SDK keeps 24 h anyway."""
    assert v3_run["defaults"]["max_runtime_in_seconds"] == SDK_V3_DEFAULT_MAX_RUNTIME
    assert _request(v3_run, NO_STOPPING_CONDITION)["StoppingCondition"]["MaxRuntimeInSeconds"] == \
        SDK_V3_DEFAULT_MAX_RUNTIME


# --- code upload: under the code prefix, readable (never writable) by the role -----------------

def _staged(request: dict[str, Any]) -> dict[str, str]:
    return {name: _channels(request)[name]["DataSource"]["S3DataSource"]["S3Uri"] for name in ("code", "sm_drivers")}


def test_v3_session_block_names_the_code_prefix():
    assert v3_session("s3://b/code/") == {"default_bucket": "b", "default_bucket_prefix": "code"}
    assert v3_session("s3://b/team/a/code/") == {"default_bucket": "b", "default_bucket_prefix": "team/a/code"}
    assert v3_session("s3://b/") == {"default_bucket": "b", "default_bucket_prefix": None}


def test_a_caller_that_cannot_simulate_gets_code_and_drivers_under_code_s3_uri(v3_run):
    """The case the session block is for: the SDK stages in the session's bucket + prefix."""
    cfg = emitted("default-p4d", "v3")
    code_uri = f"s3://{cfg['session']['default_bucket']}/{cfg['session']['default_bucket_prefix']}/"
    request = _request(v3_run, DEFAULT_UNSIMULATED)
    for uri in _staged(request).values():
        assert uri.startswith(code_uri + "smddp-v3/")
    uploads = v3_run["jobs"][DEFAULT_UNSIMULATED]["uploads"]
    assert uploads and all(u.startswith(tuple(f"{p}/" for p in _staged(request).values())) for u in uploads)


@pytest.mark.parametrize("config_id", [c for c in CONFIG_IDS if c != OLDER_STACK_ID])
def test_a_caller_that_can_simulate_gets_the_sdk_fallback_under_the_output_prefix(v3_run, config_id):
    """sagemaker-train 1.27 asks the simulator whether the ROLE may write the session bucket
    (ModelTrainer._resolve_staging_bucket); ours may not, so it stages under OutputDataConfig:
    ``<OutputS3Uri><code prefix>/<base job name>/<job>/input/...``."""
    cfg, request = emitted(config_id, "v3"), _request(v3_run, config_id)
    staging = [s for s in v3_run["jobs"][config_id]["simulations"] if s["resources"]]
    assert staging and all(s["actions"] == ["s3:PutObject"] for s in staging)
    assert all(r["EvalDecision"] != ALLOWED for s in staging for r in s["answer"])
    fallback = f"{cfg['output_data_config']['s3_output_path']}{cfg['session']['default_bucket_prefix']}/smddp-v3/"
    for uri in _staged(request).values():
        assert uri.startswith(fallback)


#: The deployments whose job bucket prefixes are the default app's (output/, code/), so the
#: default app's synthesized policy IS their role's policy.
DEFAULT_PREFIX_JOBS = ["default-p4d", "two-stacks", "individual-outputs", DEFAULT_UNSIMULATED]


@pytest.mark.parametrize("name", DEFAULT_PREFIX_JOBS)
def test_the_role_reads_but_cannot_rewrite_the_staged_code(default_app, v3_run, name):
    """Wherever the SDK staged it, SageMaker downloads it with the execution role."""
    config_id = name.split("/")[0]
    statements, _, bucket = role_documents(default_app, config_id)
    cfg = emitted(config_id, "v3")
    assert (cfg["output_data_config"]["s3_output_path"], cfg["session"]) == (
        f"s3://{bucket}/output/", {"default_bucket": bucket, "default_bucket_prefix": "code"})
    partition = emitted(config_id, "v3")["role"].split(":")[1]
    uploads = v3_run["jobs"][name]["uploads"]
    assert uploads
    for uri in uploads:
        arn = f"arn:{partition}:s3:::{uri.removeprefix('s3://')}"
        assert evaluate(statements, "s3:GetObject", arn) == ALLOWED, uri
        assert evaluate(statements, "s3:PutObject", arn) != ALLOWED, uri


def test_an_older_stack_job_stages_in_the_sdk_default_bucket(v3_run):
    """No CodeS3Uri, no session block (and the CLI warns): the SDK's default bucket it is."""
    cfg = emitted(OLDER_STACK_ID, "v3")
    assert "session" not in cfg
    account = cfg["role"].split(":")[4]
    for uri in _staged(_request(v3_run, OLDER_STACK_ID)).values():
        assert uri.startswith(f"s3://sagemaker-{REGIONS[OLDER_STACK_ID]}-{account}/")


# --- the SDK's own role check --------------------------------------------------------------------

def test_the_sdk_simulated_its_smoke_test_actions_without_resources_or_context(v3_run):
    actions = v3_run["smoke_test_actions"]
    assert actions, "the installed SDK names no smoke-test actions: the check below would prove nothing"
    for name, job in v3_run["jobs"].items():
        first = job["simulations"][0]
        assert (first["actions"], first["resources"], first["context"]) == (actions, [], []), name


def test_the_role_policy_passes_every_smoke_test_action_as_the_simulator_evaluates_it(default_app, v3_run):
    """Read from the installed SDK: a release that adds an action fails here, not at a user."""
    for config_id in CONFIG_IDS:
        statements, _, _ = role_documents(default_app, config_id)
        denied = [a for a in v3_run["smoke_test_actions"] if evaluate(statements, a) != ALLOWED]
        assert denied == [], f"{config_id}: SDK v3 would refuse the role for {denied}"


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_the_sdk_accepted_the_role_and_its_trust_policy(v3_run, config_id):
    job = v3_run["jobs"][config_id]
    assert job["error"] is None, job["error"]
    assert all(r["EvalDecision"] == ALLOWED for r in job["simulations"][0]["answer"])


def test_the_earlier_scoped_policy_is_refused_by_the_sdk(v3_run):
    """Control: the same SDK, harness and simulator refuse what the role used to grant, naming
    exactly the actions the simulator model denies."""
    job = v3_run["jobs"][OLD_POLICY]
    denied = sorted(a for a in v3_run["smoke_test_actions"] if evaluate(OLD_SCOPED_STATEMENTS, a) != ALLOWED)
    assert len(denied) == 5
    assert job["error"].startswith("RoleValidationError: ")
    assert f"Missing permissions: {', '.join(denied)}" in job["error"]
    assert job["requests"] == [] and job["uploads"] == []


def test_the_sdk_read_the_synthesized_trust_policy(v3_run):
    """Control: the same role trusting ec2.amazonaws.com instead is refused, so the trust check
    above passed on the real document (sagemaker.amazonaws.com, aws:SourceAccount condition)."""
    error = v3_run["jobs"][UNTRUSTED]["error"]
    assert error.startswith("RoleValidationError: ") and "trust policy does not allow" in error
    assert v3_run["jobs"][UNTRUSTED]["requests"] == []


def test_a_caller_that_cannot_simulate_is_let_through_with_a_warning(v3_run):
    job = v3_run["jobs"][DEFAULT_UNSIMULATED]
    assert job["simulations"][0]["answer"] == "AccessDenied"
    assert job["error"] is None and len(job["requests"]) == 1


# --- preflight's known names are the installed v3's ---------------------------------------------

def test_known_model_trainer_names_match_the_installed_sdk_v3(v3_run):
    signatures = v3_run["signatures"]
    assert set(known_keys.SDK_V3_MODEL_TRAINER_ARGS) == set(signatures["ModelTrainer"])
    assert {k: set(v) for k, v in known_keys.SDK_V3_MODEL_TRAINER_SECTIONS.items()} == \
        {k: set(signatures[k]) for k in known_keys.SDK_V3_MODEL_TRAINER_SECTIONS}
    assert set(known_keys.SDK_V3_MODEL_TRAINER_ARGS) <= set(known_keys.MODEL_TRAINER_ARGS)


def test_every_v3_key_job_config_emits_is_a_model_trainer_argument_or_a_job_config_key(v3_run):
    signatures = v3_run["signatures"]
    for config_id in CONFIG_IDS:
        cfg = emitted(config_id, "v3")
        assert set(cfg) <= set(signatures["ModelTrainer"]) | set(known_keys.JOB_CONFIG_KEYS), config_id
        for section in ("compute", "networking", "checkpoint_config", "output_data_config", "stopping_condition"):
            assert set(cfg.get(section, {})) <= set(signatures[section]), (config_id, section)
        assert set(cfg.get("session", {})) <= set(signatures["Session"])
        assert set(cfg["input_data_config"][0]["data_source"]) <= set(signatures["file_system_data_source"])

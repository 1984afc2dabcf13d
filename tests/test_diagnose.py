"""``smddp-infra diagnose`` end to end against moto's server (issue 25).

Every scenario is built through boto3 against ONE moto server on 127.0.0.1 (module fixture);
the command reaches it through ``AWS_ENDPOINT_URL`` exactly as a user's shell would, and runs
in-process through ``cli.main``. Each scenario gets its own VPC, so they do not see each other.

Doubles (moto 5.2.5 lacks the field; botocore's Stubber validates every stubbed request AND
response against botocore's service model, so a double cannot invent a shape):
- a FAILED job with ``FailureReason``: moto completes every job at once and has no FailureReason;
- a job still ``InProgress`` in ``SecondaryStatus`` Training (the stall): same reason;
- AccessDenied: moto does not enforce IAM.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

import pytest

from smddp_infra.cli import main

from _diagnose_scenarios import IMAGE, REGION, ROLE, Aws, point_at
from _moto_server import moto_server


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture(scope="module")
def clients(endpoint: str) -> "Aws":
    return Aws(endpoint)


@pytest.fixture()
def aws(endpoint: str, monkeypatch: pytest.MonkeyPatch, clients: "Aws") -> "Aws":
    point_at(endpoint, monkeypatch)
    return clients


def diagnose(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def rules_of(report: dict[str, Any], severity: str | None = None) -> list[str]:
    return sorted(f["rule"] for f in report["findings"] if severity is None or f["severity"] == severity)


def verdict(report: dict[str, Any], failure: str) -> str:
    return next(str(v["verdict"]) for v in report["verdicts"] if v["failure"] == failure)


# --- the network (same rules as check) -------------------------------------------------------------


def test_a_healthy_network_has_no_finding(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    code, report = diagnose(capsys, "--security-group", net["group"], "--subnet", *net["subnets"])
    assert (code, report["findings"]) == (0, [])
    assert verdict(report, "init-stall") == "not found"


def test_a_group_with_ingress_only_self_rules_is_sg2(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(self_out=False)
    code, report = diagnose(capsys, "--security-group", net["group"], "--subnet", *net["subnets"])
    assert code == 1 and rules_of(report) == ["SMDDP-SG2"]
    finding = report["findings"][0]
    assert net["group"] in finding["message"] and "0.0.0.0/0 does not count" in finding["message"]
    assert f"authorize-security-group-egress --region {REGION} --group-id {net['group']}" in finding["fix"]["cli"]
    assert "Outbound rules" in finding["fix"]["console"]
    assert verdict(report, "init-stall") == "found"


def test_egress_to_everywhere_only_is_both_sg1_and_sg2(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(self_in=False, self_out=False)  # EC2's default egress rule (0.0.0.0/0) stays
    code, report = diagnose(capsys, "--security-group", net["group"], "--subnet", *net["subnets"])
    assert code == 1 and rules_of(report) == ["SMDDP-SG1", "SMDDP-SG2"]


def test_a_training_subnet_without_a_route_to_s3_is_net2(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(s3=False, nat=False)
    code, report = diagnose(capsys, "--security-group", net["group"], "--subnet", *net["subnets"])
    assert code == 1 and "SMDDP-NET2" in rules_of(report, "error")
    net2 = next(f for f in report["findings"] if f["rule"] == "SMDDP-NET2")
    assert net2["resource"] == net["subnets"][0] and net["table"] in net2["fix"]["cli"]


def test_a_network_acl_denying_the_other_training_subnet_is_net5(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(subnets=2)
    acl = aws.ec2.create_network_acl(VpcId=net["vpc"])["NetworkAcl"]["NetworkAclId"]
    for egress in (False, True):
        aws.ec2.create_network_acl_entry(NetworkAclId=acl, RuleNumber=100, Protocol="-1", RuleAction="allow",
                                         Egress=egress, CidrBlock="0.0.0.0/0")
        aws.ec2.create_network_acl_entry(NetworkAclId=acl, RuleNumber=50, Protocol="-1", RuleAction="deny",
                                         Egress=egress, CidrBlock="10.0.0.0/20")  # the first training subnet
    current = aws.ec2.describe_network_acls(Filters=[{"Name": "association.subnet-id", "Values": [net["subnets"][1]]}])
    association = next(a["NetworkAclAssociationId"] for a in current["NetworkAcls"][0]["Associations"]
                       if a["SubnetId"] == net["subnets"][1])
    aws.ec2.replace_network_acl_association(AssociationId=association, NetworkAclId=acl)
    code, report = diagnose(capsys, "--security-group", net["group"], "--subnet", *net["subnets"])
    assert code == 1 and rules_of(report) == ["SMDDP-NET6"]
    message = report["findings"][0]["message"]
    assert f"ingress of {net['subnets'][1]} from 10.0.0.0/20" in message and f"network ACL {acl} rule 50" in message
    assert verdict(report, "init-stall") == "found"


def test_a_file_system_in_another_az_is_net4(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(subnets=2, zones=("us-east-1a", "us-east-1b"))
    fs = aws.file_system(net["subnets"][1], net["group"])
    aws.job("fs-elsewhere", net, subnets=[net["subnets"][0]], fs=fs)
    code, report = diagnose(capsys, "--job", "fs-elsewhere")
    net4 = [f for f in report["findings"] if f["rule"] == "SMDDP-NET4"]
    assert len(net4) == 1 and net4[0]["resource"] == fs and "us-east-1b" in net4[0]["message"]


# --- the job's own record ----------------------------------------------------------------------------


def test_debugger_checkpoints_and_smddp_are_found_from_the_job_record(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    aws.job("dbg-ckpt", net, debugger=True, checkpoints=True)
    code, report = diagnose(capsys, "--job", "dbg-ckpt")
    assert code == 1 and rules_of(report, "error") == ["PF-DEBUGGER-CHECKPOINT"]
    assert verdict(report, "debugger-checkpoints") == "found"


def test_logs_ending_in_a_watchdog_timeout_are_the_end_stall(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    aws.job("ends-in-timeout", net)
    start = aws.sm.describe_training_job(TrainingJobName="ends-in-timeout")["TrainingStartTime"]
    aws.log("ends-in-timeout", ["NCCL INFO Bootstrap : Using eth0", "epoch 1 step 100 loss 0.31",
                                "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4242, "
                                "OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out."], at=start)
    code, report = diagnose(capsys, "--job", "ends-in-timeout")
    assert code == 1 and "SYM-COLLECTIVE-TIMEOUT" in rules_of(report, "error")
    assert verdict(report, "end-stall") == "found" and verdict(report, "deprecation-warning") == "not found"
    symptom = report["symptoms"][0]
    assert symptom["symptom"] == "SYM-COLLECTIVE-TIMEOUT" and symptom["where"].startswith("log stream ends-in-timeout/")


def test_an_under_sized_file_system_is_the_throughput_failure(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs = aws.file_system(net["subnets"][0], net["group"])  # 1200 GiB PERSISTENT_2/125: 146.5 MB/s baseline
    aws.job("io-bound", net, fs=fs, count=4)
    start = aws.sm.describe_training_job(TrainingJobName="io-bound")["TrainingStartTime"]
    aws.cw.put_metric_data(Namespace="AWS/FSx", MetricData=[
        {"MetricName": "DataReadBytes", "Dimensions": [{"Name": "FileSystemId", "Value": fs}],
         "Timestamp": start + timedelta(seconds=10), "Value": 140 * 1e6 * 300}])
    code, report = diagnose(capsys, "--job", "io-bound")
    assert verdict(report, "fsx-throughput") == "found"
    throughput = report["throughput"]
    assert throughput["verdict"] == "under-sized" and throughput["baselineMBps"] == pytest.approx(1200 / 1024 * 125)
    assert throughput["plan"]["baseline_throughput_mbps"] >= 140 * 1.25 or throughput["plan"]["baselineThroughputMBps"] >= 175


def test_a_hyperpod_cluster_is_judged_by_the_same_group_rules(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(self_in=False)
    aws.sm.create_cluster(ClusterName="hp-workers", VpcConfig={"SecurityGroupIds": [net["group"]], "Subnets": net["subnets"]},
                          InstanceGroups=[{"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2,
                                           "ThreadsPerCore": 1,  # moto 5.2.5 fails to answer without it
                                           "ExecutionRole": ROLE, "LifeCycleConfig": {
                                               "SourceS3Uri": "s3://sagemaker-lifecycle/scripts/", "OnCreate": "on_create.sh"}}])
    code, report = diagnose(capsys, "--cluster", "hp-workers")
    assert code == 1 and rules_of(report, "error") == ["SMDDP-SG1"]
    assert report["findings"][0]["resource"] == "hp-workers" and "HyperPod instance group workers" in report["findings"][0]["message"]
    assert verdict(report, "init-stall") == "found" and verdict(report, "debugger-checkpoints") == "not evaluated"


# --- bad input: one line, exit 2 ---------------------------------------------------------------------


def test_an_unknown_job_is_one_line(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--job", "no-such-job"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--job no-such-job: no training job of that name in us-east-1" in err


def test_a_cluster_name_that_is_a_job_says_so(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    aws.job("actually-a-job", net)
    assert main(["diagnose", "--cluster", "actually-a-job"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "is a training job (use --job actually-a-job)" in err


def test_no_credentials_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # never reached
    assert main(["diagnose", "--job", "j", "--region", REGION]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no AWS credentials found for sagemaker:DescribeTrainingJob" in err


@pytest.mark.parametrize("args, message", [
    ([], "needs exactly one of --job NAME, --cluster NAME, --stack NAME or --security-group ID --subnet ID, got none"),
    (["--job", "a", "--cluster", "b"], "got --job, --cluster"),
    (["--security-group", "sg-0123456789abcdef0"], "--security-group and --subnet go together"),
    (["--security-group", "default", "--subnet", "subnet-0123456789abcdef0"], "--security-group must be ids like"),
])
def test_bad_flags_are_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err


# --- doubles where moto lacks a field (botocore Stubber) ---------------------------------------------


def _stubbed_sagemaker(responses: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> Any:
    import botocore.session
    from botocore.stub import Stubber

    client = botocore.session.get_session().create_client("sagemaker", region_name=REGION, aws_access_key_id="t",
                                                          aws_secret_access_key="t")
    stubber = Stubber(client)  # validates each request and response against botocore's model
    for operation, response, params in responses:
        stubber.add_response(operation, response, params)
    stubber.activate()
    return client


def _described(name: str, net: dict[str, Any], **extra: Any) -> dict[str, Any]:
    now = datetime.now(timezone.utc)
    return {
        "TrainingJobName": name, "TrainingJobArn": f"arn:aws:sagemaker:{REGION}:123456789012:training-job/{name}",
        "ModelArtifacts": {"S3ModelArtifacts": ""}, "CreationTime": now - timedelta(hours=2),
        "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"}, "RoleArn": ROLE,
        "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2, "VolumeSizeInGB": 100},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "VpcConfig": {"SecurityGroupIds": [net["group"]], "Subnets": net["subnets"]},
        "HyperParameters": {"sagemaker_distributed_dataparallel_enabled": "true"},
        **extra,
    }


def test_a_failure_reason_with_the_guides_message_is_tied_to_its_finding(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    from smddp_infra.account import Account
    from smddp_infra.diagnose import diagnose_job

    net = aws.network()
    now = datetime.now(timezone.utc)
    described = _described("failed-smdebug", net, TrainingJobStatus="Failed", SecondaryStatus="Failed",
                           TrainingStartTime=now - timedelta(hours=1), TrainingEndTime=now - timedelta(minutes=50),
                           FailureReason="AlgorithmError: SMDebug Does Not Currently Support Distributed Training Jobs "
                                         "With Checkpointing Enabled",
                           DebugHookConfig={"S3OutputPath": "s3://jobs/debug/"},
                           CheckpointConfig={"S3Uri": "s3://jobs/checkpoints/"})
    client = _stubbed_sagemaker([("describe_training_job", described, {"TrainingJobName": "failed-smdebug"})])
    report = diagnose_job(Account(region=REGION, clients={"sagemaker": client}), "failed-smdebug").to_json()
    symptom = next(f for f in report["findings"] if f["rule"] == "SYM-SMDEBUG-CHECKPOINT")
    assert symptom["severity"] == "error" and "explained by PF-DEBUGGER-CHECKPOINT (failed-smdebug)" in symptom["message"]
    assert verdict(report, "debugger-checkpoints") == "found"


def test_a_job_silent_in_training_on_an_efa_type_is_the_init_stall(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    from smddp_infra.account import Account
    from smddp_infra.diagnose import diagnose_job

    net = aws.network(self_out=False)
    now = datetime.now(timezone.utc)
    began = now - timedelta(minutes=50)
    described = _described("stalled", net, TrainingJobStatus="InProgress", SecondaryStatus="Training",
                           TrainingStartTime=began,
                           SecondaryStatusTransitions=[{"Status": "Training", "StartTime": began,
                                                        "StatusMessage": "Training image download completed."}])
    aws.log("stalled", ["Starting smddprun", "NCCL INFO NET/OFI Selected Provider is efa"], at=began + timedelta(minutes=2))
    client = _stubbed_sagemaker([("describe_training_job", described, {"TrainingJobName": "stalled"})])
    report = diagnose_job(Account(region=REGION, clients={"sagemaker": client}), "stalled", now=now).to_json()
    stall = next(f for f in report["findings"] if f["rule"] == "SYM-INIT-STALL")
    assert "explained by SMDDP-SG2 (stalled)" in stall["message"] and began.isoformat() in stall["message"]
    assert report["stall"]["quietMinutes"] >= 45


def test_access_denied_names_the_action(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    import botocore.session
    from botocore.stub import Stubber

    from smddp_infra.account import Account, AccountError
    from smddp_infra.diagnose import diagnose_job

    client = botocore.session.get_session().create_client("sagemaker", region_name=REGION, aws_access_key_id="t",
                                                          aws_secret_access_key="t")
    stubber = Stubber(client)
    stubber.add_client_error("describe_training_job", service_error_code="AccessDeniedException", http_status_code=400,
                             service_message="User: arn:aws:sts::123456789012:assumed-role/r is not authorized")
    stubber.activate()
    with pytest.raises(AccountError) as caught:
        diagnose_job(Account(region=REGION, clients={"sagemaker": client}), "j")
    assert "needs the IAM permission sagemaker:DescribeTrainingJob" in str(caught.value)


# --- the command's promises ---------------------------------------------------------------------------


def test_one_job_diagnosis_is_bounded_and_fast(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    from smddp_infra.diagnose.collect import MAX_CALLS_JOB

    net = aws.network()
    fs = aws.file_system(net["subnets"][0], net["group"])
    aws.job("timed", net, fs=fs)
    started = time.perf_counter()
    code, report = diagnose(capsys, "--job", "timed")
    seconds = time.perf_counter() - started
    print(f"\none job's diagnosis: {report['calls']['count']} AWS calls, {seconds:.2f} s (in-process, local endpoint)")
    assert report["calls"]["count"] <= MAX_CALLS_JOB
    from smddp_infra.diagnose.policy import all_actions

    assert set(report["calls"]["actions"]) <= set(all_actions())


def test_print_policy_is_parliament_clean(capsys: pytest.CaptureFixture[str]) -> None:
    from parliament import analyze_policy_string

    assert main(["diagnose", "--print-policy"]) == 0
    document = capsys.readouterr().out
    policy = analyze_policy_string(document)
    assert [f.issue for f in policy.findings] == []
    actions = {a for s in json.loads(document)["Statement"] for a in s["Action"]}
    assert all(a.split(":")[1].startswith(("Describe", "Get", "List", "FilterLogEvents")) for a in actions)


def test_diagnose_imports_no_cdk() -> None:
    import subprocess
    import sys

    code = ("import sys, smddp_infra.commands.diagnose, smddp_infra.diagnose, smddp_infra.account; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('aws_cdk', 'jsii', 'constructs', 'boto3')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

"""``diagnose --cluster`` joins a HyperPod failure to its cause (issue 41), on moto's server.

Each scenario is built through boto3 against moto's server on 127.0.0.1; what moto's API cannot do
(a Failed status, a FailureMessage, a node in Failure, a group short of its target) is set in moto's
backend (tests/_diagnose_scenarios.py). The failure texts are the services' own wording: EC2's
"We currently do not have sufficient capacity ..." (InsufficientInstanceCapacity) and Lustre's
"mount.lustre: mount <dns>@tcp:/<name> at /fsx failed: Input/output error".

Every finding of every scenario here is also checked for an unfilled word (:func:`unfilled`).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any, Iterator

import pytest

from _diagnose_scenarios import Aws, point_at
from _moto_server import moto_server
from smddp_infra.cli import main

AT = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)

#: What a fix may not contain once its subject is known: a ``<placeholder>``, a possessive standing
#: for a name ("the group's instance type"), a "?" standing for a name, or "the cluster" (the
#: cluster's name is always known to diagnose --cluster).
_PLACEHOLDERS = (re.compile(r"<[A-Za-z][^<>]*>"), re.compile(r"\bthe (?:group|cluster|subnet|file system)'s\b", re.I),
                 re.compile(r"(?:^|\s)\?(?:\s|$|,)"), re.compile(r"\bthe cluster\b(?! (?:is|gives))", re.I))


def unfilled(text: str) -> list[str]:
    """The placeholders left in ``text`` (empty: every word of the fix is filled)."""
    return [m.group(0) for p in _PLACEHOLDERS for m in p.finditer(text or "")]


def test_unfilled_finds_each_kind_of_placeholder() -> None:
    assert unfilled("aws sagemaker search-training-plan-offerings --instance-type the group's instance type")
    assert unfilled("--quota-code <code>") and unfilled("add an inbound rule on sg-1 from ?") and unfilled("place the cluster in")
    assert not unfilled("aws ec2 describe-subnets --query \"Subnets[?AvailabilityZoneId!='use1-az4']\" --output text")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture()
def aws(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Aws:
    point_at(endpoint, monkeypatch)
    return Aws(endpoint)


def diagnose(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", "--cluster", name, "--json"])
    report = json.loads(capsys.readouterr().out)
    for finding in report["findings"]:
        for text in (finding["fix"]["console"], finding["fix"]["cli"]):
            assert not unfilled(text or ""), (finding["rule"], text)
    return code, report


def errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def test_capacity_names_the_group_short_of_its_target_its_type_and_az(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    aws.cluster_of("hp-short", {"SecurityGroupIds": [net["group"]], "Subnets": net["subnets"]}, [
        {"InstanceGroupName": "controller", "InstanceType": "ml.m5.xlarge", "InstanceCount": 1},
        {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 4},
        {"InstanceGroupName": "spare", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2}])
    aws.set_group("hp-short", "workers", CurrentCount=1)
    aws.set_cluster("hp-short", status="Failed", failure=(
        "We currently do not have sufficient capacity to launch new ml.p5.48xlarge instances. Please try again later or "
        "use a different Availability Zone."))
    subnet = aws.ec2.describe_subnets(SubnetIds=net["subnets"])["Subnets"][0]
    code, report = diagnose(capsys, "hp-short")
    (finding,) = errors(report)
    assert code == 1 and finding["rule"] == "HP-CAPACITY"
    assert "instance group workers (1 of 4 running)" in finding["message"] and "ml.p5.48xlarge" in finding["message"]
    assert f"{subnet['AvailabilityZone']} ({subnet['AvailabilityZoneId']})" in finding["message"]
    assert "spare also runs ml.p5.48xlarge" in finding["message"] and "controller" not in finding["message"]
    cli = finding["fix"]["cli"]
    assert ("aws sagemaker search-training-plan-offerings --region us-east-1 --instance-type ml.p5.48xlarge "
            "--instance-count 4 --target-resources hyperpod-cluster") in cli
    assert f"Name=vpc-id,Values={net['vpc']}" in cli and f"AvailabilityZoneId!='{subnet['AvailabilityZoneId']}'" in cli


def test_a_mount_named_only_in_the_lifecycle_log_is_judged_against_its_file_system(
        aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs_group = aws.lustre_group(net["vpc"])  # admits only itself: the workers' group on nothing
    fs = aws.file_system(net["subnets"][0], fs_group)
    aws.interfaces_of(fs)
    dns = aws.fsx.describe_file_systems(FileSystemIds=[fs])["FileSystems"][0]["DNSName"]
    log_group = aws.cluster("hp-logged-mount", net)  # no InstanceStorageConfigs: the script mounts it itself
    aws.fail_node("hp-logged-mount", "workers-0", "Lifecycle scripts did not run successfully.")
    aws.lifecycle_log(log_group, "workers", "workers-0", [
        "[mount_fsx.sh] mounting FSx for Lustre on /fsx",
        f"mount.lustre: mount {dns}@tcp:/abcdefgh at /fsx failed: Input/output error", "Is the MGS running?"], at=AT)
    code, report = diagnose(capsys, "hp-logged-mount")
    (finding,) = errors(report)
    assert code == 1 and finding["rule"] == "SMDDP-FSX7" and finding["resource"] == fs
    assert "HyperPod instance group workers" in finding["message"] and fs_group in finding["message"]
    assert any(dns in e and "workers-0" in e for e in finding["evidence"])
    assert f"--group-id {fs_group}" in finding["fix"]["cli"] and f"GroupId={net['group']}" in finding["fix"]["cli"]
    assert not [f for f in report["findings"] if f["rule"] in ("HP-FSX-MOUNT", "HP-LIFECYCLE")]


def test_a_logged_mount_of_a_file_system_not_in_the_account_says_so(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    log_group = aws.cluster("hp-foreign-mount", aws.network())
    dns = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
    aws.lifecycle_log(log_group, "workers", "workers-0", [
        f"mount.lustre: mount {dns}@tcp:/abcdefgh at /fsx failed: Input/output error"], at=AT)
    code, report = diagnose(capsys, "hp-foreign-mount")
    (finding,) = errors(report)
    assert finding["rule"] == "HP-FSX-MOUNT" and f"no file system with DNS name {dns}" in finding["message"]


def test_an_override_groups_self_egress_fix_edits_the_override_group(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()  # the cluster's group has both self rules
    own = aws.ec2.create_security_group(GroupName="efa-override", Description="EFA", VpcId=net["vpc"])["GroupId"]
    aws.ec2.authorize_security_group_ingress(GroupId=own, IpPermissions=[{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": own}]}])
    aws.ec2.revoke_security_group_egress(GroupId=own, IpPermissions=[{"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
    aws.cluster_of("hp-override", {"SecurityGroupIds": [net["group"]], "Subnets": net["subnets"]}, [
        {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2,
         "OverrideVpcConfig": {"SecurityGroupIds": [own], "Subnets": net["subnets"]}}])
    code, report = diagnose(capsys, "hp-override")
    (finding,) = errors(report)
    assert finding["rule"] == "SMDDP-SG2" and own in finding["message"]
    assert f"Security groups > {own} >" in finding["fix"]["console"] and net["group"] not in finding["fix"]["console"]
    assert f"--group-id {own}" in finding["fix"]["cli"] and net["group"] not in finding["fix"]["cli"]


def test_an_efa_health_check_failure_is_one_error_with_its_cause(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(self_out=False)
    aws.ec2.revoke_security_group_egress(GroupId=net["group"], IpPermissions=[
        {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
    aws.cluster("hp-efa-check", net, health_checks=("InstanceStress", "InstanceConnectivity"))
    aws.fail_node("hp-efa-check", "workers-1", "Deep health check InstanceConnectivity failed: EFA ping between nodes failed")
    code, report = diagnose(capsys, "hp-efa-check")
    (finding,) = errors(report)
    assert code == 1 and finding["rule"] == "SMDDP-SG2"
    assert "instance group workers, node workers-1" in finding["message"] and net["group"] in finding["message"]
    assert "InstanceConnectivity" in finding["message"] and any("InstanceConnectivity" in e for e in finding["evidence"])
    assert not [f for f in report["findings"] if f["rule"] in ("HP-HEALTH-CHECK", "HP-FAILED")]


def test_a_stress_check_failure_is_not_blamed_on_the_network(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(self_out=False)
    aws.ec2.revoke_security_group_egress(GroupId=net["group"], IpPermissions=[
        {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
    aws.cluster("hp-stress", net, health_checks=("InstanceStress",))
    aws.fail_node("hp-stress", "workers-0", "Deep health check InstanceStress failed: GPU DCGM diagnostic level 2 failed")
    code, report = diagnose(capsys, "hp-stress")
    assert sorted(f["rule"] for f in errors(report)) == ["HP-HEALTH-CHECK", "SMDDP-SG2"]

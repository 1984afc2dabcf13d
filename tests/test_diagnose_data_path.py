"""``diagnose`` follows the data (issue 33): a job that cannot reach its file system or S3.

Built through boto3 against moto's server on 127.0.0.1, reached through ``AWS_ENDPOINT_URL``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from _diagnose_scenarios import Aws
from smddp_infra.cli import main


def diagnose(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def by_rule(report: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == rule]


def test_a_file_system_with_its_own_group_that_admits_only_itself_is_named(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs_group = aws.lustre_group(net["vpc"])
    fs = aws.file_system(net["subnets"][0], fs_group)
    aws.interfaces_of(fs)
    aws.job("fsx-own-group", net, fs=fs)
    code, report = diagnose(capsys, "--job", "fsx-own-group")
    (finding,) = by_rule(report, "SMDDP-FSX7")
    assert code == 1 and finding["severity"] == "error" and finding["resource"] == fs
    assert fs_group in finding["message"] and net["group"] in finding["message"]
    assert f"--group-id {fs_group}" in finding["fix"]["cli"] and net["group"] in finding["fix"]["cli"]
    assert by_rule(report, "SMDDP-FSX8")  # 1018-1023 too


def test_the_same_file_system_admitting_the_jobs_group_draws_nothing(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs_group = aws.lustre_group(net["vpc"], clients=net["group"])
    fs = aws.file_system(net["subnets"][0], fs_group)
    aws.interfaces_of(fs)
    aws.job("fsx-admitted", net, fs=fs)
    code, report = diagnose(capsys, "--job", "fsx-admitted")
    assert not by_rule(report, "SMDDP-FSX7") and not by_rule(report, "SMDDP-FSX8")
    assert not [f for f in report["findings"] if f["severity"] == "error"]


def _close_subnet(aws: Aws, vpc: str, subnet: str) -> str:
    """A network ACL that denies everything in and out, associated with ``subnet``."""
    acl = aws.ec2.create_network_acl(VpcId=vpc)["NetworkAcl"]["NetworkAclId"]
    for egress in (False, True):
        aws.ec2.create_network_acl_entry(NetworkAclId=acl, RuleNumber=100, Protocol="-1", RuleAction="deny", Egress=egress,
                                         CidrBlock="0.0.0.0/0")
    current = aws.ec2.describe_network_acls(Filters=[{"Name": "association.subnet-id", "Values": [subnet]}])["NetworkAcls"][0]
    association = next(a["NetworkAclAssociationId"] for a in current["Associations"] if a["SubnetId"] == subnet)
    aws.ec2.replace_network_acl_association(AssociationId=association, NetworkAclId=acl)
    return str(acl)


def test_a_training_subnet_whose_acl_denies_all_is_named_with_its_acl(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    acl = _close_subnet(aws, net["vpc"], net["subnets"][0])
    aws.job("acl-closed", net)
    code, report = diagnose(capsys, "--job", "acl-closed")
    (finding,) = by_rule(report, "SMDDP-NET7")
    assert code == 1 and finding["resource"] == net["subnets"][0] and acl in finding["message"]
    assert not by_rule(report, "SMDDP-NET6")  # one subnet: the job's own traffic never crosses the ACL


def test_an_interface_endpoint_only_in_a_subnet_whose_acl_denies_the_training_subnet_is_named(
        aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    elsewhere = aws.ec2.create_subnet(VpcId=net["vpc"], CidrBlock="10.0.64.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    endpoint = aws.ec2.create_vpc_endpoint(VpcId=net["vpc"], VpcEndpointType="Interface", SubnetIds=[elsewhere],
                                           ServiceName="com.amazonaws.us-east-1.sts")["VpcEndpoint"]["VpcEndpointId"]
    acl = _close_subnet(aws, net["vpc"], elsewhere)
    aws.job("endpoint-closed", net)
    code, report = diagnose(capsys, "--job", "endpoint-closed")
    (finding,) = by_rule(report, "SMDDP-NET7")
    assert code == 1 and finding["resource"] == net["subnets"][0]
    assert endpoint in finding["message"] and "com.amazonaws.us-east-1.sts" in finding["message"]
    assert f"network ACL {acl} rule 100" in finding["message"] and elsewhere in finding["message"]
    assert report["calls"]["actions"].count("ec2:DescribeSubnets") == 1  # one action, listed once


def test_a_vpc_without_dns_support_cannot_resolve_its_file_system(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    aws.ec2.modify_vpc_attribute(VpcId=net["vpc"], EnableDnsSupport={"Value": False})
    fs = aws.file_system(net["subnets"][0], net["group"])
    aws.interfaces_of(fs)
    aws.job("dns-off", net, fs=fs)
    code, report = diagnose(capsys, "--job", "dns-off")
    (finding,) = by_rule(report, "SMDDP-NET8")
    assert code == 1 and finding["resource"] == net["vpc"] and fs in finding["message"]
    assert "ec2:DescribeVpcAttribute" in report["calls"]["actions"]


MOUNT_FAILED = ("ClientError: Failed to mount the FSx for Lustre file system: mount.lustre: mount 10.0.0.5@tcp:/abcdef "
                "at /opt/ml/input/data/train failed: Connection timed out")


def test_a_mount_failure_in_the_failure_reason_is_evidence_on_its_cause_not_a_second_finding(
        aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs = aws.file_system(net["subnets"][0], aws.lustre_group(net["vpc"]))
    aws.interfaces_of(fs)
    aws.job("mount-explained", net, fs=fs)
    aws.fail_job("mount-explained", MOUNT_FAILED)
    code, report = diagnose(capsys, "--job", "mount-explained")
    (finding,) = by_rule(report, "SMDDP-FSX7")
    assert any(e.startswith("FailureReason: ") and "Connection timed out" in e for e in finding["evidence"])
    assert not by_rule(report, "SYM-FSX-MOUNT")
    assert [m["symptom"] for m in report["symptoms"]] == ["SYM-FSX-MOUNT"]


def test_a_mount_failure_nothing_explains_is_its_own_finding(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs = aws.file_system(net["subnets"][0], net["group"])
    aws.interfaces_of(fs)
    aws.job("mount-unexplained", net, fs=fs)
    aws.fail_job("mount-unexplained", MOUNT_FAILED)
    code, report = diagnose(capsys, "--job", "mount-unexplained")
    (finding,) = by_rule(report, "SYM-FSX-MOUNT")
    assert code == 1 and "no finding here explains it" in finding["message"]

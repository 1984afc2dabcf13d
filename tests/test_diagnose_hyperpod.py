"""``diagnose --cluster``: why a HyperPod cluster or its nodes failed (issue 33).

Clusters are created through boto3 against moto's server on 127.0.0.1; what moto's API cannot
do (a Failed status, a FailureMessage, a node in Failure with its message) is set in moto's
backend, in this process (tests/_diagnose_scenarios.py). moto 5.2.5 implements DescribeCluster,
ListClusterNodes and DescribeClusterNode, so no Stubber is needed.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from _diagnose_scenarios import Aws
from smddp_infra.cli import main

AT = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def diagnose(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", "--cluster", name, "--json"])
    return code, json.loads(capsys.readouterr().out)


def errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def test_a_healthy_in_service_cluster_with_running_nodes_draws_nothing(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    aws.cluster("hp-healthy", aws.network())
    code, report = diagnose(capsys, "hp-healthy")
    assert (code, report["findings"]) == (0, [])
    assert any("no log group /aws/sagemaker/Clusters/hp-healthy/" in n for n in report["notEvaluated"])
    assert {"sagemaker:ListClusterNodes", "logs:FilterLogEvents"} <= set(report["calls"]["actions"])


def test_insufficient_capacity_names_the_group_and_the_fix(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    aws.cluster("hp-capacity", aws.network())
    aws.set_cluster("hp-capacity", status="Failed", failure=(
        "We currently do not have sufficient capacity to launch new ml.p5.48xlarge instances for instance group workers "
        "(InsufficientInstanceCapacity). Please try another Availability Zone."))
    code, report = diagnose(capsys, "hp-capacity")
    (finding,) = errors(report)
    assert code == 1 and finding["rule"] == "HP-CAPACITY" and "instance group workers" in finding["message"]
    assert "another AZ ID" in finding["fix"]["console"] and "training plan" in finding["fix"]["console"]


def test_resource_limit_exceeded_names_the_quota(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    aws.cluster("hp-quota", aws.network())
    aws.set_cluster("hp-quota", status="Failed", failure=(
        "ResourceLimitExceeded: The account-level service limit 'ml.p5.48xlarge for cluster usage' is 0 Instances, with "
        "current utilization of 0 Instances and a request delta of 2 Instances."))
    code, report = diagnose(capsys, "hp-quota")
    (finding,) = errors(report)
    assert finding["rule"] == "HP-QUOTA" and "'ml.p5.48xlarge for cluster usage'" in finding["fix"]["console"]
    assert "instance group workers" in finding["message"]


def test_a_failed_lifecycle_script_quotes_its_failing_line(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    log_group = aws.cluster("hp-lifecycle", aws.network())
    aws.fail_node("hp-lifecycle", "workers-0", "Lifecycle scripts did not run successfully.")
    aws.lifecycle_log(log_group, "workers", "workers-0", [
        "[on_create.sh] installing packages", "bash: ./setup_users.sh: No such file or directory", "done"], at=AT)
    code, report = diagnose(capsys, "hp-lifecycle")
    (finding,) = errors(report)
    assert finding["rule"] == "HP-LIFECYCLE" and "instance group workers, node workers-0" in finding["message"]
    assert "s3://sagemaker-lifecycle/scripts/on_create.sh" in finding["message"]
    assert '"bash: ./setup_users.sh: No such file or directory"' in finding["message"]


def test_a_deep_health_check_failure_names_the_node_and_the_check(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    aws.cluster("hp-health", aws.network(), health_checks=("InstanceStress", "InstanceConnectivity"))
    aws.fail_node("hp-health", "workers-1", "Deep health check InstanceConnectivity failed: EFA ping between nodes failed")
    code, report = diagnose(capsys, "hp-health")
    (finding,) = errors(report)
    assert finding["rule"] == "HP-HEALTH-CHECK" and "node workers-1" in finding["message"]
    assert "InstanceConnectivity" in finding["message"] and "InstanceStress and" not in finding["message"]


def test_an_fsx_mount_failure_is_joined_to_the_file_systems_group_and_not_reported_twice(
        aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network()
    fs = aws.file_system(net["subnets"][0], aws.lustre_group(net["vpc"]))
    aws.interfaces_of(fs)
    dns = aws.fsx.describe_file_systems(FileSystemIds=[fs])["FileSystems"][0]["DNSName"]
    log_group = aws.cluster("hp-mount", net, dns=dns)
    aws.fail_node("hp-mount", "workers-0", "Lifecycle scripts did not run successfully.")
    aws.lifecycle_log(log_group, "workers", "workers-0", [
        f"mounting {dns}@tcp:/abcdef on /fsx", "mount.lustre: mount 10.0.0.5@tcp:/abcdef at /fsx failed: Connection timed out"], at=AT)
    code, report = diagnose(capsys, "hp-mount")
    (finding,) = errors(report)
    assert finding["rule"] == "SMDDP-FSX7" and finding["resource"] == fs
    assert any("mount.lustre" in e and "workers-0" in e for e in finding["evidence"])


def test_an_fsx_mount_failure_without_a_network_cause_is_one_error(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    log_group = aws.cluster("hp-mount-only", aws.network())
    aws.lifecycle_log(log_group, "workers", "workers-0", ["mount.lustre: mount fs-1@tcp:/x at /fsx failed: No such device"], at=AT)
    code, report = diagnose(capsys, "hp-mount-only")
    (finding,) = errors(report)
    assert finding["rule"] == "HP-FSX-MOUNT" and "no network finding explains it" in finding["message"]


def test_an_eks_orchestrated_cluster_whose_eks_cluster_is_gone_is_one_error(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    gone = "arn:aws:eks:us-east-1:123456789012:cluster/retired-platform"
    aws.cluster("hp-eks-gone", aws.network(), eks_cluster_arn=gone)
    code, report = diagnose(capsys, "hp-eks-gone")
    (finding,) = errors(report)
    assert code == 1 and finding["rule"] == "SMDDP-EKS1" and "retired-platform does not exist" in finding["message"]
    assert "eks:DescribeCluster" in report["calls"]["actions"]


def test_an_eks_orchestrated_cluster_reads_its_eks_cluster(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    import boto3

    eks = boto3.client("eks", region_name="us-east-1")
    net = aws.network()
    arn = eks.create_cluster(name="hp-eks-platform", roleArn="arn:aws:iam::123456789012:role/eks",
                             resourcesVpcConfig={"subnetIds": net["subnets"]})["cluster"]["arn"]
    aws.cluster("hp-eks", net, eks_cluster_arn=arn)
    code, report = diagnose(capsys, "hp-eks")
    eks_items = [f for f in report["findings"] if f["rule"].startswith("SMDDP-EKS")]
    # moto reports no authentication mode and does not answer ListAddons: both "not evaluated", never guessed
    assert eks_items and all(f["severity"] == "info" for f in eks_items), eks_items
    assert "eks:DescribeCluster" in report["calls"]["actions"]


def test_an_unknown_cluster_is_one_line_exit_2(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--cluster", "no-such-cluster"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--cluster no-such-cluster: no HyperPod cluster of that name" in err


def test_print_policy_lists_the_cluster_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--print-policy"]) == 0
    policy = capsys.readouterr().out
    for action in ("sagemaker:ListClusterNodes", "sagemaker:DescribeClusterNode", "ec2:DescribeVpcAttribute",
                   "eks:DescribeCluster", "eks:ListAddons"):
        assert action in policy
    assert "/aws/sagemaker/Clusters/*" in policy


# --- the next scale-up against the subnet's free addresses (issue 42) --------------------------------------


def _addresses(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == "HP-ADDRESSES"]


def _unfilled(text: str) -> bool:
    return any(word in text for word in ("None", "{", "}", "UNKNOWN", "<"))


def test_a_scale_up_whose_interfaces_alone_overflow_the_subnet_is_an_error(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(prefix=24)  # 251 free addresses
    aws.cluster("hp-full", net, count=10)
    aws.set_group("hp-full", "workers", CurrentCount=2)  # 8 more p5 nodes x 32 interfaces (Slurm) = 256
    code, report = diagnose(capsys, "hp-full")
    (finding,) = _addresses(report)
    assert code == 1 and finding["severity"] == "error"
    assert (f"subnet {net['subnets'][0]} (10.0.0.0/24): instance group workers (2 of 10 running: 8 more ml.p5.48xlarge nodes "
            "x 32 addresses = 256) need 256 private IPs (their network interfaces alone take 256), 251 are free") in finding["message"]
    assert "room for 7 more workers nodes" in finding["message"]
    assert "lower the InstanceCount of workers to at most 9" in finding["fix"]["console"]
    assert f"Name=subnet-id,Values={net['subnets'][0]} Name=status,Values=available" in finding["fix"]["cli"]
    assert not _unfilled(finding["fix"]["console"] + finding["fix"]["cli"] + finding["message"])


def test_on_eks_the_vpc_cnis_warm_pool_past_the_free_addresses_is_a_warning(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    net = aws.network(prefix=24)
    aws.cluster("hp-eks-full", net, count=6, eks_cluster_arn="arn:aws:eks:us-east-1:123456789012:cluster/absent")
    aws.set_group("hp-eks-full", "workers", CurrentCount=2)  # 4 x 81 = 324 planned, 4 x 32 = 128 certain
    _code, report = diagnose(capsys, "hp-eks-full")
    (finding,) = _addresses(report)
    assert finding["severity"] == "warning"
    assert "4 more ml.p5.48xlarge nodes x 81 addresses = 324) need 324 private IPs (on EKS with the VPC CNI defaults " \
           "(no prefix delegation)), 251 are free" in finding["message"]
    assert "prefix delegation" in finding["fix"]["console"] and "at most 5" in finding["fix"]["console"]
    assert not _unfilled(finding["fix"]["console"] + finding["fix"]["cli"])


def test_a_scale_up_that_fits_and_a_group_at_its_target_draw_nothing(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    aws.cluster("hp-room", aws.network(), count=10)  # a /20: 4,091 free
    aws.set_group("hp-room", "workers", CurrentCount=2)
    _code, report = diagnose(capsys, "hp-room")
    assert _addresses(report) == []
    aws.cluster("hp-steady", aws.network(prefix=24), count=10)  # 10 of 10 running: no scale-up pending
    _code, report = diagnose(capsys, "hp-steady")
    assert _addresses(report) == [] and not any("HP-ADDRESSES" in n for n in report["notEvaluated"])


def test_groups_sharing_a_subnet_add_up_and_what_was_not_read_is_a_note() -> None:
    from smddp_infra.diagnose.hyperpod import address_items

    groups = [{"InstanceGroupName": "a", "InstanceType": "ml.m5.2xlarge", "CurrentCount": 0, "TargetCount": 10},  # 10 x 1
              {"InstanceGroupName": "b", "InstanceRequirements": {"CurrentInstanceTypes": ["ml.m5.2xlarge"],
                                                                  "DesiredInstanceTypes": ["ml.p5.48xlarge"]},
               "CurrentCount": 1, "TargetCount": 2},  # a flexible group: its most demanding type, p5's 32
              {"InstanceGroupName": "c", "InstanceType": "ml.p5.48xlarge", "CurrentCount": 0, "TargetCount": 1,
               "OverrideVpcConfig": {"Subnets": ["subnet-unread"]}}]
    cluster = {"ClusterName": "hp", "InstanceGroups": groups, "VpcConfig": {"Subnets": ["subnet-1"]},
               "AutoScaling": {"Mode": "Enable"}}
    items, notes = address_items(cluster, {"subnet-1": {"SubnetId": "subnet-1", "AvailableIpAddressCount": 40}}, region="us-east-1")
    (item,) = items
    assert item.severity == "error" and "instance group a (0 of 10 running" in item.message and "+ instance group b (1 of 2" in item.message
    assert "need 42 private IPs" in item.message and "40 are free" in item.message
    assert "lower the InstanceCounts of a and b to what fits together" in (item.console or "")
    assert any("subnet-unread were not read" in n and "of c" in n for n in notes)
    assert any("autoscales (Karpenter)" in n for n in notes)

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
from typing import Any

import pytest

from _diagnose_scenarios import Aws
from smddp_infra.cli import main

AT = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)

#: What a fix may not contain once its subject is known: a ``<placeholder>``; "the group's" / "the
#: cluster's" standing for a name (an instance group's and a cluster's names are always known to
#: diagnose --cluster); a lone "?" standing for a name; "the cluster" where its name belongs.
_PLACEHOLDERS = (re.compile(r"<[A-Za-z][^<>]*>"), re.compile(r"\bthe (?:group|cluster)'s\b", re.I),
                 re.compile(r"(?:^|\s)\?(?:\s|$|,)"), re.compile(r"\bthe cluster\b(?! (?:is|gives))", re.I))


def unfilled(text: str) -> list[str]:
    """The placeholders left in ``text`` (empty: every word of the fix is filled)."""
    return [m.group(0) for p in _PLACEHOLDERS for m in p.finditer(text or "")]


def test_unfilled_finds_each_kind_of_placeholder() -> None:
    assert unfilled("aws sagemaker search-training-plan-offerings --instance-type the group's instance type")
    assert unfilled("--quota-code <code>") and unfilled("add an inbound rule on sg-1 from ?") and unfilled("place the cluster in")
    assert not unfilled("aws ec2 describe-subnets --query \"Subnets[?AvailabilityZoneId!='use1-az4']\" --output text")


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


#: Rules whose fix names an endpoint service: with no region they write ``!Sub com.amazonaws.${AWS::Region}.s3``.
ENDPOINT_FIX_RULES = {"SMDDP-NET2", "SMDDP-NET3", "SMDDP-NET5"}


@pytest.mark.parametrize("region", [None, "eu-west-1"])
def test_every_template_rule_fix_on_the_fixture_templates_is_filled(region: str | None) -> None:
    """The template rules write their fix into the message: every finding over the test templates,
    judged with and without a region (``check`` without ``--region``: the endpoint fixes name
    ``${AWS::Region}``, CloudFormation's pseudo parameter, never ``<region>``)."""
    from pathlib import Path

    from smddp_infra.rules import RULES, check_template
    from smddp_infra.rules.loader import load_template_text

    root = Path(__file__).parent / "fixtures"
    offenders: dict[str, set[str]] = {}
    endpoint_fixes: dict[str, str] = {}
    judged = 0
    for path in sorted([*root.glob("templates/*.yaml"), *root.glob("corpus/*.yaml")]):
        template = load_template_text(path.read_text())
        if not isinstance(template, dict) or "Resources" not in template:
            continue
        judged += 1
        for finding in check_template(template, region=region):
            for word in unfilled(finding.message):
                offenders.setdefault(finding.rule_id, set()).add(word)
            if finding.rule_id in ENDPOINT_FIX_RULES:
                endpoint_fixes.setdefault(finding.rule_id, finding.message)
    assert judged > 50
    assert not [r.id for r in RULES if unfilled(r.explanation)]
    assert offenders == {}
    assert set(endpoint_fixes) == ENDPOINT_FIX_RULES  # each fires on some fixture: the check above saw its fix
    service = f"com.amazonaws.{region}." if region else "!Sub com.amazonaws.${AWS::Region}."
    assert all(service in text for text in endpoint_fixes.values()), endpoint_fixes


def test_every_diagnose_renderer_fills_its_fix_on_a_live_network() -> None:
    """fix_for over a live network where each rule it renders fires (SG1, SG2, NET2, FSX3, FSX4, FSX7, FSX8,
    NET6), and the HyperPod failures of every kind: no fix with an unfilled word."""
    from smddp_infra.diagnose import hyperpod as hp
    from smddp_infra.diagnose.run import judge_network
    from smddp_infra.rules.live_loader import Compute, LiveNetwork

    def subnet(sid: str, cidr: str) -> dict[str, Any]:
        return {"SubnetId": sid, "VpcId": "vpc-1", "CidrBlock": cidr, "AvailabilityZone": "us-east-1a",
                "AvailabilityZoneId": "use1-az4"}

    groups = [{"GroupId": g, "VpcId": "vpc-1", "IpPermissions": [], "IpPermissionsEgress": []} for g in ("sg-efa", "sg-fs")]
    acl = {"NetworkAclId": "acl-1", "VpcId": "vpc-1",
           "Associations": [{"SubnetId": s, "NetworkAclId": "acl-1"} for s in ("subnet-a", "subnet-b", "subnet-fs")],
           "Entries": [{"RuleNumber": 100, "Egress": e, "Protocol": "6", "RuleAction": "allow", "CidrBlock": "0.0.0.0/0",
                        "PortRange": {"From": 443, "To": 443}} for e in (True, False)]
           + [{"RuleNumber": 32767, "Egress": e, "Protocol": "-1", "RuleAction": "deny", "CidrBlock": "0.0.0.0/0"}
              for e in (True, False)]}
    cluster = {"ClusterName": "hp", "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc",
               "ClusterStatus": "Failed", "VpcConfig": {"SecurityGroupIds": ["sg-efa"], "Subnets": ["subnet-a", "subnet-b"]},
               "InstanceGroups": [{"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "CurrentCount": 0,
                                   "TargetCount": 2, "InstanceStorageConfigs": [{"FsxLustreConfig": {
                                       "DnsName": "fs-1.fsx.us-east-1.amazonaws.com", "MountName": "abc"}}]}]}
    fs = {"FileSystemId": "fs-1", "FileSystemType": "LUSTRE", "DNSName": "fs-1.fsx.us-east-1.amazonaws.com",
          "SubnetIds": ["subnet-fs"], "StorageCapacity": 1200, "VpcId": "vpc-1",
          "LustreConfiguration": {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125}}
    network = LiveNetwork(compute=Compute(cluster=cluster), security_groups=groups,
                          subnets=[subnet("subnet-a", "10.0.0.0/20"), subnet("subnet-b", "10.0.16.0/20"),
                                   subnet("subnet-fs", "10.0.32.0/20")],
                          vpcs=[{"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"}],
                          route_tables=[{"RouteTableId": "rtb-1", "VpcId": "vpc-1", "Routes": [],
                                         "Associations": [{"Main": True, "RouteTableId": "rtb-1"}]}],
                          network_acls=[acl], file_systems=[fs], file_system_groups={"fs-1": ("sg-fs",)})
    items = judge_network(network, "us-east-1")
    rendered = {i.rule_id for i in items if i.console or i.cli}
    assert {"SMDDP-SG1", "SMDDP-SG2", "SMDDP-NET2", "SMDDP-FSX7", "SMDDP-NET6"} <= rendered, sorted(rendered)
    failures = ["We currently do not have sufficient capacity to launch new ml.p5.48xlarge instances.",
                "ResourceLimitExceeded: The account-level service limit 'ml.p5.48xlarge for cluster usage' is 0 Instances, "
                "with current utilization of 0 Instances and a request delta of 2 Instances.",
                "Deep health check InstanceStress failed", "Lifecycle scripts did not run successfully.", "Unknown failure"]
    for text in failures:
        nodes = [{"InstanceGroupName": "workers", "InstanceId": "i-0abc", "InstanceStatus": {"Status": "Failure", "Message": text}}]
        joined, own = hp.cluster_items({**cluster, "FailureMessage": text}, nodes, [], items, region="us-east-1",
                                       subnets={s["SubnetId"]: s for s in network.subnets})
        items_all = joined + own
        assert own or any(text in e for i in joined for e in i.evidence), text
        for item in items_all:
            for fix in (item.console, item.cli):
                assert not unfilled(fix or ""), (item.rule_id, fix)
    from smddp_infra.diagnose.collect import LogEvent

    line = "mount.lustre: mount fs-9.fsx.us-east-1.amazonaws.com@tcp:/abc at /fsx failed: Input/output error"
    _, (mount,) = hp.cluster_items({**cluster, "ClusterStatus": "InService"}, [], [LogEvent(AT, "LifecycleConfig/workers/i-0abc", line)],
                                   [], region="us-east-1")
    assert mount.rule_id == "HP-FSX-MOUNT" and "sg-efa" in (mount.console or "")
    for item in [*items, mount]:
        for fix in (item.console, item.cli):
            assert not unfilled(fix or ""), (item.rule_id, fix)

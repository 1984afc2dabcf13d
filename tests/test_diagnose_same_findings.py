"""The same network judged as a template by ``check`` and live by ``diagnose`` gives the same findings.

The default app is synthesized once (conftest) and deployed as a CloudFormation stack into
moto's server (``CreateStack`` with the synthesized template, the CloudFormation doubles of
tests/cfn_doubles registered: the same handlers ``make deploy-local`` uses, there through the
cdk CLI). Then:

1. as deployed: ``check`` finds nothing in the template; ``diagnose --stack`` and ``diagnose
   --security-group/--subnet/--file-system`` find nothing in the account, and no drift;
2. the EFA group's self egress rule is revoked through the EC2 API (someone in the console):
   ``diagnose`` names exactly SMDDP-SG2 on that group (and the drift from the stack's template),
   and ``check`` names the same rule on the same group in the template without that rule;
3. repaired through the API: nothing again.

What a live read cannot see is said, not guessed: moto's FSx reports no network interfaces,
so the file system's groups (SMDDP-FSX3/FSX4) are "not evaluated" live. Three things moto's
CloudFormation leaves out are applied through the EC2 API as CloudFormation would
(:func:`_repair_moto` says which).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from smddp_infra.cli import main
from smddp_infra.rules import check_template

pytestmark = pytest.mark.slow

REGION = "us-east-1"
STACK = "TrainingNetworkStack"
SELF_EGRESS = "TrainingNetworkEfaSelfEgressA8D44125"
EFA_GROUP = "TrainingNetworkEfaGroupADA42E2E"
SUBNET = "TrainingNetworkVpcTrainingSubnet1Subnet31BC44F6"
FILE_SYSTEM = "TrainingNetworkLustreFileSystemBFD42804"


@pytest.fixture(scope="module")
def live(default_app: Any) -> Iterator[tuple[dict[str, Any], dict[str, str], Any, str]]:
    import boto3

    sys.path.insert(0, str(Path(__file__).parent))
    import cfn_doubles
    from _moto_server import moto_server

    # tests/test_deploy_local.py deploys a stack of the same name in its own module: start from a reset
    with moto_server(reset=True) as url:
        cfn_doubles.register()
        try:
            session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
            cfn, ec2 = session.client("cloudformation", endpoint_url=url), session.client("ec2", endpoint_url=url)
            template = default_app.json
            for parameter in (template.get("Parameters") or {}).values():  # what `cdk bootstrap` writes (BootstrapVersion)
                if str(parameter.get("Type", "")).startswith("AWS::SSM::Parameter::Value"):
                    session.client("ssm", endpoint_url=url).put_parameter(Name=parameter["Default"], Value="30", Type="String",
                                                                                Overwrite=True)
            cfn.create_stack(StackName=STACK, TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"])
            assert cfn.describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
            physical = {r["LogicalResourceId"]: r.get("PhysicalResourceId")
                        for r in cfn.describe_stack_resources(StackName=STACK)["StackResources"]}
            _repair_moto(template, physical, ec2)
            yield template, physical, ec2, url
        finally:
            cfn_doubles.unregister()


def _repair_moto(template: dict[str, Any], physical: dict[str, str], ec2: Any) -> None:
    """Apply through the EC2 API what moto 5.2.5's CloudFormation leaves out, as CloudFormation would:

    - inline ``SecurityGroupEgress``: moto's group handler ignores it and keeps the default
      allow-all rule (pinned in test_deploy_local.py::test_moto_still_ignores_inline_egress_rules);
    - ``AWS::EC2::SubnetRouteTableAssociation``: moto reports it created, but the subnet stays on
      its VPC's main route table (DescribeRouteTables lists no association);
    - the VPC's ``EnableDnsSupport`` / ``EnableDnsHostnames``: moto's VPC handler leaves its create-time
      defaults (hostnames off), which SMDDP-NET8 reads.
    """
    resources = template["Resources"]
    for logical_id, resource in resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::EC2::SecurityGroup" and props.get("SecurityGroupEgress"):
            group = physical[logical_id]
            ec2.revoke_security_group_egress(GroupId=group, IpPermissions=[{"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
            for rule in props["SecurityGroupEgress"]:
                ec2.authorize_security_group_egress(GroupId=group, IpPermissions=[{
                    "IpProtocol": str(rule["IpProtocol"]), "FromPort": int(rule["FromPort"]), "ToPort": int(rule["ToPort"]),
                    "IpRanges": [{"CidrIp": rule["CidrIp"]}]}])
        if resource["Type"] == "AWS::EC2::VPC":
            for key in ("EnableDnsSupport", "EnableDnsHostnames"):
                if key in props:
                    ec2.modify_vpc_attribute(VpcId=physical[logical_id], **{key: {"Value": bool(props[key])}})
        if resource["Type"] == "AWS::EC2::SubnetRouteTableAssociation":
            ec2.associate_route_table(RouteTableId=physical[props["RouteTableId"]["Ref"]], SubnetId=physical[props["SubnetId"]["Ref"]])


@pytest.fixture()
def env(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", live[3])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", REGION)


def _diagnose(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _planned(physical: dict[str, str]) -> list[str]:
    return ["--security-group", physical[EFA_GROUP], "--subnet", physical[SUBNET], "--file-system", physical[FILE_SYSTEM]]


def _template_findings(template: dict[str, Any], physical: dict[str, str]) -> set[tuple[str, str]]:
    return {(f.rule_id, physical.get(f.resource) or f.resource) for f in check_template(template, region=REGION)
            if f.severity.value != "info"}


def _live_findings(report: dict[str, Any], *rules: str) -> set[tuple[str, str]]:
    """Findings on the account's resources (the planned placement is diagnose's own input, not a resource)."""
    return {(f["rule"], f["resource"]) for f in report["findings"]
            if f["severity"] != "info" and f["resource"] != "planned-training" and (not rules or f["rule"] in rules)}


def test_as_deployed_both_find_nothing(live: Any, env: None, capsys: pytest.CaptureFixture[str]) -> None:
    template, physical, _, _ = live
    assert _template_findings(template, physical) == set()
    for args in (["--stack", STACK], _planned(physical)):
        code, report = _diagnose(capsys, *args)
        assert (code, [f for f in report["findings"] if f["severity"] != "info"]) == (0, []), json.dumps(report["findings"], indent=1)
        assert any("FSX3/FSX4 not evaluated" in n for n in report["notEvaluated"])
        assert report["verdicts"][2] == {"failure": "init-stall", "title": report["verdicts"][2]["title"],
                                         "verdict": "not found", "why": report["verdicts"][2]["why"]}


def test_a_group_broken_in_the_console_is_named_by_both_then_repaired(live: Any, env: None, capsys: pytest.CaptureFixture[str]) -> None:
    template, physical, ec2, _ = live
    group = physical[EFA_GROUP]
    rules = ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [group]}])["SecurityGroupRules"]
    self_egress = [r for r in rules if r["IsEgress"] and r["IpProtocol"] == "-1"
                   and (r.get("ReferencedGroupInfo") or {}).get("GroupId") == group]
    assert len(self_egress) == 1
    ec2.revoke_security_group_egress(GroupId=group, SecurityGroupRuleIds=[self_egress[0]["SecurityGroupRuleId"]])
    permission = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": group, "Description": "restored"}]}]
    try:
        broken = copy.deepcopy(template)
        del broken["Resources"][SELF_EGRESS]
        expected = _template_findings(broken, physical)
        assert expected == {("SMDDP-SG2", group)}
        code, report = _diagnose(capsys, "--stack", STACK)
        assert code == 1 and _live_findings(report, "SMDDP-SG2") == expected
        assert {f["rule"] for f in report["findings"] if f["severity"] == "error"} == {"SMDDP-SG2"}
        drift = [f for f in report["findings"] if f["rule"] == "SMDDP-DRIFT1"]
        assert len(drift) == 1 and drift[0]["resource"] == group
        assert "removed outside the template: egress all traffic to itself" in drift[0]["message"]
        assert "added outside" not in drift[0]["message"]
        code, report = _diagnose(capsys, *_planned(physical))
        assert code == 1 and _live_findings(report) == expected
    finally:
        ec2.authorize_security_group_egress(GroupId=group, IpPermissions=permission)
    for args in (["--stack", STACK], _planned(physical)):
        code, report = _diagnose(capsys, *args)
        assert (code, [f for f in report["findings"] if f["severity"] != "info"]) == (0, []), json.dumps(report["findings"], indent=1)


def test_an_unknown_stack_is_one_line(live: Any, env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--stack", "NoSuchStack"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--stack NoSuchStack: no stack of that name in us-east-1" in err


def test_guard_reads_the_deployed_stack_through_the_account_room(live: Any, env: None, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """guard --deployed-stack (GetTemplate) goes through smddp_infra.account like diagnose: the same stack
    read back is no replacement; a stack that does not exist passes; a missing credential is one line."""
    template = live[0]
    new = tmp_path / "new.json"
    new.write_text(json.dumps(template))
    assert main(["guard", "--deployed-stack", STACK, str(new), "--region", REGION]) == 0
    assert main(["guard", "--deployed-stack", "NotDeployedYet", str(new), "--region", REGION]) == 0
    assert "stack NotDeployedYet does not exist in us-east-1 yet" in capsys.readouterr().out


def test_guard_without_credentials_is_one_line(live: Any, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    new = tmp_path / "new.json"
    new.write_text(json.dumps(live[0]))
    assert main(["guard", "--deployed-stack", STACK, str(new), "--region", REGION]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no AWS credentials found for cloudformation:GetTemplate" in err

"""The launch guardrail in the default template: what it allows, what it refuses and why.

Requests are evaluated with tests/_iam_model.py, a MODEL of IAM's evaluation (documented
semantics for the operators the policy uses), on the synthesized policy with made-up physical
ids put in for its Ref/GetAtt tokens. Each refused request names the statement and the
condition that refuses it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from _iam_model import Decision, Request, evaluate, training_job_context
from conftest import Synthesized
from smddp_infra import guardrails
from smddp_infra.guardrails import SID_LAUNCH, SID_PASS_ROLE

ACCOUNT = "123456789012"
REGION = "us-east-1"
JOB_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/llm-pretrain-1"
FOREIGN_SUBNET = "subnet-0ffffffffffffffff"  # e.g. the account's default subnet in a second AZ
DEFAULT_GROUP = "sg-0dddddddddddddddd"  # the VPC's default group: no EFA self rules


def _fake(logical: str, n: int = 17) -> str:
    return hashlib.sha256(logical.encode()).hexdigest()[:n]


def physical(template: dict[str, Any], logical: str, attr: str) -> str:
    """A made-up, well-formed physical id for a resource attribute."""
    kind = template["Resources"][logical]["Type"]
    return {
        ("AWS::EC2::Subnet", "Ref"): f"subnet-{_fake(logical)}",
        ("AWS::EC2::SecurityGroup", "GroupId"): f"sg-{_fake(logical)}",
        ("AWS::IAM::Role", "Arn"): f"arn:aws:iam::{ACCOUNT}:role/{logical}",
        ("AWS::S3::Bucket", "Ref"): logical.lower(),
        ("AWS::FSx::FileSystem", "Ref"): f"fs-{_fake(logical)}",
        ("AWS::FSx::FileSystem", "LustreMountName"): f"m{_fake(logical, 7)}",
        ("AWS::SSM::Parameter", "Ref"): f"/smddp/{logical}",
        ("AWS::IAM::ManagedPolicy", "Ref"): f"arn:aws:iam::{ACCOUNT}:policy/{logical}",
        ("AWS::KMS::Key", "Arn"): f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{_fake(logical, 8)}-0000-0000-0000-000000000000",
        ("AWS::CloudWatch::Alarm", "Ref"): f"Stack-{logical}",
        ("AWS::CloudWatch::Dashboard", "Ref"): f"Stack-{logical}",
        ("AWS::SNS::Topic", "Ref"): f"arn:aws:sns:{REGION}:{ACCOUNT}:{logical}",
    }[(kind, attr)]


PSEUDO = {"AWS::Partition": "aws", "AWS::AccountId": ACCOUNT, "AWS::Region": REGION, "AWS::URLSuffix": "amazonaws.com"}


def resolve(value: Any, template: dict[str, Any]) -> Any:
    """Replace Ref / Fn::GetAtt / Fn::Join in a template value with concrete strings."""
    if isinstance(value, list):
        return [resolve(v, template) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (fn, arg), = value.items()
            if fn == "Ref":
                return PSEUDO.get(arg) or physical(template, arg, "Ref")
            if fn == "Fn::GetAtt":
                return physical(template, arg[0], arg[1])
            if fn == "Fn::Join":
                return arg[0].join(str(resolve(p, template)) for p in arg[1])
        return {k: resolve(v, template) for k, v in value.items()}
    return value


def launch_policy_id(t: Synthesized) -> str:
    found = [k for k, v in t.resources("AWS::IAM::ManagedPolicy").items()
             if any(s.get("Sid") == SID_LAUNCH for s in v["Properties"]["PolicyDocument"]["Statement"])]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def resolved(default_app: Synthesized) -> dict[str, Any]:
    """The default template's launch policy and job settings, with physical ids."""
    t = default_app.json
    policy = resolve(t["Resources"][launch_policy_id(default_app)]["Properties"]["PolicyDocument"], t)
    document = json.loads(resolve(t["Outputs"]["TrainingJobConfig"]["Value"], t))
    return {"policy": policy, "document": document}


@pytest.fixture(scope="module")
def job_request(resolved: dict[str, Any]) -> dict[str, Any]:
    """The CreateTrainingJob request `smddp-infra job-config --format boto3` renders for the network."""
    from smddp_infra.contract import parse_document
    from smddp_infra.jobconfig.render import create_training_job_fragment

    document = parse_document(resolved["document"], where="TrainingJobConfig: ")
    return {"TrainingJobName": "llm-pretrain-1", **create_training_job_fragment(document)}


def launch(policy: dict[str, Any], request: dict[str, Any]) -> Decision:
    return evaluate([policy], Request("sagemaker:CreateTrainingJob", JOB_ARN, training_job_context(request)))


# --- the template -----------------------------------------------------------------------------

def test_default_template_carries_the_launch_policy_and_outputs_its_arn(default_app: Synthesized) -> None:
    logical = launch_policy_id(default_app)
    assert default_app.json["Outputs"]["LaunchPolicyArn"]["Value"] == {"Ref": logical}


def test_launch_policy_is_attached_to_nobody_by_default(default_app: Synthesized) -> None:
    props = default_app.json["Resources"][launch_policy_id(default_app)]["Properties"]
    assert not {"Roles", "Users", "Groups"} & set(props)


def test_launch_policy_has_the_statements_of_the_pure_builder(default_app: Synthesized, resolved: dict[str, Any]) -> None:
    sids = [s["Sid"] for s in resolved["policy"]["Statement"]]
    assert sids == [guardrails.SID_LAUNCH, guardrails.SID_PASS_ROLE, guardrails.SID_SIMULATE, guardrails.SID_MANAGE,
                    guardrails.SID_BUCKET_LIST, guardrails.SID_CODE, guardrails.SID_OUTPUT, guardrails.SID_STAGED,
                    guardrails.SID_LOGS]


# --- what it allows ---------------------------------------------------------------------------

def test_the_job_config_request_for_this_network_is_allowed(resolved: dict[str, Any], job_request: dict[str, Any]) -> None:
    decision = launch(resolved["policy"], job_request)
    assert decision.allowed and decision.sid == SID_LAUNCH, decision


def test_passing_the_execution_role_to_sagemaker_is_allowed(resolved: dict[str, Any], job_request: dict[str, Any]) -> None:
    decision = evaluate([resolved["policy"]], Request("iam:PassRole", job_request["RoleArn"],
                                                      {"iam:PassedToService": "sagemaker.amazonaws.com"}))
    assert decision.allowed and decision.sid == SID_PASS_ROLE


@pytest.mark.parametrize("action", ["sagemaker:DescribeTrainingJob", "sagemaker:StopTrainingJob", "sagemaker:AddTags"])
def test_watching_stopping_and_tagging_jobs_is_allowed(resolved: dict[str, Any], action: str) -> None:
    assert evaluate([resolved["policy"]], Request(action, JOB_ARN, {})).allowed


def test_the_sdk_can_upload_code_and_read_output_but_not_checkpoints(resolved: dict[str, Any]) -> None:
    bucket = resolved["document"]["code"]["s3Uri"].removeprefix("s3://").split("/")[0]
    objects = f"arn:aws:s3:::{bucket}"
    assert evaluate([resolved["policy"]], Request("s3:PutObject", f"{objects}/code/job-1/source/sourcedir.tar.gz", {})).allowed
    assert evaluate([resolved["policy"]], Request("s3:GetObject", f"{objects}/output/job-1/output/model.tar.gz", {})).allowed
    assert not evaluate([resolved["policy"]], Request("s3:PutObject", f"{objects}/output/job-1/model.tar.gz", {})).allowed
    assert not evaluate([resolved["policy"]], Request("s3:GetObject", f"{objects}/checkpoints/step-100.pt", {})).allowed
    # SDK v3 stages code under <output>/<code>/ (the execution role's StagedCodeRead), after
    # validating the role with iam:SimulatePrincipalPolicy on that role only
    assert evaluate([resolved["policy"]], Request("s3:PutObject", f"{objects}/output/code/job-1/input/code/x.tar.gz", {})).allowed
    role = resolved["document"]["roleArn"]
    assert evaluate([resolved["policy"]], Request("iam:SimulatePrincipalPolicy", role, {})).allowed
    assert not evaluate([resolved["policy"]], Request("iam:SimulatePrincipalPolicy", role + "Other", {})).allowed


def test_training_logs_can_be_read(resolved: dict[str, Any]) -> None:
    stream = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/sagemaker/TrainingJobs:log-stream:llm-pretrain-1/algo-1-1700000000"
    assert evaluate([resolved["policy"]], Request("logs:GetLogEvents", stream, {})).allowed
    other = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/lambda/other:log-stream:x"
    assert not evaluate([resolved["policy"]], Request("logs:GetLogEvents", other, {})).allowed


# --- what it refuses, and which statement and condition refuse it -------------------------------

def _foreign_subnet(r: dict[str, Any]) -> None:
    r["VpcConfig"]["Subnets"] = [FOREIGN_SUBNET]


def _second_az(r: dict[str, Any]) -> None:
    r["VpcConfig"]["Subnets"].append(FOREIGN_SUBNET)


def _default_group(r: dict[str, Any]) -> None:
    r["VpcConfig"]["SecurityGroupIds"] = [DEFAULT_GROUP]


def _extra_group(r: dict[str, Any]) -> None:
    r["VpcConfig"]["SecurityGroupIds"].append(DEFAULT_GROUP)


def _no_vpc(r: dict[str, Any]) -> None:
    del r["VpcConfig"]


def _non_efa(r: dict[str, Any]) -> None:
    r["ResourceConfig"]["InstanceType"] = "ml.g5.48xlarge"


def _unencrypted(r: dict[str, Any]) -> None:
    r["EnableInterContainerTrafficEncryption"] = False


def _encryption_unsaid(r: dict[str, Any]) -> None:
    del r["EnableInterContainerTrafficEncryption"]


def _foreign_file_system(r: dict[str, Any]) -> None:
    r["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]["FileSystemId"] = "fs-0eeeeeeeeeeeeeeee"


def _outside_mount(r: dict[str, Any]) -> None:
    r["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]["DirectoryPath"] = "/other/data"


def _rw_channel(r: dict[str, Any]) -> None:
    r["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]["FileSystemAccessMode"] = "rw"


REFUSED = {
    "foreign subnet": (_foreign_subnet, ("ForAllValues:StringEquals", "sagemaker:VpcSubnets")),
    "two AZs": (_second_az, ("ForAllValues:StringEquals", "sagemaker:VpcSubnets")),
    "default group": (_default_group, ("ForAllValues:StringEquals", "sagemaker:VpcSecurityGroupIds")),
    "extra foreign group": (_extra_group, ("ForAllValues:StringEquals", "sagemaker:VpcSecurityGroupIds")),
    "no VPC config": (_no_vpc, ("Null", "sagemaker:VpcSubnets")),
    "non-EFA instance type": (_non_efa, ("ForAllValues:StringEquals", "sagemaker:InstanceTypes")),
    "unencrypted traffic": (_unencrypted, ("Bool", "sagemaker:InterContainerTrafficEncryption")),
    "encryption not said": (_encryption_unsaid, ("Bool", "sagemaker:InterContainerTrafficEncryption")),
    "foreign file system": (_foreign_file_system, ("StringEqualsIfExists", "sagemaker:FileSystemId")),
    "path outside the mount": (_outside_mount, ("StringLikeIfExists", "sagemaker:FileSystemDirectoryPath")),
    "read-write channel on a read-only network": (_rw_channel, ("StringEqualsIfExists", "sagemaker:FileSystemAccessMode")),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_job_outside_the_network_is_refused_by_the_launch_statement(case: str, resolved: dict[str, Any],
                                                                      job_request: dict[str, Any]) -> None:
    change, (operator, key) = REFUSED[case]
    request = copy.deepcopy(job_request)
    change(request)
    decision = launch(resolved["policy"], request)
    assert not decision.allowed
    assert decision.refused_by() == (SID_LAUNCH, operator, key)


def test_without_the_null_condition_a_request_without_vpc_config_would_pass(resolved: dict[str, Any],
                                                                           job_request: dict[str, Any]) -> None:
    """The empty-set trap: ForAllValues over a missing key is vacuously true. Two guards close it:
    the Null condition, and (for the groups) ForAnyValue, which is false for a missing key."""
    request = copy.deepcopy(job_request)
    _no_vpc(request)
    weakened = copy.deepcopy(resolved["policy"])
    del weakened["Statement"][0]["Condition"]["Null"]
    assert launch(weakened, request).refused_by() == (SID_LAUNCH, "ForAnyValue:StringEquals", "sagemaker:VpcSecurityGroupIds")
    del weakened["Statement"][0]["Condition"]["ForAnyValue:StringEquals"]
    assert launch(weakened, request).allowed
    assert launch(resolved["policy"], request).refused_by() == (SID_LAUNCH, "Null", "sagemaker:VpcSubnets")


def test_passing_another_role_is_refused_by_the_pass_role_statement(resolved: dict[str, Any]) -> None:
    other = f"arn:aws:iam::{ACCOUNT}:role/DataScienceAdmin"
    decision = evaluate([resolved["policy"]], Request("iam:PassRole", other, {"iam:PassedToService": "sagemaker.amazonaws.com"}))
    assert decision.refused_by() == (SID_PASS_ROLE, "Resource", None)


def test_passing_the_execution_role_to_another_service_is_refused(resolved: dict[str, Any], job_request: dict[str, Any]) -> None:
    decision = evaluate([resolved["policy"]], Request("iam:PassRole", job_request["RoleArn"], {"iam:PassedToService": "ec2.amazonaws.com"}))
    assert decision.refused_by() == (SID_PASS_ROLE, "StringEquals", "iam:PassedToService")


def test_tuning_jobs_are_not_allowed_by_default(resolved: dict[str, Any], job_request: dict[str, Any]) -> None:
    arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:hyper-parameter-tuning-job/hpo-1"
    decision = evaluate([resolved["policy"]], Request("sagemaker:CreateHyperParameterTuningJob", arn,
                                                      training_job_context(job_request)))
    assert decision.effect == "ImplicitDeny" and all(m.part == "Action" for m in decision.misses)


# --- the deny style (SCP / permissions boundary) ------------------------------------------------

FULL_ACCESS = {"Version": "2012-10-17", "Statement": [{"Sid": "FullAWSAccess", "Effect": "Allow", "Action": "*", "Resource": "*"}]}


@pytest.fixture(scope="module")
def deny_document(resolved: dict[str, Any]) -> dict[str, Any]:
    """The deny style for the same network, built from the same ids the template resolved to."""
    doc = resolved["document"]
    launch_statement = resolved["policy"]["Statement"][0]["Condition"]
    scope = guardrails.LaunchScope(
        partition="aws", region=REGION, account=ACCOUNT, subnet_ids=tuple(doc["subnets"]),
        security_group_ids=tuple(doc["securityGroupIds"]), role_arn=doc["roleArn"],
        instance_types=(doc["instanceType"],), file_system_id=doc["fileSystem"]["id"],
        file_system_mount_name=doc["fileSystem"]["mountName"],
    )
    # The same network as the template's statement: same subnets, groups and types.
    assert guardrails.launch_conditions(scope)["ForAllValues:StringEquals"] == launch_statement["ForAllValues:StringEquals"]
    return guardrails.deny_policy_document(scope)


DENIED = {
    "foreign subnet": (_foreign_subnet, "DenyForeignSubnets", "ForAnyValue:StringNotEquals"),
    "two AZs": (_second_az, "DenyForeignSubnets", "ForAnyValue:StringNotEquals"),
    "default group": (_default_group, "DenyForeignSecurityGroups", "ForAnyValue:StringNotEquals"),
    "no VPC config": (_no_vpc, "DenyTrainingWithoutSubnets", "Null"),
    "non-EFA instance type": (_non_efa, "DenyOtherInstanceTypes", "ForAnyValue:StringNotEquals"),
    "unencrypted traffic": (_unencrypted, "DenyUnencryptedInterContainerTraffic", "BoolIfExists"),
    "encryption not said": (_encryption_unsaid, "DenyUnencryptedInterContainerTraffic", "BoolIfExists"),
    "foreign file system": (_foreign_file_system, "DenyForeignFileSystems", "StringNotEquals"),
}


def test_deny_style_lets_the_job_config_request_through(deny_document: dict[str, Any], job_request: dict[str, Any]) -> None:
    decision = evaluate([FULL_ACCESS, deny_document],
                        Request("sagemaker:CreateTrainingJob", JOB_ARN, training_job_context(job_request)))
    assert decision.allowed and decision.sid == "FullAWSAccess"


@pytest.mark.parametrize("case", list(DENIED))
def test_deny_style_refuses_each_request_by_its_own_statement(case: str, deny_document: dict[str, Any],
                                                              job_request: dict[str, Any]) -> None:
    change, sid, operator = DENIED[case]
    request = copy.deepcopy(job_request)
    change(request)
    decision = evaluate([FULL_ACCESS, deny_document],
                        Request("sagemaker:CreateTrainingJob", JOB_ARN, training_job_context(request)))
    assert decision.effect == "ExplicitDeny" and decision.sid == sid and decision.condition[0] == operator, decision


def test_deny_style_closes_the_tuning_job_side_door(deny_document: dict[str, Any], job_request: dict[str, Any]) -> None:
    request = copy.deepcopy(job_request)
    _no_vpc(request)
    arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:hyper-parameter-tuning-job/hpo-1"
    decision = evaluate([FULL_ACCESS, deny_document], Request("sagemaker:CreateHyperParameterTuningJob", arn,
                                                              training_job_context(request)))
    assert decision.effect == "ExplicitDeny" and decision.sid == "DenyTrainingWithoutSubnets"


def test_deny_style_does_not_refuse_a_job_without_an_fsx_channel(deny_document: dict[str, Any], job_request: dict[str, Any]) -> None:
    """StringNotEquals is TRUE for a missing key: without its Null: false the statement would deny every S3-only job."""
    request = copy.deepcopy(job_request)
    del request["InputDataConfig"]
    ctx = training_job_context(request)
    assert evaluate([FULL_ACCESS, deny_document], Request("sagemaker:CreateTrainingJob", JOB_ARN, ctx)).allowed
    weakened = copy.deepcopy(deny_document)
    (fs,) = [s for s in weakened["Statement"] if s["Sid"] == "DenyForeignFileSystems"]
    del fs["Condition"]["Null"]
    assert evaluate([FULL_ACCESS, weakened], Request("sagemaker:CreateTrainingJob", JOB_ARN, ctx)).effect == "ExplicitDeny"


def test_deny_style_fits_an_scp(deny_document: dict[str, Any]) -> None:
    """AWS Organizations caps an SCP at 5,120 characters; the CLI prints it minified with --deny-style."""
    assert len(json.dumps(deny_document, separators=(",", ":"))) <= 5120


# --- checked against AWS's IAM definitions offline (parliament) ---------------------------------

#: parliament findings that cannot be avoided, each explained in docs/security.md.
UNAVOIDABLE = {"PERMISSIONS_MANAGEMENT_ACTIONS"}  # community auditor: iam:PassRole, scoped to one role


def parliament_findings(document: dict[str, Any], *, community: bool = False) -> list[tuple[str, str]]:
    from parliament import analyze_policy_string

    policy = analyze_policy_string(json.dumps(document), include_community_auditors=community)
    return sorted((f.issue, f"{f.detail} {f.location}") for f in policy.findings)


def every_option_scope() -> guardrails.LaunchScope:
    return guardrails.LaunchScope(
        partition="aws", region=REGION, account=ACCOUNT, subnet_ids=("subnet-0123456789abcdef0",),
        security_group_ids=("sg-0123456789abcdef0", "sg-0fedcba9876543210"), role_arn=f"arn:aws:iam::{ACCOUNT}:role/Train",
        instance_types=("ml.p5.48xlarge", "ml.p5e.48xlarge"), file_system_id="fs-0123456789abcdef0",
        file_system_mount_name="abcdefgh", file_system_access_mode="rw",
        kms_key_arn=f"arn:aws:kms:{REGION}:{ACCOUNT}:key/11111111-2222-3333-4444-555555555555",
        require_output_kms_key=True, bucket_name="jobs", code_prefix="code", output_prefix="output",
        include_tuning_jobs=True, job_name_prefix="team-a-",
    )


def test_parliament_finds_nothing_in_the_synthesized_policy(resolved: dict[str, Any]) -> None:
    assert parliament_findings(resolved["policy"]) == []


def test_parliament_community_auditors_find_only_the_documented_pass_role(resolved: dict[str, Any]) -> None:
    from conftest import ROOT

    findings = parliament_findings(resolved["policy"], community=True)
    assert findings and {issue for issue, _ in findings} == UNAVOIDABLE, findings
    assert all("iam:passrole" in detail.lower() for _, detail in findings)
    security = (ROOT / "docs" / "security.md").read_text()
    assert all(issue in security for issue in UNAVOIDABLE)


@pytest.mark.parametrize("style", ["allow", "deny"])
def test_parliament_finds_nothing_with_every_option_on(style: str) -> None:
    build = guardrails.launch_policy_document if style == "allow" else guardrails.deny_policy_document
    findings = parliament_findings(build(every_option_scope()), community=True)
    assert {issue for issue, _ in findings} <= (UNAVOIDABLE if style == "allow" else set()), findings


def test_parliament_really_checks_condition_keys_against_the_action() -> None:
    """A guard that parliament is live: a key AWS does not document for the action is a finding,
    and so is an operator of the wrong type for the key. (Set operators on single-valued
    sagemaker: keys it does not check: the last test here does, from its database.)"""
    wrong_action = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sagemaker:DescribeTrainingJob",
                    "Resource": JOB_ARN, "Condition": {"ForAllValues:StringEquals": {"sagemaker:VpcSubnets": ["subnet-1"]}}}]}
    assert "UNKNOWN_CONDITION_FOR_ACTION" in {i for i, _ in parliament_findings(wrong_action)}
    wrong_type = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sagemaker:CreateTrainingJob",
                  "Resource": JOB_ARN, "Condition": {"StringEquals": {"sagemaker:InterContainerTrafficEncryption": "true"}}}]}
    assert "MISMATCHED_TYPE" in {i for i, _ in parliament_findings(wrong_type)}


def test_every_condition_key_is_one_aws_documents_for_its_actions() -> None:
    """Straight from parliament's copy of AWS's service authorization reference."""
    import parliament

    definitions = json.loads((__import__("pathlib").Path(parliament.__file__).parent / "iam_definition.json").read_text())
    known: dict[str, set[str]] = {}
    types: dict[str, str] = {}
    for service in definitions:
        for privilege in service["privileges"]:
            keys = {k for r in privilege["resource_types"] for k in r["condition_keys"]}
            known[f"{service['prefix']}:{privilege['privilege']}".lower()] = keys
        types.update({c["condition"]: c["type"] for c in service["conditions"]})
    scope = every_option_scope()
    for statement in guardrails.launch_statements(scope) + guardrails.deny_statements(scope):
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        for operator, pairs in statement.get("Condition", {}).items():
            for key in pairs:
                for action in actions:
                    assert key in known[action.lower()] or key.startswith("aws:"), (statement["Sid"], action, key)
                multi = types.get(key, "").startswith("ArrayOf")
                assert operator.startswith(("ForAllValues:", "ForAnyValue:")) == multi or operator == "Null", \
                    (statement["Sid"], operator, key, types.get(key))


def test_the_refused_request_of_security_md(resolved: dict[str, Any], job_request: dict[str, Any],
                                            deny_document: dict[str, Any]) -> None:
    """Two AZs and the default group: every network condition it breaks fails, and the deny style says which."""
    from _iam_model import condition_holds

    request = copy.deepcopy(job_request)
    _second_az(request)
    _default_group(request)
    ctx = training_job_context(request)
    conditions = resolved["policy"]["Statement"][0]["Condition"]
    failing = {(op, key) for op, pairs in conditions.items() for key, values in pairs.items()
               if not condition_holds(op, key, values, ctx)}
    assert failing == {("ForAllValues:StringEquals", "sagemaker:VpcSubnets"),
                       ("ForAllValues:StringEquals", "sagemaker:VpcSecurityGroupIds"),
                       ("ForAnyValue:StringEquals", "sagemaker:VpcSecurityGroupIds")}
    decision = evaluate([FULL_ACCESS, deny_document], Request("sagemaker:CreateTrainingJob", JOB_ARN, ctx))
    assert decision.sid == "DenyForeignSubnets"


# --- options and escape hatches of the pure builder ----------------------------------------------

def _fsx_job(scope: guardrails.LaunchScope) -> dict[str, Any]:
    return {
        "RoleArn": scope.role_arn,
        "ResourceConfig": {"InstanceType": scope.instance_types[0], "InstanceCount": 2},
        "VpcConfig": {"Subnets": list(scope.subnet_ids), "SecurityGroupIds": list(scope.security_group_ids)},
        "EnableInterContainerTrafficEncryption": True,
        "InputDataConfig": [{"ChannelName": "train", "DataSource": {"FileSystemDataSource": {
            "FileSystemId": scope.file_system_id, "FileSystemType": "FSxLustre", "FileSystemAccessMode": "rw",
            "DirectoryPath": f"/{scope.file_system_mount_name}/data"}}}],
    }


TEAM_JOB_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/team-a-run-1"  # every_option_scope's job_name_prefix


def launch_team(policy: dict[str, Any], request: dict[str, Any]) -> Decision:
    return evaluate([policy], Request("sagemaker:CreateTrainingJob", TEAM_JOB_ARN, training_job_context(request)))


def test_job_name_prefix_limits_the_jobs_that_may_start() -> None:
    scope = every_option_scope()
    request = {**_fsx_job(scope), "OutputDataConfig": {"KmsKeyId": scope.kms_key_arn}}
    doc = guardrails.launch_policy_document(scope)
    assert launch_team(doc, request).allowed
    assert launch(doc, request).refused_by() == (SID_LAUNCH, "Resource", None)


def test_output_key_is_if_given_by_default_and_required_on_request() -> None:
    scope = every_option_scope()
    request = _fsx_job(scope)
    allow_if_given = guardrails.launch_policy_document(guardrails.LaunchScope(**{**scope.__dict__, "require_output_kms_key": False}))
    assert launch_team(allow_if_given, request).allowed
    required = guardrails.launch_policy_document(scope)
    assert launch_team(required, request).refused_by() == (SID_LAUNCH, "ArnEquals", "sagemaker:OutputKmsKey")
    request["OutputDataConfig"] = {"S3OutputPath": "s3://jobs/output/", "KmsKeyId": scope.kms_key_arn}
    assert launch_team(required, request).allowed
    request["OutputDataConfig"]["KmsKeyId"] = scope.kms_key_arn.replace("1111", "9999")
    assert launch_team(required, request).refused_by() == (SID_LAUNCH, "ArnEquals", "sagemaker:OutputKmsKey")


def test_deny_style_with_a_key_refuses_only_a_foreign_key() -> None:
    scope = guardrails.LaunchScope(**{**every_option_scope().__dict__, "require_output_kms_key": False})
    deny = guardrails.deny_policy_document(scope)
    request = _fsx_job(scope)
    ctx = training_job_context(request)
    assert evaluate([FULL_ACCESS, deny], Request("sagemaker:CreateTrainingJob", JOB_ARN, ctx)).allowed
    request["ResourceConfig"]["VolumeKmsKeyId"] = "arn:aws:kms:us-east-1:123456789012:key/other"
    decision = evaluate([FULL_ACCESS, deny], Request("sagemaker:CreateTrainingJob", JOB_ARN, training_job_context(request)))
    assert decision.sid == "DenyForeignVolumeKey"


def test_omitted_and_extra_conditions_change_only_what_they_name() -> None:
    base = every_option_scope()
    scope = guardrails.LaunchScope(**{**base.__dict__, "omit_condition_keys": ("sagemaker:FileSystemDirectoryPath",),
                                      "extra_conditions": {"Bool": {"sagemaker:NetworkIsolation": "true"}}})
    conditions = guardrails.launch_conditions(scope)
    assert "StringLikeIfExists" not in conditions
    assert conditions["Bool"] == {"sagemaker:InterContainerTrafficEncryption": "true", "sagemaker:NetworkIsolation": "true"}
    request = _fsx_job(scope)
    request["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]["DirectoryPath"] = "/elsewhere"
    doc = guardrails.launch_policy_document(scope)
    assert launch_team(doc, request).refused_by() == (SID_LAUNCH, "Bool", "sagemaker:NetworkIsolation")
    request["EnableNetworkIsolation"] = True
    request["OutputDataConfig"] = {"KmsKeyId": scope.kms_key_arn}
    assert launch_team(doc, request).allowed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"subnet_ids": ()}, "at least one training subnet"),
        ({"security_group_ids": ()}, "at least one security group"),
        ({"instance_types": ()}, "at least one instance type"),
        ({"file_system_access_mode": "rx"}, "file_system_access_mode must be 'ro' or 'rw', got 'rx'"),
        ({"omit_condition_keys": ("FileSystemId",)}, "omit_condition_keys entries must be condition keys"),
    ],
)
def test_bad_scope_is_a_config_error_naming_the_setting(change: dict[str, Any], message: str) -> None:
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        guardrails.LaunchScope(**{**every_option_scope().__dict__, **change})

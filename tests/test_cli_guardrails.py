"""`smddp-infra guardrails`: the launch policy from cdk-outputs.json, the same statements the
construct synthesizes, clean under parliament, and refusing what it must (IAM model)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from _iam_model import Request, evaluate, training_job_context
from smddp_infra.cli import main
from smddp_infra.guardrails import SID_LAUNCH

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "outputs"
DEFAULT = FIXTURES / "default-p4d.json"
SNAPSHOT = ROOT / "tests" / "snapshots" / "TrainingNetworkStack.template.json"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["guardrails", *args])
    out, err = capsys.readouterr()
    return code, out, err


def policy(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = cli(capsys, *args)
    assert code == 0 and err == "", err
    return json.loads(out)


def _resolve(value: Any, template: dict[str, Any], ids: dict[tuple[str, str], str]) -> Any:
    if isinstance(value, list):
        return [_resolve(v, template, ids) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt", "Fn::Join"):
            (fn, arg), = value.items()
            if fn == "Fn::Join":
                return arg[0].join(str(_resolve(p, template, ids)) for p in arg[1])
            if fn == "Ref" and arg.startswith("AWS::"):
                return {"AWS::Partition": "aws", "AWS::AccountId": "123456789012", "AWS::Region": "us-east-1"}[arg]
            logical, attr = (arg, "Ref") if fn == "Ref" else arg
            return ids[(template["Resources"][logical]["Type"], attr)]
        return {k: _resolve(v, template, ids) for k, v in value.items()}
    return value


def test_cli_renders_exactly_the_statements_the_default_template_carries(capsys) -> None:
    """One builder: the reviewed template's launch policy, with the fixture's physical ids put in
    for its tokens, is the CLI's output for that fixture."""
    outputs = json.loads(DEFAULT.read_text())["TrainingNetworkStack"]
    template = json.loads(SNAPSHOT.read_text())
    bucket = outputs["CodeS3Uri"].removeprefix("s3://").split("/")[0]
    ids = {
        ("AWS::EC2::Subnet", "Ref"): outputs["TrainingSubnetIds"],
        ("AWS::EC2::SecurityGroup", "GroupId"): outputs["SecurityGroupIds"],
        ("AWS::IAM::Role", "Arn"): outputs["RoleArn"],
        ("AWS::S3::Bucket", "Ref"): bucket,
        ("AWS::FSx::FileSystem", "Ref"): outputs["FileSystemId"],
        ("AWS::FSx::FileSystem", "LustreMountName"): outputs["FileSystemMountName"],
    }
    (synthesized,) = [r["Properties"]["PolicyDocument"] for r in template["Resources"].values()
                      if r["Type"] == "AWS::IAM::ManagedPolicy"
                      and any(s.get("Sid") == SID_LAUNCH for s in r["Properties"]["PolicyDocument"]["Statement"])]
    assert _single(policy(capsys, "--outputs", str(DEFAULT))) == _single(_resolve(synthesized, template, ids))


def _single(value: Any) -> Any:
    """CDK writes a one-element list as its element (IAM reads both the same)."""
    if isinstance(value, list):
        return _single(value[0]) if len(value) == 1 else [_single(v) for v in value]
    if isinstance(value, dict):
        return {k: _single(v) for k, v in value.items()}
    return value


def test_deny_style_is_only_denies_and_fits_an_scp_minified(capsys) -> None:
    code, out, _ = cli(capsys, "--outputs", str(DEFAULT), "--deny-style", "--compact")
    doc = json.loads(out)
    assert code == 0 and {s["Effect"] for s in doc["Statement"]} == {"Deny"}
    assert len(out.strip()) <= 5120 and "\n" not in out.strip()


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.json") if p.name != "individual-outputs-only.json"))
@pytest.mark.parametrize("style", [(), ("--deny-style",), ("--include-tuning-jobs",)])
def test_parliament_finds_nothing_in_any_rendering(capsys, fixture: str, style: tuple[str, ...]) -> None:
    from parliament import analyze_policy_string

    doc = policy(capsys, "--outputs", str(FIXTURES / fixture), *style)
    assert [f.issue for f in analyze_policy_string(json.dumps(doc)).findings] == []


def test_partition_and_account_come_from_the_role_arn(capsys) -> None:
    doc = policy(capsys, "--outputs", str(FIXTURES / "govcloud-short-ids.json"))
    assert doc["Statement"][0]["Resource"][0].startswith("arn:aws-us-gov:sagemaker:")


def test_the_job_config_request_of_the_same_file_is_allowed_and_a_second_az_is_not(capsys) -> None:
    doc = policy(capsys, "--outputs", str(DEFAULT))
    assert main(["job-config", "--outputs", str(DEFAULT), "--format", "boto3"]) == 0
    request = {"TrainingJobName": "job-1", **json.loads(capsys.readouterr().out)}
    arn = "arn:aws:sagemaker:us-east-1:123456789012:training-job/job-1"
    assert evaluate([doc], Request("sagemaker:CreateTrainingJob", arn, training_job_context(request))).allowed
    two_azs = copy.deepcopy(request)
    two_azs["VpcConfig"]["Subnets"].append("subnet-0ffffffffffffffff")
    decision = evaluate([doc], Request("sagemaker:CreateTrainingJob", arn, training_job_context(two_azs)))
    assert decision.refused_by() == (SID_LAUNCH, "ForAllValues:StringEquals", "sagemaker:VpcSubnets")


def test_instance_types_can_be_widened_to_other_efa_types(capsys) -> None:
    doc = policy(capsys, "--outputs", str(DEFAULT), "--instance-type", "ml.p4d.24xlarge", "--instance-type", "ml.p4de.24xlarge")
    assert doc["Statement"][0]["Condition"]["ForAllValues:StringEquals"]["sagemaker:InstanceTypes"] == [
        "ml.p4d.24xlarge", "ml.p4de.24xlarge"]


def test_stack_with_only_individual_outputs_needs_an_instance_type(capsys) -> None:
    path = str(FIXTURES / "individual-outputs-only.json")
    code, out, err = cli(capsys, "--outputs", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and "pass --instance-type" in err
    assert policy(capsys, "--outputs", path, "--instance-type", "ml.p4d.24xlarge")["Statement"][0]["Sid"] == SID_LAUNCH


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--outputs", "missing.json"), "--outputs file 'missing.json' does not exist"),
        (("--outputs", str(DEFAULT), "--instance-type", "ml.g5.48xlarge"),
         "--instance-type must be a SageMaker EFA training instance type"),
        (("--outputs", str(DEFAULT), "--network", "Nope"), "--network 'Nope' is not in the outputs file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args: tuple[str, ...], message: str) -> None:
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("smddp-infra guardrails: error: ") and err.count("\n") == 1 and message in err, err


def test_bad_role_arn_in_the_document_names_the_setting(capsys, tmp_path: Path) -> None:
    data = json.loads(DEFAULT.read_text())
    outputs = data["TrainingNetworkStack"]
    document = json.loads(outputs["TrainingJobConfig"])
    document["roleArn"] = "arn:aws:iam::123:role/x"
    outputs["TrainingJobConfig"] = json.dumps(document)
    outputs["RoleArn"] = document["roleArn"]
    path = tmp_path / "cdk-outputs.json"
    path.write_text(json.dumps(data))
    code, _, err = cli(capsys, "--outputs", str(path))
    assert code == 2 and "roleArn" in err and "'arn:aws:iam::123:role/x'" in err, err


def test_security_md_shows_the_cli_output_for_the_representative_outputs_file(capsys) -> None:
    code, out, _ = cli(capsys, "--outputs", str(DEFAULT))
    assert code == 0
    text = (ROOT / "docs" / "security.md").read_text()
    assert f"```json\n{out}```" in text, "docs/security.md's guardrail JSON is stale: paste `smddp-infra guardrails --outputs tests/fixtures/outputs/default-p4d.json`"


def test_guardrails_command_and_builder_never_import_cdk() -> None:
    """Pure: the CLI renders the policy without aws_cdk, jsii or constructs (a laptop without Node)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from smddp_infra.cli import main\n"
        f"rc = main(['guardrails', '--outputs', {str(DEFAULT)!r}, '--deny-style'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('aws_cdk', 'jsii', 'constructs', 'cdk_nag'))\n"
        "sys.stderr.write(repr(bad)); sys.exit(rc if not bad else 99)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

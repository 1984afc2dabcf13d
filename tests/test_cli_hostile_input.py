"""Hostile input to every reader (check, job-config, guard, preflight, diagnose, observe): one
line on stderr, exit 2, nothing on stdout, no traceback, and quickly (issue 41).

The documents are built here (an alias bomb, 5,000 levels of nesting, a body past CloudFormation's
1 MB); the malformed regions fail before any client exists, so no account (and no moto) is needed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from smddp_infra.cli import main

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ROOT / "tests" / "fixtures" / "outputs"
COMPLIANT = ROOT / "tests" / "fixtures" / "templates" / "compliant.yaml"


def laughs(levels: int = 9) -> str:
    """A "billion laughs" template of under 1 KB: each anchor lists the one before ten times."""
    lines = ["  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return ("Metadata:\n" + "\n".join(lines)
            + f"\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties: {{Tags: *l{levels - 1}}}\n")


HOSTILE = {
    "alias-bomb.yaml": (laughs(), "once its YAML aliases are expanded"),
    "self-alias.yaml": ("Resources: &r\n  Q: {Type: AWS::SQS::Queue, Properties: {Loop: *r}}\n",
                        "is aliased inside the node it names"),
    "deep.json": ('{"Resources": ' + "[" * 5000 + "]" * 5000 + "}", "nests more than 100 levels deep"),
    "deep.yaml": ("Resources: " + "[" * 5000 + "]" * 5000, "maximum nesting depth"),
    "huge.json": ('{"Resources": {}, "Description": "' + "x" * 1_100_000 + '"}', "at most 1 MB"),
}


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], *, within: float = 5.0) -> str:
    started = time.process_time()  # CPU time: a loaded machine does not fail it, a reader that spins does
    code = main(argv)
    elapsed = time.process_time() - started
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == "", out  # nothing written
    assert err.count("\n") == 1 and err.startswith(f"smddp-infra {argv[0]}: error: "), err
    assert "Traceback" not in err and "Error:" not in err, err
    assert elapsed < within, f"{argv[0]} took {elapsed:.1f} s"
    return err.strip()


@pytest.fixture(params=sorted(HOSTILE))
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    text, expected = HOSTILE[request.param]
    path = tmp_path / request.param
    path.write_text(text)
    return path, expected


def test_check_refuses_a_hostile_template(capsys: pytest.CaptureFixture[str], hostile: tuple[Path, str]) -> None:
    path, expected = hostile
    assert expected in refused(capsys, ["check", str(path)])


def test_guard_refuses_a_hostile_new_or_deployed_template(capsys: pytest.CaptureFixture[str],
                                                          hostile: tuple[Path, str]) -> None:
    path, expected = hostile
    assert expected in refused(capsys, ["guard", str(path), "--deployed", str(COMPLIANT)])
    assert expected in refused(capsys, ["guard", str(COMPLIANT), "--deployed", str(path)])


def test_job_config_refuses_a_hostile_cluster_template(capsys: pytest.CaptureFixture[str],
                                                       hostile: tuple[Path, str]) -> None:
    path, expected = hostile
    assert expected in refused(capsys, ["job-config", "--outputs", str(OUTPUTS / "p5-64-node-two-groups.json"),
                                        "--format", "hyperpod", "--cluster-template", str(path)])


def test_the_alias_refusal_says_what_cloudformation_does_with_aliases(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(laughs())
    err = refused(capsys, ["check", str(path)])
    assert 'CloudFormation refuses YAML aliases ("YAML aliases are not allowed in CloudFormation templates")' in err
    assert "`aws cloudformation package` and SAM expand them first" in err


def test_preflight_refuses_an_alias_bomb_job_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("instance_type: ml.p5.48xlarge\ninstance_count: 2\nhyperparameters:\n"
                    + laughs().split("Resources:")[0].replace("Metadata:\n", ""))
    err = refused(capsys, ["preflight", str(path)])
    assert f"job file {path} cannot be read: the document holds more than 524,288 values" in err
    assert "CloudFormation" not in err  # a job file is not a template


def test_diagnose_refuses_a_hostile_deployed_template_in_one_line() -> None:
    from smddp_infra.diagnose.run import _parse
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError, match="--stack s: its template is not readable: .*once its YAML aliases"):
        _parse(laughs(), "s")


# -- a malformed region: one line for every command that reads an account, before any call ---------


ACCOUNT_COMMANDS = {
    "diagnose": ["diagnose", "--job", "j1"],
    "observe": ["observe", "--file-system", "fs-0123456789abcdef0"],
    "guard": ["guard", str(COMPLIANT), "--deployed-stack", "s"],
    "guard-file": ["guard", str(COMPLIANT), "--deployed", str(COMPLIANT)],
    "check": ["check", str(COMPLIANT)],
}


@pytest.fixture
def clean_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No profile, no region, fake credentials: nothing here may reach AWS."""
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    return monkeypatch


@pytest.mark.parametrize("command", sorted(ACCOUNT_COMMANDS))
def test_a_malformed_region_flag_is_one_line(capsys: pytest.CaptureFixture[str], clean_aws: Any, command: str) -> None:
    err = refused(capsys, [*ACCOUNT_COMMANDS[command], "--region", "us east 1"])
    assert err.endswith("error: --region must be an AWS Region name such as us-east-1, got 'us east 1'")


@pytest.mark.parametrize("variable", ["AWS_DEFAULT_REGION", "AWS_REGION"])
@pytest.mark.parametrize("command", ["diagnose", "observe", "guard"])
def test_a_malformed_region_in_the_environment_is_one_line_naming_the_variable(
        capsys: pytest.CaptureFixture[str], clean_aws: pytest.MonkeyPatch, command: str, variable: str) -> None:
    clean_aws.setenv(variable, "us east 1")
    err = refused(capsys, ACCOUNT_COMMANDS[command])
    assert err.endswith(f"error: {variable} must be an AWS Region name such as us-east-1, got 'us east 1'")


def test_a_malformed_region_in_the_profile_is_one_line(capsys: pytest.CaptureFixture[str],
                                                        clean_aws: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("[default]\nregion = eu_west_1\n")
    clean_aws.setenv("AWS_CONFIG_FILE", str(config))
    err = refused(capsys, ACCOUNT_COMMANDS["diagnose"])
    assert err.endswith("error: the region of your AWS profile must be an AWS Region name such as us-east-1, "
                        "got 'eu_west_1'")


def test_a_malformed_region_in_the_outputs_file_names_the_file(capsys: pytest.CaptureFixture[str], clean_aws: Any,
                                                               tmp_path: Path) -> None:
    written = (OUTPUTS / "default-p4d.json").read_text()
    text = written.replace('\\"region\\":\\"us-east-1\\"', '\\"region\\":\\"us east 1\\"')
    assert text != written, "the fixture's job document names its region"
    outputs = tmp_path / "outputs.json"
    outputs.write_text(text)
    err = refused(capsys, ["observe", "--outputs", str(outputs)])
    assert "us east 1" in err and "outputs.json" in err


def test_an_account_built_with_a_malformed_region_refuses_it_at_once() -> None:
    from smddp_infra.account import Account, AccountError

    with pytest.raises(AccountError, match=r"^--region must be an AWS Region name such as us-east-1, got 'us-east-1\\n'$"):
        Account(region="us-east-1\n")
    assert Account(region="us-gov-west-1").region == "us-gov-west-1"


# -- check DIR: a file it cannot read is named, with why, and the run exits 2 ----------------------


def test_check_dir_names_a_template_it_cannot_read_and_exits_2(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(COMPLIANT.read_text())
    (tmp_path / "typo.yaml").write_text("Resources:\n  Q: [\n")
    (tmp_path / "bomb.yaml").write_text(laughs())
    (tmp_path / "config.json").write_text('{"not": "a template"}')  # read, not a template: skipped by content
    code = main(["check", "--json", str(tmp_path)])
    out, err = capsys.readouterr()
    payload = json.loads(out)
    assert code == 2
    assert [Path(t["template"]).name for t in payload["templates"]] == ["good.yaml"]
    unreadable = {Path(u["template"]).name: u["error"] for u in payload["unreadable"]}
    assert set(unreadable) == {"bomb.yaml", "typo.yaml"}
    assert "did not find expected node content (line 3, column 1)" in unreadable["typo.yaml"]
    assert "once its YAML aliases are expanded" in unreadable["bomb.yaml"]
    assert [Path(p).name for p in payload["skipped"]] == ["config.json"]
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"smddp-infra check: error: TEMPLATE {str(tmp_path / 'typo.yaml')!r} is not a readable" in err
    assert "no findings in 1 template(s); 2 input(s) could not be read" in err


def test_check_dir_skips_what_cdk_copied_into_a_cloud_assemblys_asset_directories(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "cdk.out"
    (root / "asset.0123abcd" / "chart" / "templates").mkdir(parents=True)
    (root / "manifest.json").write_text('{"version": "36.0.0", "artifacts": {}}')
    (root / "Stack.template.json").write_text(json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}))
    helm = root / "asset.0123abcd" / "chart" / "templates" / "deployment.yaml"
    helm.write_text("spec:\n  replicas: {{ .Values.replicas }}\n  x: [\n")
    code = main(["check", "--json", str(root)])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["unreadable"] == []
    assert str(helm) in payload["skipped"]


@pytest.mark.parametrize("command", [["guard", "{asm}", "--deployed", str(COMPLIANT)], ["review", "{asm}"]],
                         ids=["guard", "review"])
def test_a_hostile_template_in_a_cloud_assembly_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            command: list[str]) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"version": "48.0.0", "artifacts": {"S": {
        "type": "aws:cloudformation:stack", "environment": "aws://unknown-account/us-east-1",
        "properties": {"templateFile": "S.template.json"}}}}))
    (tmp_path / "S.template.json").write_text('{"Resources": {"B": {"Type": "AWS::S3::Bucket", "Properties": '
                                              + "[" * 5000 + "]" * 5000 + "}}}")
    err = refused(capsys, [part.format(asm=tmp_path) for part in command])
    assert f"{tmp_path / 'S.template.json'} cannot be read: the document nests more than 100 levels deep" in err


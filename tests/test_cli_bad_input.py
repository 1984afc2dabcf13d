"""Bad input a new user types in the first hour: one line on stderr, exit 2, naming what they wrote.

Each case runs the real ``main`` in-process (cheap); the missing-dependency cases run a
subprocess, because they hide modules from the import system.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from smddp_infra.cli import main

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = str(ROOT / "tests" / "fixtures" / "outputs" / "default-p4d.json")
SG_SEPARATE = str(ROOT / "tests" / "fixtures" / "templates" / "sg_separate.yaml")
GUARD = ROOT / "tests" / "fixtures" / "guard"


def one_line_exit_2(capsys, argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1, err
    assert err.startswith(f"smddp-infra {argv[0]}: error: "), err
    for leak in ("Traceback", "Error)", "NoneType", "CDK_OUT_DIR"):
        assert leak not in err, err
    return err.strip()


@pytest.fixture
def cdk_out(tmp_path: Path) -> Path:
    """The smallest cloud assembly `review` accepts: a manifest and one template."""
    root = tmp_path / "cdk.out"
    root.mkdir()
    (root / "manifest.json").write_text(json.dumps({"version": "48.0.0", "artifacts": {"S": {
        "type": "aws:cloudformation:stack", "environment": "aws://unknown-account/us-east-1",
        "properties": {"templateFile": "S.template.json"}}}}))
    (root / "S.template.json").write_text(json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}))
    return root


# -- review --out (item 2) ------------------------------------------------------------------------

def test_review_out_that_is_an_existing_file(capsys, cdk_out, tmp_path):
    existing = tmp_path / "exists"
    existing.write_text("x")
    err = one_line_exit_2(capsys, ["review", str(cdk_out), "--out", str(existing), "--no-image"])
    assert f"--out must be a directory the review can be written to, got '{existing}': it is an existing file" in err


def test_review_out_below_a_file(capsys, cdk_out, tmp_path):
    (tmp_path / "file").write_text("x")
    err = one_line_exit_2(capsys, ["review", str(cdk_out), "--out", str(tmp_path / "file" / "sub"), "--no-image"])
    assert f"--out must be a directory the review can be written to, got '{tmp_path / 'file' / 'sub'}': not a directory" in err


def test_review_out_that_cannot_be_created(capsys, cdk_out):
    err = one_line_exit_2(capsys, ["review", str(cdk_out), "--out", "/proc/smddp-infra-review", "--no-image"])
    assert "--out must be a directory the review can be written to, got '/proc/smddp-infra-review': " in err


def test_review_out_that_works_still_writes(capsys, cdk_out, tmp_path):
    assert main(["review", str(cdk_out), "--out", str(tmp_path / "new" / "dir"), "--no-image"]) == 0
    assert (tmp_path / "new" / "dir" / "README.md").is_file()


# -- job-config flags are blamed as flags (item 11) --------------------------------------------------

@pytest.mark.parametrize("value", ["0", "x", "2.5", "-3"])
def test_job_config_instance_count_names_the_flag(capsys, value):
    err = one_line_exit_2(capsys, ["job-config", "--outputs", OUTPUTS, "--format", "v2", "--instance-count", value])
    assert err == f"smddp-infra job-config: error: --instance-count must be a whole number >= 1, got '{value}'"


def test_job_config_instance_type_names_the_flag(capsys):
    err = one_line_exit_2(capsys, ["job-config", "--outputs", OUTPUTS, "--format", "v2", "--instance-type", "ml.g5.xlarge"])
    assert err.startswith("smddp-infra job-config: error: --instance-type must be a SageMaker EFA training instance type")
    assert "stack" not in err and err.endswith("got 'ml.g5.xlarge'")


# -- guard: file problems in words, the flag that was given (item 11) ---------------------------------

def test_guard_missing_deployed_file(capsys, tmp_path):
    err = one_line_exit_2(capsys, ["guard", "--deployed", str(tmp_path / "nope.yaml"), str(GUARD / "grown.yaml")])
    assert err.endswith(f"--deployed must be a readable template file or cdk.out directory, got '{tmp_path / 'nope.yaml'}': no such file")


def test_guard_binary_deployed_file(capsys, tmp_path):
    binary = tmp_path / "deployed.json"
    binary.write_bytes(b"\xff\xfe\x00")
    err = one_line_exit_2(capsys, ["guard", "--deployed", str(binary), str(GUARD / "grown.yaml")])
    assert "not UTF-8 text (byte 0xff at offset 0)" in err


def test_guard_deployed_empty_directory_names_the_flag(capsys, tmp_path, cdk_out):
    empty = tmp_path / "empty"
    empty.mkdir()
    err = one_line_exit_2(capsys, ["guard", "--deployed", str(empty), str(cdk_out)])
    assert "--deployed must be a template file or a cdk.out directory" in err and "without manifest.json" in err


def test_guard_new_empty_directory_names_the_argument(capsys, tmp_path):
    err = one_line_exit_2(capsys, ["guard", "--deployed", str(GUARD / "deployed.yaml"), str(tmp_path)])
    assert f"NEW must be a template file or a cdk.out directory, got '{tmp_path}'" in err


# -- preflight: no Python type names (item 11) --------------------------------------------------------

@pytest.mark.parametrize(("text", "kind"), [("", "an empty document"), ("# only a comment\n", "an empty document"),
                                            ("[1, 2]\n", "a list"), ("just words\n", "a string")])
def test_preflight_job_file_that_is_not_a_mapping(capsys, tmp_path, text, kind):
    job = tmp_path / "job.yaml"
    job.write_text(text)
    err = one_line_exit_2(capsys, ["preflight", str(job)])
    assert err.endswith(f"must hold a mapping of Estimator arguments, got {kind}")


# -- check: nothing judged is not a pass; --region is a region (item 10) ------------------------------

def test_check_empty_directory_is_bad_input(capsys, tmp_path):
    err = one_line_exit_2(capsys, ["check", str(tmp_path)])
    assert err == (f"smddp-infra check: error: TEMPLATE '{tmp_path}' is a directory with no CloudFormation template in it "
                   "(no *.json, *.yaml, *.yml, *.template file with Resources)")


def test_check_directory_of_non_templates_is_bad_input(capsys, tmp_path):
    (tmp_path / "notes.yaml").write_text("a: 1\n")
    err = one_line_exit_2(capsys, ["check", str(tmp_path)])
    assert "is a directory with no CloudFormation template in it" in err


def test_check_mistyped_glob_is_bad_input(capsys):
    # an unmatched shell glob reaches the command as written
    err = one_line_exit_2(capsys, ["check", str(ROOT / "tests" / "fixtures" / "templates" / "sg_sep*.yml")])
    assert "is not a file" in err


def test_check_empty_directory_in_json_mode_exits_2(capsys, tmp_path):
    assert main(["check", "--json", str(tmp_path)]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["templates"] == [] and report["unreadable"][0]["template"] == str(tmp_path)


@pytest.mark.parametrize("region", ["42", "us-east", "US-EAST-1", "useast1"])
def test_check_region_must_be_a_region(capsys, region):
    err = one_line_exit_2(capsys, ["check", "--region", region, SG_SEPARATE])
    assert err == f"smddp-infra check: error: --region must be an AWS Region name such as us-east-1, got '{region}'"


@pytest.mark.parametrize("region", ["us-east-1", "us-gov-west-1", "eu-central-2", "cn-north-1", "ap-southeast-5"])
def test_check_real_regions_are_accepted(capsys, region):
    assert main(["check", "--region", region, SG_SEPARATE]) == 1  # the fixture's two findings
    capsys.readouterr()


def test_check_storage_capacity_that_is_not_a_number_is_not_evaluated_info(capsys, tmp_path):
    template = tmp_path / "fs.yaml"
    template.write_text(
        "Resources:\n  Fs:\n    Type: AWS::FSx::FileSystem\n    Properties:\n      FileSystemType: LUSTRE\n"
        "      StorageCapacity: abc\n      SubnetIds: [subnet-1]\n      LustreConfiguration: {DeploymentType: SCRATCH_2}\n"
    )
    assert main(["check", str(template)]) == 0
    out = capsys.readouterr().out
    assert (f"{template}: Fs SMDDP-INFO1 info: SMDDP-FSX1 not judged for file system Fs: StorageCapacity 'abc' "
            "is not a whole number (CloudFormation expects an integer there)") in out


# -- a `pip install --no-deps` CLI says which extra to install (item 12) ---------------------------------

@pytest.mark.parametrize(("argv", "missing"), [
    (["size", "--required-mbps", "100"], "rich"),
    (["check", SG_SEPARATE], "PyYAML"),  # check parses with PyYAML; cfn-lint only runs in its own plugin
    (["preflight", str(ROOT / "tests" / "fixtures" / "preflight" / "bad" / "job.yaml")], "PyYAML"),
])
def test_cli_without_its_dependencies_names_the_extra(argv, missing):
    hide = "import sys\nfor m in ('rich', 'yaml', 'cfnlint'): sys.modules[m] = None\n"
    code = hide + "from smddp_infra.cli import main\nsys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"smddp-infra: error: the command needs {missing}, which is not installed (`pip install --no-deps` leaves it out): "
        "pip install 'smddp-infra[cli]'"]

"""``smddp-infra guard`` as a user runs it: files and cdk.out in, one verdict and an exit code out.

Exit 0 nothing stateful replaced (or accepted), 1 refused, 2 unreadable input (one line).
The two assemblies are synthesized once for the module, in-process, with app.py's build_app.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT, cdk_context
from smddp_infra.cli import main
from smddp_infra.review import load_assembly
from smddp_infra.review.replacement import replacement_accepted

COMMITTED = ROOT / "docs" / "review" / "TrainingNetworkStack.template.yaml"

pytestmark = pytest.mark.slow


def _synth(directory: Path, **context: Any) -> Path:
    from aws_cdk import App

    from smddp_infra.app_builder import build_app

    app = App(context=cdk_context(**context), outdir=str(directory))
    build_app(app)
    app.synth()
    return directory


@pytest.fixture(scope="module")
def assemblies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A /24 training subnet (smddp:maxInstanceCount=22, the old default's size), with and without acceptance."""
    root = tmp_path_factory.mktemp("guard-cli")
    return {
        "kept": _synth(root / "kept", **{"smddp:maxInstanceCount": 22}),
        "accepted": _synth(root / "accepted", **{"smddp:maxInstanceCount": 22, "smddp:allowReplacement": True}),
    }


@pytest.fixture(scope="module")
def old_network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A network deployed by the previous version: training subnet sized for 4 instances (/24)."""
    template = yaml.safe_load(COMMITTED.read_text())
    old = copy.deepcopy(template)
    for resource in old["Resources"].values():
        if resource["Type"] == "AWS::EC2::Subnet":
            resource["Properties"]["CidrBlock"] = "10.0.0.0/24"
    path = tmp_path_factory.mktemp("old") / "deployed.json"
    path.write_text(json.dumps(old))
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["guard", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_upgrading_refuses_the_new_default_subnet_and_says_how_to_keep_the_old_one(capsys, old_network):
    code, out, _ = _run(capsys, "--deployed", str(old_network), str(COMMITTED))
    assert code == 1
    assert 'CidrBlock: "10.0.0.0/24" -> "10.0.0.0/20" requires replacement' in out
    assert "a CIDR that overlaps the deployed one makes the update fail and roll back" in out
    assert "`-c smddp:maxInstanceCount=22`" in out


def test_the_advised_max_instance_count_rebuilds_the_deployed_subnet(capsys, old_network, assemblies):
    code, out, _ = _run(capsys, "--deployed", str(old_network), str(assemblies["kept"]))
    assert code == 0, out
    assert "no stateful resource" in out


def test_allow_replacement_is_recorded_in_the_cloud_assembly_and_lets_the_update_through(capsys, assemblies):
    accepted = load_assembly(assemblies["accepted"]).stacks[0]
    assert replacement_accepted(accepted) and not replacement_accepted(load_assembly(assemblies["kept"]).stacks[0])
    assert "smddp:allowReplacement" not in json.dumps(accepted.template)  # the template itself is unchanged
    code, out, _ = _run(capsys, "--deployed", str(COMMITTED), str(assemblies["kept"]))
    assert code == 1 and "REPLACE" in out
    code, out, _ = _run(capsys, "--deployed", str(COMMITTED), str(assemblies["accepted"]))
    assert code == 0 and "ACCEPTED by smddp:allowReplacement=true" in out
    code, _, _ = _run(capsys, "--deployed", str(COMMITTED), str(assemblies["kept"]), "--allow-replacement")
    assert code == 0


def test_json_output_lists_each_finding_with_why_means_and_avoid(capsys, old_network):
    code, out, _ = _run(capsys, "--json", "--deployed", str(old_network), str(COMMITTED))
    report = json.loads(out)
    assert code == 1 and report["blocked"] is True
    subnet = next(f for f in report["findings"] if f["type"] == "AWS::EC2::Subnet")
    assert subnet["action"] == "replace" and subnet["why"][0]["property"] == "CidrBlock"
    assert subnet["means"] and subnet["avoid"]
    assert len(report["sources"]) == 2


@pytest.mark.parametrize(
    ("make_input", "expected"),
    [
        (lambda d: d / "missing.json", "--deployed must be a readable template file or cdk.out directory"),
        (lambda d: _write(d / "not-a-template.json", '{"a": 1}'), "is not a CloudFormation template"),
        (lambda d: _write(d / "broken.yaml", "Resources: [unclosed"), "is neither JSON nor YAML"),
        (lambda d: (d / "empty-dir").mkdir() or d / "empty-dir", "--deployed must be a template file or a cdk.out directory"),
    ],
)
def test_unreadable_deployed_input_is_one_line_and_exit_2(capsys, tmp_path, make_input, expected):
    code, out, err = _run(capsys, "--deployed", str(make_input(tmp_path)), str(COMMITTED))
    assert code == 2 and out == ""
    assert err.startswith("smddp-infra guard: error: ") and expected in err and err.count("\n") == 1


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_make_deploy_synthesizes_guards_then_deploys_the_checked_assembly():
    result = subprocess.run(["make", "-n", "deploy", "STACK=S", "ALLOW_REPLACEMENT=true", "CONTEXT=-c smddp:instanceCount=8"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    lines = [line for line in result.stdout.splitlines() if "cdk synth" in line or " guard " in line or "cdk deploy" in line]
    assert len(lines) == 3
    synth, guard_line, deploy = lines
    assert synth.endswith("-c smddp:instanceCount=8 -c smddp:allowReplacement=true")
    assert guard_line.endswith("smddp-infra guard --deployed-stack S cdk.out")
    assert "deploy --app cdk.out" in deploy and deploy.endswith(" S")


def test_review_with_deployed_adds_a_replacements_section(capsys, tmp_path, assemblies, old_network):
    assert main(["review", str(assemblies["kept"]), "--out", str(tmp_path / "a"), "--no-image",
                 "--deployed", str(COMMITTED)]) == 0
    section = (tmp_path / "a" / "README.md").read_text().split("## Replacements", 1)[1].split("\n## ", 1)[0]
    assert "`make deploy` refuses this update" in section
    assert "| REPLACE | TrainingNetwork/Network/Vpc/TrainingSubnet1/Subnet (`AWS::EC2::Subnet`) |" in section
    assert "| REPLACE | TrainingNetwork/Lustre/FileSystem/Resource (`AWS::FSx::FileSystem`) |" in section
    assert "CDK CLI service spec" in section
    assert main(["review", str(assemblies["kept"]), "--out", str(tmp_path / "b"), "--no-image",
                 "--deployed", str(old_network)]) == 0
    section = (tmp_path / "b" / "README.md").read_text().split("## Replacements", 1)[1].split("\n## ", 1)[0]
    assert section.strip().startswith("None: updating the deployed stack replaces or deletes no file system")
    assert main(["review", str(assemblies["kept"]), "--out", str(tmp_path / "c"), "--no-image"]) == 0
    assert "## Replacements" not in (tmp_path / "c" / "README.md").read_text()
    capsys.readouterr()


def test_readme_guard_output_is_what_the_command_prints(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    import re

    command = "smddp-infra guard --deployed tests/fixtures/guard/deployed.yaml tests/fixtures/guard/grown.yaml"
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", readme, flags=re.S)
    assert match, "README's Deploy section shows no guard output"
    code = main(command.split()[1:])
    out, _ = capsys.readouterr()
    assert code == 1
    assert match.group(1).strip() == out.strip()


def test_readme_deploy_section_says_what_the_guard_does_and_how_to_accept():
    readme = (ROOT / "README.md").read_text()
    deploy = readme.split("## Deploy: updates that never lose the file system", 1)[1].split("\n## ", 1)[0]
    for phrase in ("GetTemplate", "a stack that does not exist yet passes", "ALLOW_REPLACEMENT=true",
                   "smddp:allowReplacement=true", "make deploy-local"):
        assert phrase in deploy, phrase
    upgrading = readme.split("## Upgrading", 1)[1].split("\n## ", 1)[0]
    assert "smddp:maxInstanceCount" in upgrading and "replacement" in upgrading

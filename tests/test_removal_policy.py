"""Deletion is a change the guard sees (issue 27 item 3).

The usual dev-account aspect, ``RemovalPolicies.of(app).destroy()``, turns the file system,
the buckets and the key from Retain to Delete after the constructs are built. The default app
is synthesized once with it (and once more with ``smddp:allowReplacement=true``): a synth
warning on each of our stateful resources, and ``guard`` against the deployed (committed
review) template refuses, unless accepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT, cdk_context
from smddp_infra.cli import main
from smddp_infra.review.replacement import ReplacementData, guard

COMMITTED = ROOT / "docs" / "review" / "TrainingNetworkStack.template.yaml"
STATEFUL = ("AWS::FSx::FileSystem", "AWS::S3::Bucket")


def _synth(directory: Path, *, acknowledge: bool = True, **context: Any) -> Any:
    from aws_cdk import Acknowledgment, App, RemovalPolicies, Validations

    from smddp_infra.app_builder import build_app

    app = App(context=cdk_context(**context), outdir=str(directory))
    stack = build_app(app)
    RemovalPolicies.of(app).destroy()
    if acknowledge:  # the nag pack's SMDDP-STATE1, acknowledged: "delete with the stack on purpose"
        Validations.of(stack).acknowledge(Acknowledgment(id="SMDDP::SMDDP-STATE1", reason="dev account: on purpose"))
    return app.synth().get_stack_artifact(stack.artifact_id)


@pytest.fixture(scope="module")
def destroyed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("destroy")
    return {"refused": (root / "refused", _synth(root / "refused")),
            "accepted": (root / "accepted", _synth(root / "accepted", **{"smddp:allowReplacement": True}))}


def test_with_the_rule_pack_an_unacknowledged_destroy_fails_synth_naming_the_rule(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError) as caught:
        _synth(tmp_path / "unacknowledged", acknowledge=False)
    assert "SMDDP-STATE1" in str(caught.value) and "Lustre/FileSystem/Resource" in str(caught.value)


@pytest.fixture(scope="module")
def deployed() -> dict[str, Any]:
    return yaml.safe_load(COMMITTED.read_text())


def _retained_ids(template: dict[str, Any]) -> set[str]:
    return {k for k, v in template["Resources"].items() if v["Type"] in STATEFUL and v.get("DeletionPolicy") == "Retain"}


def test_the_aspect_really_turns_the_stateful_resources_to_delete(destroyed: dict[str, Any], deployed: dict[str, Any]) -> None:
    _, artifact = destroyed["refused"]
    retained = _retained_ids(deployed)
    assert len(retained) == 3  # file system, checkpoint bucket, log bucket
    assert {artifact.template["Resources"][k].get("DeletionPolicy") for k in retained} == {"Delete"}


def test_each_unretained_stateful_resource_is_a_synth_warning(destroyed: dict[str, Any], deployed: dict[str, Any]) -> None:
    _, artifact = destroyed["refused"]
    warned = [m for m in artifact.messages if "smddp:statefulNotRetained" in str(m.entry.data)
              or "was created RETAIN and is now DeletionPolicy Delete" in str(m.entry.data)]
    paths = {m.id for m in warned}
    assert len(warned) == 3, [m.entry.data for m in warned]
    assert any("Lustre/FileSystem" in p for p in paths) and any("Checkpoints/Bucket" in p for p in paths)
    assert all("the data goes when the stack goes" in str(m.entry.data) for m in warned)


def test_an_unchanged_default_app_has_no_such_warning(default_app: Any) -> None:
    artifact = default_app.assembly.get_stack_artifact(default_app.stack.artifact_id)
    assert not [m for m in artifact.messages if "was created RETAIN" in str(m.entry.data)]


def test_guard_refuses_retain_to_delete_and_says_what_it_means(destroyed: dict[str, Any], deployed: dict[str, Any]) -> None:
    _, artifact = destroyed["refused"]
    report = guard(deployed, artifact.template, data=ReplacementData())
    unretained = [f for f in report.findings if f.verb == "UNRETAIN"]
    assert {f.first.logical_id for f in unretained} == _retained_ids(deployed)
    assert report.exit_code == 1
    fs = next(f for f in unretained if f.first.resource_type == "AWS::FSx::FileSystem")
    assert [r.property for r in fs.replacements] == ["DeletionPolicy", "UpdateReplacePolicy"]
    assert "the data goes when the stack goes" in fs.meaning and "every file on it" in fs.meaning
    assert "RemovalPolicies.of(app).destroy()" in fs.avoid[0]


def test_a_key_deployed_delete_stays_quiet(destroyed: dict[str, Any], deployed: dict[str, Any]) -> None:
    """The alarm topic's key is Delete by design: no Retain to lose."""
    _, artifact = destroyed["refused"]
    report = guard(deployed, artifact.template, data=ReplacementData())
    assert not [f for f in report.findings if f.first.resource_type == "AWS::KMS::Key"]


def test_guard_cli_refuses_and_allow_replacement_lets_it_through(destroyed: dict[str, Any], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "deployed.json"
    old.write_text(json.dumps(yaml.safe_load(COMMITTED.read_text())))
    assert main(["guard", "--deployed", str(old), str(destroyed["refused"][0])]) == 1
    out = capsys.readouterr().out
    assert "UNRETAIN TrainingNetworkLustreFileSystem" in out and "DeletionPolicy: Retain -> Delete" in out
    assert main(["guard", "--deployed", str(old), str(destroyed["accepted"][0])]) == 0
    assert "ACCEPTED by smddp:allowReplacement=true" in capsys.readouterr().out


def test_check_warns_on_our_file_system_and_notes_the_buckets(destroyed: dict[str, Any], default_app: Any) -> None:
    from smddp_infra.rules import check_template

    _, artifact = destroyed["refused"]
    found = {(f.rule_id, f.severity.value, artifact.template["Resources"][f.resource]["Type"])
             for f in check_template(artifact.template) if f.rule_id.startswith("SMDDP-STATE")}
    assert found == {("SMDDP-STATE1", "warning", "AWS::FSx::FileSystem"), ("SMDDP-STATE2", "info", "AWS::S3::Bucket")}
    assert not [f for f in check_template(default_app.json) if f.rule_id.startswith("SMDDP-STATE")]

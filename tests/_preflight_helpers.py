"""What the preflight test modules share: the corpus folder, findings of one rule, and writing
a launcher's files into a temporary folder."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from smddp_infra.preflight import PreflightReport

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "preflight-corpus"


def by_rule(report: PreflightReport, rule_id: str) -> list[Any]:
    return [f for f in report.findings if f.rule_id == rule_id]


def write(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))

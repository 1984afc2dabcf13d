"""The report: every job's findings, each once, errors first; the ``--json`` document."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from smddp_infra.preflight.facts import JobFacts
from smddp_infra.preflight.findings import ERROR, SEVERITIES, Finding
from smddp_infra.preflight.job import JobDescription
from smddp_infra.preflight.rules import world_size
from smddp_infra.preflight.script import ScriptFacts

#: Version of the ``--json`` document (docs/troubleshooting.md describes it). Keys are only added.
JSON_VERSION = 2


def ordered(found: list[Finding]) -> tuple[Finding, ...]:
    """Errors first (stable: rule order within a severity), each finding once."""
    unique = list(dict.fromkeys(found))
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return tuple(sorted(unique, key=lambda f: order[f.severity]))


@dataclass(frozen=True)
class JobReport:
    """One job of the input (a notebook may build several) with its program and findings."""

    facts: JobFacts
    findings: tuple[Finding, ...]
    #: "PF-X not evaluated: setting unknown (why)": rules that did not run for want of a value
    not_evaluated: tuple[str, ...]

    @property
    def job(self) -> JobDescription:
        return self.facts.job

    @property
    def scripts(self) -> tuple[ScriptFacts, ...]:
        """The files the job runs (its program)."""
        return self.facts.files

    @property
    def world_size(self) -> Optional[int]:
        return world_size(self.job)

    def to_json(self) -> dict[str, Any]:
        program = self.facts.program
        smddp = self.facts.smddp
        return {
            "label": self.job.label,
            "estimator": self.job.estimator,
            "shape": self.job.shape,
            "scripts": [str(s.path) for s in self.scripts],
            "world_size": self.world_size,
            "instance_type": self.job.instance_type,
            "framework": list(self.job.framework) if self.job.framework else None,
            "findings": [f.to_json() for f in self.findings],
            "not_evaluated": list(self.not_evaluated),
            # added in 0.x: the program, what it does not run, the launcher and SMDDP in use
            "program": [s.name for s in self.scripts],
            "not_run": [_shown(p, program.root) for p in program.not_run],
            "launcher": self.facts.launcher[0] if self.facts.launcher else None,
            "smddp": {"in_use": smddp.state, "evidence": smddp.evidence, "depends_on": smddp.depends_on,
                      "backend": smddp.backend},
        }


def _shown(path: Path, root: Optional[Path]) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)


@dataclass(frozen=True)
class PreflightReport:
    path: Path
    kind: str
    jobs: tuple[JobReport, ...]
    outputs: Optional[Path]
    #: input-wide notes ("cell 4 skipped: not Python")
    notes: tuple[str, ...] = field(default=())

    @property
    def job(self) -> JobDescription:
        return self.jobs[0].job

    @property
    def scripts(self) -> tuple[ScriptFacts, ...]:
        seen: dict[Path, ScriptFacts] = {}
        for report in self.jobs:
            for facts in report.scripts:
                seen.setdefault(facts.path, facts)
        return tuple(seen.values())

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every job's findings, errors first; a script shared by two jobs is reported once."""
        return ordered([f for report in self.jobs for f in report.findings])

    @property
    def not_evaluated(self) -> tuple[str, ...]:
        out = list(self.notes)
        for report in self.jobs:
            prefix = f"{report.job.label}: " if len(self.jobs) > 1 and report.job.label else ""
            out.extend(prefix + n for n in report.not_evaluated)
        return tuple(dict.fromkeys(out))

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    @property
    def exit_code(self) -> int:
        """1 when any finding is an error (the job would fail or hang), else 0."""
        return 1 if any(f.severity == ERROR for f in self.findings) else 0

    @property
    def world_size(self) -> Optional[int]:
        return self.jobs[0].world_size

    def to_json(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION,
            "input": str(self.path),
            "kind": self.kind,
            "job": str(self.job.path),
            "shape": self.job.shape,
            "scripts": [str(s.path) for s in self.scripts],
            "outputs": str(self.outputs) if self.outputs else None,
            "world_size": self.world_size,
            "jobs": [j.to_json() for j in self.jobs],
            "findings": [f.to_json() for f in self.findings],
            "not_evaluated": list(self.not_evaluated),
            "summary": self.counts,
            "exit_code": self.exit_code,
        }

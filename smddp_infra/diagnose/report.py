"""What diagnose found: findings (the rules' format), symptoms tied to them, one verdict per
guide failure, and the ``--json`` document. Pure: built from what :mod:`.collect` read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from smddp_infra.diagnose.symptoms import GUIDE_FAILURES, Match, Stall

FOUND, NOT_FOUND, NOT_EVALUATED = "found", "not found", "not evaluated"
#: Version of the ``--json`` document (docs/diagnose.md). Keys are only added.
JSON_VERSION = 1


@dataclass(frozen=True)
class Item:
    """One finding in the format ``check`` and ``preflight`` share: rule, severity, where, what, fix."""

    rule_id: str
    severity: str  # "error" | "warning" | "info"
    resource: str
    message: str
    source: str  # "network" | "job" | "logs" | "metrics" | "cluster"
    failure: Optional[str] = None  # the guide failure it belongs to
    console: Optional[str] = None  # the fix as console steps
    cli: Optional[str] = None  # the fix as an AWS CLI command (or CloudFormation change)
    evidence: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule_id, "severity": self.severity, "resource": self.resource, "message": self.message,
                "source": self.source, "failure": self.failure, "fix": {"console": self.console, "cli": self.cli},
                "evidence": list(self.evidence)}


@dataclass(frozen=True)
class Verdict:
    failure: str
    state: str  # FOUND | NOT_FOUND | NOT_EVALUATED
    why: str

    def line(self) -> str:
        return f"{self.state.upper():13} {GUIDE_FAILURES[self.failure]}: {self.why}"

    def to_json(self) -> dict[str, Any]:
        return {"failure": self.failure, "title": GUIDE_FAILURES[self.failure], "verdict": self.state, "why": self.why}


@dataclass
class Diagnosis:
    subject: str  # "training job j1", "security groups sg-1 in subnets subnet-1"
    region: str
    items: list[Item] = field(default_factory=list)
    symptoms: list[Match] = field(default_factory=list)
    stall: Optional[Stall] = None
    verdicts: list[Verdict] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)
    throughput: Optional[dict[str, Any]] = None
    calls: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for i in self.items if i.severity == s) for s in ("error", "warning", "info")}

    @property
    def exit_code(self) -> int:
        return 1 if any(i.severity == "error" for i in self.items) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION, "subject": self.subject, "region": self.region,
            "findings": [i.to_json() for i in self.items],
            "symptoms": [m.to_json() for m in self.symptoms],
            "stall": ({"trainingSince": self.stall.training_since.isoformat(),
                       "lastLog": self.stall.last_log.isoformat() if self.stall.last_log else None,
                       "now": self.stall.now.isoformat(), "quietMinutes": round(self.stall.quiet_minutes, 1)}
                      if self.stall else None),
            "throughput": self.throughput,
            "verdicts": [v.to_json() for v in self.verdicts],
            "notEvaluated": list(self.not_evaluated),
            "summary": self.counts, "calls": {"count": len(self.calls), "actions": sorted(set(self.calls))},
            "exitCode": self.exit_code,
        }

    def lines(self) -> list[str]:
        out: list[str] = []
        for item in self.items:
            out.append(f"{item.severity.upper():7} {item.rule_id}  {item.resource}")
            out.append(f"  {item.message}")
            for line in item.evidence:
                out.append(f"  evidence: {line}")
            if item.console:
                out.append(f"  fix (console): {item.console}")
            if item.cli:
                out.append(f"  fix (CLI):     {item.cli}" if item.console else f"  fix: {item.cli}")
        for note in self.not_evaluated:
            out.append(f"not evaluated: {note}")
        out.append(f"guide failures for {self.subject}:")
        out += [f"  {v.line()}" for v in self.verdicts]
        counts = self.counts
        total = f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info" if self.items else "no findings"
        out.append(f"diagnose {self.subject} ({self.region}): {total}; {len(self.calls)} AWS calls")
        return out

"""The guide's literal messages (and their neighbours) in a job's own record.

Pure: the input is the DescribeTrainingJob answer and log events already read. Each
:class:`Pattern` names the guide failure it is the symptom of and the rules whose findings
explain it, so a match is reported beside its cause ("the group has no egress to itself"
beside "NCCL WARN NET/OFI ... failed"). Matching is on the message text only; the newest
match of each pattern is kept, with its timestamp and log stream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping, Optional, Sequence

#: The guide's six failures (troubleshooting sections), in its order.
DEBUGGER, PREFIX, INIT_STALL, END_STALL, FSX_THROUGHPUT, DEPRECATION = (
    "debugger-checkpoints", "state-dict-prefix", "init-stall", "end-stall", "fsx-throughput", "deprecation-warning")
GUIDE_FAILURES: dict[str, str] = {
    DEBUGGER: "Debugger + checkpointing + SMDDP (\"SMDebug Does Not Currently Support ...\")",
    PREFIX: "unexpected model./module. prefix on state_dict keys",
    INIT_STALL: "job stalls at initialization on EFA instances (security group / network)",
    END_STALL: "job stalls at the end of training (ranks with different numbers of batches)",
    FSX_THROUGHPUT: "scaling efficiency drops: FSx for Lustre throughput limit",
    DEPRECATION: "deprecation warning for smdistributed.dataparallel.torch.dist",
}


@dataclass(frozen=True)
class Pattern:
    id: str
    failure: Optional[str]
    regex: re.Pattern[str]
    #: Rule ids whose findings explain this symptom (network, preflight).
    explained_by: tuple[str, ...]
    #: Where in the log it means what it says: "start" (initialisation), "end", "any".
    where: str
    meaning: str
    #: The finding that explains the symptom carries it as evidence and the symptom is not reported
    #: on its own (one finding per problem); unexplained, it is its own finding.
    joined: bool = False


def _re(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


#: Network findings that explain an FSx for Lustre mount failure (a job's, or a HyperPod lifecycle script's).
MOUNT_CAUSES = ("SMDDP-FSX7", "SMDDP-FSX8", "SMDDP-FSX3", "SMDDP-NET6", "SMDDP-NET9", "SMDDP-NET7", "SMDDP-NET8")

PATTERNS: tuple[Pattern, ...] = (
    Pattern("SYM-SMDEBUG-CHECKPOINT", DEBUGGER,
            _re(r"SMDebug Does Not Currently Support Distributed Training Jobs With Checkpointing Enabled"),
            ("PF-DEBUGGER-CHECKPOINT",), "any",
            "the Debugger hook, SageMaker checkpointing and SMDDP are on together"),
    Pattern("SYM-SMDDP-DEPRECATED", DEPRECATION,
            _re(r"smdistributed\.dataparallel\.torch\.(?:dist|distributed|parallel)\b[^\n]*deprecated"),
            ("PF-DEPRECATED-SMDDP-API",), "any",
            "the script uses the smdistributed torch API deprecated since SMDDP v1.4.0 (use torch.distributed "
            "with backend 'smddp')"),
    Pattern("SYM-COLLECTIVE-TIMEOUT", END_STALL,
            _re(r"watchdog caught collective operation timeout|collective operation timeout|"
                r"NCCL[^\n]*(?:timed out|timeout)|(?:smddp|herring)[^\n]*(?:timed out|timeout)|"
                r"ProcessGroupNCCL[^\n]*Timeout"),
            ("PF-UNEVEN-BATCHES", "PF-DATALOADER-SAMPLER"), "end",
            "a collective waited for ranks that never joined it: at the end of an epoch, ranks ran different "
            "numbers of batches"),
    Pattern("SYM-EFA-INIT", INIT_STALL,
            _re(r"NET/OFI[^\n]*(?:fail|error|unable)|libfabric[^\n]*(?:fail|error|unable)|fi_getinfo[^\n]*(?:fail|error|-\d+)|"
                r"\bEFA\b[^\n]*(?:fail|error|unable|not found)|OFI plugin[^\n]*(?:fail|error)"),
            ("SMDDP-SG1", "SMDDP-SG2", "SMDDP-NET1", "SMDDP-NET6"), "start",
            "the EFA/libfabric layer failed while the job initialised its collectives"),
    Pattern("SYM-STATE-DICT-PREFIX", PREFIX,
            _re(r"Unexpected key\(s\) in state_dict:\s*\"(?:module|model)\.|Missing key\(s\) in state_dict"),
            ("PF-DDP-PREFIX",), "any",
            "checkpoint keys carry (or lack) the DDP wrapper's module./model. prefix"),
    Pattern("SYM-S3-ROUTE", INIT_STALL,
            _re(r"route table has a route to an S3 VPC endpoint or a NAT device"),
            ("SMDDP-NET2", "SMDDP-NET7"), "any",
            "the training subnet has no route to S3"),
    Pattern("SYM-FSX-MOUNT", None,
            _re(r"mount(?:\.lustre)?\b[^\n]*(?:fail|error|timed out|timeout)|(?:fsx|lustre)[^\n]*(?:mount|connect)[^\n]*"
                r"(?:fail|error|timed out|timeout)|failed to mount"),
            MOUNT_CAUSES, "any",
            "the FSx for Lustre mount failed", joined=True),
)


@dataclass(frozen=True)
class Match:
    pattern: Pattern
    where: str  # "FailureReason" or "log stream <name>"
    text: str
    timestamp: Optional[datetime]

    def to_json(self) -> dict[str, Any]:
        return {"symptom": self.pattern.id, "failure": self.pattern.failure, "where": self.where, "text": self.text,
                "timestamp": self.timestamp.isoformat() if self.timestamp else None,
                "explainedBy": list(self.pattern.explained_by)}


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def match_failure_reason(job: Mapping[str, Any]) -> list[Match]:
    reason = job.get("FailureReason")
    if not isinstance(reason, str) or not reason:
        return []
    return [Match(p, "FailureReason", _clip(reason), job.get("TrainingEndTime") if isinstance(job.get("TrainingEndTime"), datetime) else None)
            for p in PATTERNS if p.regex.search(reason)]


def match_logs(events: Sequence[Any]) -> list[Match]:
    """The newest match of each pattern (events are newest first)."""
    found: dict[str, Match] = {}
    for event in events:
        for pattern in PATTERNS:
            if pattern.id not in found and pattern.regex.search(event.message):
                found[pattern.id] = Match(pattern, f"log stream {event.stream}", _clip(event.message), event.timestamp)
    return list(found.values())


#: Lines that mean training went past initialisation (a step, an epoch, a loss was logged).
_PROGRESS = _re(r"\b(?:epoch|step|iter(?:ation)?|loss|batch)\b\s*[:=\[#]?\s*\d")


@dataclass(frozen=True)
class Stall:
    """The guide's init stall: status Training, EFA type, no log line past initialisation."""

    training_since: datetime
    last_log: Optional[datetime]
    now: datetime
    quiet_minutes: float

    def describe(self) -> str:
        last = f"its last log line at {self.last_log.isoformat()}" if self.last_log else "no log line at all"
        return (f"status Training since {self.training_since.isoformat()}, {last}, nothing logged for "
                f"{self.quiet_minutes:.0f} min up to {self.now.isoformat()}, and no line past initialisation (no step, "
                "epoch or loss)")


def detect_stall(job: Mapping[str, Any], events: Optional[Sequence[Any]], *, now: datetime, efa: bool,
                 quiet: timedelta) -> Optional[Stall]:
    if not efa or job.get("TrainingJobStatus") != "InProgress" or job.get("SecondaryStatus") != "Training" or events is None:
        return None
    since = _training_since(job)
    if since is None or now - since < quiet:
        return None
    if any(_PROGRESS.search(e.message) for e in events):
        return None
    last = max((e.timestamp for e in events), default=None)
    reference = last or since
    if now - reference < quiet:
        return None
    return Stall(since, last, now, (now - reference).total_seconds() / 60)


def _training_since(job: Mapping[str, Any]) -> Optional[datetime]:
    for transition in reversed(job.get("SecondaryStatusTransitions") or []):
        if transition.get("Status") == "Training" and isinstance(transition.get("StartTime"), datetime):
            start: datetime = transition["StartTime"]
            return start
    start_time = job.get("TrainingStartTime")
    return start_time if isinstance(start_time, datetime) else None

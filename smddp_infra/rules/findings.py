"""What a rule is, and what it reports.

A :class:`Rule` carries everything the three faces need (the nag pack, the cfn-lint
plugin and ``smddp-infra check``): a stable id, a severity, a one-line explanation that
points at the fix, the troubleshooting-guide symptom it prevents, and the cfn-lint id it
is published under (cfn-lint derives severity from an id's first letter: ``E9xxx`` errors,
``W9xxx`` warnings, ``I9xxx`` informational; 9xxx is the range cfn-lint leaves to custom
rules).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from smddp_infra.rules.model import World


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One distinct problem of one resource.

    ``resource`` is the logical id the fix belongs on (and where the nag pack attaches the
    violation, so ``Validations.of(construct).acknowledge`` silences it); ``path`` is the
    property path inside that resource, for cfn-lint's line numbers. ``when`` lists the
    parameter assignments that trigger it (only the parameters that matter); empty means
    every assignment judged (or a template without parameters). ``assignments`` keeps every
    triggering assignment whole (all varied parameters), the defaults' first when they
    trigger (``default``).
    """

    rule_id: str
    severity: Severity
    resource: str
    message: str
    path: tuple[str | int, ...] = ("Properties",)
    when: tuple[Mapping[str, Any], ...] = ()
    assignments: tuple[Mapping[str, Any], ...] = ()
    default: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule_id,
            "severity": self.severity.value,
            "resource": self.resource,
            "message": self.message,
            "path": list(self.path),
            "when": [dict(w) for w in self.when],
            "assignments": [dict(a) for a in self.assignments],
            "default": self.default,
        }

    def with_when(
        self,
        when: tuple[Mapping[str, Any], ...],
        text: str,
        *,
        assignments: tuple[Mapping[str, Any], ...] = (),
        default: bool = False,
    ) -> "Finding":
        message = f"{text}: {self.message}" if text else self.message
        return replace(self, when=when, message=message, assignments=assignments, default=default)


#: How a rule's ``source`` starts when nothing we can cite establishes its consequence.
UNCONFIRMED = "UNCONFIRMED"


@dataclass(frozen=True)
class Rule:
    """A rule: metadata plus ``check(world) -> [Finding]`` (a small pure function run once
    per parameter assignment; the engine merges what the assignments find).

    ``source`` says what establishes the consequence (``symptom``): an AWS page (title and
    section) or an API behaviour one can show. A rule whose source starts with
    ``UNCONFIRMED`` can never be an error: constructing one raises, so no release can ship a
    confident failure nobody can cite (docs/rules.md lists every source).
    """

    id: str
    severity: Severity
    cfn_lint_id: str
    title: str
    explanation: str
    symptom: str
    check: Callable[["World"], list[Finding]] = field(compare=False, repr=False)
    source: str = ""

    def __post_init__(self) -> None:
        if not self.source.strip():
            raise ValueError(f"rule {self.id} has no source for its consequence: cite an AWS page or API behaviour, or write {UNCONFIRMED}")
        if self.severity is Severity.ERROR and self.source.strip().upper().startswith(UNCONFIRMED):
            raise ValueError(f"rule {self.id} is an error but its consequence is {UNCONFIRMED}: make it a warning or cite a source")

    @property
    def confirmed(self) -> bool:
        return not self.source.strip().upper().startswith(UNCONFIRMED)

    def finding(self, resource: str, message: str, *path: str | int) -> Finding:
        return Finding(self.id, self.severity, resource, message, tuple(path) or ("Properties",))

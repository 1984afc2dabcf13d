"""SMDDP-INFO1: a rule could not judge a training resource because a value is unresolved.

"Unknown is not missing": when a group id, a peer, a subnet or a condition comes from
outside the template (``Fn::ImportValue``, a parameter without ``Default``, a custom
resource's attribute, ``Fn::Select`` over a list parameter, a literal ``sg-...`` whose rules
live elsewhere), no error may rest on it. The rule that could not decide reports this
informational finding instead, naming what it could not resolve, so a reviewer knows what
to check by hand. It never fails a build (cfn-lint ``I9001``; the nag pack leaves it out).
"""

from __future__ import annotations

from smddp_infra.rules.findings import Finding, Rule, Severity


def _none(_: object) -> list[Finding]:
    return []  # findings of this rule are raised by the rules that could not decide


UNRESOLVED = Rule(
    id="SMDDP-INFO1",
    severity=Severity.INFO,
    cfn_lint_id="I9001",
    title="Could not judge a training resource: a value it depends on is not in the template",
    explanation="Check the named value by hand (or pass its parameter a Default) to have the rule decide.",
    symptom="(none: informational)",
    check=_none,
    source="Not a consequence: a note that a rule could not decide (information only).",
)

RULES = (UNRESOLVED,)

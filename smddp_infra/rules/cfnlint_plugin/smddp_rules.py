"""cfn-lint rule classes for the SMDDP rules, generated from the one rule table.

cfn-lint instantiates every ``CloudFormationLintRule`` subclass it finds in a module
(``--append-rules smddp_infra.rules.cfnlint_plugin``) or in the ``*.py`` files of a
directory (``--append-rules <dir>``, where this file is loaded by path, hence the absolute
imports). Each class reports one SMDDP rule under its cfn-lint id (E9xxx errors,
W9xxx warnings: cfn-lint reads severity from the first letter); the message starts with
the SMDDP id so both names are visible. The engine runs once per template and the
classes share its findings. cfn-lint hands rules one template at a time: imports, nested
stacks and SSM hand-offs between templates are "not evaluated" here; ``smddp-infra check
DIR`` judges the templates together (rules/system.py).
"""

from __future__ import annotations

from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from smddp_infra.rules.engine import RULES, check_template

__all__ = [f"Smddp{rule.cfn_lint_id}" for rule in RULES]

_cache: dict[str, Any] = {"template": None, "findings": []}


def _findings(cfn: Any) -> list[Any]:
    template = cfn.template
    if _cache["template"] is not template:  # identity, and the reference keeps ids unique
        _cache["template"] = template
        regions = getattr(cfn, "regions", None) or [None]
        _cache["findings"] = check_template(template, region=regions[0] if len(regions) == 1 else None)
    found: list[Any] = _cache["findings"]
    return found


def _existing_path(template: Any, path: list[Any]) -> list[Any]:
    """The longest prefix of ``path`` present in the template (cfn-lint maps it to a line)."""
    node, kept = template, []
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
            kept.append(key)
        else:
            break
    return kept


def _make(rule: Any) -> type:
    def match(self: Any, cfn: Any) -> list[Any]:
        out = []
        for finding in _findings(cfn):
            if finding.rule_id == rule.id:
                path = _existing_path(cfn.template, ["Resources", finding.resource, *finding.path])
                out.append(RuleMatch(path, f"{rule.id}: {finding.message}"))
        return out

    return type(
        f"Smddp{rule.cfn_lint_id}",
        (CloudFormationLintRule,),
        {
            "__module__": __name__,
            "__doc__": f"{rule.id}: {rule.title}",
            "id": rule.cfn_lint_id,
            "shortdesc": f"{rule.id} {rule.title}",
            "description": f"{rule.explanation} Guide symptom: {rule.symptom}. Source: {rule.source}",
            "source_url": "https://docs.aws.amazon.com/sagemaker/latest/dg/data-parallel-troubleshooting.html",
            "tags": ["smddp", "sagemaker"],
            "match": match,
        },
    )


for _rule in RULES:
    globals()[f"Smddp{_rule.cfn_lint_id}"] = _make(_rule)
del _rule

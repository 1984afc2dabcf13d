"""Run every rule over one template: the single entry point the three faces share."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from smddp_infra.rules import efa_rules, fsx_rules, network_rules
from smddp_infra.rules.findings import Finding, Rule
from smddp_infra.rules.model import TemplateModel

#: Every rule, in report order. Ids are stable: they are what users acknowledge.
RULES: tuple[Rule, ...] = efa_rules.RULES + fsx_rules.RULES + network_rules.RULES
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


def check_template(
    template: Mapping[str, Any] | TemplateModel,
    *,
    rules: Optional[Iterable[Rule]] = None,
    region: Optional[str] = None,
) -> list[Finding]:
    """All findings for a template dict (any source: CDK synth, YAML, JSON).

    Pure Python, no aws_cdk: the template is read once into a :class:`TemplateModel` and
    derived indexes (security-group permissions, routes) are shared by the rules.
    """
    model = template if isinstance(template, TemplateModel) else TemplateModel(template, region=region)
    findings: list[Finding] = []
    for rule in RULES if rules is None else rules:
        findings.extend(rule.check(model))
    return findings

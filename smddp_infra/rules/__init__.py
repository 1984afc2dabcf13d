"""The SMDDP troubleshooting guide as rules over a CloudFormation template (pure Python).

One engine, three faces: :class:`smddp_infra.checks.SmddpChecks` (cdk-nag 3),
``cfn-lint --append-rules smddp_infra.rules.cfnlint_plugin`` and ``smddp-infra check``.
Nothing here imports aws_cdk, jsii or constructs. See docs/rules.md for each rule.
"""

from __future__ import annotations

from smddp_infra.rules.engine import RULES, RULES_BY_ID, check_template
from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import UNKNOWN, TemplateModel

__all__ = ["RULES", "RULES_BY_ID", "Finding", "Rule", "Severity", "TemplateModel", "UNKNOWN", "check_template"]

"""``SmddpChecks``: the SMDDP template rules as a cdk-nag 3 ``NagPack``.

Usage (same shape as ``AwsSolutionsChecks`` in cdk-nag 3)::

    Validations.of(app).add_plugins(SmddpChecks(app))
    Validations.of(security_group).acknowledge(Acknowledgment(id="SMDDP::SMDDP-SG2", reason="..."))

How it fits cdk-nag 3: a NagPack is an ``IPolicyValidationPlugin``. At the end of
``app.synth()`` CDK calls ``validate(context)``; the base class walks the construct tree
and calls ``check_resource`` for every ``CfnResource``, and ``apply_rule`` records a
violation unless the rule id was acknowledged on the resource or one of its scopes.

Our rules need the whole template (a security group's self rule is a separate resource),
so this pack reads each stack's synthesized template once - the file CDK just wrote,
named in ``context.stack_templates`` - runs the pure engine (:mod:`smddp_infra.rules`)
over it, and in ``check_resource`` reports the findings whose logical id is that
resource's. Templates brought in with ``CfnInclude`` are judged the same way: their
resources are ordinary ``CfnResource`` children with their original logical ids.
Findings are cached by template content, so repeated synths of an unchanged app cost a
file read and a hash. CDK hands the pack one stack's template at a time, so a group another
stack creates (a cross-stack reference, a nested stack) is "not evaluated" here;
``smddp-infra check cdk.out`` judges the stacks together (rules/system.py). Informational SMDDP-INFO1 notes (a value the template does not
resolve) are not violations and are left out here; ``smddp-infra check`` prints them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from typing import Any, Optional

import jsii
from aws_cdk import CfnResource, IPolicyValidationContext, PolicyValidationPluginReport, Stack, Stage
from cdk_nag import IApplyRule, NagMessageLevel, NagPack, NagRuleCompliance
from constructs import IConstruct

from smddp_infra.rules import RULES, RULES_BY_ID, Finding, Severity, check_template

PACK_NAME = "SMDDP"
_CACHE_SIZE = 32
_findings_cache: "OrderedDict[str, dict[str, list[Finding]]]" = OrderedDict()


def _findings_for(text: str) -> dict[str, list[Finding]]:
    """Findings of one template text, grouped by logical id (LRU-cached by content hash)."""
    key = hashlib.sha256(text.encode()).hexdigest()
    if key in _findings_cache:
        _findings_cache.move_to_end(key)
        return _findings_cache[key]
    grouped: dict[str, list[Finding]] = {}
    for finding in check_template(json.loads(text)):
        if finding.severity is Severity.INFO:
            continue  # "could not judge" notes: for `check` and cfn-lint, never a synth violation
        grouped.setdefault(finding.resource, []).append(finding)
    _findings_cache[key] = grouped
    if len(_findings_cache) > _CACHE_SIZE:
        _findings_cache.popitem(last=False)
    return grouped


@jsii.implements(IApplyRule)
class _Violation:
    """One (resource, rule) pair, in the shape ``NagPack.apply_rule`` expects."""

    def __init__(self, node: CfnResource, rule_id: str, messages: list[str]) -> None:
        rule = RULES_BY_ID[rule_id]
        self._node = node
        self._suffix = rule_id.split("-", 1)[1]
        self._info = f"{rule.title}. {rule.explanation}"
        self._explanation = f"Guide symptom: {rule.symptom}. " + " | ".join(messages)
        self._level = NagMessageLevel.ERROR if rule.severity is Severity.ERROR else NagMessageLevel.WARN

    @property
    def node(self) -> CfnResource:
        return self._node

    @property
    def info(self) -> str:
        return self._info

    @property
    def explanation(self) -> str:
        return self._explanation

    @property
    def level(self) -> NagMessageLevel:
        return self._level

    @property
    def rule_suffix_override(self) -> Optional[str]:
        return self._suffix

    def rule(self, node: CfnResource) -> Any:
        return NagRuleCompliance.NON_COMPLIANT


class SmddpChecks(NagPack):
    """Checks a CDK app against the SageMaker SMDDP troubleshooting guide (rules SMDDP-*).

    Rule ids are ``SMDDP-<suffix>`` (e.g. ``SMDDP-SG1``); acknowledge one with
    ``Validations.of(construct).acknowledge(Acknowledgment(id="SMDDP::SMDDP-SG1", reason=...))`` on the resource
    the finding names or any of its scopes. See docs/rules.md.
    """

    def __init__(
        self,
        scope: Optional[IConstruct] = None,
        *,
        verbose: Optional[bool] = None,
        write_suppressions_to_cloud_formation: Optional[bool] = None,
    ) -> None:
        super().__init__(scope, verbose=verbose, write_suppressions_to_cloud_formation=write_suppressions_to_cloud_formation)
        self._pack_name = PACK_NAME
        self._template_paths: dict[str, str] = {}
        self._by_stack: dict[str, dict[str, list[Finding]]] = {}

    @property
    def name(self) -> str:
        return PACK_NAME

    @property
    def rule_ids(self) -> Optional[list[str]]:
        return [rule.id for rule in RULES if rule.severity is not Severity.INFO]

    def validate(self, context: IPolicyValidationContext) -> PolicyValidationPluginReport:
        """Called by CDK after synthesis: judge each stack's template, then walk only if needed.

        The walk (``validate_scope``) calls back into Python for every ``CfnResource`` of the
        app, several jsii round trips each; when no template has a finding it can only return
        what this returns at once (success, no violations), so a clean app skips it.
        """
        self._template_paths = {s.stack_construct_path: s.template_path for s in context.stack_templates}
        self._by_stack = {}
        if not any(self._findings_at(path) for path in self._template_paths):
            return PolicyValidationPluginReport(success=True, violations=[])
        return self.validate_scope(context.app_construct)

    def _check_resource(self, node: CfnResource) -> None:
        stack = Stack.of(node)
        findings = self._stack_findings(stack)
        if not findings:
            return
        logical_id = stack.resolve(node.logical_id)
        grouped: dict[str, list[str]] = {}
        for finding in findings.get(logical_id, ()):
            grouped.setdefault(finding.rule_id, []).append(finding.message)
        for rule_id, messages in grouped.items():
            # jsii's IApplyRule protocol declares settable members; _Violation's are read-only.
            self._apply_rule(_Violation(node, rule_id, messages))  # type: ignore[arg-type]

    def _stack_findings(self, stack: Stack) -> dict[str, list[Finding]]:
        path = stack.node.path
        if path not in self._by_stack:
            self._by_stack[path] = _findings_for(self._read_template(stack, path))
        return self._by_stack[path]

    def _findings_at(self, path: str) -> dict[str, list[Finding]]:
        """Findings of the stack at construct ``path``, from the template the context names."""
        if path not in self._by_stack:
            with open(self._template_paths[path], encoding="utf-8") as handle:
                self._by_stack[path] = _findings_for(handle.read())
        return self._by_stack[path]

    def _read_template(self, stack: Stack, path: str) -> str:
        """The stack's synthesized template: from the validation context, else the outdir.

        ``validate_scope(app)`` called directly after ``app.synth()`` finds the files in
        the outdir; before any synth there is no template to judge, and saying so beats
        passing silently.
        """
        stage = Stage.of(stack)
        template_path = self._template_paths.get(path) or os.path.join(stage.outdir if stage else ".", stack.template_file)
        try:
            with open(template_path, encoding="utf-8") as handle:
                return handle.read()
        except OSError as exc:
            raise RuntimeError(
                f"SmddpChecks needs the synthesized template of stack {path} ({template_path}): "
                f"register it with Validations.of(app).add_plugins(SmddpChecks(app)) or call app.synth() first"
            ) from exc

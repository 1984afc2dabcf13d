"""The IAM policy simulator as SageMaker Python SDK v3 calls it, for one identity policy, offline.

SDK v3 (sagemaker-core ``iam_role_resolver``) checks an execution role with
``iam:SimulatePrincipalPolicy(PolicySourceArn=role, ActionNames=[...])``: no ResourceArns and no
context entries. The simulator then evaluates each action against the resource ``*`` with an
EMPTY request context, which gives the rules this module implements:

- a statement's ``Resource`` matches a requested resource by IAM's wildcard rules (``*`` and
  ``?`` inside an ARN, case-sensitive); the requested ``*`` is matched only by ``"*"`` itself,
  which is why the SDK's own comments say a resource-scoped grant comes back ``implicitDeny``;
- a statement with a ``Condition`` does not match: every key it names is absent from an empty
  context, and IAM's positive operators are false on an absent key. This is stricter than IAM
  for ``...IfExists`` and negated operators, so a policy that passes here passes there; a Deny
  with a condition is refused outright, because there "does not match" would be optimistic;
- explicit Deny beats Allow; no matching Allow is ``implicitDeny``.

Unsupported elements (``NotAction``, ``NotResource``, an unresolved CloudFormation intrinsic in
``Resource`` when it matters) raise instead of guessing: an honest "cannot say" beats a
confident wrong verdict. Pure Python, no dependencies: imported by the pytest side AND by the
v3 harness script that runs inside .venv-sdkv3.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# IAM's wildcard matching, shared with the full condition model of the launch-guardrail tests.
from _iam_model import _as_list, _glob

ALLOWED, IMPLICIT_DENY, EXPLICIT_DENY = "allowed", "implicitDeny", "explicitDeny"


class UnsupportedPolicy(ValueError):
    """The policy uses an element this model cannot evaluate faithfully."""


def _action_matches(statement: Mapping[str, Any], action: str) -> bool:
    if "NotAction" in statement:
        raise UnsupportedPolicy(f"statement {statement.get('Sid')!r}: NotAction is not modelled")
    return any(_glob(a, action, case=False) for a in _as_list(statement.get("Action", [])))


def _resource_matches(statement: Mapping[str, Any], resource: str) -> bool:
    if "NotResource" in statement:
        raise UnsupportedPolicy(f"statement {statement.get('Sid')!r}: NotResource is not modelled")
    for pattern in _as_list(statement.get("Resource", [])):
        if not isinstance(pattern, str):
            if resource == "*":
                continue  # an ARN built by CloudFormation is never the literal "*"
            raise UnsupportedPolicy(f"statement {statement.get('Sid')!r}: unresolved resource {pattern!r}")
        if pattern == "*" or (resource != "*" and _glob(pattern, resource, case=True)):
            return True
    return False


def evaluate(statements: Sequence[Mapping[str, Any]], action: str, resource: str = "*") -> str:
    """The simulator's EvalDecision for ``action`` on ``resource`` with an empty context."""
    allowed = False
    for statement in statements:
        if not (_action_matches(statement, action) and _resource_matches(statement, resource)):
            continue
        if statement.get("Effect") == "Deny":
            if statement.get("Condition"):
                raise UnsupportedPolicy(f"statement {statement.get('Sid')!r}: a conditioned Deny is not modelled")
            return EXPLICIT_DENY
        if statement.get("Effect") == "Allow" and not statement.get("Condition"):
            allowed = True
    return ALLOWED if allowed else IMPLICIT_DENY


def simulate(statements: Sequence[Mapping[str, Any]], actions: Iterable[str],
             resources: Sequence[str] | None = None) -> list[dict[str, str]]:
    """``EvaluationResults`` of SimulatePrincipalPolicy: one per (action, resource)."""
    return [{"EvalActionName": action, "EvalResourceName": resource, "EvalDecision": evaluate(statements, action, resource)}
            for action in actions for resource in (resources or ["*"])]


def resolve(value: Any, *, refs: Mapping[str, str], arns: Mapping[str, str]) -> Any:
    """A template value with ``Ref``/``Fn::GetAtt [X, Arn]``/``Fn::Join`` replaced by strings
    from ``refs`` and ``arns``; anything else is left as it is (and stays unmatchable)."""
    if isinstance(value, list):
        return [resolve(v, refs=refs, arns=arns) for v in value]
    if isinstance(value, dict):
        if set(value) == {"Ref"} and value["Ref"] in refs:
            return refs[value["Ref"]]
        if set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][1] == "Arn" and value["Fn::GetAtt"][0] in arns:
            return arns[value["Fn::GetAtt"][0]]
        if set(value) == {"Fn::Join"}:
            sep, parts = value["Fn::Join"]
            resolved = [resolve(p, refs=refs, arns=arns) for p in parts]
            if all(isinstance(p, str) for p in resolved):
                return sep.join(resolved)
            return {"Fn::Join": [sep, resolved]}
        return {k: resolve(v, refs=refs, arns=arns) for k, v in value.items()}
    return value

"""IAM in a template as tables: who may assume each role, and every statement it is granted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from smddp_infra.review.template import TemplateView, as_list


@dataclass(frozen=True)
class Permission:
    role: str  # logical id
    policy: str  # logical id of the policy (or "<role> inline")
    sid: str
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    conditions: str


@dataclass(frozen=True)
class Trust:
    role: str
    principals: str
    conditions: str


def role_trusts(view: TemplateView) -> list[Trust]:
    trusts = []
    for role_id, role in view.of_type("AWS::IAM::Role"):
        document = (role.get("Properties") or {}).get("AssumeRolePolicyDocument") or {}
        for statement in as_list(document.get("Statement")):
            trusts.append(Trust(role_id, _principals(view, statement.get("Principal")), _conditions(view, statement.get("Condition"))))
    return trusts


def role_permissions(view: TemplateView) -> list[Permission]:
    roles = {role_id for role_id, _ in view.of_type("AWS::IAM::Role")}
    found: list[Permission] = []
    for role_id, role in view.of_type("AWS::IAM::Role"):
        for policy in as_list((role.get("Properties") or {}).get("Policies")):
            found += _statements(view, role_id, f"{view.label(role_id)} inline {policy.get('PolicyName', '')}".strip(), policy.get("PolicyDocument"))
    for policy_id, policy in view.of_type("AWS::IAM::ManagedPolicy", "AWS::IAM::Policy", "AWS::IAM::RolePolicy"):
        props = policy.get("Properties") or {}
        attached = [view.referenced_id(r) for r in as_list(props.get("Roles"))] + [view.referenced_id(props.get("RoleName"))]
        for role_id in sorted({r for r in attached if r in roles}):
            found += _statements(view, role_id, policy_id, props.get("PolicyDocument"))
    for role_id, role in view.of_type("AWS::IAM::Role"):
        for arn in as_list((role.get("Properties") or {}).get("ManagedPolicyArns")):
            if view.referenced_id(arn) is None:  # AWS managed (or external) policy: content not in the template
                found.append(Permission(role_id, view.render(arn), "", "Allow", ("(managed policy: see AWS)",), ("",), ""))
    return found


def _statements(view: TemplateView, role: str, policy: str, document: Any) -> list[Permission]:
    out = []
    for statement in as_list((document or {}).get("Statement")):
        out.append(
            Permission(
                role=role,
                policy=policy,
                sid=str(statement.get("Sid", "")),
                effect=str(statement.get("Effect", "")),
                actions=tuple(sorted(str(a) for a in as_list(statement.get("Action") or statement.get("NotAction")))),
                resources=tuple(view.render(r) for r in as_list(statement.get("Resource") or statement.get("NotResource"))),
                conditions=_conditions(view, statement.get("Condition")),
            )
        )
    return out


def _principals(view: TemplateView, principal: Any) -> str:
    if isinstance(principal, Mapping):
        return "; ".join(f"{kind}: {view.render(value)}" for kind, value in principal.items())
    return view.render(principal)


def _conditions(view: TemplateView, condition: Any) -> str:
    if not condition:
        return ""
    parts = []
    for operator, pairs in condition.items():
        for key, value in (pairs or {}).items():
            parts.append(f"{operator} {key} = {view.render(value)}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Guardrail:
    """A launch policy (``TrainingLaunchPolicy``) in the template: its statements and, in words,
    what its launch statement refuses."""

    policy: str  # logical id
    attached_to: tuple[str, ...]  # logical ids (or rendered names) of roles, users, groups
    statements: tuple[Permission, ...]
    refuses: tuple[str, ...]


def launch_guardrails(view: TemplateView) -> list[Guardrail]:
    """Managed policies carrying the guardrail's launch statement (by its Sid)."""
    from smddp_infra.guardrails import SID_LAUNCH, SID_PASS_ROLE, refusal

    found = []
    for policy_id, policy in view.of_type("AWS::IAM::ManagedPolicy"):
        props = policy.get("Properties") or {}
        statements = as_list((props.get("PolicyDocument") or {}).get("Statement"))
        if not any(s.get("Sid") == SID_LAUNCH for s in statements):
            continue
        refuses: list[str] = []
        for statement in statements:
            if statement.get("Sid") == SID_PASS_ROLE:
                refuses.append(f"passing any role other than {view.render(statement.get('Resource'))}")
            if statement.get("Sid") in (SID_LAUNCH, SID_PASS_ROLE):
                for operator, pairs in (statement.get("Condition") or {}).items():
                    for key, value in (pairs or {}).items():
                        if operator == "Null" and str(value).lower() != "false":
                            continue
                        refuses.append(refusal(operator, key, ", ".join(view.render(v) for v in as_list(value))))
        attached = tuple(view.label(view.referenced_id(r) or view.render(r))
                         for k in ("Roles", "Users", "Groups") for r in as_list(props.get(k)))
        found.append(Guardrail(policy_id, attached, tuple(_statements(view, "", policy_id, props.get("PolicyDocument"))),
                               tuple(refuses)))
    return found

"""A small, offline MODEL of IAM policy evaluation, for the launch-guardrail tests.

Not AWS's evaluator: a faithful model of the parts the guardrail uses, written from AWS's
documented semantics (IAM User Guide, "Condition operators" and "Single-valued vs.
multivalued context keys"):

- statements: explicit Deny wins, then any Allow, else implicit deny; Action/NotAction and
  Resource/NotResource match with ``*`` and ``?`` (actions case-insensitively);
- conditions: every operator block must hold (AND), every key in a block must hold (AND),
  the policy values of one key are alternatives (OR); a NEGATED operator (StringNotEquals,
  ArnNotEquals, ...) holds when the value matches none of them;
- a missing key: positive operators are false, negated operators are TRUE, ``...IfExists``
  is true, ``Null: true`` is true; ``ForAllValues:`` is true (the empty-set trap),
  ``ForAnyValue:`` is false. An empty list counts as missing;
- operators: String(Not)Equals, String(Not)Like, Arn(Not)Equals, Arn(Not)Like, Bool, Null,
  with ``IfExists`` and the two set prefixes. Anything else, and a single-valued operator on a
  multi-valued key, raises :class:`ModelError`: the model refuses to guess.

Each decision names the statement and (operator, key) that decided it, which is what the
tests assert on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

ContextValue = Union[str, bool, Sequence[str]]


class ModelError(Exception):
    """A policy or request outside what this model evaluates."""


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    context: Mapping[str, ContextValue]


@dataclass(frozen=True)
class Miss:
    """Why one statement did not apply: ``part`` is "Action", "Resource" or a condition operator."""

    sid: str
    part: str
    key: Optional[str] = None


@dataclass(frozen=True)
class Decision:
    effect: str  # "Allow" | "ExplicitDeny" | "ImplicitDeny"
    sid: Optional[str] = None  # the allowing or denying statement
    condition: Optional[tuple[str, str]] = None  # for a deny: the first (operator, key) of its block
    misses: tuple[Miss, ...] = ()  # for an implicit deny: why each Allow did not apply

    @property
    def allowed(self) -> bool:
        return self.effect == "Allow"

    def refused_by(self) -> tuple[str, str, Optional[str]]:
        """(sid, operator or part, key) that refused the request.

        An explicit deny names its statement; an implicit deny names the Allow statement whose
        action matched and the first condition that failed (there must be exactly one such).
        """
        if self.effect == "ExplicitDeny":
            assert self.sid and self.condition
            return (self.sid, *self.condition)
        assert self.effect == "ImplicitDeny", self
        relevant = [m for m in self.misses if m.part != "Action"]
        assert len(relevant) == 1, f"expected one Allow statement for the action, got {relevant}"
        return relevant[0].sid, relevant[0].part, relevant[0].key


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _glob(pattern: str, value: str, *, case: bool) -> bool:
    """IAM wildcards: ``*`` any run of characters, ``?`` one character, nothing else special."""
    if not case:
        pattern, value = pattern.lower(), value.lower()
    regex = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, value, flags=re.S) is not None


def _arn_like(pattern: str, value: str) -> bool:
    """ArnLike/ArnEquals: the six ARN parts match one by one (wildcards allowed in each)."""
    p_parts, v_parts = pattern.split(":", 5), value.split(":", 5)
    if len(p_parts) != 6 or len(v_parts) != 6:
        return False
    return all(_glob(p, v, case=True) for p, v in zip(p_parts, v_parts))


_BASE = {
    "StringEquals": (lambda p, v: p == v, False),
    "StringNotEquals": (lambda p, v: p == v, True),
    "StringLike": (lambda p, v: _glob(p, v, case=True), False),
    "StringNotLike": (lambda p, v: _glob(p, v, case=True), True),
    "ArnEquals": (_arn_like, False),
    "ArnLike": (_arn_like, False),
    "ArnNotEquals": (_arn_like, True),
    "ArnNotLike": (_arn_like, True),
    "Bool": (lambda p, v: str(p).lower() == str(v).lower(), False),
}


def condition_holds(operator: str, key: str, policy_values: Any, context: Mapping[str, ContextValue]) -> bool:
    raw = context.get(key)
    present = raw is not None and raw != [] and raw != ()
    if operator == "Null":
        (want,) = [str(v).lower() for v in _as_list(policy_values)]
        if want not in ("true", "false"):
            raise ModelError(f"Null takes true or false, got {policy_values!r}")
        return (not present) if want == "true" else present
    set_op, _, base = operator.rpartition(":")
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    if base not in _BASE or set_op not in ("", "ForAllValues", "ForAnyValue"):
        raise ModelError(f"operator {operator!r} is outside this model")
    if set_op and if_exists:
        raise ModelError(f"{operator!r}: IfExists with a set operator is outside this model")
    match, negated = _BASE[base]
    wanted = [str(v) for v in _as_list(policy_values)]

    def one(value: Any) -> bool:
        hit = any(match(p, value if isinstance(value, str) else str(value).lower()) for p in wanted)
        return not hit if negated else hit

    if set_op == "ForAllValues":
        return (not present) or all(one(v) for v in _as_list(raw))
    if set_op == "ForAnyValue":
        return present and any(one(v) for v in _as_list(raw))
    if not present:
        return True if (if_exists or negated) else False
    if isinstance(raw, (list, tuple)):
        raise ModelError(f"{operator} on multi-valued key {key}: use ForAllValues/ForAnyValue")
    return one(raw)


def _matches(patterns: Any, value: str, *, case: bool) -> bool:
    return any(_glob(str(p), value, case=case) for p in _as_list(patterns))


def _first_failing(statement: Mapping[str, Any], context: Mapping[str, ContextValue]) -> Optional[tuple[str, str]]:
    for operator, pairs in (statement.get("Condition") or {}).items():
        for key, values in pairs.items():
            if not condition_holds(operator, key, values, context):
                return operator, key
    return None


def _applies(statement: Mapping[str, Any], request: Request) -> Optional[Miss]:
    sid = str(statement.get("Sid", ""))
    if "Action" in statement and not _matches(statement["Action"], request.action, case=False):
        return Miss(sid, "Action")
    if "NotAction" in statement and _matches(statement["NotAction"], request.action, case=False):
        return Miss(sid, "Action")
    if "Resource" in statement and not _matches(statement["Resource"], request.resource, case=True):
        return Miss(sid, "Resource")
    if "NotResource" in statement and _matches(statement["NotResource"], request.resource, case=True):
        return Miss(sid, "Resource")
    failing = _first_failing(statement, request.context)
    return Miss(sid, *failing) if failing else None


def evaluate(documents: Sequence[Mapping[str, Any]], request: Request) -> Decision:
    statements = [s for d in documents for s in _as_list(d["Statement"])]
    for statement in statements:
        if statement["Effect"] == "Deny" and _applies(statement, request) is None:
            operator, pairs = next(iter((statement.get("Condition") or {"": {"": None}}).items()))
            return Decision("ExplicitDeny", sid=statement.get("Sid"), condition=(operator, next(iter(pairs))))
    misses = []
    for statement in statements:
        if statement["Effect"] == "Allow":
            miss = _applies(statement, request)
            if miss is None:
                return Decision("Allow", sid=statement.get("Sid"))
            misses.append(miss)
    return Decision("ImplicitDeny", misses=tuple(misses))


def training_job_context(request: Mapping[str, Any]) -> dict[str, ContextValue]:
    """The sagemaker:* context keys of a CreateTrainingJob request (a model too: which fields
    fill which keys follows the keys' documented meaning; UNCONFIRMED for several FSx channels,
    which this model refuses)."""
    context: dict[str, ContextValue] = {}
    vpc = request.get("VpcConfig")
    if vpc:
        context["sagemaker:VpcSubnets"] = list(vpc.get("Subnets", []))
        context["sagemaker:VpcSecurityGroupIds"] = list(vpc.get("SecurityGroupIds", []))
    resources = request.get("ResourceConfig", {})
    types = [resources["InstanceType"]] if "InstanceType" in resources else []
    types += [g["InstanceType"] for g in resources.get("InstanceGroups", [])]
    if types:
        context["sagemaker:InstanceTypes"] = types
    if "VolumeKmsKeyId" in resources:
        context["sagemaker:VolumeKmsKey"] = resources["VolumeKmsKeyId"]
    if "KmsKeyId" in request.get("OutputDataConfig", {}):
        context["sagemaker:OutputKmsKey"] = request["OutputDataConfig"]["KmsKeyId"]
    if "EnableInterContainerTrafficEncryption" in request:
        context["sagemaker:InterContainerTrafficEncryption"] = bool(request["EnableInterContainerTrafficEncryption"])
    if "EnableNetworkIsolation" in request:
        context["sagemaker:NetworkIsolation"] = bool(request["EnableNetworkIsolation"])
    sources = [c["DataSource"]["FileSystemDataSource"] for c in request.get("InputDataConfig", [])
               if "FileSystemDataSource" in c.get("DataSource", {})]
    if len(sources) > 1:
        raise ModelError("several FSx channels: how SageMaker fills single-valued FileSystem* keys is UNCONFIRMED")
    for source in sources:
        context["sagemaker:FileSystemId"] = source["FileSystemId"]
        context["sagemaker:FileSystemType"] = source["FileSystemType"]
        context["sagemaker:FileSystemAccessMode"] = source["FileSystemAccessMode"]
        context["sagemaker:FileSystemDirectoryPath"] = source["DirectoryPath"]
    return context

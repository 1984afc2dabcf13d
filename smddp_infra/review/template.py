"""A synthesized template as a reviewer reads it: friendly names, readable intrinsics.

Logical ids such as ``TrainingNetworkEfaGroupADA42E2E`` are stable but unreadable; the
construct path (``Metadata.aws:cdk:path``) without the stack and the ``/Resource`` suffix
(``TrainingNetwork/Efa/Group``) says what a resource is. Intrinsics are rendered compactly
(``{Efa/Group.GroupId}``, ``${AWS::AccountId}``) so a policy or rule table fits a screen.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Optional

from smddp_infra.rules.model import TemplateModel

#: Suffixes CDK appends to the construct that holds the L1 resource.
_L1_SUFFIXES = ("/Resource", "/Default")


class TemplateView:
    """Presentation helpers over one template dict (labels, compact intrinsics).

    What the template MEANS (resolution, conditions, group rules, attachments) is read
    through :attr:`model`, the one model the rules use; this class only renders.
    """

    def __init__(self, template: Mapping[str, Any]) -> None:
        self.template = template
        self.model = TemplateModel(template)
        self.resources: Mapping[str, Mapping[str, Any]] = template.get("Resources") or {}
        self._labels = {logical_id: _label(logical_id, resource) for logical_id, resource in self.resources.items()}

    def of_type(self, *types: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for logical_id, resource in self.resources.items():
            if resource.get("Type") in types:
                yield logical_id, resource

    def props(self, logical_id: str) -> Mapping[str, Any]:
        return self.resources.get(logical_id, {}).get("Properties") or {}

    def label(self, logical_id: str) -> str:
        """``TrainingNetwork/Efa/Group`` for a resource; the id itself for anything else."""
        return self._labels.get(logical_id, logical_id)

    def tags(self, logical_id: str) -> dict[str, Any]:
        tags = self.props(logical_id).get("Tags") or []
        if isinstance(tags, Mapping):
            return dict(tags)
        return {str(t.get("Key")): t.get("Value") for t in tags if isinstance(t, Mapping)}

    def referenced_id(self, value: Any) -> Optional[str]:
        """The logical id a ``Ref``/``Fn::GetAtt`` points at (None for literals and pseudo params)."""
        if isinstance(value, Mapping):
            if "Ref" in value and value["Ref"] in self.resources:
                return str(value["Ref"])
            if "Fn::GetAtt" in value:
                target = value["Fn::GetAtt"]
                name = target[0] if isinstance(target, list) else str(target).split(".")[0]
                return name if name in self.resources else None
        return None

    def render(self, value: Any) -> str:
        """A compact string for any property value, intrinsics included."""
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float, str)):
            return str(value)
        if isinstance(value, list):
            return ", ".join(self.render(v) for v in value)
        if isinstance(value, Mapping):
            if "Ref" in value:
                ref = value["Ref"]
                return f"${{{ref}}}" if str(ref).startswith("AWS::") else f"{{{self.label(ref)}}}"
            if "Fn::GetAtt" in value:
                target = value["Fn::GetAtt"]
                name, attr = (target[0], target[1]) if isinstance(target, list) else str(target).split(".", 1)
                return f"{{{self.label(name)}.{attr}}}"
            if "Fn::Join" in value:
                sep, parts = value["Fn::Join"]
                return str(sep).join(self.render(p) for p in parts)
            if "Fn::Sub" in value:
                sub = value["Fn::Sub"]
                return str(sub[0] if isinstance(sub, list) else sub)
            if len(value) == 1:
                (key, inner), = value.items()
                return f"{key}({self.render(inner)})"
            return ", ".join(f"{k}={self.render(v)}" for k, v in value.items())
        return str(value)


def _label(logical_id: str, resource: Mapping[str, Any]) -> str:
    path = str((resource.get("Metadata") or {}).get("aws:cdk:path") or "")
    if not path:
        return logical_id
    parts = path.split("/")
    # Drop the stack (and any Stage prefix: a Stage's stacks carry "Stage/Stack/...").
    body = "/".join(parts[1:]) if len(parts) > 1 else path
    for suffix in _L1_SUFFIXES:
        if body.endswith(suffix):
            body = body[: -len(suffix)]
    return body or logical_id


def as_number(value: Any, kind: Callable[[Any], Any] = float) -> Any:
    """``kind(value)`` (``float`` or ``int``), or None for what the template holds instead (a token, a word)."""
    try:
        return kind(value)
    except (TypeError, ValueError):
        return None


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]

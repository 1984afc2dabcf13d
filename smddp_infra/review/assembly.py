"""Read a cloud assembly (a ``cdk.out`` directory) as plain data: no aws_cdk, no jsii.

What a reviewer needs is spread over several files, and where it lives changed between CDK
versions, so this module is the one place that knows the layout:

* ``manifest.json`` lists the artifacts; ``aws:cloudformation:stack`` ones name their
  template file and environment. A ``Stage`` is a nested cloud assembly
  (``cdk:cloud-assembly``, ``properties.directoryName``), read recursively.
* Construct metadata is inline in the manifest (``artifacts.<id>.metadata``) in older
  CDKs and in ``<Stack>.metadata.json`` (``additionalMetadataFile``) in current ones.
  Acknowledgements (``Validations.of(x).acknowledge``, what cdk-nag 3 uses) are entries of
  type ``aws:cdk:acknowledged-rules``: ``{"<rule id>": "<reason>"}`` on a construct path.
* ``validation-report.json`` holds the plugin reports; CDK writes a plugin only when it
  has violations, suppressed violations or failed, so an empty list means every rule pack
  that ran passed (the synth would have failed otherwise).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from smddp_infra.errors import ConfigError

ACKNOWLEDGED_RULES = "aws:cdk:acknowledged-rules"
STACK_ARTIFACT = "aws:cloudformation:stack"
NESTED_ASSEMBLY = "cdk:cloud-assembly"
VALIDATION_REPORT = "validation-report.json"


@dataclass(frozen=True)
class Acknowledgement:
    """One acknowledged rule: where (construct path), which rule, and the reason given."""

    rule_id: str
    path: str
    reason: str
    source: str = "Validations.acknowledge"


@dataclass(frozen=True)
class StackArtifact:
    """One synthesized stack: its template and what the assembly says about it."""

    artifact_id: str
    display_name: str
    environment: str
    template_file: Path
    template: Mapping[str, Any]
    metadata: Mapping[str, list[Mapping[str, Any]]]
    nested_templates: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: logical id -> construct path, from tree.json (present whether or not the synth wrote
    #: ``aws:cdk:path`` metadata into the template: ``cdk synth`` does, ``App()`` in a test does not).
    construct_paths: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """File-name friendly stack name (``Stage/Stack`` -> ``Stage-Stack``)."""
        return self.display_name.replace("/", "-")

    @property
    def region(self) -> Optional[str]:
        """The region of ``aws://<account>/<region>``; None for an environment-agnostic stack (CDK
        writes ``unknown-region``), so the rules leave ``AWS::Region`` unresolved."""
        region = self.environment.rsplit("/", 1)[-1] if self.environment.startswith("aws://") else ""
        return region if region and region != "unknown-region" else None

    def reviewable_template(self) -> dict[str, Any]:
        """The template without CDK bookkeeping that depends on how it was synthesized.

        ``cdk synth`` adds version reporting (``AWS::CDK::Metadata``, whose compressed analytics
        change with every CDK upgrade) and ``aws:cdk:path`` metadata; an ``App()`` in a test adds
        neither. Both are normalized: the metadata resource is dropped and every resource gets
        its construct path from tree.json, so the two ways of synthesizing review the same.
        """
        clean: dict[str, Any] = json.loads(json.dumps(self.template))
        resources = clean.get("Resources") or {}
        for logical_id in [k for k, r in resources.items() if r.get("Type") == "AWS::CDK::Metadata"]:
            del resources[logical_id]
        conditions = clean.get("Conditions") or {}
        if "CDKMetadataAvailable" in conditions and "CDKMetadataAvailable" not in json.dumps({k: v for k, v in clean.items() if k != "Conditions"}):
            del conditions["CDKMetadataAvailable"]
            if not conditions:
                del clean["Conditions"]
        for logical_id, resource in resources.items():
            path = self.construct_paths.get(logical_id)
            if path:
                rest = {k: v for k, v in (resource.get("Metadata") or {}).items() if k != "aws:cdk:path"}
                resource["Metadata"] = {"aws:cdk:path": path, **rest}
        return clean

    def acknowledgements(self) -> list[Acknowledgement]:
        """Every ``aws:cdk:acknowledged-rules`` entry, plus cfn-lint ``ignore_checks`` in the template."""
        found: list[Acknowledgement] = []
        for path, entries in sorted(self.metadata.items()):
            for entry in entries:
                if entry.get("type") != ACKNOWLEDGED_RULES:
                    continue
                for rule_id, reason in sorted((entry.get("data") or {}).items()):
                    # ``Annotation::AwsSolutions-IAM5[...]`` -> ``AwsSolutions-IAM5[...]`` (CDK's storage prefix)
                    found.append(Acknowledgement(rule_id=rule_id.removeprefix("Annotation::"), path=path,
                                                 reason=str(reason)))
        for logical_id, resource in sorted(self.reviewable_template().get("Resources", {}).items()):
            metadata = resource.get("Metadata") or {}
            ignored = ((metadata.get("cfn-lint") or {}).get("config") or {}).get("ignore_checks") or []
            path = metadata.get("aws:cdk:path", logical_id)
            for check in ignored:
                found.append(
                    Acknowledgement(
                        rule_id=f"cfn-lint {check}",
                        path="/" + path if not path.startswith("/") else path,
                        reason="(none recorded: template Metadata cfn-lint.config.ignore_checks)",
                        source="template Metadata",
                    )
                )
        return _dedupe(found)


@dataclass(frozen=True)
class CloudAssembly:
    """The stacks of a cdk.out directory (Stages flattened in) and its validation report."""

    directory: Path
    stacks: tuple[StackArtifact, ...]
    validation_report: Optional[Mapping[str, Any]]

    def stack(self, name: str) -> StackArtifact:
        for stack in self.stacks:
            if name in (stack.display_name, stack.artifact_id, stack.name):
                return stack
        known = ", ".join(s.display_name for s in self.stacks) or "none"
        raise ConfigError(f"stack {name!r} is not in {self.directory}; stacks: {known}")

    def plugin_reports(self) -> list[Mapping[str, Any]]:
        return list((self.validation_report or {}).get("pluginReports") or [])


def load_assembly(directory: str | Path) -> CloudAssembly:
    """Read ``directory`` (a cdk.out); raises :class:`ConfigError` when it is not one."""
    root = Path(directory)
    manifest_file = root / "manifest.json"
    if not manifest_file.is_file():
        raise ConfigError(f"CDK_OUT_DIR must be a cloud assembly directory with manifest.json (run `cdk synth` first), got {str(root)!r}")
    stacks = tuple(_stacks(root, prefix="", tree=_tree_paths(root)))
    report_file = root / VALIDATION_REPORT
    report = json.loads(report_file.read_text()) if report_file.is_file() else None
    return CloudAssembly(directory=root, stacks=stacks, validation_report=report)


def _stacks(root: Path, *, prefix: str, tree: list[tuple[str, str]]) -> list[StackArtifact]:
    manifest = _read_json(root / "manifest.json")
    found: list[StackArtifact] = []
    for artifact_id, artifact in manifest.get("artifacts", {}).items():
        kind = artifact.get("type")
        properties = artifact.get("properties") or {}
        if kind == NESTED_ASSEMBLY:
            sub = properties.get("directoryName")
            if sub:
                found += _stacks(root / sub, prefix=f"{prefix}{properties.get('displayName', artifact_id)}/", tree=tree + _tree_paths(root / sub))
            continue
        if kind != STACK_ARTIFACT:
            continue
        template_file = root / properties["templateFile"]
        template = _read_json(template_file, template=True)
        metadata: dict[str, list[Mapping[str, Any]]] = {}
        for path, entries in (artifact.get("metadata") or {}).items():
            metadata.setdefault(path, []).extend(entries)
        extra = artifact.get("additionalMetadataFile")
        if extra and (root / extra).is_file():
            for path, entries in _read_json(root / extra).items():
                metadata.setdefault(path, []).extend(entries)
        nested = {
            logical_id: _read_json(root / resource["Metadata"]["aws:asset:path"], template=True)
            for logical_id, resource in template.get("Resources", {}).items()
            if resource.get("Type") == "AWS::CloudFormation::Stack"
            and (resource.get("Metadata") or {}).get("aws:asset:path")
            and (root / resource["Metadata"]["aws:asset:path"]).is_file()
        }
        display = artifact.get("displayName") or artifact_id
        stack_path = display if "/" in display or not prefix else prefix + display
        paths = {
            logical_id: path
            for path, logical_id in tree
            if path.startswith(stack_path + "/") and logical_id in template.get("Resources", {})
        }
        found.append(
            StackArtifact(
                artifact_id=artifact_id,
                display_name=display if "/" in display or not prefix else prefix + display,
                environment=str(artifact.get("environment", "")),
                template_file=template_file,
                template=template,
                metadata=metadata,
                nested_templates=nested,
                construct_paths=paths,
            )
        )
    return found


def _tree_paths(root: Path) -> list[tuple[str, str]]:
    """(construct path, logical id) of every L1 resource in ``tree.json`` (empty when absent)."""
    tree_file = root / "tree.json"
    if not tree_file.is_file():
        return []
    found: list[tuple[str, str]] = []
    stack = [_read_json(tree_file).get("tree") or {}]
    while stack:
        node = stack.pop()
        logical_id = (node.get("attributes") or {}).get("aws:cdk:cloudformation:logicalId")
        if logical_id:
            found.append((str(node.get("path", "")), str(logical_id)))
        stack.extend((node.get("children") or {}).values())
    return found


def _read_json(path: Path, *, template: bool = False) -> Any:
    """A file of the assembly; a stack's ``template`` through the bounded template reader
    (:mod:`smddp_infra.rules.loader`: CloudFormation's 1 MB, 100 levels), as ``check`` reads it."""
    from smddp_infra.rules.loader import TemplateSyntaxError, load_template_text

    try:
        text = path.read_text()
        return load_template_text(text) if template else json.loads(text)
    except FileNotFoundError:
        raise ConfigError(f"{path} is missing from the cloud assembly (re-run `cdk synth`)") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from None
    except (TemplateSyntaxError, RecursionError, ValueError) as exc:  # past a bound; an int of 5,000 digits
        raise ConfigError(f"{path} cannot be read: {str(exc).split(';')[0]}") from None


def _dedupe(items: list[Acknowledgement]) -> list[Acknowledgement]:
    seen: set[tuple[str, str]] = set()
    out = []
    for item in items:
        key = (item.rule_id, item.path)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out

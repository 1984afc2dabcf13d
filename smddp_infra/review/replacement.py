"""Which template changes would make CloudFormation REPLACE a resource (new physical resource).

For the file system, a bucket, the VPC or the training subnet a replacement loses data or
every job's network settings, so the review guard fails on it. Nothing here is a hand-kept
list; the replacement data comes from two published sources, merged:

* the CloudFormation resource provider schemas bundled with cfn-lint
  (``createOnlyProperties``, JSON pointers such as ``/properties/SubnetIds``);
* the CloudFormation service spec the CDK CLI itself uses for ``cdk diff``
  (``node_modules/aws-cdk/db.json.gz``: ``causesReplacement: yes|maybe`` per property,
  nested types included). It knows what the registry schema of the legacy FSx provider
  omits, e.g. ``LustreConfiguration.DeploymentType`` and ``PerUnitStorageThroughput``.

A replacement also travels along references: when a resource is replaced its id changes,
so a resource whose replace-only property ``Ref``s or ``Fn::GetAtt``s it is replaced too
(a new security group id in ``FileSystem.SecurityGroupIds`` replaces the file system). A
logical id that disappears (renamed construct id) means delete + create.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

#: What the guard protects by default (stateful, or everything depends on it).
GUARDED_TYPES = ("AWS::FSx::FileSystem", "AWS::S3::Bucket", "AWS::EC2::VPC", "AWS::EC2::Subnet")

#: Environment variable that points at a CDK service-spec database (db.json.gz).
SERVICE_SPEC_ENV = "SMDDP_CDK_SERVICE_SPEC"

Path_ = tuple[str, ...]


@dataclass(frozen=True)
class Replacement:
    """One resource CloudFormation would replace, and why."""

    logical_id: str
    resource_type: str
    label: str
    property: str  # dotted path, "(logical id)" or "(type)"
    reason: str
    certainty: str = "yes"  # "yes" or "maybe" (the spec's "conditional")

    def message(self) -> str:
        where = f"{self.logical_id} ({self.resource_type}, {self.label})"
        return f"{where}: {self.property}: {self.reason}"


@dataclass(frozen=True)
class ReplacementRule:
    path: Path_
    certainty: str
    source: str


class ReplacementData:
    """Replace-on-update property paths per resource type, from cfn-lint + the CDK spec."""

    def __init__(self, *, service_spec: Optional[Path] = None, region: str = "us-east-1", require_service_spec: bool = False) -> None:
        self.region = region
        self.service_spec = service_spec if service_spec is not None else find_service_spec()
        if require_service_spec and (self.service_spec is None or not Path(self.service_spec).is_file()):
            raise FileNotFoundError(
                "the CDK CLI's service spec (node_modules/aws-cdk/db.json.gz) was not found: run `npm ci`, "
                f"or set {SERVICE_SPEC_ENV} to a db.json.gz"
            )
        self._cache: dict[str, tuple[ReplacementRule, ...]] = {}

    @property
    def sources(self) -> list[str]:
        found = ["cfn-lint provider schemas (createOnlyProperties)"]
        if self.service_spec:
            found.append(f"CDK CLI service spec ({Path(self.service_spec).name}, causesReplacement)")
        return found

    def rules(self, resource_type: str) -> tuple[ReplacementRule, ...]:
        if resource_type not in self._cache:
            merged: dict[Path_, ReplacementRule] = {}
            for path in _cfn_lint_create_only(resource_type, self.region):
                merged[path] = ReplacementRule(path, "yes", "cfn-lint schema createOnlyProperties")
            if self.service_spec:
                for path, certainty in _spec_index(str(self.service_spec)).get(resource_type, {}).items():
                    if path not in merged or merged[path].certainty == "maybe" and certainty == "yes":
                        merged[path] = ReplacementRule(path, certainty, "CDK service spec causesReplacement")
            self._cache[resource_type] = tuple(sorted(merged.values(), key=lambda r: r.path))
        return self._cache[resource_type]


def find_service_spec() -> Optional[Path]:
    """``db.json.gz`` of the pinned CDK CLI: $SMDDP_CDK_SERVICE_SPEC, ./node_modules, the repo, or the cdk on PATH."""
    env = os.environ.get(SERVICE_SPEC_ENV)
    if env:
        return Path(env)
    candidates = [Path.cwd(), *Path.cwd().parents, Path(__file__).resolve().parents[2]]
    for base in candidates:
        path = base / "node_modules" / "aws-cdk" / "db.json.gz"
        if path.is_file():
            return path
    cdk = shutil.which("cdk")
    if cdk:
        path = Path(cdk).resolve().parent.parent / "db.json.gz"
        if path.is_file():
            return path
    return None


def find_replacements(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    data: Optional[ReplacementData] = None,
    guarded_types: Iterable[str] = GUARDED_TYPES,
) -> list[Replacement]:
    """Replacements of guarded resources when a stack deployed from ``old`` is updated to ``new``."""
    data = data or ReplacementData()
    guarded = set(guarded_types)
    old_resources: Mapping[str, Mapping[str, Any]] = old.get("Resources") or {}
    new_resources: Mapping[str, Mapping[str, Any]] = new.get("Resources") or {}
    direct: dict[str, list[Replacement]] = {}

    for logical_id, before in old_resources.items():
        kind = str(before.get("Type"))
        label = _label(before, logical_id)
        after = new_resources.get(logical_id)
        if after is None:
            direct.setdefault(logical_id, []).append(
                Replacement(logical_id, kind, label, "(logical id)",
                            "is gone from the new template (construct id or path changed): CloudFormation deletes it "
                            "(or orphans it, with DeletionPolicy Retain) and creates a new resource under the new id")
            )
            continue
        if after.get("Type") != kind:
            direct.setdefault(logical_id, []).append(
                Replacement(logical_id, kind, label, "(type)", f"type changes to {after.get('Type')}: a new resource")
            )
            continue
        before_props, after_props = before.get("Properties") or {}, after.get("Properties") or {}
        for rule in data.rules(kind):
            a, b = _at(before_props, rule.path), _at(after_props, rule.path)
            if a != b:
                direct.setdefault(logical_id, []).append(
                    Replacement(logical_id, kind, label, ".".join(rule.path),
                                f"{_short(a)} -> {_short(b)} {'requires' if rule.certainty == 'yes' else 'may require'} "
                                f"replacement ({rule.source})", rule.certainty)
                )

    # Propagate: a replaced resource gets a new id; replace-only properties pointing at it change.
    replaced = dict(direct)
    changed = True
    while changed:
        changed = False
        for logical_id, after in new_resources.items():
            if logical_id in replaced or logical_id not in old_resources:
                continue
            kind = str(after.get("Type"))
            props = after.get("Properties") or {}
            for rule in data.rules(kind):
                targets = sorted(_references(_at(props, rule.path)) & set(replaced))
                if targets:
                    replaced[logical_id] = [
                        Replacement(logical_id, kind, _label(after, logical_id), ".".join(rule.path),
                                    f"refers to {', '.join(targets)}, which is replaced, so its value changes and this "
                                    f"{'requires' if rule.certainty == 'yes' else 'may require'} replacement ({rule.source})",
                                    rule.certainty)
                    ]
                    changed = True
                    break
    found = [r for logical_id, reasons in replaced.items() for r in reasons if r.resource_type in guarded]
    return sorted(found, key=lambda r: (r.logical_id, r.property))


# --- sources ---------------------------------------------------------------------------------


def _cfn_lint_create_only(resource_type: str, region: str) -> list[Path_]:
    try:
        from cfnlint.schema import PROVIDER_SCHEMA_MANAGER
    except ImportError:  # pragma: no cover - cfn-lint is a dependency
        return []
    try:
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema(region, resource_type).schema
    except Exception:  # unknown or custom type (AWS::CDK::Metadata, Custom::X)
        return []
    paths = []
    for pointer in schema.get("createOnlyProperties") or []:
        parts = [p for p in str(pointer).split("/") if p]
        if parts and parts[0] == "properties":
            paths.append(tuple(p for p in parts[1:] if p != "*"))
    return [p for p in paths if p]


@lru_cache(maxsize=2)
def _spec_index(spec_file: str) -> dict[str, dict[Path_, str]]:
    """resource type -> {property path: "yes"|"maybe"} from the CDK service spec database."""
    schema = json.loads(gzip.decompress(Path(spec_file).read_bytes()))["schema"]
    types = {entity["$id"]: entity for entity in schema["typeDefinition"]["entities"]}
    index: dict[str, dict[Path_, str]] = {}

    def walk(properties: Mapping[str, Any], prefix: Path_, out: dict[Path_, str], depth: int) -> None:
        for name, prop in properties.items():
            path = prefix + (name,)
            certainty = prop.get("causesReplacement")
            if certainty in ("yes", "maybe"):
                out[path] = certainty
                continue
            ref = _ref_of(prop.get("type") or {})
            if ref and depth < 6 and ref in types:
                nested: dict[Path_, str] = {}
                walk(types[ref].get("properties") or {}, path, nested, depth + 1)
                if (prop.get("type") or {}).get("type") == "ref":
                    out.update(nested)
                elif nested:  # inside a list/map: compare the whole collection
                    out[path] = "yes" if "yes" in nested.values() else "maybe"

    for entity in schema["resource"]["entities"]:
        out: dict[Path_, str] = {}
        walk(entity.get("properties") or {}, (), out, 0)
        if out:
            index[entity["cloudFormationType"]] = out
    return index


def _ref_of(type_: Mapping[str, Any]) -> Optional[str]:
    if type_.get("type") == "ref":
        return (type_.get("reference") or {}).get("$ref")
    if type_.get("type") in ("array", "map"):
        return _ref_of(type_.get("element") or {})
    return None


# --- helpers ---------------------------------------------------------------------------------


def _at(props: Any, path: Path_) -> Any:
    value = props
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _references(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, Mapping):
        if "Ref" in value and isinstance(value["Ref"], str) and not value["Ref"].startswith("AWS::"):
            found.add(value["Ref"])
        if "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            found.add(target[0] if isinstance(target, list) else str(target).split(".")[0])
        for inner in value.values():
            found |= _references(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _references(inner)
    return found


def _label(resource: Mapping[str, Any], logical_id: str) -> str:
    return str((resource.get("Metadata") or {}).get("aws:cdk:path") or logical_id)


def _short(value: Any) -> str:
    text = "(absent)" if value is None else json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."

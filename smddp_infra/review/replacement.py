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

:func:`guard` is what ``smddp-infra guard`` and ``make deploy`` run: the replacements of
stateful resources (file system, buckets, VPC, subnet, KMS key, and any security group a file
system carries), each with what it means in words and how to avoid it, plus file-system
capacity changes FSx cannot make in place (a shrink fails the update). For the file system the
advice is the pinned plan: the deployed tier, re-sized by the calculator for the NEW
requirement (read from the ``smddp:sizing`` Metadata the file-system construct writes).
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

from smddp_infra.contract import METADATA_SIZING

#: What the guard protects by default (stateful, or everything depends on it).
GUARDED_TYPES = ("AWS::FSx::FileSystem", "AWS::S3::Bucket", "AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::KMS::Key",
                 "AWS::SageMaker::Cluster", "AWS::EKS::Cluster", "AWS::SageMaker::ComputeQuota")
#: A team's compute quota (task governance): ``ComputeQuotaTarget/TeamName`` is create-only and the
#: type's ``replacementStrategy`` is ``delete_then_create`` (cfn-lint's schema), so a renamed team loses its quota.
COMPUTE_QUOTA_TYPE = "AWS::SageMaker::ComputeQuota"
#: An EKS cluster: HyperPod's orchestrator (``Orchestrator.Eks.ClusterArn`` is create-only).
EKS_CLUSTER_TYPE = "AWS::EKS::Cluster"
#: A HyperPod cluster: its nodes run the jobs, so a replacement ends every running job.
HYPERPOD_CLUSTER_TYPE = "AWS::SageMaker::Cluster"
FILE_SYSTEM_TYPE = "AWS::FSx::FileSystem"
#: Guarded too when a file system carries it (``SecurityGroupIds``): its id is the file system's.
SECURITY_GROUP_TYPE = "AWS::EC2::SecurityGroup"

#: Construct metadata (cloud assembly, not template) that ``-c smddp:allowReplacement=true`` writes.
ALLOW_REPLACEMENT_METADATA = "smddp:allowReplacement"

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
    kind: str = "replace"  # "replace", "delete" (logical id gone), "fails" (an update FSx refuses), "fixed"
    # (a property FSx fixes at creation that the replacement data does not mark) or "unretain" (a Retain
    # policy becomes Delete: the data goes when the stack goes)
    caused_by: tuple[str, ...] = ()  # replaced resources whose new id forces this one

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
                            "(or orphans it, with DeletionPolicy Retain) and creates a new resource under the new id",
                            kind="delete")
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
                                    rule.certainty, caused_by=tuple(targets))
                    ]
                    changed = True
                    break
    # A security group a file system carries is guarded too: its id is part of the file system.
    seen: set[tuple[str, str]] = set()
    found = []
    for reasons in replaced.values():
        for r in reasons:
            key = (r.logical_id, r.property)
            if key in seen:
                continue
            if r.resource_type == "AWS::KMS::Key" and _only_encrypts_topics(r.logical_id, old):
                continue  # it protects notifications in flight, never data at rest
            if r.resource_type in guarded or (FILE_SYSTEM_TYPE in guarded and r.resource_type == SECURITY_GROUP_TYPE
                                              and _is_file_system_group(r.logical_id, old, new)):
                seen.add(key)
                found.append(r)
    return sorted(found, key=lambda r: (r.logical_id, r.property))


def _only_encrypts_topics(logical_id: str, template: Mapping[str, Any]) -> bool:
    """True when the key is used by SNS topics (``KmsMasterKeyId``) and referenced by nothing else
    that holds data: such as the alarm topic's key (monitoring), which encrypts only messages in flight."""
    users = [(other, resource) for other, resource in (template.get("Resources") or {}).items()
             if other != logical_id and logical_id in _references(resource.get("Properties"))]
    if not users:
        return False
    for _other, resource in users:
        props = resource.get("Properties") or {}
        kind = resource.get("Type")
        if kind == "AWS::SNS::Topic" and logical_id in _references(props.get("KmsMasterKeyId")):
            continue
        if kind in ("AWS::SNS::TopicPolicy", "AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard"):
            continue
        return False
    return True


def _is_file_system_group(logical_id: str, *templates: Mapping[str, Any]) -> bool:
    """True when a file system of either template names this security group in SecurityGroupIds."""
    for template in templates:
        for resource in (template.get("Resources") or {}).values():
            if resource.get("Type") == FILE_SYSTEM_TYPE and logical_id in _references(
                    (resource.get("Properties") or {}).get("SecurityGroupIds")):
                return True
    return False


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


# --- the guard: what a replacement means and how to avoid it ----------------------------------

#: How to let a replacing update through on purpose (``make deploy`` passes it to ``cdk synth``).
ACCEPT_HINT = ("to replace on purpose (copy the data first): `make deploy ALLOW_REPLACEMENT=true`, "
               "i.e. `cdk synth -c smddp:allowReplacement=true` before the guard")


@dataclass(frozen=True)
class GuardFinding:
    """One stateful resource the update would replace, delete or fail on: why, what it means, how to avoid it."""

    replacements: tuple[Replacement, ...]
    meaning: str
    avoid: tuple[str, ...] = ()

    @property
    def first(self) -> Replacement:
        return self.replacements[0]

    @property
    def verb(self) -> str:
        return {"replace": "REPLACE", "delete": "DELETE", "fails": "FAILS", "fixed": "CANNOT CHANGE",
                "unretain": "UNRETAIN"}.get(self.first.kind, "REPLACE")

    def lines(self) -> list[str]:
        r = self.first
        out = [f"{self.verb} {r.logical_id} ({r.resource_type}, {r.label})"]
        out += [f"  why:   {x.property}: {x.reason}" for x in self.replacements]
        out.append(f"  means: {self.meaning}")
        out += [f"  avoid: {line}" for line in self.avoid]
        return out


@dataclass(frozen=True)
class GuardReport:
    """The guard's answer for one update: findings, and whether the synth accepted replacements."""

    findings: tuple[GuardFinding, ...]
    accepted: bool = False
    sources: tuple[str, ...] = ()

    @property
    def blocked(self) -> bool:
        return bool(self.findings) and not self.accepted

    @property
    def exit_code(self) -> int:
        return 1 if self.blocked else 0

    def lines(self) -> list[str]:
        if not self.findings:
            return ["guard: no stateful resource (file system, bucket, VPC, subnet, KMS key, file system's "
                    "security group, HyperPod cluster) is replaced or deleted by this update"]
        out: list[str] = []
        for finding in self.findings:
            out += finding.lines()
        count = len(self.findings)
        noun = "stateful resource" if count == 1 else "stateful resources"
        if self.accepted:
            out.append(f"guard: {count} {noun} replaced, deleted or failing: ACCEPTED by smddp:allowReplacement=true")
        else:
            out.append(f"guard: {count} {noun} would be replaced, deleted or fail to update: refusing the update")
            out.append(f"guard: {ACCEPT_HINT}")
        return out


def guard(old: Mapping[str, Any], new: Mapping[str, Any], *, data: Optional[ReplacementData] = None,
          accepted: bool = False) -> GuardReport:
    """Everything stateful the update from ``old`` (deployed) to ``new`` would lose or fail on."""
    data = data or ReplacementData()
    old_resources: Mapping[str, Mapping[str, Any]] = old.get("Resources") or {}
    new_resources: Mapping[str, Mapping[str, Any]] = new.get("Resources") or {}
    found = find_replacements(old, new, data=data)
    replaced_ids = {r.logical_id for r in found}
    found += _capacity_failures(old_resources, new_resources, skip=replaced_ids)
    found += _create_time_changes(old_resources, new_resources, skip=replaced_ids)
    found += _cluster_update_failures(old_resources, new_resources, skip=replaced_ids)
    found += retention_losses(old_resources, new_resources)
    grouped: dict[tuple[str, str], list[Replacement]] = {}
    for r in sorted(found, key=lambda r: (_ORDER.get(r.resource_type, 9), r.logical_id, r.kind, r.property)):
        grouped.setdefault((r.logical_id, r.kind), []).append(r)
    findings = []
    for (logical_id, _kind), reasons in grouped.items():
        before = old_resources.get(logical_id) or {}
        after = new_resources.get(logical_id) or {}
        specific: list[str] = []
        generic: list[str] = []
        for r in reasons:
            lines = _avoid(r, before, after, new)
            target = generic if lines and lines[0].startswith(_GENERIC) else specific
            target += [line for line in lines if line not in target]
        avoid = specific or generic  # "keep X as deployed" only when nothing better is known
        findings.append(GuardFinding(tuple(reasons), _meaning(reasons[0], before), tuple(avoid)))
    return GuardReport(tuple(findings), accepted=accepted, sources=tuple(data.sources))


_ORDER = {FILE_SYSTEM_TYPE: 0, "AWS::S3::Bucket": 1, "AWS::KMS::Key": 2, "AWS::EC2::Subnet": 3,
          SECURITY_GROUP_TYPE: 4, "AWS::EC2::VPC": 5}


def _capacity_failures(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]],
                       *, skip: set[str]) -> list[Replacement]:
    from smddp_infra.sizing import openzfs_rules
    from smddp_infra.sizing.lustre_rules import capacity_update_problem

    found = []
    for logical_id, after in new.items():
        before = old.get(logical_id)
        if after.get("Type") != FILE_SYSTEM_TYPE or not before or logical_id in skip:
            continue
        a = _as_int((before.get("Properties") or {}).get("StorageCapacity"))
        b = _as_int((after.get("Properties") or {}).get("StorageCapacity"))
        kind = ((after.get("Properties") or {}).get("LustreConfiguration") or {}).get("DeploymentType")
        file_system_type = (after.get("Properties") or {}).get("FileSystemType")
        if file_system_type not in ("LUSTRE", "OPENZFS") or a is None or b is None:
            continue
        problem = (openzfs_rules.capacity_update_problem(a, b) if file_system_type == "OPENZFS"
                   else capacity_update_problem(str(kind or "SCRATCH_1"), a, b))
        if problem:
            found.append(Replacement(logical_id, FILE_SYSTEM_TYPE, _label(after, logical_id), "StorageCapacity",
                                     problem + " (FSx UpdateFileSystem)", kind="fails"))
    return found


def _cluster_update_failures(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]],
                             *, skip: set[str]) -> list[Replacement]:
    """A HyperPod cluster's ``ClusterRole`` changed while its deployed ``AutoScaling`` is enabled:
    botocore's UpdateCluster ``ClusterRole`` "Cannot be updated while autoscaling is enabled". None of
    the 2026 properties is create-only (cfn-lint's schema and CDK's service spec mark only ClusterName,
    VpcConfig and Orchestrator.Eks), so this is the one update of them known to fail."""
    found = []
    for logical_id, after in new.items():
        before = old.get(logical_id)
        if after.get("Type") != HYPERPOD_CLUSTER_TYPE or not before or before.get("Type") != HYPERPOD_CLUSTER_TYPE \
                or logical_id in skip:
            continue
        before_props, after_props = before.get("Properties") or {}, after.get("Properties") or {}
        enabled = (before_props.get("AutoScaling") or {}).get("Mode") == "Enable"
        a, b = before_props.get("ClusterRole"), after_props.get("ClusterRole")
        if enabled and a != b:
            found.append(Replacement(logical_id, HYPERPOD_CLUSTER_TYPE, _label(after, logical_id), "ClusterRole",
                                     f"{_short(a)} -> {_short(b)} while the deployed cluster autoscales: UpdateCluster's "
                                     "ClusterRole \"Cannot be updated while autoscaling is enabled\" (botocore sagemaker "
                                     "model); disable autoscaling in one deploy, change the role in the next",
                                     kind="fails"))
    return found


#: What an absent create-time property means (so "absent" -> its default is no change).
_CREATE_TIME_DEFAULTS: dict[tuple[str, ...], Any] = {("StorageType",): "SSD", ("LustreConfiguration", "EfaEnabled"): False}


def _create_time_changes(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]],
                         *, skip: set[str]) -> list[Replacement]:
    """Changes to what FSx fixes at creation that the replacement data does not mark
    (``lustre_rules.CREATE_TIME_PROPERTIES``), and an Intelligent-Tiering throughput decrease."""
    from smddp_infra.sizing.lustre_rules import CREATE_TIME_PROPERTIES, throughput_capacity_update_problem

    found = []
    for logical_id, after in new.items():
        before = old.get(logical_id)
        if after.get("Type") != FILE_SYSTEM_TYPE or not before or before.get("Type") != FILE_SYSTEM_TYPE or logical_id in skip:
            continue
        before_props, after_props = before.get("Properties") or {}, after.get("Properties") or {}
        if after_props.get("FileSystemType") != "LUSTRE":
            continue
        for fact in CREATE_TIME_PROPERTIES:
            default = _CREATE_TIME_DEFAULTS.get(fact.path)
            a, b = _at(before_props, fact.path), _at(after_props, fact.path)
            if fact.path not in _CREATE_TIME_DEFAULTS and (a is None or b is None):
                continue  # a mode that appears or goes with its whole configuration: judged elsewhere
            a = default if a is None else a
            b = default if b is None else b
            if _plain(a).lower() != _plain(b).lower():
                found.append(Replacement(
                    logical_id, FILE_SYSTEM_TYPE, _label(after, logical_id), ".".join(fact.path),
                    f"{_short(a)} -> {_short(b)}: FSx fixes it when the file system is created ({fact.source}); neither "
                    "cfn-lint's schema nor CDK's service spec marks it, and whether CloudFormation then replaces the file "
                    "system or fails the update is UNCONFIRMED", kind="fixed"))
        storage = str(after_props.get("StorageType") or "SSD")
        a_mbps = _as_int((before_props.get("LustreConfiguration") or {}).get("ThroughputCapacity"))
        b_mbps = _as_int((after_props.get("LustreConfiguration") or {}).get("ThroughputCapacity"))
        if a_mbps is not None and b_mbps is not None:
            problem = throughput_capacity_update_problem(storage, a_mbps, b_mbps)
            if problem:
                found.append(Replacement(logical_id, FILE_SYSTEM_TYPE, _label(after, logical_id),
                                         "LustreConfiguration.ThroughputCapacity", problem, kind="fails"))
    return found


#: Policies that keep the physical resource when CloudFormation deletes it from the stack.
RETAINING_POLICIES = ("Retain", "RetainExceptOnCreate", "Snapshot")
#: What to do about a Retain that became Delete (the usual cause: a blanket removal-policy aspect).
UNRETAIN_AVOID = ("exclude this resource from the removal-policy aspect that set DESTROY (e.g. "
                  "`RemovalPolicies.of(app).destroy()` or an Aspect calling apply_removal_policy), or apply it only "
                  "to stacks without the network; to delete with the stack on purpose, accept it "
                  "(`-c smddp:allowReplacement=true`)")


def retention_losses(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]) -> list[Replacement]:
    """Stateful resources deployed with a retaining DeletionPolicy or UpdateReplacePolicy whose new
    template drops it (``Delete``, or no policy: CloudFormation's default is Delete).

    CloudFormation applies the deployed resource's policies when it deletes it; after this update
    the new ones apply, so deleting the stack (or removing the resource, or a later
    replacement) deletes the file system, bucket or key with its data (CloudFormation User
    Guide, "DeletionPolicy attribute" and "UpdateReplacePolicy attribute").
    """
    found = []
    for logical_id, after in new.items():
        before = old.get(logical_id)
        if not before or after.get("Type") not in GUARDED_TYPES or before.get("Type") != after.get("Type"):
            continue
        for attribute in ("DeletionPolicy", "UpdateReplacePolicy"):
            was, now = before.get(attribute), after.get(attribute, "Delete")
            if was in RETAINING_POLICIES and now not in RETAINING_POLICIES:
                found.append(Replacement(logical_id, str(after["Type"]), _label(after, logical_id), attribute,
                                         f"{was} -> {_plain(now)}", kind="unretain"))
    return found


def _unretain_meaning(r: Replacement) -> str:
    what = {FILE_SYSTEM_TYPE: "the file system and every file on it", "AWS::S3::Bucket": "the bucket and its objects",
            "AWS::KMS::Key": "the key (scheduled for deletion; data encrypted under it becomes unreadable)"}.get(
        r.resource_type, "the resource")
    if r.property == "DeletionPolicy":
        return (f"the data goes when the stack goes: deleting the stack, or removing this resource from the app, "
                f"deletes {what} instead of keeping it")
    return f"a later update that replaces this resource deletes the old one: {what}, instead of keeping it"


def _as_int(value: Any) -> Optional[int]:
    """A whole number from a template value (JSON int or a digit string); None for intrinsics."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _meaning(r: Replacement, before: Mapping[str, Any]) -> str:
    if r.kind == "unretain":
        return _unretain_meaning(r)
    if r.kind == "fixed":
        return ("FSx cannot change this on the deployed file system: CloudFormation either replaces it with an EMPTY "
                "one or fails the update and rolls back (which one is UNCONFIRMED); refused before deploy either way")
    if r.kind == "fails" and r.resource_type == HYPERPOD_CLUSTER_TYPE:
        return ("CloudFormation tries the update, SageMaker's UpdateCluster refuses it, and the whole stack update "
                "rolls back: the cluster and its jobs keep running")
    if r.kind == "fails":
        return "CloudFormation tries the update, FSx refuses it, and the whole stack update rolls back: nothing is lost"
    kept = before.get("DeletionPolicy" if r.kind == "delete" else "UpdateReplacePolicy") in RETAINING_POLICIES
    new_one = "creates a new one under the new logical id" if r.kind == "delete" else "creates a new one first"
    openzfs = r.resource_type == FILE_SYSTEM_TYPE and (before.get("Properties") or {}).get("FileSystemType") == "OPENZFS"
    text, fates = _REPLACED.get("OPENZFS" if openzfs else r.resource_type, ("a new physical resource replaces the deployed one", None))
    text = text.format(new_one=new_one)
    return f"{text}; {fates[0] if kept else fates[1]}" if fates else text


_FILE_SYSTEM_KEPT = "the old one is retained outside the stack and still billed"
#: What a replaced resource means, by type ("OPENZFS": the home-directory file system), with
#: ``{new_one}`` how CloudFormation creates the new one; then the old one's fate when its policy
#: retains it and when it deletes it (None: the old one holds nothing the new one lacks).
_REPLACED: dict[str, tuple[str, Optional[tuple[str, str]]]] = {
    "OPENZFS": ("the file system is replaced by an EMPTY one (CloudFormation {new_one}; new FileSystemId and DNS name): "
                "every node mounts empty home directories", (_FILE_SYSTEM_KEPT, "the old one is deleted with every user's files")),
    FILE_SYSTEM_TYPE: ("the file system is replaced by an EMPTY one (CloudFormation {new_one}; new FileSystemId and mount "
                       "name, so every job's FileSystemDataSource changes and jobs read an empty /fsx)",
                       (_FILE_SYSTEM_KEPT, "the old one is deleted with its data")),
    "AWS::S3::Bucket": ("a new, EMPTY bucket (CloudFormation {new_one}): checkpoints, model output and code stay behind "
                        "and every S3 URI in the job settings changes",
                        ("the old bucket and its objects are retained outside the stack (still billed)",
                         "CloudFormation then deletes the old bucket, which fails while it holds objects")),
    "AWS::KMS::Key": ("a new KMS key: the file system and buckets that use it are re-created or re-encrypted",
                      ("the old key is retained",
                       "the old key is scheduled for deletion, after which data encrypted under it cannot be read")),
    "AWS::EC2::Subnet": ("a new subnet (new id in every job's VpcConfig.Subnets), and the file system in it is replaced "
                         "with it; CloudFormation creates the new subnet before deleting the old one, so a CIDR that "
                         "overlaps the deployed one makes the update fail and roll back", None),
    "AWS::EC2::VPC": ("a new VPC: every subnet, route table, endpoint and security group in it is re-created, and the "
                      "file system with them", None),
    SECURITY_GROUP_TYPE: ("a new security group id: the file system that carries it is replaced, and every job's "
                          "VpcConfig.SecurityGroupIds changes", None),
    HYPERPOD_CLUSTER_TYPE: ("a new HyperPod cluster with new nodes (CloudFormation {new_one}): every running job on the "
                            "old one ends, and node-local state is lost",
                            ("the old cluster is retained outside the stack, its nodes still running and billed",
                             "the old cluster is deleted with its nodes")),
    COMPUTE_QUOTA_TYPE: ("the team's compute quota is deleted, then created anew (the schema's replacementStrategy "
                         "delete_then_create): between the two the team has no guaranteed instances, and a new TeamName "
                         "is a new namespace hyperpod-ns-<team> (the old one's queued tasks do not move: UNCONFIRMED)", None),
    EKS_CLUSTER_TYPE: ("a new EKS cluster with a new ARN (CloudFormation {new_one}): the HyperPod clusters it orchestrates "
                       "are replaced too (Orchestrator.Eks is create-only) and every Kubernetes object on it is lost",
                       ("the old control plane is retained outside the stack and still billed per hour",
                        "the old control plane is deleted with every workload on it")),
}


def _avoid(r: Replacement, before: Mapping[str, Any], after: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    before_props = before.get("Properties") or {}
    if r.kind == "unretain":
        return [UNRETAIN_AVOID]
    if r.kind == "delete":
        return [f"restore the construct id / path that produced {r.logical_id} (construct ids are part of the "
                "contract; changing one is delete + create)"]
    if r.caused_by:
        return [f"avoid the replacement of {', '.join(r.caused_by)} (listed here too): this one follows from it"]
    if r.kind == "fails" and r.property == "StorageCapacity" and before_props.get("FileSystemType") == "OPENZFS":
        old_gib = _as_int(before_props.get("StorageCapacity")) or 0
        return [f"keep home_directories.storage_capacity_gib at {old_gib:,} GiB, or grow it to "
                f"{-(-old_gib * 11 // 10):,} GiB or more"]
    if r.kind == "fails" and r.property == "StorageCapacity":
        old_gib = _as_int(before_props.get("StorageCapacity")) or 0
        return [f"keep StorageCapacity at {old_gib:,} GiB or more: `-c smddp:datasetGiB={old_gib}` makes the "
                "calculator plan at least the deployed size"]
    if r.resource_type == FILE_SYSTEM_TYPE and r.property in (
            "LustreConfiguration.DeploymentType", "LustreConfiguration.PerUnitStorageThroughput",
            "StorageType", "LustreConfiguration.EfaEnabled", "LustreConfiguration.DriveCacheType"):
        return _pinned_plan_advice(before_props, after)
    if r.resource_type == "AWS::EC2::Subnet" and r.property == "CidrBlock":
        return _subnet_advice(str(before_props.get("CidrBlock")), new)
    if r.resource_type == "AWS::EC2::Subnet" and r.property in ("AvailabilityZone", "AvailabilityZoneId"):
        key = "availabilityZone" if r.property == "AvailabilityZone" else "availabilityZoneId"
        return [f"keep the deployed zone: `-c smddp:{key}={_plain(before_props.get(r.property))}` (the file system "
                "and EFA capacity live in that zone)"]
    if r.resource_type == "AWS::EC2::VPC" and r.property == "CidrBlock":
        return [f"keep the deployed VPC CIDR: `-c smddp:vpcCidr={_plain(before_props.get('CidrBlock'))}`"]
    if r.resource_type == "AWS::S3::Bucket" and r.property == "BucketName":
        old_name = before_props.get("BucketName")
        keep = f"keep BucketName {_plain(old_name)}" if old_name else "leave BucketName unset, as deployed"
        return [f"{keep}; to move on purpose, copy the objects to the new bucket first"]
    return [f"{_GENERIC}{r.property}: {_short(_at(before_props, tuple(r.property.split('.'))))}"]


_GENERIC = "keep the deployed value of "


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _pinned_plan_advice(before_props: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The deployed tier, re-sized by the calculator for the new requirement: the in-place plan."""
    from smddp_infra.sizing.growth import DeployedFileSystem, grow_in_place
    from smddp_infra.sizing.planner import PERSISTENT_1_HDD, TIER_GROUPS

    lustre = before_props.get("LustreConfiguration") or {}
    deployed_type = str(lustre.get("DeploymentType") or "SCRATCH_1")
    per_unit = lustre.get("PerUnitStorageThroughput")
    efa = bool(lustre.get("EfaEnabled"))
    hdd = before_props.get("StorageType") == "HDD"
    group = PERSISTENT_1_HDD if hdd else deployed_type
    old_gib = _as_int(before_props.get("StorageCapacity"))
    tier = f"{deployed_type}{'/' + str(per_unit) if per_unit is not None else ''}{' HDD' if hdd else ''}{' with EFA' if efa else ''}"
    if group not in TIER_GROUPS:  # the deployment types smddp:deploymentType accepts (Storage.deployment_types)
        return [f"the deployed {tier} cannot be pinned with smddp:deploymentType (choices: "
                f"{', '.join(TIER_GROUPS)}); keep the file system's construct as deployed"]
    context = [f"-c smddp:deploymentType={group}"]
    if per_unit is not None:
        context.append(f"-c smddp:perUnitStorageThroughput={per_unit}")
    if efa:
        context.append("-c smddp:efaFileSystem=true")
    record = (after.get("Metadata") or {}).get(METADATA_SIZING)
    if not isinstance(record, Mapping) or not isinstance(record.get("requiredThroughputMBps"), (int, float)):
        return [f"keep the deployed {tier}: {' '.join(context)} (the new template has no {METADATA_SIZING} record, "
                "so the pinned size is not computed here)"]
    required = float(record["requiredThroughputMBps"])
    deployed = DeployedFileSystem(deployment_type=deployed_type, storage_type="HDD" if hdd else "SSD",
                                  storage_capacity_gib=old_gib or 0, per_unit_storage_throughput=per_unit, efa_enabled=efa)
    growth = grow_in_place(deployed, required, min_capacity_gib=float(record.get("minCapacityGiB") or 0),
                           max_capacity_gib=record.get("maxCapacityGiB"))
    if growth.held_by_deployed_size:
        context.append(f"-c smddp:datasetGiB={old_gib}")
    plan = growth.plan
    if plan is None:
        return [f"pinned to the deployed {tier} ({' '.join(context)}), no file system meets the new requirement: "
                f"{growth.why_not}"]
    grows = (f"grows in place from {old_gib:,} GiB" if old_gib is not None and plan.storage_capacity_gib > old_gib
             else "keeps its size")
    return [f"keep the deployed {tier} and grow it in place: {' '.join(context)}",
            f"the pinned plan is {plan.storage_capacity_gib:,} GiB ({plan.baseline_throughput_mbps:,.0f} MB/s baseline "
            f"for {required:,g} MB/s required, ${plan.monthly_cost_usd:,.0f}/month): the file system {grows} "
            "(FSx raises StorageCapacity without replacing it)"]


def _subnet_advice(old_cidr: str, new: Mapping[str, Any]) -> list[str]:
    from smddp_infra.facts.subnets import FILE_SYSTEM_IPS, plan_subnet_mask, subnet_instance_capacity

    try:
        mask = int(old_cidr.rsplit("/", 1)[1])
    except (IndexError, ValueError):
        return [f"keep the deployed CidrBlock {old_cidr}"]
    endpoints = sum(1 for r in (new.get("Resources") or {}).values()
                    if r.get("Type") == "AWS::EC2::VPCEndpoint"
                    and (r.get("Properties") or {}).get("VpcEndpointType") == "Interface")
    other = endpoints + FILE_SYSTEM_IPS
    count = subnet_instance_capacity(mask, other_ips=other)
    if count >= 1:
        try:
            same = plan_subnet_mask(instances=count, other_ips=other) == mask
        except ValueError:
            same = False
        if same:
            return [f"keep the deployed /{mask} training subnet ({old_cidr}): `-c smddp:maxInstanceCount={count}` "
                    f"(the largest cluster a /{mask} holds, twice over); a larger cluster then needs a new subnet"]
    return [f"keep the deployed CidrBlock {old_cidr} (set smddp:maxInstanceCount so the training subnet is a /{mask})"]


# --- reading the inputs -------------------------------------------------------------------------


def load_template(path: str | Path, *, stack: Optional[str] = None, what: str = "template") -> tuple[dict[str, Any], Optional[Any]]:
    """A template from a JSON/YAML file, or a stack's template from a cdk.out directory.

    Returns (template, StackArtifact or None). Raises ConfigError (one line) when unreadable.
    """
    from smddp_infra.errors import ConfigError

    target = Path(path)
    if target.is_dir():
        from smddp_infra.review.assembly import load_assembly

        if not (target / "manifest.json").is_file():
            raise ConfigError(f"{what} must be a template file or a cdk.out directory, got {str(target)!r}: "
                              "a directory without manifest.json (run `cdk synth` first)")

        assembly = load_assembly(target)
        if stack is None:
            if len(assembly.stacks) != 1:
                names = ", ".join(s.display_name for s in assembly.stacks) or "none"
                raise ConfigError(f"{what} {str(target)!r} holds {len(assembly.stacks)} stacks ({names}): choose one with --stack")
            artifact = assembly.stacks[0]
        else:
            artifact = assembly.stack(stack)
        return json.loads(json.dumps(artifact.template)), artifact
    try:
        text = target.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{what} must be a readable template file or cdk.out directory, got {str(target)!r}: "
                          f"{_unreadable_reason(exc)}") from None
    return parse_template_text(text, where=f"{what} {str(target)!r}"), None


def _unreadable_reason(exc: Exception) -> str:
    """Why a file could not be read, in words (never a Python exception class name)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); a template is JSON or YAML text"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)


def parse_template_text(text: str, *, where: str) -> dict[str, Any]:
    """JSON or YAML (CloudFormation short-form tags such as ``!Ref`` included) -> template dict,
    read by the rules' reader (:mod:`smddp_infra.rules.loader`): the guard and the checks see the
    same template (``!Condition`` is ``Condition``, a key written twice is refused)."""
    from smddp_infra.errors import ConfigError
    from smddp_infra.rules.loader import TemplateSyntaxError, load_template_text

    try:
        value: Any = load_template_text(text)
    except TemplateSyntaxError as exc:
        raise ConfigError(f"{where} is neither JSON nor YAML: {exc}") from None
    if not isinstance(value, dict) or not isinstance(value.get("Resources"), dict):
        raise ConfigError(f"{where} is not a CloudFormation template (no Resources mapping)")
    return value


def replacement_accepted(artifact: Any) -> bool:
    """True when the cloud assembly records ``-c smddp:allowReplacement=true`` for this stack."""
    if artifact is None:
        return False
    for entries in (getattr(artifact, "metadata", None) or {}).values():
        for entry in entries:
            if entry.get("type") == ALLOW_REPLACEMENT_METADATA and entry.get("data") is True:
                return True
    return False

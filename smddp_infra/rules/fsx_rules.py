"""SMDDP-FSX1..3: FSx for Lustre settings, throughput and ports.

* FSX1: settings CloudFormation rejects, judged by
  :func:`smddp_infra.sizing.lustre_rules.validate_lustre_settings` (the project's single
  FSx rule table) for the defaults AND every ``AllowedValues`` entry of each parameter that
  feeds them, so a bad choice fails at lint time instead of 20 minutes into a deploy.
* FSX2: baseline throughput (capacity GiB / 1024 x per-unit throughput) below the
  ``smddp:requiredThroughputMBps`` tag the sizing recorded: the guide's "scaling
  efficiency drops on larger clusters".
* FSX3: TCP 988 and 1018-1023 not open between the file system's groups and themselves
  (ingress and egress); an all-traffic rule counts, and for egress so does any CIDR rule
  including EC2's default allow-all egress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

from smddp_infra.rules.efa_rules import security_groups
from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import NO_VALUE, UNKNOWN, Resource, TemplateModel, to_bool, to_int
from smddp_infra.rules.training import lustre_file_systems
from smddp_infra.sizing import lustre_rules as lr

REQUIRED_THROUGHPUT_TAG = "smddp:requiredThroughputMBps"
#: Lustre's TCP ports (FSx for Lustre user guide, "File system access control with Amazon VPC").
LUSTRE_PORTS = ((988, 988), (1018, 1023))
#: Findings per file system before the rest are summarised in one line.
MAX_COMBINATION_FINDINGS = 8

#: LustreConfiguration / top-level properties that decide validity.
_SETTINGS = (
    ("StorageCapacity",),
    ("StorageType",),
    ("FileSystemTypeVersion",),
    ("LustreConfiguration", "DeploymentType"),
    ("LustreConfiguration", "PerUnitStorageThroughput"),
    ("LustreConfiguration", "DriveCacheType"),
    ("LustreConfiguration", "EfaEnabled"),
)


@dataclass(frozen=True)
class LustreSettings:
    deployment_type: str
    storage_capacity_gib: int
    per_unit_storage_throughput: Optional[int]
    storage_type: str
    efa_enabled: bool
    drive_cache_type: Optional[str]
    file_system_type_version: Optional[str]
    has_metadata_configuration: bool

    def problems(self) -> list[str]:
        return lr.validate_lustre_settings(
            deployment_type=self.deployment_type,
            storage_capacity_gib=self.storage_capacity_gib,
            per_unit_storage_throughput=self.per_unit_storage_throughput,
            storage_type=self.storage_type,
            efa_enabled=self.efa_enabled,
            drive_cache_type=self.drive_cache_type,
            file_system_type_version=self.file_system_type_version,
            has_metadata_configuration=self.has_metadata_configuration,
        )

    def tier(self) -> Optional[lr.Tier]:
        throughput = self.per_unit_storage_throughput if self.deployment_type in lr.PERSISTENT_TYPES else None
        return lr.find_tier(self.deployment_type, throughput, storage_type=self.storage_type, efa_enabled=self.efa_enabled)


def _optional(value: Any, convert: Any = None) -> Any:
    """None when absent; UNKNOWN when present but undecided; else the (converted) value."""
    if value is NO_VALUE:
        return None
    if value is UNKNOWN:
        return UNKNOWN
    return convert(value) if convert else value


def read_settings(model: TemplateModel, fs: Resource, assignment: Mapping[str, Any]) -> Optional[LustreSettings]:
    """The file system's settings under one parameter assignment, or None if undecidable.

    CloudFormation defaults: DeploymentType SCRATCH_1, StorageType SSD, EfaEnabled false.
    A file system without StorageCapacity (restored from a backup) is not judged.
    """
    get = lambda *path: model.get(fs, *path, assignment=assignment)  # noqa: E731
    deployment = _optional(get("LustreConfiguration", "DeploymentType"))
    deployment = lr.SCRATCH_1 if deployment is None else deployment
    capacity = _optional(get("StorageCapacity"), to_int)
    throughput = _optional(get("LustreConfiguration", "PerUnitStorageThroughput"), to_int)
    storage_type = _optional(get("StorageType"))
    storage_type = "SSD" if storage_type is None else storage_type
    efa = _optional(get("LustreConfiguration", "EfaEnabled"), to_bool)
    cache = _optional(get("LustreConfiguration", "DriveCacheType"))
    version = _optional(get("FileSystemTypeVersion"))
    metadata = get("LustreConfiguration", "MetadataConfiguration")
    values = (deployment, capacity, throughput, storage_type, efa, cache, version)
    if capacity is None or any(v is UNKNOWN for v in values):
        return None
    if not isinstance(deployment, str) or not isinstance(storage_type, str):
        return None
    return LustreSettings(
        deployment_type=deployment,
        storage_capacity_gib=capacity,
        per_unit_storage_throughput=throughput,
        storage_type=storage_type,
        efa_enabled=bool(efa),
        drive_cache_type=cache if isinstance(cache, str) else None,
        file_system_type_version=str(version) if version is not None else None,
        has_metadata_configuration=metadata is not NO_VALUE,
    )


def _feeding_parameters(model: TemplateModel, fs: Resource) -> set[str]:
    names: set[str] = set()
    for path in _SETTINGS:
        node: Any = fs.properties
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        names |= model.parameters_in(node)
    names |= model.parameters_in(fs.properties.get("LustreConfiguration"))  # a parameterised block
    return names


def _settings_by_assignment(model: TemplateModel, fs: Resource) -> Iterator[tuple[dict[str, Any], LustreSettings]]:
    for assignment in model.assignments(_feeding_parameters(model, fs)):
        settings = read_settings(model, fs, assignment)
        if settings is not None:
            yield assignment, settings


def _when(assignment: Mapping[str, Any]) -> str:
    if not assignment:
        return ""
    return " (with " + ", ".join(f"parameter {k}={v!r}" for k, v in assignment.items()) + ")"


def _capped(rule: Rule, fs: Resource, messages: list[str]) -> list[Finding]:
    findings = [rule.finding(fs.logical_id, m, "Properties") for m in messages[:MAX_COMBINATION_FINDINGS]]
    if len(messages) > MAX_COMBINATION_FINDINGS:
        findings.append(rule.finding(fs.logical_id, f"... and {len(messages) - MAX_COMBINATION_FINDINGS} more parameter combinations fail the same way", "Properties"))
    return findings


def check_settings(model: TemplateModel) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(model):
        messages: list[str] = []
        for assignment, settings in _settings_by_assignment(model, fs):
            for problem in settings.problems():
                messages.append(f"file system {fs.logical_id}: {problem}{_when(assignment)}")
        findings += _capped(SETTINGS, fs, list(dict.fromkeys(messages)))
    return findings


def check_throughput(model: TemplateModel) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(model):
        if REQUIRED_THROUGHPUT_TAG not in model.tags(fs):
            continue
        raw = model.tags(fs)[REQUIRED_THROUGHPUT_TAG]
        try:
            required = float(raw)
        except (TypeError, ValueError):
            findings.append(THROUGHPUT.finding(fs.logical_id, f"file system {fs.logical_id}: tag {REQUIRED_THROUGHPUT_TAG} must be a number of MB/s, got {raw!r}", "Properties", "Tags"))
            continue
        messages = []
        for assignment, settings in _settings_by_assignment(model, fs):
            tier = settings.tier()
            if tier is None:
                continue  # SMDDP-FSX1 reports the invalid settings
            baseline = tier.throughput_mbps(settings.storage_capacity_gib)
            if baseline < required:
                needed = tier.capacity.smallest_at_least(required * 1024 / tier.baseline_mbps_per_tib)
                messages.append(
                    f"file system {fs.logical_id}: baseline throughput {baseline:,.0f} MB/s "
                    f"({settings.storage_capacity_gib:,} GiB at {tier.key}) is below the {required:,.0f} MB/s it was sized for: "
                    f"raise StorageCapacity to {needed:,} GiB or choose a higher PerUnitStorageThroughput{_when(assignment)}"
                )
        findings += _capped(THROUGHPUT, fs, messages)
    return findings


def _describe(ports: tuple[int, int]) -> str:
    return f"TCP {ports[0]}" if ports[0] == ports[1] else f"TCP {ports[0]}-{ports[1]}"


def check_lustre_ports(model: TemplateModel) -> list[Finding]:
    groups = security_groups(model)
    findings: list[Finding] = []
    seen: set[str] = set()
    for fs in lustre_file_systems(model):
        ids = model.get(fs, "SecurityGroupIds")
        fs_groups = {g for g in (groups.group_of(v) for v in (ids if isinstance(ids, list) else [])) if g}
        for group in sorted(fs_groups - seen):
            seen.add(group)
            missing = []
            for ports in LUSTRE_PORTS:
                if not any(p.peer_group in fs_groups and p.covers_tcp(*ports) for p in groups.of(group, "ingress")):
                    missing.append(f"ingress {_describe(ports)}")
                if not any(p.covers_tcp(*ports) and (p.peer_group in fs_groups or p.cidr) for p in groups.of(group, "egress")):
                    missing.append(f"egress {_describe(ports)}")
            if missing:
                findings.append(
                    LUSTRE_PORTS_RULE.finding(
                        group,
                        f"security group {group} of file system {fs.logical_id} does not allow {', '.join(missing)} "
                        f"to/from the file system's own group(s): add self rules for TCP 988 and 1018-1023 (or all traffic)",
                        "Properties",
                    )
                )
    return findings


SETTINGS = Rule(
    id="SMDDP-FSX1",
    severity=Severity.ERROR,
    cfn_lint_id="E9201",
    title="FSx for Lustre settings CloudFormation will reject",
    explanation="Choose a StorageCapacity, PerUnitStorageThroughput and version valid for the deployment type (see the FSx table in docs/rules.md).",
    symptom="stack fails ~20 minutes into the deploy, before any training",
    check=check_settings,
)

THROUGHPUT = Rule(
    id="SMDDP-FSX2",
    severity=Severity.WARNING,
    cfn_lint_id="W9202",
    title="FSx for Lustre throughput below the requirement it was sized for",
    explanation="Raise StorageCapacity or PerUnitStorageThroughput until capacity/1024 x per-unit throughput meets smddp:requiredThroughputMBps.",
    symptom="scaling efficiency drops on larger clusters",
    check=check_throughput,
)

LUSTRE_PORTS_RULE = Rule(
    id="SMDDP-FSX3",
    severity=Severity.ERROR,
    cfn_lint_id="E9203",
    title="Lustre ports not open between the file system's security groups and themselves",
    explanation="Allow TCP 988 and 1018-1023 in and out between the file system's groups (an all-traffic self rule also covers it).",
    symptom="file system cannot be mounted; the job fails or hangs reading data",
    check=check_lustre_ports,
)

RULES = (SETTINGS, THROUGHPUT, LUSTRE_PORTS_RULE)

"""SMDDP-FSX1..4 and FSX6: FSx for Lustre settings, throughput and ports.

* FSX1 (error): settings FSx or CloudFormation reject, judged by
  :func:`smddp_infra.sizing.lustre_rules.validate_lustre_settings` (the project's single
  FSx rule table): capacity per tier, per-unit throughput, HDD cache,
  ``FileSystemTypeVersion`` per deployment type and metadata configuration, EFA's
  requirements, Intelligent-Tiering's ``ThroughputCapacity``. Run for every judged
  parameter assignment, so an ``EfaEnabled: !If [...]`` or a ``LustreVersion`` parameter
  allowing 2.12 is judged for the assignment that triggers it.
* FSX6 (warning): an EFA-enabled capacity that the cited PERSISTENT_2 rule accepts but that
  is not a whole EFA step of its tier (``lustre_rules.EFA_STEP_GIB``, the FSx guide's "IP
  addresses for file systems" storage per file server). That CreateFileSystem refuses such a
  capacity is stated nowhere we can cite (the API reference lists 1200, 2400 and increments of
  2400 GiB for PERSISTENT_2 SSD), so a finding resting only on the steps is no error.
* FSX2 (warning): baseline throughput below the ``smddp:requiredThroughputMBps`` tag the
  sizing recorded: the guide's "scaling efficiency drops on larger clusters".
* FSX3 (error) / FSX4 (warning): Lustre's TCP 988 / 1018-1023 between the file system's
  network interfaces, judged on the UNION of its security groups (AWS evaluates them
  together). Ingress must come from one of those groups or a CIDR that covers the file
  system's subnet (0.0.0.0/0, the VPC CIDR); egress likewise, EC2's default allow-all
  egress included. 988 missing fails creation (FSx validates it: InvalidNetworkSettings);
  1018-1023 are in the FSx user guide but not validated at creation, hence a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # pragma: no cover
    import ipaddress

from smddp_infra.contract import TAG_REQUIRED_THROUGHPUT
from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.groups import GroupRef, Permission, group_list, security_groups
from smddp_infra.rules.model import NO_VALUE, UNKNOWN, Resource, World, to_bool, to_int
from smddp_infra.rules.training import lustre_file_systems
from smddp_infra.rules.unresolved import UNRESOLVED
from smddp_infra.sizing import lustre_rules as lr

#: Lustre's TCP ports (FSx for Lustre user guide, "File system access control with Amazon VPC").
LUSTRE_PORT = (988, 988)
LUSTRE_EXTRA_PORTS = (1018, 1023)
LUSTRE_PORTS = (LUSTRE_PORT, LUSTRE_EXTRA_PORTS)


_EFA_STEP_FIELDS = ("deployment_type", "storage_capacity_gib", "per_unit_storage_throughput", "storage_type", "efa_enabled")


@dataclass(frozen=True)
class LustreSettings:
    deployment_type: str
    storage_capacity_gib: Optional[int]
    per_unit_storage_throughput: Optional[int]
    storage_type: str
    efa_enabled: bool
    drive_cache_type: Optional[str]
    file_system_type_version: Optional[str]
    has_metadata_configuration: bool
    throughput_capacity_mbps: Optional[int] = None

    def problems(self) -> list[str]:
        """What CreateFileSystem rejects (cited): the EFA steps are :meth:`efa_step_problems`."""
        return lr.validate_lustre_settings(**vars(self), efa_steps=False)  # the fields are its keywords

    def efa_step_problems(self) -> list[str]:
        return lr.efa_step_problems(**{k: v for k, v in vars(self).items() if k in _EFA_STEP_FIELDS})

    def tier(self) -> Optional[lr.Tier]:
        if self.storage_type == lr.INTELLIGENT_TIERING:
            return None
        throughput = self.per_unit_storage_throughput if self.deployment_type in lr.PERSISTENT_TYPES else None
        return lr.find_tier(self.deployment_type, throughput, storage_type=self.storage_type, efa_enabled=self.efa_enabled)

    def baseline_mbps(self) -> Optional[float]:
        if self.storage_type == lr.INTELLIGENT_TIERING:
            return float(self.throughput_capacity_mbps) if self.throughput_capacity_mbps is not None else None
        tier = self.tier()
        if tier is None or self.storage_capacity_gib is None:
            return None
        return tier.throughput_mbps(self.storage_capacity_gib)


def _optional(value: Any, convert: Any = None) -> Any:
    """None when absent; UNKNOWN when present but undecided; else the (converted) value."""
    if value is NO_VALUE:
        return None
    if value is UNKNOWN:
        return UNKNOWN
    return convert(value) if convert else value


def read_settings(world: World, fs: Resource) -> Optional[LustreSettings]:
    """The file system's settings under one assignment, or None if undecidable.

    CloudFormation defaults: DeploymentType SCRATCH_1, StorageType SSD, EfaEnabled false.
    A file system without StorageCapacity that is not Intelligent-Tiering (restored from a
    backup) is not judged.
    """

    def get(*path: str) -> Any:
        return world.get(fs, *path)

    deployment = _optional(get("LustreConfiguration", "DeploymentType"))
    deployment = lr.SCRATCH_1 if deployment is None else deployment
    capacity = _optional(get("StorageCapacity"), to_int)
    throughput = _optional(get("LustreConfiguration", "PerUnitStorageThroughput"), to_int)
    storage_type = _optional(get("StorageType"))
    storage_type = lr.SSD if storage_type is None else storage_type
    efa = _optional(get("LustreConfiguration", "EfaEnabled"), to_bool)
    cache = _optional(get("LustreConfiguration", "DriveCacheType"))
    version = _optional(get("FileSystemTypeVersion"))
    metadata = get("LustreConfiguration", "MetadataConfiguration")
    it_throughput = _optional(get("LustreConfiguration", "ThroughputCapacity"), to_int)
    values = (deployment, capacity, throughput, storage_type, efa, cache, version, it_throughput)
    if any(v is UNKNOWN for v in values) or metadata is UNKNOWN:
        return None
    if not isinstance(deployment, str) or not isinstance(storage_type, str):
        return None
    if capacity is None and storage_type != lr.INTELLIGENT_TIERING:
        return None
    if world.has(fs, "BackupId"):
        return None  # restored from a backup: its settings come from the backup
    return LustreSettings(
        deployment_type=deployment,
        storage_capacity_gib=capacity,
        per_unit_storage_throughput=throughput,
        storage_type=storage_type,
        efa_enabled=bool(efa),
        drive_cache_type=cache if isinstance(cache, str) else None,
        file_system_type_version=str(version) if version is not None else None,
        has_metadata_configuration=metadata is not NO_VALUE,
        throughput_capacity_mbps=it_throughput,
    )


def check_settings(world: World) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(world):
        settings = read_settings(world, fs)
        if settings is None:
            not_numbers = _not_whole_numbers(world, fs)
            if not_numbers:  # a literal CloudFormation rejects: say it was not judged, never stay silent
                findings.append(UNRESOLVED.finding(
                    fs.logical_id, f"{SETTINGS.id} not judged for file system {fs.logical_id}: {'; '.join(not_numbers)} "
                    "(CloudFormation expects an integer there)", "Properties"))
            continue
        for problem in settings.problems():
            findings.append(SETTINGS.finding(fs.logical_id, f"file system {fs.logical_id}: {problem}", "Properties"))
    return findings


def check_efa_steps(world: World) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(world):
        settings = read_settings(world, fs)
        for problem in settings.efa_step_problems() if settings is not None else ():
            findings.append(EFA_STEPS.finding(
                fs.logical_id, f"file system {fs.logical_id}: {problem} (each step is one EFA file server's storage, FSx "
                "for Lustre User Guide 'IP addresses for file systems'; that CreateFileSystem refuses another capacity is "
                "UNCONFIRMED)", "Properties", "StorageCapacity"))
    return findings


_NUMBER_PATHS = (("StorageCapacity",), ("LustreConfiguration", "PerUnitStorageThroughput"),
                 ("LustreConfiguration", "ThroughputCapacity"))


def _not_whole_numbers(world: World, fs: Resource) -> list[str]:
    """Literal values of integer properties that are not whole numbers (``StorageCapacity: abc``)."""
    bad = []
    for path in _NUMBER_PATHS:
        raw = world.get(fs, *path)
        if raw is not NO_VALUE and raw is not UNKNOWN and to_int(raw) is UNKNOWN:
            bad.append(f"{'.'.join(path)} {raw!r} is not a whole number")
    return bad


def check_throughput(world: World) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(world):
        tags = world.tags(fs)
        if TAG_REQUIRED_THROUGHPUT not in tags:
            continue
        raw = tags[TAG_REQUIRED_THROUGHPUT]
        try:
            required = float(raw)
        except (TypeError, ValueError):
            if raw is not UNKNOWN:
                findings.append(THROUGHPUT.finding(fs.logical_id, f"file system {fs.logical_id}: tag {TAG_REQUIRED_THROUGHPUT} must be a number of MB/s, got {raw!r}", "Properties", "Tags"))
            continue
        settings = read_settings(world, fs)
        baseline = settings.baseline_mbps() if settings is not None else None
        if settings is None or baseline is None or baseline >= required:
            continue
        tier = settings.tier()
        if tier is not None and settings.storage_capacity_gib is not None:
            needed = tier.capacity.smallest_at_least(required * 1024 / tier.baseline_mbps_per_tib)
            fix = f"raise StorageCapacity to {needed:,} GiB or choose a higher PerUnitStorageThroughput"
            what = f"{settings.storage_capacity_gib:,} GiB at {tier.key}"
        else:
            step = lr.INTELLIGENT_TIERING_THROUGHPUT_STEP_MBPS
            needed = -(-int(required) // step) * step
            fix, what = f"raise ThroughputCapacity to {needed:,} MB/s", "Intelligent-Tiering ThroughputCapacity"
        findings.append(
            THROUGHPUT.finding(
                fs.logical_id,
                f"file system {fs.logical_id}: baseline throughput {baseline:,.0f} MB/s ({what}) is below the "
                f"{required:,.0f} MB/s it was sized for: {fix}",
                "Properties",
            )
        )
    return findings


def describe_ports(ports: tuple[int, int]) -> str:
    """``TCP 988`` / ``TCP 1018-1023``: how every Lustre rule (FSX3/4/7/8, NET6/9) names a port range."""
    return f"TCP {ports[0]}" if ports[0] == ports[1] else f"TCP {ports[0]}-{ports[1]}"


def cidr_network(value: Any) -> Optional["ipaddress.IPv4Network | ipaddress.IPv6Network"]:
    """The network a CIDR written in the template denotes (host bits allowed), None if it is not one."""
    import ipaddress  # only templates with CIDR peers pay for it (the CLI's start-up counts)

    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError:
        return None


def subnet_ranges(world: World, subnet_refs: Any) -> tuple[list[list[Any]], bool]:
    """(for each subnet: the networks that hold it; all CIDRs known?).

    A subnet is held by its own CIDR when the template states it; else by its VPC's CIDR, when
    the VPC has no secondary block (``AWS::EC2::VPCCidrBlock``) the subnet could sit in instead.
    A CIDR peer admits the subnets' interfaces when it covers every subnet (any of each one's
    networks): what ``required`` of :func:`port_verdict` means."""
    required: list[list[Any]] = []
    known = True
    secondary = {r.logical_id for block in world.of_type("AWS::EC2::VPCCidrBlock")
                 if (r := world.resource_of(world.raw(block, "VpcId"), "AWS::EC2::VPC")) is not None}
    for raw in subnet_refs if isinstance(subnet_refs, (list, tuple)) else ():
        subnet = world.resource_of(raw, "AWS::EC2::Subnet")
        if subnet is None:
            known = False
            continue
        cidr = cidr_network(world.get(subnet, "CidrBlock"))
        vpc = world.resource_of(world.raw(subnet, "VpcId"), "AWS::EC2::VPC") if cidr is None else None
        if cidr is None:
            known = False
            cidr = cidr_network(world.get(vpc, "CidrBlock")) if vpc is not None and vpc.logical_id not in secondary else None
        required.append([cidr] if cidr is not None else [])
    return required, known and bool(required)


def file_system_ranges(world: World, fs: Resource) -> tuple[list[list[Any]], bool]:
    """The networks the file system's interfaces sit in (its first subnet: FSx for Lustre has one),
    as :func:`subnet_ranges` gives them: the peers FSX3/FSX4 and FSX7/FSX8 judge against."""
    subnets = world.get(fs, "SubnetIds")
    return subnet_ranges(world, subnets[:1] if isinstance(subnets, list) else ())


def file_system_groups(world: World, fs: Resource) -> Optional[list[GroupRef]]:
    """The file system's ``SecurityGroupIds`` (None: undecided; []: it lists none, so the VPC's
    default group applies, whose rules are not in the template)."""
    return group_list(world, fs.properties.get("SecurityGroupIds"))


def port_verdict(
    world: World, holders: list[GroupRef], peers: list[GroupRef], required: list[list[Any]], required_known: bool,
    ports: tuple[int, int], direction: str,
) -> tuple[str, str]:
    """("pass" | "fail" | "unknown", why): does the union of ``holders``' rules in ``direction``
    allow ``ports`` from/to one of ``peers`` (a group) or a CIDR covering every network of
    ``required`` (each entry: the networks that hold one peer subnet)?"""
    groups = security_groups(world)
    members = {r.group for r in holders if r.group in groups.groups}
    peer_members = {r.group for r in peers if r.group in groups.groups}
    others = [r.describe() for r in holders if r.group not in groups.groups]
    peer_others = [r.describe() for r in peers if r.group not in groups.groups]
    maybe: list[str] = []

    def covers(p: Permission) -> Optional[bool]:
        if p.peer_group is not None:
            return p.peer_group in peer_members
        if p.cidr is not None:
            net = cidr_network(p.cidr)
            if net is None:
                return None
            if net.prefixlen == 0 and net.version == 4:
                return True
            if required and all(any(r.version == net.version and r.subnet_of(net) for r in alts) for alts in required):
                return True
            return False if required_known else None
        if p.peer_unresolved is not None:
            raw = p.raw or {}
            address_peer = any(k in raw for k in ("CidrIp", "CidrIpv6", "SourcePrefixListId", "DestinationPrefixListId"))
            return None if (address_peer or peer_others or set(p.peer_candidates) & peer_members) else False
        return False

    for group in sorted(members):
        for p in groups.of(group, direction):
            if not p.may_cover_tcp(*ports):
                continue
            verdict = covers(p)
            if verdict is True and p.certain and p.covers_tcp(*ports):
                return "pass", ""
            if verdict is not False:
                maybe.append(p.declared_in)
    if others:
        return "unknown", f"its groups {', '.join(others)} are not defined in the template"
    if maybe:
        return "unknown", "it depends on " + ", ".join(sorted(set(maybe)))
    return "fail", ""


def check_lustre_ports(world: World) -> list[Finding]:
    return _lustre_ports(world, LUSTRE_PORT, LUSTRE_PORTS_RULE)


def check_lustre_extra_ports(world: World) -> list[Finding]:
    return _lustre_ports(world, LUSTRE_EXTRA_PORTS, LUSTRE_EXTRA_PORTS_RULE)


def _lustre_ports(world: World, ports: tuple[int, int], rule: Rule) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(world):
        refs = file_system_groups(world, fs)
        if refs is None or world.exists(fs) is not True:
            findings.append(UNRESOLVED.finding(fs.logical_id, f"{rule.id} not judged for file system {fs.logical_id}: its security groups or its Condition are not decided by the template", "Properties", "SecurityGroupIds"))
            continue
        if not refs:  # no SecurityGroupIds: FSx uses the VPC's default group, whose rules are not in the template
            findings.append(UNRESOLVED.finding(
                fs.logical_id,
                f"{rule.id} not judged for file system {fs.logical_id}: it lists no SecurityGroupIds, so the VPC's default "
                f"security group applies, and its rules are not in the template (check that it allows {describe_ports(ports)} "
                f"from itself in and out)",
                "Properties"))
            continue
        names = ", ".join(r.describe() for r in refs)
        required, known = file_system_ranges(world, fs)
        missing, unknown = [], []
        for direction in ("ingress", "egress"):  # between the file system's own interfaces: its groups, both ends
            verdict, why = port_verdict(world, refs, refs, required, known, ports, direction)
            if verdict == "fail":
                missing.append(direction)
            elif verdict == "unknown":
                unknown.append(f"{direction}: {why}")
        if missing:
            findings.append(
                rule.finding(
                    fs.logical_id,
                    f"file system {fs.logical_id} with security group(s) {names}: none allows {' or '.join(missing)} on "
                    f"{describe_ports(ports)} between the file system's own groups (or from a CIDR covering its subnet): "
                    f"add self rules for {describe_ports(ports)} (an all-traffic self rule also covers it)",
                    "Properties",
                    "SecurityGroupIds",
                )
            )
        elif unknown:
            findings.append(UNRESOLVED.finding(fs.logical_id, f"{rule.id} not judged for file system {fs.logical_id}: " + "; ".join(unknown), "Properties", "SecurityGroupIds"))
    return findings


SETTINGS = Rule(
    id="SMDDP-FSX1",
    severity=Severity.ERROR,
    cfn_lint_id="E9201",
    title="FSx for Lustre settings FSx will reject",
    explanation="Choose a StorageCapacity, throughput, FileSystemTypeVersion and EFA/metadata settings valid for the deployment and storage type (docs/rules.md).",
    symptom="stack fails ~20 minutes into the deploy, before any training",
    check=check_settings,
    source=("API behaviour: FSx CreateFileSystem rejects the request (Amazon FSx API Reference, CreateFileSystem: "
            "StorageCapacity, FileSystemTypeVersion; CreateFileSystemLustreConfiguration: DeploymentType, "
            "PerUnitStorageThroughput, DriveCacheType, EfaEnabled, MetadataConfiguration, ThroughputCapacity). The EFA "
            "capacity steps are SMDDP-FSX6."),
)

EFA_STEPS = Rule(
    id="SMDDP-FSX6",
    severity=Severity.WARNING,
    cfn_lint_id="W9206",
    title="EFA-enabled FSx for Lustre capacity not a whole EFA step of its tier",
    explanation="Give an EFA-enabled PERSISTENT_2 file system a multiple of its tier's EFA step: one file server's storage (docs/rules.md).",
    symptom="a partial EFA file server: FSx may reject the capacity at creation (a stack failure ~20 minutes into the deploy) or provision a whole step",
    check=check_efa_steps,
    source=("FSx for Lustre User Guide, 'IP addresses for file systems': an EFA-enabled file system stores 38.4 / 19.2 / "
            "9.6 / 4.8 TiB per file server at 125 / 250 / 500 / 1000 MB/s/TiB, and 'Increasing storage capacity' grows "
            "it in multiples of 38,400 / 19,200 / 9,600 / 4,800 GiB. A warning, not an error: the API reference's "
            "CreateFileSystem StorageCapacity names only 1200, 2400 and increments of 2400 GiB for PERSISTENT_2 SSD, so "
            "no cited source says creation refuses a capacity off the steps (UNCONFIRMED)."),
)

THROUGHPUT = Rule(
    id="SMDDP-FSX2",
    severity=Severity.WARNING,
    cfn_lint_id="W9202",
    title="FSx for Lustre throughput below the requirement it was sized for",
    explanation="Raise StorageCapacity or PerUnitStorageThroughput until capacity/1024 x per-unit throughput meets smddp:requiredThroughputMBps.",
    symptom="scaling efficiency drops on larger clusters",
    check=check_throughput,
    source=("FSx for Lustre User Guide, 'Amazon FSx for Lustre performance' (baseline throughput = storage x per-unit "
            "throughput); the requirement is this project's sizing (tag smddp:requiredThroughputMBps). The scaling loss "
            "depends on the job: a warning."),
)

LUSTRE_PORTS_RULE = Rule(
    id="SMDDP-FSX3",
    severity=Severity.ERROR,
    cfn_lint_id="E9203",
    title="Lustre port TCP 988 not open between the file system's security groups",
    explanation="Allow TCP 988 in and out between the file system's groups (an all-traffic self rule also covers it); FSx refuses to create the file system otherwise.",
    symptom="file system creation fails (InvalidNetworkSettings) or clients cannot mount it",
    check=check_lustre_ports,
    source=("API behaviour: CreateFileSystem fails with InvalidNetworkSettings when the file system's groups do not "
            "allow TCP 988; FSx for Lustre User Guide, 'File system access control with Amazon VPC' (Lustre ports)."),
)

LUSTRE_EXTRA_PORTS_RULE = Rule(
    id="SMDDP-FSX4",
    severity=Severity.WARNING,
    cfn_lint_id="W9204",
    title="Lustre ports TCP 1018-1023 not open between the file system's security groups",
    explanation="Allow TCP 1018-1023 in and out between the file system's groups, as the FSx user guide lists (FSx does not validate them at creation).",
    symptom="clients may fail to mount or reconnect to the file system",
    check=check_lustre_extra_ports,
    source=("UNCONFIRMED: what fails without TCP 1018-1023. FSx for Lustre User Guide, 'File system access control with "
            "Amazon VPC' lists them, but FSx does not validate them at creation: a warning."),
)

RULES = (SETTINGS, THROUGHPUT, LUSTRE_PORTS_RULE, LUSTRE_EXTRA_PORTS_RULE, EFA_STEPS)


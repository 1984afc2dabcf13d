"""FSx for Lustre's capacity and throughput rules: the single source of truth.

The calculator (:mod:`smddp_infra.sizing.planner`), the file-system construct and the
template rule engine (:mod:`smddp_infra.rules`) all read these tables; nothing else in
the project may spell out "1200, 2400, multiples of 2400" again.

Facts: the CloudFormation ``AWS::FSx::FileSystem`` reference and the FSx for Lustre
user guide (performance and EFA pages). Capacities are GiB, per-unit throughput is
MB/s per TiB of storage.
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass
from typing import Iterator, Optional

SCRATCH_1 = "SCRATCH_1"
SCRATCH_2 = "SCRATCH_2"
PERSISTENT_1 = "PERSISTENT_1"
PERSISTENT_2 = "PERSISTENT_2"

DEPLOYMENT_TYPES = (SCRATCH_1, SCRATCH_2, PERSISTENT_1, PERSISTENT_2)
PERSISTENT_TYPES = (PERSISTENT_1, PERSISTENT_2)
SCRATCH_TYPES = (SCRATCH_1, SCRATCH_2)

#: Baseline throughput a scratch file system delivers per TiB (not settable).
SCRATCH_BASELINE_MBPS_PER_TIB = 200

#: FileSystemTypeVersion we always set; 2.10 is rejected for PERSISTENT_2.
FILE_SYSTEM_TYPE_VERSION = "2.15"

#: FileSystemTypeVersion rules (FSx CreateFileSystem API reference): 2.10 is supported by
#: SCRATCH_1, SCRATCH_2 and PERSISTENT_1 only; 2.12 by every type EXCEPT PERSISTENT_2 with a
#: metadata configuration; 2.15 by all. Versions not listed here are not judged.
FILE_SYSTEM_TYPE_VERSIONS = ("2.10", "2.12", "2.15")
VERSION_2_10_TYPES = (SCRATCH_1, SCRATCH_2, PERSISTENT_1)
#: Versions rejected for PERSISTENT_2 when it has a MetadataConfiguration.
VERSIONS_REJECTED_WITH_METADATA = ("2.10", "2.12")

#: StorageType values. INTELLIGENT_TIERING (FSx API, CloudFormation schema): PERSISTENT_2
#: only, Lustre 2.15, no StorageCapacity (the storage grows with the data), throughput set
#: as LustreConfiguration.ThroughputCapacity in steps of 4,000 MB/s (it can only grow, up
#: to 2,000,000 MB/s), optional SSD read cache DataReadCacheConfiguration.
SSD, HDD, INTELLIGENT_TIERING = "SSD", "HDD", "INTELLIGENT_TIERING"
STORAGE_TYPES = (SSD, HDD, INTELLIGENT_TIERING)
INTELLIGENT_TIERING_THROUGHPUT_STEP_MBPS = 4000
INTELLIGENT_TIERING_MAX_THROUGHPUT_MBPS = 2_000_000

#: Default regional quota for total Lustre storage (a warning, not a hard limit).
DEFAULT_REGIONAL_QUOTA_GIB = 100_800

#: The largest StorageCapacity CloudFormation can carry (the property is an Integer, int32).
#: FSx's own per-file-system ceiling is lower and set by quota; this bound only keeps the
#: calculator from emitting a value no template can hold.
MAX_STORAGE_CAPACITY_GIB = 2_147_483_647

#: AutomaticBackupRetentionDays bounds; scratch types require 0.
MAX_BACKUP_RETENTION_DAYS = 90


@dataclass(frozen=True)
class CapacityRule:
    """Valid StorageCapacity values: an explicit list, then every multiple of ``step``.

    ``first_multiple`` is the smallest multiple that is valid (e.g. 2400 for
    "1200, 2400, then multiples of 2400", 3600 for SCRATCH_1).
    """

    explicit: tuple[int, ...]
    step: int
    first_multiple: int

    def is_valid(self, capacity_gib: int) -> bool:
        if capacity_gib in self.explicit:
            return True
        return capacity_gib >= self.first_multiple and capacity_gib % self.step == 0

    def smallest_at_least(self, capacity_gib: "float | Fraction") -> int:
        """The smallest valid capacity >= ``capacity_gib``."""
        candidates = [v for v in self.explicit if v >= capacity_gib]
        candidates.append(max(self.first_multiple, math.ceil(capacity_gib / self.step) * self.step))
        return min(candidates)

    def describe(self) -> str:
        head = ", ".join(f"{v:,}" for v in self.explicit)
        tail = f"a multiple of {self.step:,}"
        if self.first_multiple != self.step:
            tail += f" from {self.first_multiple:,}"
        return f"{head}, or {tail}" if head else tail

    def values(self, limit_gib: int) -> Iterator[int]:
        """Every valid capacity up to ``limit_gib``, ascending."""
        seen = set()
        for value in self.explicit:
            if value <= limit_gib:
                seen.add(value)
                yield value
        value = self.first_multiple
        while value <= limit_gib:
            if value not in seen:
                yield value
            value += self.step


def _ssd_rule() -> CapacityRule:
    return CapacityRule(explicit=(1200, 2400), step=2400, first_multiple=2400)


@dataclass(frozen=True)
class Tier:
    """One deployment type / storage type / per-unit throughput combination."""

    deployment_type: str
    storage_type: str  # "SSD" or "HDD"
    per_unit_storage_throughput: Optional[int]  # None: not settable (scratch)
    capacity: CapacityRule
    efa_enabled: bool = False

    @property
    def baseline_mbps_per_tib(self) -> int:
        return self.per_unit_storage_throughput or SCRATCH_BASELINE_MBPS_PER_TIB

    @property
    def key(self) -> str:
        """A stable name for price tables and messages, e.g. ``PERSISTENT_2/250``."""
        if self.per_unit_storage_throughput is None:
            return self.deployment_type
        parts = [self.deployment_type]
        if self.storage_type == "HDD":
            parts.append("HDD")
        parts.append(str(self.per_unit_storage_throughput))
        return "/".join(parts)

    def throughput_mbps(self, capacity_gib: int) -> float:
        """Baseline disk throughput: capacity in TiB (GiB / 1024) x per-unit throughput."""
        return capacity_gib / 1024 * self.baseline_mbps_per_tib


SSD_TIERS: tuple[Tier, ...] = (
    Tier(SCRATCH_1, "SSD", None, CapacityRule((1200, 2400), 3600, 3600)),
    Tier(SCRATCH_2, "SSD", None, _ssd_rule()),
    *(Tier(PERSISTENT_1, "SSD", t, _ssd_rule()) for t in (50, 100, 200)),
    *(Tier(PERSISTENT_2, "SSD", t, _ssd_rule()) for t in (125, 250, 500, 1000)),
)

HDD_TIERS: tuple[Tier, ...] = (
    Tier(PERSISTENT_1, "HDD", 12, CapacityRule((), 6000, 6000)),
    Tier(PERSISTENT_1, "HDD", 40, CapacityRule((), 1800, 1800)),
)

#: PERSISTENT_2 with EfaEnabled: capacity in whole steps that depend on the tier. Source: the
#: FSx for Lustre user guide, "IP addresses for file systems" (an EFA-enabled file server
#: stores 38.4 / 19.2 / 9.6 / 4.8 TiB at 125 / 250 / 500 / 1000 MB/s/TiB; 2.4 TiB without EFA)
#: and "Increasing storage capacity" (EFA-enabled file systems grow in those multiples of
#: GiB). The calculator plans whole steps (one file server at least). That CreateFileSystem
#: REFUSES a capacity off the steps is not stated in the API reference: SMDDP-FSX6 is a warning.
EFA_STEP_GIB = {125: 38400, 250: 19200, 500: 9600, 1000: 4800}

EFA_TIERS: tuple[Tier, ...] = tuple(
    Tier(PERSISTENT_2, "SSD", t, CapacityRule((), step, step), efa_enabled=True)
    for t, step in EFA_STEP_GIB.items()
)

ALL_TIERS: tuple[Tier, ...] = SSD_TIERS + HDD_TIERS + EFA_TIERS

#: DriveCacheType values for PERSISTENT_1 HDD (required there, rejected elsewhere).
DRIVE_CACHE_TYPES = ("NONE", "READ")


def tiers_for(deployment_type: str, *, storage_type: str = "SSD", efa_enabled: bool = False) -> tuple[Tier, ...]:
    return tuple(
        t
        for t in ALL_TIERS
        if t.deployment_type == deployment_type and t.storage_type == storage_type and t.efa_enabled == efa_enabled
    )


def find_tier(
    deployment_type: str,
    per_unit_storage_throughput: Optional[int],
    *,
    storage_type: str = "SSD",
    efa_enabled: bool = False,
) -> Optional[Tier]:
    """The tier for these settings, or None when FSx does not offer the combination."""
    for tier in tiers_for(deployment_type, storage_type=storage_type, efa_enabled=efa_enabled):
        if tier.per_unit_storage_throughput == per_unit_storage_throughput:
            return tier
    return None


def allowed_throughputs(deployment_type: str, *, storage_type: str = "SSD", efa_enabled: bool = False) -> tuple[int, ...]:
    return tuple(
        t.per_unit_storage_throughput
        for t in tiers_for(deployment_type, storage_type=storage_type, efa_enabled=efa_enabled)
        if t.per_unit_storage_throughput is not None
    )


def version_problems(deployment_type: str, version: Optional[str], *, has_metadata_configuration: Optional[bool]) -> list[str]:
    """Why FSx rejects ``FileSystemTypeVersion`` for this deployment type ([] when valid or unknown)."""
    if version is None or version not in FILE_SYSTEM_TYPE_VERSIONS:
        return []
    if version == "2.10" and deployment_type not in VERSION_2_10_TYPES:
        return [
            f"FileSystemTypeVersion 2.10 is only supported for {', '.join(VERSION_2_10_TYPES)}, "
            f"not {deployment_type}; use {FILE_SYSTEM_TYPE_VERSION}"
        ]
    if deployment_type == PERSISTENT_2 and has_metadata_configuration and version in VERSIONS_REJECTED_WITH_METADATA:
        return [
            f"FileSystemTypeVersion {version} is not supported for PERSISTENT_2 with a MetadataConfiguration; "
            f"use {FILE_SYSTEM_TYPE_VERSION}"
        ]
    return []


def intelligent_tiering_problems(
    *,
    deployment_type: str,
    storage_capacity_gib: Optional[int],
    throughput_capacity_mbps: Optional[int],
    file_system_type_version: Optional[str],
    efa_enabled: bool = False,
) -> list[str]:
    """Why FSx rejects an INTELLIGENT_TIERING file system ([] when valid)."""
    problems = []
    if deployment_type != PERSISTENT_2:
        problems.append(f"StorageType INTELLIGENT_TIERING requires PERSISTENT_2, got {deployment_type}")
    if storage_capacity_gib is not None:
        problems.append(
            f"StorageCapacity is not set with StorageType INTELLIGENT_TIERING (storage grows with the data), got {storage_capacity_gib}"
        )
    step, top = INTELLIGENT_TIERING_THROUGHPUT_STEP_MBPS, INTELLIGENT_TIERING_MAX_THROUGHPUT_MBPS
    if throughput_capacity_mbps is None:
        problems.append(f"LustreConfiguration.ThroughputCapacity is required with StorageType INTELLIGENT_TIERING: a multiple of {step:,} MB/s")
    elif throughput_capacity_mbps < step or throughput_capacity_mbps % step or throughput_capacity_mbps > top:
        problems.append(
            f"LustreConfiguration.ThroughputCapacity must be a multiple of {step:,} MB/s up to {top:,} with StorageType "
            f"INTELLIGENT_TIERING, got {throughput_capacity_mbps}"
        )
    if file_system_type_version is not None and file_system_type_version != FILE_SYSTEM_TYPE_VERSION:
        problems.append(
            f"StorageType INTELLIGENT_TIERING requires FileSystemTypeVersion {FILE_SYSTEM_TYPE_VERSION}, got {file_system_type_version}"
        )
    return problems


def validate_lustre_settings(
    *,
    deployment_type: str,
    storage_capacity_gib: Optional[int],
    per_unit_storage_throughput: Optional[int] = None,
    storage_type: str = "SSD",
    efa_enabled: bool = False,
    drive_cache_type: Optional[str] = None,
    file_system_type_version: Optional[str] = None,
    has_metadata_configuration: Optional[bool] = None,
    throughput_capacity_mbps: Optional[int] = None,
    efa_steps: bool = True,
) -> list[str]:
    """Every reason CloudFormation would reject these Lustre settings ([] when valid).

    One message per broken rule, each naming the property, the value and what is allowed,
    in the style of aws-cdk-lib's own validators. ``storage_capacity_gib`` is None only for
    INTELLIGENT_TIERING (whose throughput is ``throughput_capacity_mbps``).

    ``efa_steps=False`` judges an EFA-enabled capacity by the cited PERSISTENT_2 SSD rule
    only, leaving out the EFA steps (:data:`EFA_STEP_GIB`; that creation refuses a capacity
    off them is UNCONFIRMED): :func:`efa_step_problems` reports those on their own.
    """
    problems: list[str] = []
    if deployment_type not in DEPLOYMENT_TYPES:
        return [f"DeploymentType must be one of {', '.join(DEPLOYMENT_TYPES)}, got {deployment_type!r}"]
    if storage_type == INTELLIGENT_TIERING:
        return intelligent_tiering_problems(
            deployment_type=deployment_type,
            storage_capacity_gib=storage_capacity_gib,
            throughput_capacity_mbps=throughput_capacity_mbps,
            file_system_type_version=file_system_type_version,
            efa_enabled=efa_enabled,
        )
    if storage_type not in STORAGE_TYPES:
        return [f"StorageType must be one of {', '.join(STORAGE_TYPES)}, got {storage_type!r}"]
    if storage_capacity_gib is None:
        return [f"StorageCapacity is required with StorageType {storage_type}"]
    if has_metadata_configuration and deployment_type != PERSISTENT_2:
        problems.append(f"MetadataConfiguration is only supported for PERSISTENT_2, got {deployment_type}")
    if storage_type == "HDD" and deployment_type != PERSISTENT_1:
        return [f"StorageType HDD is only allowed with PERSISTENT_1, got {deployment_type}"]
    if efa_enabled and deployment_type != PERSISTENT_2:
        problems.append(f"EfaEnabled requires PERSISTENT_2, got {deployment_type}")
        efa_enabled = False

    settable = allowed_throughputs(deployment_type, storage_type=storage_type, efa_enabled=efa_enabled)
    tier: Optional[Tier]
    if not settable:
        if per_unit_storage_throughput is not None:
            problems.append(f"PerUnitStorageThroughput is not settable for {deployment_type}, got {per_unit_storage_throughput}")
        tier = tiers_for(deployment_type, storage_type=storage_type)[0]
    elif per_unit_storage_throughput is None:
        problems.append(
            f"PerUnitStorageThroughput is required for {deployment_type} {storage_type}: "
            f"one of {', '.join(map(str, settable))}"
        )
        tier = None
    else:
        tier = find_tier(deployment_type, per_unit_storage_throughput, storage_type=storage_type, efa_enabled=efa_enabled)
        if tier is None:
            problems.append(
                f"PerUnitStorageThroughput must be {', '.join(map(str, settable))} for {deployment_type} "
                f"{storage_type}, got {per_unit_storage_throughput}"
            )

    if tier is not None and efa_enabled and not efa_steps:
        tier = find_tier(deployment_type, per_unit_storage_throughput, storage_type=storage_type)
    if tier is not None and not tier.capacity.is_valid(storage_capacity_gib):
        label = tier.key + (" with EfaEnabled" if tier.efa_enabled else "")
        problems.append(
            f"StorageCapacity must be {tier.capacity.describe()} GiB for {label}, got {storage_capacity_gib}"
        )
    elif tier is None and settable:
        by_steps = efa_enabled and efa_steps
        rules = {t.capacity for t in tiers_for(deployment_type, storage_type=storage_type, efa_enabled=by_steps)}
        if not any(r.is_valid(storage_capacity_gib) for r in rules):
            if by_steps:  # the EFA steps differ per tier: say which, or the fix is a guess
                steps = [
                    f"{t.capacity.step:,} GiB at {t.per_unit_storage_throughput}"
                    for t in tiers_for(deployment_type, storage_type=storage_type, efa_enabled=True)
                ]
                problems.append(
                    f"StorageCapacity {storage_capacity_gib} GiB is not valid for any {deployment_type} tier with "
                    f"EfaEnabled: it must be a multiple of {', '.join(steps[:-1])} or {steps[-1]} MB/s/TiB"
                )
            else:
                problems.append(f"StorageCapacity {storage_capacity_gib} GiB is not valid for any {deployment_type} tier")

    if storage_type == "HDD" and drive_cache_type not in DRIVE_CACHE_TYPES:
        problems.append(f"DriveCacheType must be NONE or READ for PERSISTENT_1 HDD, got {drive_cache_type!r}")
    if storage_type != "HDD" and drive_cache_type is not None:
        problems.append(f"DriveCacheType is only allowed with PERSISTENT_1 HDD, got {drive_cache_type!r}")
    problems += version_problems(deployment_type, file_system_type_version, has_metadata_configuration=has_metadata_configuration)
    if efa_enabled:
        if has_metadata_configuration is False:
            problems.append("EfaEnabled requires MetadataConfiguration (PERSISTENT_2)")
        if file_system_type_version is not None and file_system_type_version != FILE_SYSTEM_TYPE_VERSION:
            problems.append(f"EfaEnabled requires FileSystemTypeVersion {FILE_SYSTEM_TYPE_VERSION}, got {file_system_type_version}")
    return problems


def efa_step_problems(
    *,
    deployment_type: str,
    storage_capacity_gib: Optional[int],
    per_unit_storage_throughput: Optional[int] = None,
    storage_type: str = "SSD",
    efa_enabled: bool = False,
) -> list[str]:
    """The capacity problem that rests ONLY on the EFA steps ([] when there is none).

    The steps (:data:`EFA_STEP_GIB`) are the FSx guide's storage per EFA file server; that
    creation REFUSES a capacity off them is UNCONFIRMED (hence a warning). Empty when the capacity already fails
    the cited PERSISTENT_2 rule (``validate_lustre_settings(..., efa_steps=False)`` says so).
    """
    if not efa_enabled or deployment_type != PERSISTENT_2 or storage_type != "SSD" or storage_capacity_gib is None:
        return []

    def capacity_problems(efa_steps: bool) -> list[str]:
        problems = validate_lustre_settings(
            deployment_type=deployment_type, storage_capacity_gib=storage_capacity_gib,
            per_unit_storage_throughput=per_unit_storage_throughput, efa_enabled=True, efa_steps=efa_steps,
        )
        return [p for p in problems if p.startswith("StorageCapacity")]

    return [] if capacity_problems(efa_steps=False) else capacity_problems(efa_steps=True)


# --- In-place growth (UpdateFileSystem StorageCapacity; used by `smddp-infra guard`) --------
# FSx API reference, UpdateFileSystem.StorageCapacity for Lustre: SCRATCH_2, PERSISTENT_1 and
# PERSISTENT_2 SSD grow in multiples of 2400 GiB, PERSISTENT HDD in multiples of 6000 / 1800 GiB
# (12 / 40 MB/s/TiB), always to MORE than the current capacity; SCRATCH_1 cannot grow, and no
# type shrinks. One increase at a time: a request is refused while another is in progress.
# Every valid capacity above 1200 GiB of those tiers is such a multiple, so "a larger valid
# capacity of the same tier" is an in-place update. EFA-enabled PERSISTENT_2 growth in its
# EFA steps is UNCONFIRMED (not stated in the API reference).

#: Deployment types whose StorageCapacity grows in place (CloudFormation: no replacement).
CAPACITY_GROWS_IN_PLACE = (SCRATCH_2, PERSISTENT_1, PERSISTENT_2)


def capacity_update_problem(deployment_type: str, old_gib: int, new_gib: int) -> Optional[str]:
    """Why an update from ``old_gib`` to ``new_gib`` cannot be done in place (None when it can).

    CloudFormation does not replace a file system for a StorageCapacity change; it calls
    UpdateFileSystem, which rejects a smaller value or a SCRATCH_1 increase, and the stack
    update fails and rolls back.
    """
    if new_gib == old_gib:
        return None
    if new_gib < old_gib:
        return (f"StorageCapacity {old_gib:,} -> {new_gib:,} GiB: FSx for Lustre cannot shrink a file system, so "
                "the update fails and rolls back")
    if deployment_type not in CAPACITY_GROWS_IN_PLACE:
        return (f"StorageCapacity {old_gib:,} -> {new_gib:,} GiB: a {deployment_type} file system cannot grow "
                f"(only {', '.join(CAPACITY_GROWS_IN_PLACE)} do), so the update fails and rolls back")
    return None


# --- Create-time properties the replacement data does not mark ---------------------------------
# Neither cfn-lint's createOnlyProperties nor the CDK service spec lists these for
# AWS::FSx::FileSystem, yet FSx cannot change them on an existing file system. What
# CloudFormation does on such an update (replace the file system, or fail and roll back) is
# UNCONFIRMED, so the guard refuses it before deploy either way (review/replacement.py).

@dataclass(frozen=True)
class CreateTimeProperty:
    """A file-system property FSx fixes at creation, and where that is written."""

    path: tuple[str, ...]  # property path under Properties
    source: str


CREATE_TIME_PROPERTIES = (
    CreateTimeProperty(
        ("StorageType",),
        "FSx for Lustre User Guide, 'Deployment and storage class options' (the storage class is chosen at creation); "
        "FSx API Reference, UpdateFileSystem (no StorageType parameter for Lustre)",
    ),
    CreateTimeProperty(
        ("LustreConfiguration", "EfaEnabled"),
        "FSx for Lustre User Guide, 'Working with EFA-enabled file systems' (EFA cannot be enabled or disabled on an "
        "existing file system)",
    ),
    CreateTimeProperty(
        ("LustreConfiguration", "MetadataConfiguration", "Mode"),
        "FSx API Reference, UpdateFileSystemLustreMetadataConfiguration (metadata mode changes are limited; "
        "UNCONFIRMED which directions are refused)",
    ),
)

#: An EFA-enabled file system's throughput tier is fixed at creation (FSx for Lustre User Guide,
#: 'Working with EFA-enabled file systems').
EFA_TIER_FIXED_SOURCE = "FSx for Lustre User Guide, 'Working with EFA-enabled file systems' (the throughput tier cannot change)"


def throughput_capacity_update_problem(storage_type: str, old_mbps: int, new_mbps: int) -> Optional[str]:
    """Why an Intelligent-Tiering ThroughputCapacity change cannot be done in place (None when it can):
    the FSx API reference (UpdateFileSystemLustreConfiguration.ThroughputCapacity) lets it only grow."""
    if storage_type != INTELLIGENT_TIERING or new_mbps >= old_mbps:
        return None
    return (f"ThroughputCapacity {old_mbps:,} -> {new_mbps:,} MB/s: an INTELLIGENT_TIERING file system's throughput "
            "can only grow (FSx API Reference, UpdateFileSystemLustreConfiguration), so the update fails and rolls back")

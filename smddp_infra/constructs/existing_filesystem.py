"""An existing FSx for Lustre file system for :class:`TrainingNetwork` (``existing=Existing(file_system=...)``).

Teams share one file system across networks: the network then creates none, and the job
document, the role and the launch policy name the given one. What it needs is what
``aws_fsx.LustreFileSystem.from_lustre_file_system_attributes`` takes (id, DNS name, mount name,
security group) plus the file system's Availability Zone, because FSx for Lustre serves clients
in its own AZ (SMDDP-NET4) and EFA never crosses AZs; the deployment type, capacity and baseline
throughput are optional and only feed the alarms (monitoring needs a baseline the user states:
the network cannot read it from a file system it did not size).

The file system's own security group is carried by every job (``security_groups``) and is not
changed: FSx requires a file system's groups to admit Lustre's TCP 988 from themselves, so a job
interface carrying that group reaches the servers through that rule (groups are evaluated as a
union per interface).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aws_cdk import Annotations, Token, aws_ec2 as ec2, aws_fsx as fsx
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.contract import SizingRecord
from smddp_infra.errors import ConfigError, PropTypeError


@dataclass(frozen=True)
class ExistingFileSystem:
    """An FSx for Lustre file system the network uses instead of creating one.

    :param file_system_id: ``fs-...``.
    :param dns_name: the file system's DNS name (``fs-....fsx.<region>.amazonaws.com``).
    :param mount_name: its Lustre mount name (``abcdefgh``; ``fsx`` on SCRATCH_1).
    :param security_group: the group its interfaces carry (jobs carry it too; it is not changed).
    :param availability_zone: the AZ of its subnet; must be the training subnet's.
    :param deployment_type: ``SCRATCH_2``, ``PERSISTENT_2``, ... when known. Default: unknown.
    :param storage_capacity_gib: its capacity when known. Default: unknown.
    :param baseline_throughput_mbps: its baseline disk throughput (MB/s) when known: the
        throughput alarm's threshold. Default: unknown (no alarms; said once at synth).
    :param directory_path: the path jobs mount (``/<mount name>`` or below it). Default: the root.
    """

    file_system_id: str
    dns_name: str
    mount_name: str
    security_group: Any = field(compare=False)
    availability_zone: str
    deployment_type: Optional[str] = None
    storage_capacity_gib: Optional[int] = None
    baseline_throughput_mbps: Optional[float] = None
    directory_path: Optional[str] = None

    def problems(self) -> list[str]:
        """Plain-value checks (before jsii): what is wrong, in the prop's words."""
        out = []
        for name in ("file_system_id", "dns_name", "mount_name", "availability_zone"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                out.append(f"file_system.{name} must be a non-empty string, got {value!r}")
        fs_id = self.file_system_id
        if isinstance(fs_id, str) and not Token.is_unresolved(fs_id) and not fs_id.startswith("fs-"):
            out.append(f"file_system.file_system_id must be an FSx file system id (fs-...), got {fs_id!r}")
        if self.storage_capacity_gib is not None and (not isinstance(self.storage_capacity_gib, int)
                                                      or self.storage_capacity_gib <= 0):
            out.append(f"file_system.storage_capacity_gib must be a whole number of GiB > 0, got {self.storage_capacity_gib!r}")
        if self.baseline_throughput_mbps is not None and (isinstance(self.baseline_throughput_mbps, bool) or not isinstance(
                self.baseline_throughput_mbps, (int, float)) or self.baseline_throughput_mbps <= 0):
            out.append(f"file_system.baseline_throughput_mbps must be MB/s > 0, got {self.baseline_throughput_mbps!r}")
        path = self.directory_path
        if path is not None and isinstance(self.mount_name, str) and not (
                isinstance(path, str) and (path == f"/{self.mount_name}" or path.startswith(f"/{self.mount_name}/"))):
            out.append(f"file_system.directory_path must be /{self.mount_name} or a path below it (SageMaker's "
                       f"FileSystemDataSource.DirectoryPath starts with the mount name), got {path!r}")
        return out

    def sizing_record(self) -> Optional[SizingRecord]:
        """What the alarms need, when the user stated it: type, capacity and baseline."""
        if self.deployment_type is None or self.storage_capacity_gib is None or self.baseline_throughput_mbps is None:
            return None
        baseline = float(self.baseline_throughput_mbps)
        return SizingRecord(deployment_type=self.deployment_type, storage_type="SSD",
                            storage_capacity_gib=self.storage_capacity_gib, per_unit_storage_throughput=None,
                            efa_enabled=False, required_throughput_mbps=baseline, baseline_throughput_mbps=baseline)


def check_existing(value: Any) -> Optional[ExistingFileSystem]:
    """The ``file_system`` prop: None or a valid :class:`ExistingFileSystem` (one line otherwise)."""
    if value is None:
        return None
    if not isinstance(value, ExistingFileSystem):
        raise PropTypeError(f"file_system must be smddp_infra.ExistingFileSystem(file_system_id=..., dns_name=..., "
                            f"mount_name=..., security_group=..., availability_zone=...), got {type(value).__name__}")
    problems = value.problems()
    if problems:
        raise ConfigError("; ".join(problems))
    v.require("file_system.security_group", value.security_group, "ISecurityGroup", optional=False)
    return value


class AttachedFileSystem(Construct):
    """The network's view of an existing file system: what ``LustreFileSystem`` offers the L3
    (``file_system_id``, ``mount_name``, ``directory_path``, ``monitoring``), nothing created
    except the alarms when a baseline is stated."""

    def __init__(self, scope: Construct, id: str, *, existing: ExistingFileSystem, monitoring: Any) -> None:
        from smddp_infra.constructs.monitoring import FileSystemMonitoring, monitoring_options

        super().__init__(scope, id)
        self.existing = existing
        self.plan = None
        #: aws-cdk-lib's own import of it (``dns_name``, ``file_system_id``, ``connections``), as
        #: ``LustreFileSystem.file_system`` is for a created one. Nothing reaches the template.
        self.file_system = fsx.LustreFileSystem.from_lustre_file_system_attributes(
            self, "Imported", dns_name=existing.dns_name, file_system_id=existing.file_system_id,
            security_group=existing.security_group)
        self.security_group: ec2.ISecurityGroup = existing.security_group
        self.monitoring: Optional[FileSystemMonitoring] = None
        options = monitoring_options(monitoring)
        record = existing.sizing_record()
        if options is not None and record is None:
            Annotations.of(self).add_info(
                "monitoring is off for the existing file system: state file_system.deployment_type, storage_capacity_gib "
                "and baseline_throughput_mbps to get its throughput and capacity alarms")
        elif options is not None and record is not None:  # FileSystemMonitoring checks the options against it
            self.monitoring = FileSystemMonitoring(self, "Monitoring", file_system_id=existing.file_system_id,
                                                   sizing=record, options=options)

    @property
    def file_system_id(self) -> str:
        return self.existing.file_system_id

    @property
    def mount_name(self) -> str:
        return self.existing.mount_name

    @property
    def dns_name(self) -> str:
        return self.existing.dns_name

    @property
    def directory_path(self) -> str:
        return self.existing.directory_path or f"/{self.existing.mount_name}"


def check_same_zone(existing: ExistingFileSystem, training_zone: Optional[str]) -> None:
    """Refuse a file system in another AZ than the training subnet (both literal)."""
    if training_zone is None or Token.is_unresolved(training_zone) or Token.is_unresolved(existing.availability_zone):
        return
    if existing.availability_zone != training_zone:
        raise ConfigError(
            f"file_system.availability_zone {existing.availability_zone!r} is not the training subnet's {training_zone!r}: "
            "this network keeps jobs and their file system in one AZ (cross-AZ Lustre traffic adds latency and cross-AZ "
            "data-transfer charges, and an EFA-enabled file system's EFA clients must be in its AZ); place the training "
            "subnet in the file system's AZ (availability_zone, or a training_subnet there)")


__all__ = ["AttachedFileSystem", "ExistingFileSystem", "check_existing", "check_same_zone"]

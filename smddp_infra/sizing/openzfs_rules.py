"""FSx for OpenZFS's deployment types, capacity, throughput and client ports: the one table.

Read by the HyperPod home-directory options (:class:`~smddp_infra.constructs.hyperpod_home.HomeDirectories`)
and their validators (:mod:`smddp_infra.hyperpod.validation`); nothing else spells these out.

Sources:

* deployment types and their throughput ranges: FSx API reference, ``CreateFileSystemOpenZFSConfiguration``
  (``DeploymentType``: SINGLE_AZ_1 and SINGLE_AZ_HA_1 "64 - 4,096 MB/s", SINGLE_AZ_2 and SINGLE_AZ_HA_2
  "160 - 10,240 MB/s", MULTI_AZ_1 across Availability Zones), the same text as botocore's ``fsx`` model
  (enum ``OpenZFSDeploymentType``) and the CloudFormation ``AWS::FSx::FileSystem`` OpenZFSConfiguration page;
* the throughput steps: ``ThroughputCapacity`` in the same reference, "For MULTI_AZ_1 and SINGLE_AZ_2, valid
  values are 160, 320, 640, 1280, 2560, 3840, 5120, 7680, or 10240 MBps. For SINGLE_AZ_1, valid values are
  64, 128, 256, 512, 1024, 2048, 3072, or 4096 MBps". The HA types are not listed there: each takes its
  non-HA sibling's steps here (its range is the sibling's), UNCONFIRMED step by step;
* capacity: ``CreateFileSystem.StorageCapacity``, "FSx for OpenZFS file systems - ... from 64 GiB up to
  524,288 GiB (512 TiB)" (SSD; Intelligent-Tiering, Multi-AZ only, has no provisioned capacity);
* client ports: FSx for OpenZFS User Guide, "File system access control with Amazon VPC": NFS clients
  need TCP and UDP 111 (rpcbind), 2049 (nfsd) and 20001-20003 (mountd, nlockmgr, status) into the
  file system's security group.
"""

from __future__ import annotations

from typing import Optional

SINGLE_AZ_1 = "SINGLE_AZ_1"
SINGLE_AZ_2 = "SINGLE_AZ_2"
SINGLE_AZ_HA_1 = "SINGLE_AZ_HA_1"
SINGLE_AZ_HA_2 = "SINGLE_AZ_HA_2"
MULTI_AZ_1 = "MULTI_AZ_1"
DEPLOYMENT_TYPES = (SINGLE_AZ_1, SINGLE_AZ_2, SINGLE_AZ_HA_1, SINGLE_AZ_HA_2, MULTI_AZ_1)

_GEN1 = (64, 128, 256, 512, 1024, 2048, 3072, 4096)
_GEN2 = (160, 320, 640, 1280, 2560, 3840, 5120, 7680, 10240)
#: ``ThroughputCapacity`` (MB/s) each deployment type accepts.
THROUGHPUT_MBPS: dict[str, tuple[int, ...]] = {SINGLE_AZ_1: _GEN1, SINGLE_AZ_HA_1: _GEN1, SINGLE_AZ_2: _GEN2,
                                               SINGLE_AZ_HA_2: _GEN2, MULTI_AZ_1: _GEN2}
#: SSD ``StorageCapacity`` (GiB) of an OpenZFS file system.
MIN_CAPACITY_GIB, MAX_CAPACITY_GIB = 64, 524288
#: ``AutomaticBackupRetentionDays``: 0 (off) to 90 (botocore ``fsx`` model).
MAX_BACKUP_RETENTION_DAYS = 90

#: (protocol, from, to) an NFS client needs into the file system's group, each for TCP and UDP.
NFS_PORTS: tuple[tuple[str, int, int], ...] = tuple(
    (protocol, low, high) for protocol in ("tcp", "udp") for low, high in ((111, 111), (2049, 2049), (20001, 20003)))
#: What each port range is, for rule descriptions.
NFS_SERVICES = {111: "rpcbind", 2049: "nfsd", 20001: "mountd, nlockmgr, status"}


def throughput_problem(deployment_type: str, mbps: int) -> Optional[str]:
    """Why ``mbps`` is not a ThroughputCapacity of ``deployment_type`` (None when it is)."""
    allowed = THROUGHPUT_MBPS[deployment_type]
    if mbps in allowed:
        return None
    return f"{deployment_type} takes {', '.join(map(str, allowed))} MB/s (CreateFileSystemOpenZFSConfiguration.ThroughputCapacity)"


def capacity_update_problem(deployed_gib: int, new_gib: int) -> Optional[str]:
    """Why FSx refuses to change an OpenZFS file system's StorageCapacity from ``deployed_gib`` to
    ``new_gib`` (None when it accepts it or nothing changes): UpdateFileSystem's StorageCapacity "must be
    at least 10 percent greater than the current storage capacity value" for FSx for OpenZFS (FSx API
    reference, UpdateFileSystem; botocore's ``fsx`` model), so it never shrinks."""
    if new_gib == deployed_gib or new_gib * 10 >= deployed_gib * 11:
        return None
    return (f"{deployed_gib:,} -> {new_gib:,} GiB: an FSx for OpenZFS file system only grows, by at least 10% per update "
            f"(at least {-(-deployed_gib * 11 // 10):,} GiB)")


__all__ = ["capacity_update_problem", "DEPLOYMENT_TYPES", "MAX_BACKUP_RETENTION_DAYS", "MAX_CAPACITY_GIB", "MIN_CAPACITY_GIB", "MULTI_AZ_1",
           "NFS_PORTS", "NFS_SERVICES", "SINGLE_AZ_1", "THROUGHPUT_MBPS", "throughput_problem"]

"""File systems, jobs and metric histories for ``smddp-infra observe``, built on moto's server.

File systems through FSx's API (CreateFileSystem), jobs through SageMaker's (CreateTrainingJob,
CreateCluster), metrics through CloudWatch's (PutMetricData). What the APIs cannot set -- a
training job's start and end -- is set in moto's backend (the server runs in this process).
Shared by tests/test_observe_account.py and tests/test_observe_docs.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Optional

from _diagnose_scenarios import REGION, ROLE, Aws as _Clients

ACCOUNT = "123456789012"
#: Every window starts here; 5-minute periods.
DAY = datetime(2026, 11, 2, tzinfo=timezone.utc)
PERIOD = 300
GIB = 2**30


class Aws(_Clients):
    """diagnose's clients on the local endpoint, one subnet and group, and observe's builders."""

    def __init__(self, endpoint: str) -> None:
        super().__init__(endpoint)
        vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        self.subnet = self.ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
        self.group = self.ec2.create_security_group(GroupName=f"efa-{vpc}", Description="EFA", VpcId=vpc)["GroupId"]

    def file_system(self, deployment_type: str, capacity: Optional[int], *, per_unit: Optional[int] = None,
                    storage_type: str = "SSD", throughput_capacity: Optional[int] = None, efa: bool = False) -> dict[str, Any]:
        lustre: dict[str, Any] = {"DeploymentType": deployment_type}
        if per_unit is not None:
            lustre["PerUnitStorageThroughput"] = per_unit
        if throughput_capacity is not None:
            lustre["ThroughputCapacity"] = throughput_capacity
            lustre["DataReadCacheConfiguration"] = {"SizingMode": "NO_CACHE"}
        if efa:
            lustre["EfaEnabled"] = True
            lustre["MetadataConfiguration"] = {"Mode": "AUTOMATIC"}
        request: dict[str, Any] = dict(FileSystemType="LUSTRE", SubnetIds=[self.subnet], SecurityGroupIds=[self.group],
                                       StorageType=storage_type, LustreConfiguration=lustre)
        if capacity is not None:
            request["StorageCapacity"] = capacity
        return dict(self.fsx.create_file_system(**request)["FileSystem"])

    def timed_job(self, name: str, *, fs: Optional[str], instances: int, start: datetime, hours: float) -> None:
        """diagnose's training job, with the start and end the API cannot set (set in moto's backend)."""
        from moto.backends import get_backend

        self.job(name, {"group": self.group, "subnets": [self.subnet]}, fs=fs, count=instances)
        job = get_backend("sagemaker")[ACCOUNT][REGION].training_jobs[name]
        job.training_start_time, job.training_end_time = start, start + timedelta(hours=hours)

    def cluster(self, name: str, dns_name: str, mount_name: str) -> None:
        self.sm.create_cluster(ClusterName=name, InstanceGroups=[{
            "InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2, "ThreadsPerCore": 1,
            "ExecutionRole": ROLE, "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/", "OnCreate": "on_create.sh"},
            "InstanceStorageConfigs": [{"FsxLustreConfig": {"DnsName": dns_name, "MountName": mount_name,
                                                            "MountPath": "/fsx"}}]}],
            VpcConfig={"SecurityGroupIds": [self.group], "Subnets": [self.subnet]})

    def reads(self, fs: str, *, start: datetime, hours: float, mbps: float, free_gib: Optional[float] = None) -> int:
        """A steady read rate over the window (one datapoint per period), and the free capacity."""
        dims = [{"Name": "FileSystemId", "Value": fs}]
        data: list[dict[str, Any]] = []
        periods = int(hours * 3600 // PERIOD)
        for i in range(periods):
            at = start + timedelta(seconds=PERIOD * i)
            data.append({"MetricName": "DataReadBytes", "Dimensions": dims, "Timestamp": at, "Value": mbps * 1e6 * PERIOD})
            if free_gib is not None:
                data.append({"MetricName": "FreeDataStorageCapacity", "Dimensions": dims, "Timestamp": at,
                             "Value": free_gib * GIB})
        for first in range(0, len(data), 500):
            self.cw.put_metric_data(Namespace="AWS/FSx", MetricData=data[first:first + 500])
        return periods


def baseline(capacity: int, per_unit: int) -> float:
    return capacity / 1024 * per_unit


def build(aws: Aws) -> dict[str, Any]:
    """Every scenario the tests and docs/observe.md use; name -> what the test needs to know."""
    out: dict[str, Any] = {}
    # 1. over-sized SCRATCH_2 of 14,400 GiB holding 8,000 GiB (6,400 free), read at 10 % of its baseline
    fs = aws.file_system("SCRATCH_2", 14400)
    aws.reads(fs["FileSystemId"], start=DAY, hours=6, mbps=0.1 * baseline(14400, 200), free_gib=6400)
    out["over-sized"] = fs
    # 2. under-sized PERSISTENT_2/125 of 2,400 GiB at 97 % of its baseline: grows in place to 4,800 GiB
    fs = aws.file_system("PERSISTENT_2", 2400, per_unit=125)
    aws.reads(fs["FileSystemId"], start=DAY, hours=6, mbps=0.97 * baseline(2400, 125), free_gib=1400)
    out["under-sized"] = fs
    # 3. an under-sized SCRATCH_1 (cannot grow) and an under-sized Intelligent-Tiering (more throughput capacity)
    fs = aws.file_system("SCRATCH_1", 3600)
    aws.reads(fs["FileSystemId"], start=DAY, hours=6, mbps=0.95 * baseline(3600, 200), free_gib=1000)
    out["scratch-1"] = fs
    fs = aws.file_system("PERSISTENT_2", None, storage_type="INTELLIGENT_TIERING", throughput_capacity=4000)
    aws.reads(fs["FileSystemId"], start=DAY, hours=6, mbps=3900)
    out["tiering"] = fs
    # 4. the guide's scaling symptom: 4 and 16 instances on a PERSISTENT_2/125 of 4,800 GiB (585.9 MB/s)
    base = baseline(4800, 125)
    limited = aws.file_system("PERSISTENT_2", 4800, per_unit=125)
    small, large = DAY + timedelta(hours=8), DAY + timedelta(hours=12)
    aws.timed_job("resnet-4", fs=limited["FileSystemId"], instances=4, start=small, hours=2)
    aws.reads(limited["FileSystemId"], start=small, hours=2, mbps=4 * 60, free_gib=2800)  # 60 MB/s per instance
    aws.timed_job("resnet-16", fs=limited["FileSystemId"], instances=16, start=large, hours=2)
    aws.reads(limited["FileSystemId"], start=large, hours=2, mbps=0.99 * base, free_gib=2800)  # capped at the baseline
    out["limited"] = limited
    headroom = aws.file_system("PERSISTENT_2", 4800, per_unit=125)
    aws.timed_job("bert-4", fs=headroom["FileSystemId"], instances=4, start=small, hours=2)
    aws.reads(headroom["FileSystemId"], start=small, hours=2, mbps=4 * 60, free_gib=2800)
    aws.timed_job("bert-16", fs=headroom["FileSystemId"], instances=16, start=large, hours=2)
    aws.reads(headroom["FileSystemId"], start=large, hours=2, mbps=16 * 25, free_gib=2800)  # 68 % of the baseline
    out["headroom"] = headroom
    # a HyperPod cluster mounting the under-sized file system (by DNS name)
    under = out["under-sized"]
    aws.cluster("pod-1", under["DNSName"], (under.get("LustreConfiguration") or {}).get("MountName", "abcdefgh"))
    return out

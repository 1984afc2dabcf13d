"""File systems, jobs and metric histories for ``smddp-infra observe``, built on moto's server.

File systems through FSx's API (CreateFileSystem), jobs through SageMaker's (CreateTrainingJob,
CreateCluster), metrics through CloudWatch's (PutMetricData). What the APIs cannot set -- a
training job's start and end -- is set in moto's backend (the server runs in this process).
Shared by tests/test_observe_account.py and tests/test_observe_docs.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Optional

REGION = "us-east-1"
ACCOUNT = "123456789012"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/Train"
#: Every window starts here; 5-minute periods.
DAY = datetime(2026, 11, 2, tzinfo=timezone.utc)
PERIOD = 300
GIB = 2**30


class Aws:
    """boto3 clients on the local endpoint, and builders."""

    def __init__(self, endpoint: str) -> None:
        import boto3

        session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
        self.ec2 = session.client("ec2", endpoint_url=endpoint)
        self.sm = session.client("sagemaker", endpoint_url=endpoint)
        self.fsx = session.client("fsx", endpoint_url=endpoint)
        self.cw = session.client("cloudwatch", endpoint_url=endpoint)
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

    def job(self, name: str, *, fs: Optional[str], instances: int, start: datetime, hours: float) -> None:
        from moto.backends import get_backend

        request: dict[str, Any] = dict(
            TrainingJobName=name, RoleArn=ROLE,
            AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            OutputDataConfig={"S3OutputPath": "s3://jobs/output/"},
            ResourceConfig={"InstanceType": "ml.p4d.24xlarge", "InstanceCount": instances, "VolumeSizeInGB": 100},
            StoppingCondition={"MaxRuntimeInSeconds": 86400},
            VpcConfig={"SecurityGroupIds": [self.group], "Subnets": [self.subnet]})
        if fs:
            request["InputDataConfig"] = [{"ChannelName": "train", "DataSource": {"FileSystemDataSource": {
                "FileSystemId": fs, "FileSystemType": "FSxLustre", "FileSystemAccessMode": "ro", "DirectoryPath": "/fsx/data"}}}]
        self.sm.create_training_job(**request)
        job = get_backend("sagemaker")[ACCOUNT][REGION].training_jobs[name]  # the API cannot set these
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
    aws.job("resnet-4", fs=limited["FileSystemId"], instances=4, start=small, hours=2)
    aws.reads(limited["FileSystemId"], start=small, hours=2, mbps=4 * 60, free_gib=2800)  # 60 MB/s per instance
    aws.job("resnet-16", fs=limited["FileSystemId"], instances=16, start=large, hours=2)
    aws.reads(limited["FileSystemId"], start=large, hours=2, mbps=0.99 * base, free_gib=2800)  # capped at the baseline
    out["limited"] = limited
    headroom = aws.file_system("PERSISTENT_2", 4800, per_unit=125)
    aws.job("bert-4", fs=headroom["FileSystemId"], instances=4, start=small, hours=2)
    aws.reads(headroom["FileSystemId"], start=small, hours=2, mbps=4 * 60, free_gib=2800)
    aws.job("bert-16", fs=headroom["FileSystemId"], instances=16, start=large, hours=2)
    aws.reads(headroom["FileSystemId"], start=large, hours=2, mbps=16 * 25, free_gib=2800)  # 68 % of the baseline
    out["headroom"] = headroom
    # a HyperPod cluster mounting the under-sized file system (by DNS name)
    under = out["under-sized"]
    aws.cluster("pod-1", under["DNSName"], (under.get("LustreConfiguration") or {}).get("MountName", "abcdefgh"))
    return out

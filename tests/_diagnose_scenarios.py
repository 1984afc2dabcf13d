"""Scenarios for ``smddp-infra diagnose`` built through boto3 against a local endpoint (moto's server).

Shared by tests/test_diagnose.py and tests/test_diagnose_docs.py (which runs docs/diagnose.md's
outputs). Each network gets its own VPC, so scenarios do not see each other.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from smddp_infra.account.session import share_data_loader

REGION = "us-east-1"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311"
ROLE = "arn:aws:iam::123456789012:role/Train"
#: moto's default account
ACCOUNT = "123456789012"


def point_at(endpoint: str, monkeypatch: Any) -> None:
    """The environment a user's shell would have for the local endpoint: its URL, test keys, the region."""
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", REGION)


class Aws:
    """boto3 clients on the local endpoint, and builders for the scenarios."""

    def __init__(self, endpoint: str) -> None:
        import boto3

        session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
        share_data_loader(session)
        self.ec2 = session.client("ec2", endpoint_url=endpoint)
        self.sm = session.client("sagemaker", endpoint_url=endpoint)
        self.fsx = session.client("fsx", endpoint_url=endpoint)
        self.logs = session.client("logs", endpoint_url=endpoint)
        self.cw = session.client("cloudwatch", endpoint_url=endpoint)

    def network(self, *, self_in: bool = True, self_out: bool = True, s3: bool = True, nat: bool = True,
                subnets: int = 1, zones: tuple[str, ...] = ("us-east-1a",), prefix: int = 20) -> dict[str, Any]:
        """``prefix``: the training subnets' size (a /24 holds 251 free addresses, /20 4,091)."""
        vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        made = [self.ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{16 * i}.0/{prefix}", AvailabilityZone=zones[i % len(zones)])["Subnet"]["SubnetId"]
                for i in range(subnets)]
        group = self.ec2.create_security_group(GroupName=f"efa-{vpc}", Description="EFA training", VpcId=vpc)["GroupId"]
        pair = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": group}]}]
        if self_in:
            self.ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=pair)
        if self_out:
            self.ec2.authorize_security_group_egress(GroupId=group, IpPermissions=pair)
        table = self.ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["RouteTables"][0]["RouteTableId"]
        if s3:
            self.ec2.create_vpc_endpoint(VpcId=vpc, ServiceName=f"com.amazonaws.{REGION}.s3", RouteTableIds=[table])
        if nat:
            public = self.ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.240.0/24", AvailabilityZone=zones[0])["Subnet"]["SubnetId"]
            allocation = self.ec2.allocate_address(Domain="vpc")["AllocationId"]
            gateway = self.ec2.create_nat_gateway(SubnetId=public, AllocationId=allocation)["NatGateway"]["NatGatewayId"]
            private = self.ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
            self.ec2.create_route(RouteTableId=private, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=gateway)
            for subnet in made:
                self.ec2.associate_route_table(RouteTableId=private, SubnetId=subnet)
        return {"vpc": vpc, "subnets": made, "group": group, "table": table}

    def file_system(self, subnet: str, group: str, capacity: int = 1200) -> str:
        fs = self.fsx.create_file_system(FileSystemType="LUSTRE", StorageCapacity=capacity, SubnetIds=[subnet],
                                         SecurityGroupIds=[group],
                                         LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125})
        return str(fs["FileSystem"]["FileSystemId"])

    def interfaces_of(self, fs: str) -> str:
        """Give the file system a network interface carrying its groups, as FSx does (moto 5.2.5 creates
        none and DescribeFileSystems lists no NetworkInterfaceIds: set in moto's backend, in this
        process, what its API cannot). Returns the interface id."""
        from moto.fsx.models import fsx_backends

        record = fsx_backends[ACCOUNT][REGION].file_systems[fs]
        eni = self.ec2.create_network_interface(SubnetId=record.subnet_ids[0], Groups=list(record.security_group_ids),
                                                Description=f"ENI for {fs}")["NetworkInterface"]["NetworkInterfaceId"]
        described = record.to_dict
        record.to_dict = lambda: {**described(), "NetworkInterfaceIds": [eni]}  # type: ignore[method-assign]
        return str(eni)

    def cluster(self, name: str, net: dict[str, Any], *, count: int = 2, dns: str | None = None,
                health_checks: tuple[str, ...] = (), eks_cluster_arn: str | None = None) -> str:
        """A HyperPod cluster with one group "workers" of ml.p5.48xlarge (orchestrated by the EKS
        cluster ``eks_cluster_arn`` when given); returns its log group."""
        group: dict[str, Any] = {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": count,
                                 "ThreadsPerCore": 1,  # moto 5.2.5 fails to answer without it
                                 "ExecutionRole": ROLE, "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/scripts/",
                                                                            "OnCreate": "on_create.sh"}}
        if dns:
            group["InstanceStorageConfigs"] = [{"FsxLustreConfig": {"DnsName": dns, "MountName": "abcdef", "MountPath": "/fsx"}}]
        if health_checks:
            group["OnStartDeepHealthChecks"] = list(health_checks)
        arn = self.sm.create_cluster(ClusterName=name, InstanceGroups=[group],
                                     VpcConfig={"SecurityGroupIds": [net["group"]], "Subnets": net["subnets"]})["ClusterArn"]
        if eks_cluster_arn:  # moto 5.2.5 drops Orchestrator: set it in its backend, as DescribeCluster answers it
            from moto.sagemaker.models import sagemaker_backends

            record = sagemaker_backends[ACCOUNT][REGION].clusters[name]
            described = record.describe
            record.describe = lambda: {**described(), "Orchestrator": {"Eks": {"ClusterArn": eks_cluster_arn}}}  # type: ignore[method-assign]
        return f"/aws/sagemaker/Clusters/{name}/{arn.rsplit('/', 1)[-1]}"

    @staticmethod
    def set_cluster(name: str, *, status: str, failure: str = "") -> None:
        """ClusterStatus and FailureMessage, set in moto's backend (its API cannot make a cluster fail)."""
        from moto.sagemaker.models import sagemaker_backends

        record = sagemaker_backends[ACCOUNT][REGION].clusters[name]
        record.status, record.failure_message = status, failure

    @staticmethod
    def fail_node(name: str, node: str, message: str) -> None:
        """A node in status Failure with ``message`` (moto answers a fixed "message"), set in its backend."""
        from moto.sagemaker.models import sagemaker_backends

        record = sagemaker_backends[ACCOUNT][REGION].clusters[name].nodes[node]
        record.status = "Failure"
        for method in ("summary", "describe"):
            answer = getattr(record, method)
            setattr(record, method, lambda answer=answer: {**answer(), "InstanceStatus": {"Status": "Failure", "Message": message}})

    def lifecycle_log(self, log_group: str, group: str, instance: str, lines: list[str], *, at: datetime) -> None:
        try:
            self.logs.create_log_group(logGroupName=log_group)
        except self.logs.exceptions.ResourceAlreadyExistsException:
            pass
        stream = f"LifecycleConfig/{group}/{instance}"
        self.logs.create_log_stream(logGroupName=log_group, logStreamName=stream)
        self.logs.put_log_events(logGroupName=log_group, logStreamName=stream, logEvents=[
            {"timestamp": int((at + timedelta(seconds=i)).timestamp() * 1000), "message": line} for i, line in enumerate(lines)])

    @staticmethod
    def fail_job(name: str, reason: str) -> None:
        """Status Failed with ``reason`` (moto completes every job at once), set in its backend."""
        from moto.sagemaker.models import sagemaker_backends

        record = sagemaker_backends[ACCOUNT][REGION].training_jobs[name]
        record.training_job_status, record.failure_reason = "Failed", reason

    def lustre_group(self, vpc: str, *, clients: str | None = None) -> str:
        """A file system's OWN group: Lustre (TCP 988, 1018-1023) from itself, and from ``clients`` when given."""
        group = self.ec2.create_security_group(GroupName=f"lustre-{vpc}-{clients or 'self'}", Description="Lustre servers",
                                               VpcId=vpc)["GroupId"]
        peers = [{"GroupId": group}] + ([{"GroupId": clients}] if clients else [])
        self.ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": low, "ToPort": high, "UserIdGroupPairs": peers} for low, high in ((988, 988), (1018, 1023))])
        return group

    def job(self, name: str, net: dict[str, Any], *, subnets: list[str] | None = None, fs: str | None = None,
            debugger: bool = False, checkpoints: bool = False, smddp: bool = True, count: int = 2) -> None:
        request: dict[str, Any] = dict(
            TrainingJobName=name, RoleArn=ROLE,
            AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            OutputDataConfig={"S3OutputPath": "s3://jobs/output/"},
            ResourceConfig={"InstanceType": "ml.p4d.24xlarge", "InstanceCount": count, "VolumeSizeInGB": 100},
            StoppingCondition={"MaxRuntimeInSeconds": 86400},
            VpcConfig={"SecurityGroupIds": [net["group"]], "Subnets": subnets or net["subnets"]},
            HyperParameters={"sagemaker_distributed_dataparallel_enabled": "true" if smddp else "false",
                             "sagemaker_program": '"train.py"'})
        if fs:
            request["InputDataConfig"] = [{"ChannelName": "train", "DataSource": {"FileSystemDataSource": {
                "FileSystemId": fs, "FileSystemType": "FSxLustre", "FileSystemAccessMode": "ro", "DirectoryPath": "/fsx/data"}}}]
        if debugger:
            request["DebugHookConfig"] = {"S3OutputPath": "s3://jobs/debug/"}
        if checkpoints:
            request["CheckpointConfig"] = {"S3Uri": "s3://jobs/checkpoints/"}
        self.sm.create_training_job(**request)

    def log(self, job: str, lines: list[str], *, at: datetime) -> None:
        group = "/aws/sagemaker/TrainingJobs"
        try:
            self.logs.create_log_group(logGroupName=group)
        except self.logs.exceptions.ResourceAlreadyExistsException:
            pass
        stream = f"{job}/algo-1-1700000000"
        self.logs.create_log_stream(logGroupName=group, logStreamName=stream)
        events = [{"timestamp": int((at + timedelta(seconds=i)).timestamp() * 1000), "message": line} for i, line in enumerate(lines)]
        self.logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)

    def cluster_of(self, name: str, vpc: dict[str, Any], groups: list[dict[str, Any]]) -> str:
        """A HyperPod cluster of the instance groups given (each completed with what CreateCluster requires);
        returns its log group."""
        full = [{"ThreadsPerCore": 1, "ExecutionRole": ROLE,
                 "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/scripts/", "OnCreate": "on_create.sh"}, **g}
                for g in groups]
        arn = self.sm.create_cluster(ClusterName=name, InstanceGroups=full, VpcConfig=vpc)["ClusterArn"]
        return f"/aws/sagemaker/Clusters/{name}/{arn.rsplit('/', 1)[-1]}"

    @staticmethod
    def set_group(name: str, group: str, **fields: Any) -> None:
        """Fields of one instance group as DescribeCluster answers them (``CurrentCount``: moto fills every group)."""
        from moto.sagemaker.models import sagemaker_backends

        for entry in sagemaker_backends[ACCOUNT][REGION].clusters[name].instance_groups:
            if entry["InstanceGroupName"] == group:
                entry.update(fields)

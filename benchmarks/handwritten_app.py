#!/usr/bin/env python3
"""The yardstick for benchmarks/bench_synth_ratio.py: the default app's core, written by hand.

What a CDK engineer would write with aws-cdk-lib alone for the same core resources as the
default app (app.py): a VPC with one isolated subnet in one AZ, the S3 gateway endpoint, a
security group that admits itself (all traffic, in and out, as EFA needs), a PERSISTENT_2 FSx for
Lustre file system in that subnet and group, and an S3 bucket. No smddp_infra import, no rule
pack: the difference to app.py is what smddp_infra costs at synth. Runs like app.py
(``CDK_OUTDIR``/``CDK_CONTEXT_JSON`` from the caller, as ``cdk synth`` passes them).

``--aws-solutions`` adds cdk-nag's AwsSolutions pack, the pack the default app runs beside ours,
as a validation plugin the way app.py adds it; the two findings this stack has (no flow log, no
server access logs) are acknowledged, so the synth completes. The difference to app.py is then
what smddp_infra itself costs (our stack, our imports, SmddpChecks).
"""

from __future__ import annotations

import sys

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2, aws_fsx as fsx, aws_s3 as s3
from constructs import Construct


class HandWrittenStack(cdk.Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)  # type: ignore[arg-type]
        vpc = ec2.Vpc(self, "Vpc", ip_addresses=ec2.IpAddresses.cidr("10.0.0.0/16"),
                      availability_zones=["us-east-1a"], nat_gateways=0,
                      subnet_configuration=[ec2.SubnetConfiguration(name="Training", cidr_mask=20,
                                                                    subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)],
                      gateway_endpoints={"S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3)})
        group = ec2.SecurityGroup(self, "EfaGroup", vpc=vpc, allow_all_outbound=False,
                                  description="EFA: all traffic to and from itself")
        group.add_ingress_rule(group, ec2.Port.all_traffic(), "EFA peers")
        group.add_egress_rule(group, ec2.Port.all_traffic(), "EFA peers")
        fsx.LustreFileSystem(self, "FileSystem", vpc=vpc, vpc_subnet=vpc.isolated_subnets[0], security_group=group,
                             storage_capacity_gib=2400, removal_policy=cdk.RemovalPolicy.RETAIN,
                             file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
                             lustre_configuration=fsx.LustreConfiguration(
                                 deployment_type=fsx.LustreDeploymentType.PERSISTENT_2, per_unit_storage_throughput=250,
                                 data_compression_type=fsx.LustreDataCompressionType.LZ4))
        s3.Bucket(self, "Checkpoints", versioned=True, enforce_ssl=True, encryption=s3.BucketEncryption.S3_MANAGED,
                  block_public_access=s3.BlockPublicAccess.BLOCK_ALL, removal_policy=cdk.RemovalPolicy.RETAIN)


def main() -> None:
    app = cdk.App()
    stack = HandWrittenStack(app, "HandWrittenStack", env=cdk.Environment(region="us-east-1"))
    if "--aws-solutions" in sys.argv[1:]:
        from cdk_nag import AwsSolutionsChecks

        for path, rule in (("Vpc/Resource", "AwsSolutions-VPC7"), ("Checkpoints/Resource", "AwsSolutions-S1")):
            cdk.Validations.of(stack.node.find_child(path.split("/")[0]).node.find_child("Resource")).acknowledge(
                cdk.Acknowledgment(id=f"AwsSolutions::{rule}", reason="the yardstick is the core resources only"))
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()


if __name__ == "__main__":
    main()

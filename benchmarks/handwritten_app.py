#!/usr/bin/env python3
"""The yardstick for benchmarks/bench_synth_ratio.py: the default app's resources, written by hand.

What a CDK engineer would write with aws-cdk-lib alone for the same resources the default app
(app.py) synthesizes: a VPC with one isolated /20 subnet in one AZ and its flow log to a logs
bucket, the S3 gateway endpoint and six interface endpoints behind their own group, a group that
admits itself (all traffic, in and out, as EFA needs) with HTTPS to the endpoints and S3, a
PERSISTENT_2 FSx for Lustre file system, a checkpoint bucket, the execution role and its policy, a
launch policy, the file system's two alarms, dashboard and encrypted topic, the job document as
an SSM parameter, and the twelve outputs. No smddp_infra import: the difference to app.py is what
smddp_infra costs at synth. bench_synth_ratio.py checks that both templates hold the same
resources (type by type) and outputs before it prints a ratio. Runs like app.py
(``CDK_OUTDIR``/``CDK_CONTEXT_JSON`` from the caller, as ``cdk synth`` passes them).

``--aws-solutions`` adds cdk-nag's AwsSolutions pack, the pack the default app runs beside ours,
as a validation plugin the way app.py adds it, with the findings this stack has acknowledged so
the synth completes: the ratio over it is what smddp_infra itself costs (its constructs, its
imports, SmddpChecks), since cdk-nag costs the same whoever wrote the stack.
"""

from __future__ import annotations

import json
import sys

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw, aws_cloudwatch_actions as actions, aws_ec2 as ec2, aws_fsx as fsx, aws_iam as iam, aws_kms as kms
from aws_cdk import aws_s3 as s3, aws_sns as sns, aws_ssm as ssm
from constructs import Construct

ENDPOINTS = ("sagemaker.api", "sts", "logs", "monitoring", "ecr.api", "ecr.dkr")
S3_PREFIX_LIST = "pl-63a5400a"  # com.amazonaws.us-east-1.s3
#: AwsSolutions findings of this stack and why each is accepted (the yardstick is not reviewed).
ACCEPTED = ("AwsSolutions-S1", "AwsSolutions-SNS3", "AwsSolutions-EC23", "AwsSolutions-IAM5[Resource::*]",
            "AwsSolutions-IAM5[Resource::<Checkpoints620E2F20.Arn>/checkpoints/*]",
            "AwsSolutions-IAM5[Resource::arn:aws:logs:us-east-1:<AWS::AccountId>:log-group:/aws/sagemaker/TrainingJobs:*]",
            "AwsSolutions-IAM5[Resource::arn:aws:sagemaker:us-east-1:<AWS::AccountId>:training-job/*]")


class HandWrittenStack(cdk.Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)  # type: ignore[arg-type]
        logs = s3.Bucket(self, "Logs", enforce_ssl=True, encryption=s3.BucketEncryption.S3_MANAGED,
                         block_public_access=s3.BlockPublicAccess.BLOCK_ALL, removal_policy=cdk.RemovalPolicy.RETAIN)
        vpc = ec2.Vpc(self, "Vpc", ip_addresses=ec2.IpAddresses.cidr("10.0.0.0/16"), availability_zones=["us-east-1a"],
                      nat_gateways=0, restrict_default_security_group=False,
                      subnet_configuration=[ec2.SubnetConfiguration(name="Training", cidr_mask=20,
                                                                    subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)],
                      gateway_endpoints={"S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3)},
                      flow_logs={"FlowLog": ec2.FlowLogOptions(destination=ec2.FlowLogDestination.to_s3(logs))})
        endpoints = ec2.SecurityGroup(self, "Endpoints", vpc=vpc, allow_all_outbound=False, description="endpoints")
        for service in ENDPOINTS:
            vpc.add_interface_endpoint(service.replace(".", ""), service=ec2.InterfaceVpcEndpointAwsService(service),
                                       security_groups=[endpoints], open=False, private_dns_enabled=True)
        efa = ec2.SecurityGroup(self, "Efa", vpc=vpc, allow_all_outbound=False,
                                description="EFA: all traffic to and from itself")
        ec2.CfnSecurityGroupIngress(self, "EfaIn", group_id=efa.security_group_id, ip_protocol="-1",
                                    source_security_group_id=efa.security_group_id)
        ec2.CfnSecurityGroupEgress(self, "EfaOut", group_id=efa.security_group_id, ip_protocol="-1",
                                   destination_security_group_id=efa.security_group_id)
        ec2.CfnSecurityGroupEgress(self, "ToEndpoints", group_id=efa.security_group_id, ip_protocol="tcp", from_port=443,
                                   to_port=443, destination_security_group_id=endpoints.security_group_id)
        ec2.CfnSecurityGroupEgress(self, "ToS3", group_id=efa.security_group_id, ip_protocol="tcp", from_port=443,
                                   to_port=443, destination_prefix_list_id=S3_PREFIX_LIST)
        ec2.CfnSecurityGroupIngress(self, "FromEfa", group_id=endpoints.security_group_id, ip_protocol="tcp",
                                    from_port=443, to_port=443, source_security_group_id=efa.security_group_id)
        subnet = vpc.isolated_subnets[0]
        lustre = fsx.CfnFileSystem(
            self, "FileSystem", file_system_type="LUSTRE", subnet_ids=[subnet.subnet_id], storage_capacity=2400,
            security_group_ids=[efa.security_group_id], file_system_type_version="2.15",
            lustre_configuration=fsx.CfnFileSystem.LustreConfigurationProperty(
                deployment_type="PERSISTENT_2", per_unit_storage_throughput=250, data_compression_type="LZ4",
                automatic_backup_retention_days=7, copy_tags_to_backups=True,
                metadata_configuration=fsx.CfnFileSystem.MetadataConfigurationProperty(mode="AUTOMATIC")))
        lustre.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
        checkpoints = s3.Bucket(self, "Checkpoints", versioned=True, enforce_ssl=True,
                                encryption=s3.BucketEncryption.S3_MANAGED, server_access_logs_bucket=logs,
                                block_public_access=s3.BlockPublicAccess.BLOCK_ALL, removal_policy=cdk.RemovalPolicy.RETAIN,
                                lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=cdk.Duration.days(30))])
        role = iam.Role(self, "ExecutionRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        iam.ManagedPolicy(self, "ExecutionPolicy", roles=[role], statements=[
            iam.PolicyStatement(actions=["ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeVpcs",
                                         "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups", "ec2:DescribeDhcpOptions",
                                         "ec2:DeleteNetworkInterface", "ec2:CreateNetworkInterfacePermission"],
                                resources=["*"]),
            iam.PolicyStatement(actions=["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
                                resources=[checkpoints.bucket_arn, checkpoints.arn_for_objects("checkpoints/*")]),
            iam.PolicyStatement(actions=["fsx:DescribeFileSystems"], resources=["*"]),
            iam.PolicyStatement(actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:CreateLogGroup"],
                                resources=[self.format_arn(service="logs", resource="log-group",
                                                           resource_name="/aws/sagemaker/TrainingJobs:*",
                                                           arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)]),
            iam.PolicyStatement(actions=["ecr:GetAuthorizationToken", "cloudwatch:PutMetricData"], resources=["*"])])
        iam.ManagedPolicy(self, "LaunchPolicy", statements=[
            iam.PolicyStatement(actions=["sagemaker:CreateTrainingJob"], resources=[self.format_arn(
                service="sagemaker", resource="training-job", resource_name="*")],
                conditions={"ForAllValues:StringEquals": {"sagemaker:VpcSubnets": [subnet.subnet_id]}}),
            iam.PolicyStatement(actions=["iam:PassRole"], resources=[role.role_arn],
                                conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}})])
        key = kms.Key(self, "TopicKey", enable_key_rotation=True, removal_policy=cdk.RemovalPolicy.RETAIN)
        topic = sns.Topic(self, "Alarms", master_key=key, enforce_ssl=True)
        dimensions = {"FileSystemId": lustre.ref}
        read = cw.Metric(namespace="AWS/FSx", metric_name="DataReadBytes", dimensions_map=dimensions,
                         statistic="Sum", period=cdk.Duration.minutes(5))
        free = cw.Metric(namespace="AWS/FSx", metric_name="FreeDataStorageCapacity", dimensions_map=dimensions,
                         statistic="Minimum", period=cdk.Duration.minutes(5))
        throughput = cw.MathExpression(expression="read / PERIOD(read) / 1048576", using_metrics={"read": read},
                                       period=cdk.Duration.minutes(5))
        for name, metric, threshold, comparison in (
                ("Throughput", throughput, 480.0, cw.ComparisonOperator.GREATER_THAN_THRESHOLD),
                ("FreeCapacity", free, 240.0 * 2**30, cw.ComparisonOperator.LESS_THAN_THRESHOLD)):
            alarm = cw.Alarm(self, name, metric=metric, threshold=threshold, evaluation_periods=4, datapoints_to_alarm=3,
                             comparison_operator=comparison, treat_missing_data=cw.TreatMissingData.NOT_BREACHING)
            alarm.add_alarm_action(actions.SnsAction(topic))
        cw.Dashboard(self, "Dashboard", widgets=[[cw.GraphWidget(left=[throughput]), cw.GraphWidget(left=[free])]])
        document = {"subnets": [subnet.subnet_id], "securityGroupIds": [efa.security_group_id],
                    "roleArn": role.role_arn, "fileSystemId": lustre.ref, "checkpointS3Uri": checkpoints.s3_url_for_object()}
        parameter = ssm.StringParameter(self, "JobConfig", string_value=self.to_json_string(document))
        outputs = {"Subnets": subnet.subnet_id, "SecurityGroups": efa.security_group_id, "Role": role.role_arn,
                   "Checkpoint": checkpoints.s3_url_for_object("checkpoints"), "Output": checkpoints.s3_url_for_object("output"),
                   "Code": checkpoints.s3_url_for_object("code"), "FileSystemId": lustre.ref,
                   "MountName": lustre.attr_lustre_mount_name, "DirectoryPath": "/", "ParameterName": parameter.parameter_name,
                   "LaunchPolicyArn": "LaunchPolicy", "TrainingJobConfig": json.dumps({"network": "hand-written"})}
        for name, value in outputs.items():
            cdk.CfnOutput(self, name, value=value)


def main() -> None:
    app = cdk.App()
    stack = HandWrittenStack(app, "HandWrittenStack", env=cdk.Environment(region="us-east-1"))
    if "--aws-solutions" in sys.argv[1:]:
        from cdk_nag import AwsSolutionsChecks

        for rule in ACCEPTED:
            cdk.Validations.of(stack).acknowledge(cdk.Acknowledgment(id=f"AwsSolutions::{rule}",
                                                                     reason="the yardstick is not reviewed"))
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()


if __name__ == "__main__":
    main()

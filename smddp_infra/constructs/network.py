"""The training VPC: one training subnet in ONE Availability Zone, endpoints, flow logs.

Why one AZ: EFA does not cross Availability Zones, and the FSx for Lustre file system
lives in exactly one subnet; the training job's subnet must be in the file system's AZ.
Why endpoints: without a NAT gateway a training job reaches S3 only through the S3 gateway
endpoint (otherwise: "Please ensure that the subnet's route table has a route to an S3 VPC
endpoint or a NAT device"), and jobs without STS/Logs endpoints stay stuck in "Starting".
"""

from __future__ import annotations

import ipaddress
from typing import Optional, Sequence

from aws_cdk import Annotations, Tags, aws_ec2 as ec2, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs._training_network_validation import az_id_prefix_for
from smddp_infra.constructs.acknowledgements import acknowledge
from smddp_infra.constructs.checkpoints import secure_log_bucket
from smddp_infra.constructs.efa import ROLE_TAG_KEY, ROLE_TAG_VALUE
from smddp_infra.errors import ConfigError
from smddp_infra.facts.subnets import DEFAULT_INTERFACE_ENDPOINTS, FILE_SYSTEM_IPS, NAT_SUBNET_MASK, fitting_training_subnet_mask, subnet_instance_capacity

#: aws-cdk-lib's feature flag that makes an S3 flow-log destination grant
#: delivery.logs.amazonaws.com in the bucket policy; pinned on for this construct's subtree.
CREATE_DEFAULT_LOGGING_POLICY = "@aws-cdk/aws-s3:createDefaultLoggingPolicy"

TRAINING_SUBNET_GROUP = "Training"


class TrainingVpc(Construct):
    """A VPC with one private training subnet, S3 gateway + interface endpoints, flow logs.

    Attributes: ``vpc``, ``training_subnet``, ``endpoint_security_group`` (None with NAT and
    no interface endpoints), ``interface_endpoints`` (service name -> endpoint),
    ``flow_log_bucket``,
    ``availability_zone`` (the AZ name, a token when chosen by AZ ID),
    ``training_subnet_mask`` and ``instance_capacity`` (instances the training subnet holds).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        availability_zone: Optional[str] = None,
        availability_zone_id: Optional[str] = None,
        max_instance_count: Optional[int] = None,
        ips_per_instance: int = 5,
        file_system_ips: int = FILE_SYSTEM_IPS,
        cidr: str = "10.0.0.0/16",
        nat_gateway: bool = False,
        interface_endpoints: Optional[Sequence[str]] = None,
        flow_log_bucket: Optional[s3.IBucket] = None,
        restrict_default_security_group: bool = False,
        availability_zone_id_prefix: Optional[str] = None,
    ) -> None:
        """
        :param availability_zone: AZ name of the training subnet, e.g. ``us-east-1a``. Default: none
            (one of this or ``availability_zone_id`` is required).
        :param availability_zone_id: AZ ID instead (``use1-az4``), as capacity reservations and
            training plans name it. Exactly one of the two is required.
        :param max_instance_count: the largest cluster the training subnet must hold, twice over
            (a finished job's interfaces may linger while the next starts). Default: none, the
            subnet takes 1/16 of ``cidr`` (a /20 of a /16: 406 instances at 5 IPs), so that a
            growing cluster never changes the subnet's CIDR (create-only: a new CIDR replaces the
            subnet and the file system in it). Setting it sizes the subnet from it instead; a
            different value later is such a replacement.
        :param ips_per_instance: private IPs per EFA training instance. Default: 5.
        :param file_system_ips: IPs reserved for the file system's interfaces. Default: 8
            (UNCONFIRMED estimate; FSx for Lustre uses one per file server).
        :param cidr: the VPC CIDR. Default: ``10.0.0.0/16``.
        :param nat_gateway: add a public subnet, internet gateway and NAT gateway. Default: False
            (no internet path; AWS APIs through endpoints).
        :param interface_endpoints: interface endpoint services (the part after
            ``com.amazonaws.<region>.``; the full name, ``cn.com.amazonaws.`` where China uses
            it, comes from aws-cdk-lib's ``InterfaceVpcEndpointAwsService``). Default: sagemaker.api, sts, logs, monitoring, ecr.api,
            ecr.dkr without NAT; none with NAT.
        :param flow_log_bucket: S3 bucket for the VPC flow logs (all traffic). Default: a new
            secure log bucket (``FlowLogBucket``); the L3 passes its access-log bucket.
        :param restrict_default_security_group: strip the default group's rules with CDK's
            custom-resource Lambda. Default: False (nothing uses the default group; the stack
            stays free of Lambdas).
        :param availability_zone_id_prefix: the region's AZ ID prefix (``use1``) the AZ ID is checked
            against. Default: the ``smddp:availabilityZoneIdPrefix`` context value, else the built-in
            table (UNCONFIRMED; regions outside it are not checked).
        """
        v.placement("availability_zone", "availability_zone", availability_zone)
        v.placement("availability_zone_id", "availability_zone_id", availability_zone_id)
        v.placement("availability_zone_id_prefix", "availability_zone_id_prefix", availability_zone_id_prefix)
        if (availability_zone is None) == (availability_zone_id is None):
            raise ConfigError(
                "TrainingVpc needs exactly one of availability_zone or availability_zone_id, "
                f"got availability_zone={availability_zone!r}, availability_zone_id={availability_zone_id!r}"
            )
        v.placement("max_instance_count", "max_instance_count", max_instance_count)
        v.whole("ips_per_instance", ips_per_instance, minimum=5,
                why=" (SageMaker: a training instance that uses EFA needs at least 5 private IPs)")
        v.whole("file_system_ips", file_system_ips, minimum=0)
        v.placement("cidr", "vpc_cidr", cidr)
        v.flag("nat_gateway", nat_gateway)
        v.flag("restrict_default_security_group", restrict_default_security_group)
        v.text_list("interface_endpoints", interface_endpoints)
        v.require("flow_log_bucket", flow_log_bucket, "IBucket")
        if interface_endpoints is None:
            interface_endpoints = () if nat_gateway else DEFAULT_INTERFACE_ENDPOINTS
        other_ips = len(interface_endpoints) + file_system_ips
        mask = fitting_training_subnet_mask(cidr, vpc_prefix=ipaddress.ip_network(cidr).prefixlen, nat=nat_gateway,
                                            max_instance_count=max_instance_count, ips_per_instance=ips_per_instance,
                                            other_ips=other_ips, cidr_name="cidr", max_name="max_instance_count")
        capacity = subnet_instance_capacity(mask, ips_per_instance=ips_per_instance, other_ips=other_ips)
        super().__init__(scope, id)
        self.training_subnet_mask = mask
        self.instance_capacity = capacity
        # Same posture whatever the app's feature flags (docs/embedding.md): the flow-log
        # destination grant for delivery.logs.amazonaws.com is written into the bucket policy
        # explicitly, as the recommended flag does, instead of being left to the service.
        self.node.set_context(CREATE_DEFAULT_LOGGING_POLICY, True)
        region = v.concrete_region(self)
        v.az_in_region("availability_zone", availability_zone, region)
        v.az_id_in_region("availability_zone_id", availability_zone_id, region,
                          prefix=az_id_prefix_for(self, availability_zone_id_prefix))

        subnets = [ec2.SubnetConfiguration(
            name=TRAINING_SUBNET_GROUP,
            subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS if nat_gateway else ec2.SubnetType.PRIVATE_ISOLATED,
            cidr_mask=mask,
        )]
        if nat_gateway:
            subnets.append(ec2.SubnetConfiguration(name="Public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=NAT_SUBNET_MASK, map_public_ip_on_launch=False))

        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(cidr),
            # The AZ ID case starts from the name slot and is rewritten below.
            availability_zones=[str(availability_zone or availability_zone_id)],
            subnet_configuration=subnets,
            nat_gateways=1 if nat_gateway else 0,
            # A custom resource Lambda would strip the default group's rules; it brings a
            # Lambda, an asset and a role into a network-only stack. The default group is
            # never used by training (jobs name their groups), so we leave it alone.
            restrict_default_security_group=restrict_default_security_group,
            gateway_endpoints={"S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3)},
        )
        for public in self.vpc.public_subnets:
            acknowledge(public.node.find_child("DefaultRoute"), "nat-igw-route")
        if not restrict_default_security_group:
            acknowledge(self.vpc, "default-security-group")
        self.training_subnet: ec2.ISubnet = self.vpc.select_subnets(subnet_group_name=TRAINING_SUBNET_GROUP).subnets[0]
        # Marks the subnet for smddp_infra.rules (route to S3, endpoints, same AZ as FSx).
        Tags.of(self.training_subnet).add(ROLE_TAG_KEY, ROLE_TAG_VALUE)
        cfn_subnet = self.training_subnet.node.default_child
        assert isinstance(cfn_subnet, ec2.CfnSubnet)
        self.cfn_training_subnet = cfn_subnet
        self.availability_zone: str = cfn_subnet.attr_availability_zone if availability_zone_id else str(availability_zone)
        for subnet in (*self.vpc.private_subnets, *self.vpc.isolated_subnets, *self.vpc.public_subnets):
            pin_subnet_zone(subnet, availability_zone_id)  # every subnet, the NAT's public one included

        if flow_log_bucket is None:
            flow_log_bucket = secure_log_bucket(self, "FlowLogBucket")
            acknowledge(flow_log_bucket, "flow-log-bucket-access-logs")
        self.flow_log_bucket = flow_log_bucket
        self.vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_s3(flow_log_bucket, "vpc-flow-logs/"),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )

        self.interface_endpoints: dict[str, ec2.InterfaceVpcEndpoint] = {}
        self.endpoint_security_group: Optional[ec2.SecurityGroup] = None
        if interface_endpoints:
            self.endpoint_security_group = ec2.SecurityGroup(
                self,
                "EndpointSecurityGroup",
                vpc=self.vpc,
                description="Interface VPC endpoints: HTTPS from the training subnet only",
                allow_all_outbound=False,
            )
            self.endpoint_security_group.add_ingress_rule(
                ec2.Peer.ipv4(self.training_subnet.ipv4_cidr_block), ec2.Port.tcp(443), "HTTPS from the training subnet"
            )
            if region is None:
                _warn_endpoint_names_without_region(self)
            for service in interface_endpoints:
                self.add_interface_endpoint(service)

    def add_interface_endpoint(self, service: str) -> ec2.InterfaceVpcEndpoint:
        """One interface endpoint placed as the network places its own: in the training subnet,
        private DNS, HTTPS from that subnet only (what a HyperPod cluster adds goes through here too).
        Needs the endpoint group: a network built with ``interface_endpoints``."""
        if self.endpoint_security_group is None:
            raise ValueError(f"{self.node.path} has no endpoint security group: it was built without interface_endpoints")
        endpoint = self.vpc.add_interface_endpoint(
            _endpoint_id(service),
            # aws-cdk-lib's table, not a format string of ours: China names most services
            # cn.com.amazonaws.<region>.<service> (sts, sagemaker.api, ecr.*, monitoring),
            # but logs and kms com.amazonaws.<region>.<service>.
            service=ec2.InterfaceVpcEndpointAwsService(service),
            private_dns_enabled=True,
            subnets=ec2.SubnetSelection(subnets=[self.training_subnet]),
            security_groups=[self.endpoint_security_group],
            open=False,  # open=True admits the VPC CIDR; we admit the training subnet
        )
        self.interface_endpoints[service] = endpoint
        return endpoint


def pin_subnet_zone(subnet: ec2.ISubnet, availability_zone_id: Optional[str]) -> None:
    """Place ``subnet`` by AZ ID when one is given (``AvailabilityZoneId`` in place of the name
    aws-cdk-lib writes), and tell cfn-lint its AZ is pinned on purpose (EFA, FSx and capacity live
    in one AZ): W3010, "don't hardcode AZs", does not apply."""
    cfn = subnet.node.default_child
    assert isinstance(cfn, ec2.CfnSubnet)
    if availability_zone_id is not None:
        cfn.add_property_deletion_override("AvailabilityZone")
        cfn.add_property_override("AvailabilityZoneId", availability_zone_id)
    cfn.add_metadata("cfn-lint", {"config": {"ignore_checks": ["W3010"]}})


def _warn_endpoint_names_without_region(network: Construct) -> None:
    """In an environment-agnostic stack aws-cdk-lib cannot tell the partition, and names every
    interface endpoint ``com.amazonaws.${AWS::Region}.<service>``: right in aws and aws-us-gov,
    wrong in China for the services named ``cn.com.amazonaws.*`` there (the deploy fails). Not
    evaluated (the partition is unknown), so an info, not a warning."""
    Annotations.of(network).add_info(
        "environment-agnostic stack: interface endpoint service names are written com.amazonaws.${AWS::Region}.<service> "
        "(right in the aws and aws-us-gov partitions); China names sts, sagemaker.api, ecr.api, ecr.dkr and monitoring "
        "cn.com.amazonaws.<region>.<service>: give the stack env=Environment(region=...) to deploy in cn-north-1 or "
        "cn-northwest-1",
    )


def _endpoint_id(service: str) -> str:
    """``ecr.dkr`` -> ``EcrDkrEndpoint``: stable construct ids from service names."""
    return "".join(part.capitalize() for part in service.replace("-", ".").split(".")) + "Endpoint"


__all__ = ["TrainingVpc", "TRAINING_SUBNET_GROUP"]

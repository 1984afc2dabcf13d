"""Subnets, their Availability Zones, route tables and VPC endpoints.

What a training subnet needs (SageMaker Developer Guide, "Give SageMaker AI Training Jobs
Access to Resources in Your Amazon VPC", section "Configure Your Private VPC for SageMaker
AI Training": create an S3 VPC endpoint): a route to S3 (a gateway endpoint on its route
table, or a NAT device), or the job fails downloading data or uploading artifacts ("Please
ensure that the subnet's route table has a route to an S3 VPC endpoint or a NAT device").
Interface endpoints (``sts``, ``logs``, ``sagemaker.api``, ``ecr``, ``monitoring``) are what
*callers* in the subnet need without NAT: training code or an SDK client that calls those
APIs. The job itself is not documented to need them (SageMaker pulls the training image
itself), so their absence is a warning about callers, not a fact about the job.

What counts as NAT: a ``0.0.0.0/0`` route to a ``NatGatewayId``, ``InstanceId`` (NAT
instance), ``NetworkInterfaceId``, ``TransitGatewayId`` or ``VpcPeeringConnectionId``
(the last three may lead to a central egress VPC, so they are given the benefit of the
doubt). A route to an internet gateway does NOT count: training ENIs get no public IP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.rules.model import AzIndex, Resource, ResourceRef, World, to_bool

SUBNET = "AWS::EC2::Subnet"
ASSOCIATION = "AWS::EC2::SubnetRouteTableAssociation"
ROUTE = "AWS::EC2::Route"
ENDPOINT = "AWS::EC2::VPCEndpoint"

#: Interface endpoints that callers in a no-NAT training subnet need, and what breaks without
#: each (REFERENCE: training code or an SDK client calling the API; not the job itself).
CALLER_SERVICES: dict[str, str] = {
    "sts": "STS (boto3 credential and identity calls, the SageMaker SDK's session and role lookups)",
    "logs": "CloudWatch Logs (an SDK client that waits on a job reads its log stream and hangs without it)",
    "sagemaker.api": "the SageMaker API (an SDK client or pipeline code that creates or describes jobs)",
    "ecr.api": "the ECR API (nodes or code that pull images themselves; SageMaker pulls a training job's image without it)",
    "ecr.dkr": "ECR image layers (the same pulls)",
    "monitoring": "CloudWatch metrics (PutMetricData from training code or an agent)",
}
_EGRESS_TARGETS = ("NatGatewayId", "InstanceId", "NetworkInterfaceId", "TransitGatewayId", "VpcPeeringConnectionId")
#: ``cn.com.amazonaws.`` is how China names most interface endpoint services (sts, ecr.*, ...).
_SERVICE = re.compile(r"^(?:aws\.sagemaker\.|(?:cn\.)?com\.amazonaws\.)[^.]+\.(.+)$")


def endpoint_service(world: World, service: str) -> str:
    """A VPC endpoint's ``ServiceName`` as a fix prints it (``com.amazonaws.<region>.<service>``,
    AWS PrivateLink Guide, "AWS services that integrate with AWS PrivateLink"): filled with the
    region ``check`` was given, else written as the template would write it, with the
    ``AWS::Region`` pseudo parameter (AWS CloudFormation User Guide, "Pseudo parameters
    reference"), so that the fix never carries a word the reader must fill in."""
    if world.region:
        return f"com.amazonaws.{world.region}.{service}"
    return f"!Sub com.amazonaws.${{AWS::Region}}.{service}"


@dataclass(frozen=True)
class Zone:
    """An AZ as the template states it: by name, by AZ id, or by index into Fn::GetAZs."""

    kind: str  # "name" | "id" | "index"
    value: str | int

    def describe(self) -> str:
        if self.kind == "index":
            return f"AZ #{self.value} of the region (Fn::GetAZs)"
        return str(self.value)

    def comparable(self, other: "Zone") -> bool:
        return self.kind == other.kind


def subnet_zone(model: World, subnet: Resource) -> Optional[Zone]:
    zone = model.get(subnet, "AvailabilityZone")
    if isinstance(zone, str):
        return Zone("name", zone)
    if isinstance(zone, AzIndex):
        return Zone("index", zone.index)
    zone_id = model.get(subnet, "AvailabilityZoneId")
    if isinstance(zone_id, str):
        return Zone("id", zone_id)
    return None


def service_name(model: World, endpoint: Resource) -> Optional[str]:
    """The service an endpoint reaches ("s3", "sts", "sagemaker.api" ...), if readable.

    Works for literal names and for ``Fn::Join`` / ``Fn::Sub`` over ``AWS::Region``.
    """
    name = model.resolve(endpoint.properties.get("ServiceName"), partial=True)
    return short_service_name(name) if isinstance(name, str) else None


def short_service_name(name: str) -> Optional[str]:
    """``com.amazonaws.*.sts`` / ``cn.com.amazonaws.*.sts`` / ``aws.sagemaker.*.notebook`` -> ``sts`` / ``sts`` /
    ``notebook``."""
    match = _SERVICE.match(name.strip())
    return match.group(1) if match else None


def _ref_name(value: Any) -> Optional[str]:
    return value.logical_id if isinstance(value, ResourceRef) else None


class Network:
    """Route tables, NAT routes and endpoints of a template, for per-subnet questions."""

    def __init__(self, model: World) -> None:
        self.model = model
        self.route_tables: dict[str, set[str]] = {}
        for assoc in model.of_type(ASSOCIATION):
            subnet = _ref_name(model.get(assoc, "SubnetId"))
            table = _ref_name(model.get(assoc, "RouteTableId"))
            if subnet and table:
                self.route_tables.setdefault(subnet, set()).add(table)
        self.egress_tables: set[str] = set()
        #: A default route or S3 gateway endpoint whose route table is not resolved could be
        #: on any table: then no subnet's route to S3 is provably missing.
        self.unresolved_routes = False
        for route in model.of_type(ROUTE):
            destination = model.get(route, "DestinationCidrBlock")
            if destination != "0.0.0.0/0":
                self.unresolved_routes |= not isinstance(destination, str) and model.has(route, "DestinationCidrBlock")
                continue
            if any(model.has(route, key) for key in _EGRESS_TARGETS):
                table = _ref_name(model.get(route, "RouteTableId"))
                if table:
                    self.egress_tables.add(table)
                elif not isinstance(model.get(route, "RouteTableId"), str):
                    self.unresolved_routes = True
        self.s3_gateway_tables: set[str] = set()
        self.interface_endpoints: list[tuple[str, Optional[str], bool]] = []  # (service, vpc, private dns)
        for endpoint in model.of_type(ENDPOINT):
            service = service_name(model, endpoint)
            if service is None:
                continue
            endpoint_type = model.get(endpoint, "VpcEndpointType")
            endpoint_type = endpoint_type if isinstance(endpoint_type, str) else "Gateway"
            if endpoint_type == "Gateway" and service == "s3":
                tables = model.get(endpoint, "RouteTableIds")
                if not isinstance(tables, list):
                    self.unresolved_routes = True
                for table in tables if isinstance(tables, list) else []:
                    if _ref_name(table):
                        self.s3_gateway_tables.add(_ref_name(table))  # type: ignore[arg-type]
                    elif not isinstance(table, str):  # a literal rtb-... is another stack's table
                        self.unresolved_routes = True
            elif endpoint_type == "Interface":
                vpc = _ref_name(model.get(endpoint, "VpcId"))
                private_dns = to_bool(model.get(endpoint, "PrivateDnsEnabled")) is True
                self.interface_endpoints.append((service, vpc, private_dns))

    def tables_of(self, subnet: str) -> set[str]:
        return self.route_tables.get(subnet, set())

    def has_nat(self, subnet: str) -> bool:
        return bool(self.tables_of(subnet) & self.egress_tables)

    def has_s3_gateway(self, subnet: str) -> bool:
        return bool(self.tables_of(subnet) & self.s3_gateway_tables)

    def missing_interface_endpoints(self, subnet: Resource) -> tuple[list[str], list[str]]:
        """(services with no endpoint, services whose endpoint lacks private DNS) for the subnet's VPC."""
        vpc = _ref_name(self.model.get(subnet, "VpcId"))
        missing, no_dns = [], []
        for service in CALLER_SERVICES:
            candidates = [dns for svc, ep_vpc, dns in self.interface_endpoints if svc == service and (vpc is None or ep_vpc in (None, vpc))]
            if not candidates:
                missing.append(service)
            elif not any(candidates):
                no_dns.append(service)
        return missing, no_dns


def network_of(world: World) -> Network:
    """The world's one :class:`Network`, built once and shared by the rules that ask it (NET2/NET3, NET5)."""
    result: Network = world.memo("network", Network)
    return result

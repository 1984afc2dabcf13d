"""SMDDP-NET1..4: where training runs and what it can reach.

* NET1 (error): one job, one AZ. A training resource whose subnets resolve to different
  AZs: a HyperPod instance group of an EFA instance type, or a training job the template
  describes (EFA traffic cannot cross AZs: EC2 User Guide, EFA limitations).
* NET4 (warning): a Lustre file system whose subnet is in another AZ than an EFA training
  subnet of the same VPC. FSx file systems are reachable from every AZ of their VPC; what is
  known is the cost (cross-AZ latency and data-transfer charges) and, for an EFA-enabled file
  system, that EFA traffic cannot cross AZs. That a mount fails is UNCONFIRMED: no error.
* NET1 and NET4 never guess a subnet whose AZ is unknown (literal ids, parameters, imports),
  and compare AZs only when stated the same way (two names, two AZ ids, two GetAZs indexes).
* NET2 (error): a subnet where SageMaker places training (a training job's VpcConfig, a
  HyperPod instance group, the project's tag) whose route tables have neither an S3 gateway
  endpoint nor a NAT route. AWS documents the S3 route for training in a private subnet;
  without it the job fails downloading data or uploading artifacts ("Please ensure that the
  subnet's route table has a route to an S3 VPC endpoint or a NAT device").
* NET3 (warning): a training subnet without a NAT route whose VPC lacks interface endpoints
  (with private DNS) for ``sts``, ``logs``, ``sagemaker.api``, ``ecr.api``/``ecr.dkr`` or
  ``monitoring``: training code or an SDK client in the subnet that calls those APIs cannot
  reach them. For EC2-launched compute (instances, Auto Scaling, PCS, Batch, EKS) without an
  S3 route, ``s3`` is named here too: AWS documents no failure for those, so no error.

Training subnets come from evidence (:func:`.training.training_subnets`): something trains in
them. A subnet that only holds a file system, endpoints or NAT is not judged. A subnet whose
route table association is not in the template is not judged either: its routes are unknown.
"""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import Resource, ResourceRef, World, is_known, to_bool
from smddp_infra.rules.training import SUBNET, TrainingSubnet, lustre_file_systems, placements, training_subnets
from smddp_infra.rules.vpc import CALLER_SERVICES, Zone, endpoint_service, network_of, subnet_zone


def _subnet(world: World, ref: Any) -> Optional[Resource]:
    if isinstance(ref, ResourceRef) and ref.attribute is None:
        resource = world.resources.get(ref.logical_id)
        if resource is not None and resource.type == SUBNET:
            return resource
    return None


def _zone_of(world: World, ref: Any) -> Optional[Zone]:
    subnet = _subnet(world, ref)
    return subnet_zone(world, subnet) if subnet is not None else None


def check_same_zone(world: World) -> list[Finding]:
    findings = []
    for placement in placements(world):
        if placement.efa is not True or not placement.subnets:
            continue
        zones: dict[Zone, list[str]] = {}
        for ref in placement.subnets:
            zone = _zone_of(world, ref)
            if zone is not None:
                zones.setdefault(zone, []).append(ref.logical_id)
        for kind in ("name", "id", "index"):
            same_kind = {z: names for z, names in zones.items() if z.kind == kind}
            if len(same_kind) > 1:
                where = "; ".join(f"{', '.join(n)} in {z.describe()}" for z, n in sorted(same_kind.items(), key=lambda kv: str(kv[0].value)))
                findings.append(
                    SAME_ZONE.finding(
                        placement.resource,
                        f"{placement.what} spans subnets in different Availability Zones ({where}): EFA traffic does not cross "
                        f"AZs; give it subnets of one AZ (the file system's)",
                        *placement.path,
                    )
                )
                break
    return findings


def check_file_system_zone(world: World) -> list[Finding]:
    findings: list[Finding] = []
    training = {name: t.reason for name, t in training_subnets(world, efa_only=True).items()}
    for fs in lustre_file_systems(world):
        if world.exists(fs) is not True:
            continue
        ids = world.get(fs, "SubnetIds")
        fs_subnet = _subnet(world, ids[0]) if isinstance(ids, list) and ids else None
        if fs_subnet is None:
            continue
        fs_zone = subnet_zone(world, fs_subnet)
        if fs_zone is None:
            continue
        fs_vpc = world.get(fs_subnet, "VpcId")
        for name, reason in training.items():
            vpc = world.get(world.resources[name], "VpcId")
            if is_known(fs_vpc) and is_known(vpc) and vpc != fs_vpc:
                continue  # another network's subnet (two training networks in one template)
            zone = subnet_zone(world, world.resources[name])
            if zone is not None and zone.comparable(fs_zone) and zone != fs_zone:
                efa = to_bool(world.get(fs, "LustreConfiguration", "EfaEnabled")) is True
                cost = ("its clients there cannot reach it over EFA (EFA traffic does not cross AZs)" if efa else
                        "its traffic crosses AZs (latency and cross-AZ data-transfer charges)")
                findings.append(
                    FILE_SYSTEM_ZONE.finding(
                        fs.logical_id,
                        f"file system {fs.logical_id} is in {fs_zone.describe()} (subnet {fs_subnet.logical_id}) but training subnet "
                        f"{name} ({reason}) is in {zone.describe()}: {cost}; put the file system in the training subnet's AZ",
                        "Properties",
                        "SubnetIds",
                    )
                )
    return findings


def _judged_subnets(world: World) -> dict[str, TrainingSubnet]:
    network = network_of(world)
    if network.unresolved_routes:
        return {}
    return {
        name: subnet
        for name, subnet in training_subnets(world).items()
        if network.tables_of(name) and world.exists(world.resources[name]) is True
    }


def check_s3_route(world: World) -> list[Finding]:
    network = network_of(world)
    findings = []
    for name, subnet in _judged_subnets(world).items():
        if subnet.sagemaker and not network.has_nat(name) and not network.has_s3_gateway(name):
            tables = ", ".join(sorted(network.tables_of(name)))
            findings.append(
                S3_ROUTE.finding(
                    name,
                    f"training subnet {name} ({subnet.reason}) has no route to S3: route table {tables} has neither an S3 gateway "
                    f"endpoint nor a NAT route, so the job fails downloading its data or uploading its artifacts; add an "
                    f"AWS::EC2::VPCEndpoint with ServiceName {endpoint_service(world, 's3')} and RouteTableIds [{tables}]",
                    "Properties",
                )
            )
    return findings


def check_interface_endpoints(world: World) -> list[Finding]:
    """One finding per VPC and gap: endpoints belong to the VPC, so one fix serves every subnet."""
    network = network_of(world)
    gaps: dict[tuple[Any, tuple[str, ...], tuple[str, ...]], list[tuple[str, TrainingSubnet]]] = {}
    for name, subnet in _judged_subnets(world).items():
        if network.has_nat(name):
            continue
        missing, no_dns = network.missing_interface_endpoints(world.resources[name])
        if not subnet.sagemaker and not network.has_s3_gateway(name):
            missing = ["s3", *missing]  # NET2 judges SageMaker's subnets; here it is one more API callers miss
        if missing or no_dns:
            vpc = world.get(world.resources[name], "VpcId")
            key = (vpc.logical_id if isinstance(vpc, ResourceRef) else name, tuple(missing), tuple(no_dns))
            gaps.setdefault(key, []).append((name, subnet))
    findings = []
    for (_, absent, without_dns), subnets in gaps.items():
        first = subnets[0][0]
        where = "; ".join(f"{name} ({subnet.reason})" for name, subnet in subnets)
        parts = []
        if absent:
            parts.append("no interface endpoint for " + ", ".join(absent))
        if without_dns:
            parts.append("PrivateDnsEnabled is not true on the endpoint for " + ", ".join(without_dns))
        breaks = "; ".join(f"{s}: {_S3_CALLERS if s == 's3' else CALLER_SERVICES[s]}" for s in (*absent, *without_dns))
        findings.append(
            ENDPOINTS.finding(
                first,
                f"training subnet{'s' if len(subnets) > 1 else ''} {where} {'have' if len(subnets) > 1 else 'has'} no NAT route and "
                f"{'; '.join(parts)}: training code or an SDK client running there cannot call these APIs ({breaks}). "
                f"If nothing there calls them, ignore this; else add interface endpoints ("
                + ", ".join(endpoint_service(world, s) for s in (*absent, *without_dns))
                + ") with PrivateDnsEnabled true (or a NAT route)",
                "Properties",
            )
        )
    return findings


_S3_CALLERS = "reading data or writing checkpoints to S3 needs a gateway endpoint or NAT"


SAME_ZONE = Rule(
    id="SMDDP-NET1",
    severity=Severity.ERROR,
    cfn_lint_id="E9301",
    title="An EFA training resource spans Availability Zones",
    explanation="Give every EFA training resource of one job subnets of one AZ.",
    symptom="EFA traffic between the job's instances cannot cross AZs",
    check=check_same_zone,
    source="Amazon EC2 User Guide, 'Elastic Fabric Adapter', EFA limitations: EFA traffic cannot cross Availability Zones.",
)

FILE_SYSTEM_ZONE = Rule(
    id="SMDDP-NET4",
    severity=Severity.WARNING,
    cfn_lint_id="W9304",
    title="FSx for Lustre file system in another Availability Zone than an EFA training subnet of its VPC",
    explanation="Put the file system in the training subnet's AZ.",
    symptom="file-system traffic crosses AZs: latency and cross-AZ data-transfer charges (no EFA to an EFA-enabled file system)",
    check=check_file_system_zone,
    source=("UNCONFIRMED: that a mount fails. FSx file systems are reachable from every AZ of their VPC; cross-AZ "
            "traffic adds latency and data-transfer charges. For an EFA-enabled file system: Amazon EC2 User Guide, "
            "'Elastic Fabric Adapter', EFA limitations: EFA traffic cannot cross Availability Zones."),
)

S3_ROUTE = Rule(
    id="SMDDP-NET2",
    severity=Severity.ERROR,
    cfn_lint_id="E9302",
    title="Subnet where SageMaker trains has no route to S3",
    explanation="Attach an S3 gateway endpoint to the subnet's route table (or route 0.0.0.0/0 to a NAT gateway).",
    symptom="job fails downloading data or uploading artifacts: subnet's route table has no route to an S3 VPC endpoint or a NAT device",
    check=check_s3_route,
    source=("SageMaker Developer Guide, 'Give SageMaker AI Training Jobs Access to Resources in Your Amazon VPC', section "
            "'Configure Your Private VPC for SageMaker AI Training' (create an Amazon S3 VPC endpoint; the job's artifact "
            "upload fails with 'Please ensure that the subnet's route table has a route to an S3 VPC endpoint or a NAT "
            "device'). HyperPod nodes read their lifecycle scripts from S3 (SageMaker API Reference, ClusterLifeCycleConfig."
            "SourceS3Uri)."),
)

ENDPOINTS = Rule(
    id="SMDDP-NET3",
    severity=Severity.WARNING,
    cfn_lint_id="W9303",
    title="No-NAT training subnet without interface endpoints its callers may need (sts, logs, sagemaker.api, ecr, monitoring)",
    explanation="If training code or an SDK client in the subnet calls these APIs, add interface endpoints with private DNS (or a NAT route).",
    symptom="training code or an SDK client in the VPC that calls STS, CloudWatch, SageMaker or ECR cannot reach them",
    check=check_interface_endpoints,
    source=("API behaviour: without NAT, an AWS API is reachable from a subnet only through its interface endpoint with "
            "private DNS (AWS PrivateLink Guide, 'Access an AWS service using an interface VPC endpoint'). Which callers "
            "exist is not in the template, and training jobs are not documented to need these endpoints (SageMaker pulls "
            "the training image itself): a warning about callers."),
)

RULES = (SAME_ZONE, S3_ROUTE, ENDPOINTS, FILE_SYSTEM_ZONE)

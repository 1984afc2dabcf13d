"""SMDDP-NET1..3: where training runs and what it can reach.

* NET1: the file system's subnet and a training subnet are in different AZs (both known).
  SageMaker mounts FSx for Lustre only from the file system's AZ, and EFA does not cross
  AZs. Training subnets here are those tagged ``smddp:role=training`` or used by a
  SageMaker training resource (see :mod:`smddp_infra.rules.training`); AZs are compared
  only when stated the same way (two names, two AZ ids, or two ``GetAZs`` indexes).
* NET2: a training subnet whose route tables have neither an S3 gateway endpoint nor a
  NAT route (artifact upload fails: "Please ensure that the subnet's route table has a
  route to an S3 VPC endpoint or a NAT device").
* NET3: a training subnet without NAT and without ``sts``, ``logs`` and ``sagemaker.api``
  interface endpoints with private DNS in its VPC (the job stays in "Starting").

NET2/NET3 also treat a file system's subnet as a training subnet (jobs that read it must
run in its AZ, and in practice in that subnet). A subnet whose route table association is
not in the template is not judged: its routes are unknown.
"""

from __future__ import annotations

from typing import Any

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import ResourceRef, TemplateModel, is_known
from smddp_infra.rules.training import lustre_file_systems, training_subnets
from smddp_infra.rules.vpc import REQUIRED_INTERFACE_SERVICES, Network, subnet_zone


def _network(model: TemplateModel) -> Network:
    return model.memo("network", Network)


def _first_subnet(model: TemplateModel, fs: Any) -> Any:
    ids = model.get(fs, "SubnetIds")
    if isinstance(ids, list) and ids and isinstance(ids[0], ResourceRef):
        return model.resources.get(ids[0].logical_id)
    return None


def check_same_zone(model: TemplateModel) -> list[Finding]:
    findings: list[Finding] = []
    training = training_subnets(model, include_file_systems=False)
    for fs in lustre_file_systems(model):
        fs_subnet = _first_subnet(model, fs)
        fs_zone = subnet_zone(model, fs_subnet) if fs_subnet is not None and fs_subnet.type == "AWS::EC2::Subnet" else None
        if fs_zone is None:
            continue
        fs_vpc = model.get(fs_subnet, "VpcId")
        for name, reason in training.items():
            vpc = model.get(model.resources[name], "VpcId")
            if is_known(fs_vpc) and is_known(vpc) and vpc != fs_vpc:
                continue  # another network's subnet (two training networks in one template)
            zone = subnet_zone(model, model.resources[name])
            if zone is not None and zone.comparable(fs_zone) and zone != fs_zone:
                findings.append(
                    SAME_ZONE.finding(
                        fs.logical_id,
                        f"file system {fs.logical_id} is in {fs_zone.describe()} (subnet {fs_subnet.logical_id}) but training subnet "
                        f"{name} ({reason}) is in {zone.describe()}: put the file system and all training instances in one subnet/AZ",
                        "Properties",
                        "SubnetIds",
                    )
                )
    return findings


def _judged_subnets(model: TemplateModel) -> dict[str, str]:
    network = _network(model)
    return {name: reason for name, reason in training_subnets(model, include_file_systems=True).items() if network.tables_of(name)}


def check_s3_route(model: TemplateModel) -> list[Finding]:
    network = _network(model)
    findings = []
    for name, reason in _judged_subnets(model).items():
        if not network.has_nat(name) and not network.has_s3_gateway(name):
            tables = ", ".join(sorted(network.tables_of(name)))
            findings.append(
                S3_ROUTE.finding(
                    name,
                    f"training subnet {name} ({reason}) has no route to S3: route table {tables} has neither an S3 gateway "
                    f"endpoint nor a NAT route; add an AWS::EC2::VPCEndpoint for com.amazonaws.<region>.s3 with RouteTableIds [{tables}]",
                    "Properties",
                )
            )
    return findings


def check_interface_endpoints(model: TemplateModel) -> list[Finding]:
    network = _network(model)
    findings = []
    for name, reason in _judged_subnets(model).items():
        if network.has_nat(name):
            continue
        missing, no_dns = network.missing_interface_endpoints(model.resources[name])
        if not missing and not no_dns:
            continue
        parts = []
        if missing:
            parts.append("no interface endpoint for " + ", ".join(missing))
        if no_dns:
            parts.append("PrivateDnsEnabled is not true on the endpoint for " + ", ".join(no_dns))
        findings.append(
            ENDPOINTS.finding(
                name,
                f"training subnet {name} ({reason}) has no NAT and {'; '.join(parts)}: add interface VPC endpoints "
                f"(com.amazonaws.<region>.{{{','.join(REQUIRED_INTERFACE_SERVICES)}}}) with PrivateDnsEnabled true",
                "Properties",
            )
        )
    return findings


SAME_ZONE = Rule(
    id="SMDDP-NET1",
    severity=Severity.ERROR,
    cfn_lint_id="E9301",
    title="File system and training subnets in different Availability Zones",
    explanation="Place the FSx file system and every training subnet in the same AZ (one subnet for EFA).",
    symptom="job cannot mount the file system (or EFA traffic crosses AZs and stalls)",
    check=check_same_zone,
)

S3_ROUTE = Rule(
    id="SMDDP-NET2",
    severity=Severity.ERROR,
    cfn_lint_id="E9302",
    title="Training subnet has no route to S3",
    explanation="Attach an S3 gateway endpoint to the subnet's route table (or route 0.0.0.0/0 to a NAT gateway).",
    symptom="job fails uploading artifacts: subnet's route table has no route to an S3 VPC endpoint or a NAT device",
    check=check_s3_route,
)

ENDPOINTS = Rule(
    id="SMDDP-NET3",
    severity=Severity.ERROR,
    cfn_lint_id="E9303",
    title="No-NAT training subnet without sts, logs and sagemaker.api interface endpoints",
    explanation="Add interface endpoints with private DNS for sts, logs and sagemaker.api (or give the subnet a NAT route).",
    symptom="job stays in 'Starting' and never reaches the training script",
    check=check_interface_endpoints,
)

RULES = (SAME_ZONE, S3_ROUTE, ENDPOINTS)

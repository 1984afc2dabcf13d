"""SMDDP-NET8 (error): a VPC whose DNS attributes break the names training resolves.

Amazon VPC User Guide, "DNS attributes for your VPC": with ``enableDnsSupport`` false the
Amazon-provided DNS server does not resolve, so neither an FSx file system's DNS name (what
``mount -t lustre <dns>@tcp:/<mount>`` and HyperPod's ``FsxLustreConfig.DnsName`` use) nor an
interface endpoint's private DNS name resolves; an interface endpoint's private DNS needs
``enableDnsHostnames`` as well (AWS PrivateLink Guide, "Access an AWS service using an interface
VPC endpoint": enabling private DNS requires both attributes).

Judged only from what is stated: a template's ``AWS::EC2::VPC`` with a Lustre file system or an
interface endpoint that sets ``PrivateDnsEnabled: true`` in it; a live VPC's attributes as
``DescribeVpcAttribute`` reports them (the live reader writes them on the VPC). An unstated
``EnableDnsSupport`` is CloudFormation's default, true; an unstated ``EnableDnsHostnames`` (whose
default is false) is not judged: what happens to a private-DNS endpoint created in such a VPC
(refused, or created without resolving) is not something we can cite, so only a value the
template or the account states is.
"""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import NO_VALUE, Resource, World, to_bool
from smddp_infra.rules.training import lustre_file_systems
from smddp_infra.rules.vpc import ENDPOINT, service_name

VPC = "AWS::EC2::VPC"


def _attribute(world: World, vpc: Resource, name: str, default: Optional[bool]) -> Any:
    value = world.get(vpc, name)
    return default if value is NO_VALUE else to_bool(value)


def check_dns(world: World) -> list[Finding]:
    needs: dict[str, list[tuple[str, bool]]] = {}  # vpc -> (what, needs hostnames too)
    for fs in lustre_file_systems(world):
        subnets = world.get(fs, "SubnetIds")
        subnet = world.resource_of(subnets[0], "AWS::EC2::Subnet") if isinstance(subnets, list) and subnets else None
        vpc = world.resource_of(world.raw(subnet, "VpcId"), VPC) if subnet is not None and world.exists(fs) is True else None
        if vpc is not None:
            needs.setdefault(vpc.logical_id, []).append((f"file system {fs.logical_id}'s DNS name (its clients mount by it)", False))
    for endpoint in world.of_type(ENDPOINT):
        kind = world.get(endpoint, "VpcEndpointType")
        if kind != "Interface" or to_bool(world.get(endpoint, "PrivateDnsEnabled")) is not True or world.exists(endpoint) is not True:
            continue
        vpc = world.resource_of(world.raw(endpoint, "VpcId"), VPC)
        if vpc is not None:
            service = service_name(world, endpoint) or "?"
            needs.setdefault(vpc.logical_id, []).append((f"interface endpoint {endpoint.logical_id} ({service}) with private DNS", True))
    findings = []
    for vpc_id, wants in needs.items():
        vpc = world.resources[vpc_id]
        support = _attribute(world, vpc, "EnableDnsSupport", True)
        hostnames = _attribute(world, vpc, "EnableDnsHostnames", None)  # CloudFormation's default (false) is not assumed
        broken = [what for what, both in wants if support is False or (both and hostnames is False)]
        if not broken:
            continue
        hostnames_needed = any(both for _, both in wants)
        off = [name for name, value, needed in (("EnableDnsSupport", support, True), ("EnableDnsHostnames", hostnames, hostnames_needed))
               if value is False and needed]
        findings.append(DNS.finding(
            vpc_id, f"VPC {vpc_id} has {' and '.join(off)} false, so the Amazon-provided DNS server cannot resolve "
            + "; ".join(dict.fromkeys(broken)) + ": set " + " and ".join(off) + " to true on the VPC", "Properties"))
    return findings


DNS = Rule(
    id="SMDDP-NET8",
    severity=Severity.ERROR,
    cfn_lint_id="E9308",
    title="VPC DNS attributes off where a file system or a private-DNS interface endpoint needs them",
    explanation="Set EnableDnsSupport (and EnableDnsHostnames, for interface endpoints with private DNS) to true on the VPC.",
    symptom="the Lustre mount by DNS name, or calls to the endpoint's service, fail: the name does not resolve",
    check=check_dns,
    source=("Amazon VPC User Guide, 'DNS attributes for your VPC' (enableDnsSupport false: the Amazon-provided DNS server "
            "does not resolve); AWS PrivateLink Guide, 'Access an AWS service using an interface VPC endpoint' (private "
            "DNS requires enableDnsSupport and enableDnsHostnames)."),
)

RULES = (DNS,)

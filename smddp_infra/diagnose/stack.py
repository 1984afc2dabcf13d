"""``--stack``: a deployed stack's live network, and where its security groups drifted from the template.

CloudFormation's own drift detection needs a write call (``DetectStackDrift`` starts a job) and
minutes; diagnose stays read-only and compares what it already holds: the stack's template
(``GetTemplate``), read into the template model, against the live groups (``DescribeSecurityGroups``)
read into the same model by :mod:`smddp_infra.rules.live_loader`. Both sides become the
model's :class:`~smddp_infra.rules.groups.Permission` lists, compared by direction, protocol,
ports and peer (peer groups by physical id); EC2's default egress rule, which the template does
not write, is left out of the comparison. A rule the template writes that the group lacks
was removed outside the template (the console, the CLI); a rule the group has that the
template does not write was added outside it. The next stack update does not restore a
removed rule (CloudFormation updates only what the template changes), so the finding says how.

The stack's compute resources (launch templates, HyperPod clusters, instances, anything that
carries a CreateTrainingJob-shaped mapping) are placed into the live document as the template
writes them, with references to the stack's groups and subnets turned into physical ids, so the
rules see the same attachments as ``check`` does on the template.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from smddp_infra.rules.groups import Permission, security_groups
from smddp_infra.rules.live_loader import LiveNetwork, live_template
from smddp_infra.rules.model import ResourceRef, TemplateModel

#: Template resource types read from the account rather than copied.
LIVE_TYPES = ("AWS::EC2::SecurityGroup", "AWS::EC2::Subnet", "AWS::FSx::FileSystem", "AWS::EC2::VPC")
#: Types the network rules read as compute (copied with physical ids).
COMPUTE_TYPES = ("AWS::EC2::LaunchTemplate", "AWS::EC2::Instance", "AWS::SageMaker::Cluster", "AWS::AutoScaling::AutoScalingGroup",
                 "AWS::PCS::ComputeNodeGroup", "AWS::Batch::ComputeEnvironment", "AWS::EKS::Nodegroup")
_SKIP = ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress", "AWS::EC2::Route", "AWS::EC2::RouteTable",
         "AWS::EC2::SubnetRouteTableAssociation", "AWS::EC2::VPCEndpoint", "AWS::EC2::NetworkAcl", "AWS::EC2::NetworkAclEntry",
         "AWS::EC2::SubnetNetworkAclAssociation")


def physical_ids(stack_resources: list[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """Logical id -> (type, physical id) of the stack's resources that have one."""
    return {r["LogicalResourceId"]: (str(r.get("ResourceType")), str(r["PhysicalResourceId"]))
            for r in stack_resources if r.get("PhysicalResourceId")}


def compute_resources(template: Mapping[str, Any], physical: Mapping[str, tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """The template's compute, resolved under its defaults, references -> physical ids."""
    from smddp_infra.rules.training import _training_job_sites  # the model's own shape test

    model = TemplateModel(template)
    world = model.world()
    wanted = {r.logical_id for r in model.resources.values() if r.type in COMPUTE_TYPES}
    wanted |= {resource.logical_id for resource, _, _ in _training_job_sites(model)}
    out: dict[str, dict[str, Any]] = {}

    def convert(value: Any) -> Any:
        if isinstance(value, ResourceRef):
            target = physical.get(value.logical_id)
            if target is None:
                return f"{value.logical_id} (not deployed)"
            if target[0] in LIVE_TYPES:
                return {"Ref": target[1]}
            return {"Ref": value.logical_id} if value.logical_id in wanted else target[1]
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        return value

    for logical_id in sorted(wanted):
        resource = model.resources[logical_id]
        if resource.type in _SKIP or world.exists(resource) is False:
            continue
        out[logical_id] = {"Type": resource.type, "Properties": convert(world.resolve(dict(resource.properties)))}
    return out


def _key(p: Permission, name: Any) -> tuple[Any, ...]:
    peer = name(p.peer_group) if p.peer_group else (p.cidr or p.prefix_list or p.peer_unresolved)
    ports = (None, None) if p.protocol == "all" else (p.from_port, p.to_port)
    return (p.direction, p.protocol, *ports, peer)


def _describe(key: tuple[Any, ...], self_id: str) -> str:
    direction, protocol, low, high, peer = key
    what = "all traffic" if protocol == "all" else f"{protocol} {low}" + (f"-{high}" if high != low else "")
    where = "itself" if peer == self_id else str(peer)
    return f"{direction} {what} {'from' if direction == 'ingress' else 'to'} {where}"


def group_drift(template: Mapping[str, Any], physical: Mapping[str, tuple[str, str]], network: LiveNetwork) -> list[tuple[str, str, str]]:
    """(physical group id, logical id, what differs) for each stack group whose live rules differ."""
    deployed = security_groups(TemplateModel(template).world())
    live = security_groups(TemplateModel(live_template(network)).world())

    def to_physical(logical: Optional[str]) -> Any:
        return physical.get(logical or "", ("", logical))[1]

    out = []
    for logical_id in sorted(deployed.groups):
        group_id = to_physical(logical_id)
        if group_id not in live.groups:
            continue
        template_rules = deployed.permissions.get(logical_id, [])
        want = {_key(p, to_physical) for p in template_rules if p.certain and not p.implicit}
        have = {_key(p, lambda g: g) for p in live.permissions.get(group_id, [])}
        if any(p.implicit for p in template_rules):
            # EC2's default egress rule: the template does not write it; whether it is still there
            # after standalone egress rules were added is not the template's to say. Not drift either way.
            have.discard(("egress", "all", None, None, "0.0.0.0/0"))
        removed = sorted(want - have, key=str)
        added = sorted(have - want, key=str)
        parts = []
        if removed:
            parts.append("removed outside the template: " + "; ".join(_describe(k, group_id) for k in removed))
        if added:
            parts.append("added outside the template: " + "; ".join(_describe(k, group_id) for k in added))
        if parts:
            out.append((group_id, logical_id, ". ".join(parts)))
    return out

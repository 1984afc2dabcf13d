"""TrainingNetwork's checks that need CDK: the props' types and tokens, and the app.

The rules over plain values live in the pure spec (:mod:`smddp_infra.schema.network`, one
validator per rule, and the one sizing call). Order matters and is deliberate:
:func:`check_values` runs before ``super().__init__`` (so a wrong type never reaches jsii and
the spec's rules see the types they expect); :func:`check_against_app` needs the stack (region)
and the given VPC/subnet/groups and runs before the first resource is created.
"""

from __future__ import annotations

from typing import Any, Mapping

from aws_cdk import Annotations, Token
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.settings import context_number
from smddp_infra.sizing.catalog import InstanceType, efa_instance
from smddp_infra.sizing.planner import LustrePlan
from smddp_infra.sizing.tiering import TieringPlan

#: Context keys the construct reads when the matching prop is not given (cdk.json or ``-c``).
CONTEXT_AZ_ID_PREFIX = "smddp:availabilityZoneIdPrefix"
CONTEXT_COST_WARNING = "smddp:monthlyCostWarningUSD"


def check_values(p: Mapping[str, Any]) -> InstanceType:
    """Types and plain values of every prop; returns the instance type's catalog entry."""
    v.text("instance_type", p["instance_type"], optional=False)
    instance = efa_instance(p["instance_type"], setting="instance_type")
    v.whole("instance_count", p["instance_count"], minimum=1)
    v.whole("max_instance_count", p["max_instance_count"], minimum=1, optional=True)
    v.az_name_shape("availability_zone", p["availability_zone"])
    v.az_id_shape("availability_zone_id", p["availability_zone_id"])
    v.az_id_prefix("availability_zone_id_prefix", p["availability_zone_id_prefix"])
    if not isinstance(p["lustre_plan"], TieringPlan):  # an Intelligent-Tiering plan is a plan too
        v.instance("lustre_plan", p["lustre_plan"], LustrePlan, "from smddp_infra.sizing.plan_lustre(...)")
    v.number("read_mbps_per_gpu", p["read_mbps_per_gpu"], minimum=0, exclusive=True, unit="MB/s per accelerator")
    v.number("required_throughput_mbps", p["required_throughput_mbps"], minimum=0, exclusive=True, unit="MB/s")
    v.number("dataset_gib", p["dataset_gib"], minimum=0, unit="GiB", optional=False)
    v.text_list("deployment_types", [p["deployment_types"]] if isinstance(p["deployment_types"], str) else p["deployment_types"])
    v.number("max_capacity_gib", p["max_capacity_gib"], minimum=0, exclusive=True, unit="GiB")
    for name in ("efa_file_system", "nat_gateway", "create_encryption_key", "restrict_default_security_group"):
        v.flag(name, p[name])
    v.flag("allow_https_egress", p["allow_https_egress"], optional=True)
    for name in ("encrypt_inter_container_traffic", "publish_job_config"):
        v.flag(name, p[name])
    if p.get("job_config_output_id") is not None:
        v.text("job_config_output_id", p["job_config_output_id"])
    v.vpc_cidr("vpc_cidr", p["vpc_cidr"])
    v.require("vpc", p["vpc"], "IVpc")
    v.require("training_subnet", p["training_subnet"], "ISubnet")
    v.require("security_group", p["security_group"], "ISecurityGroup")
    v.require_each("additional_security_groups", p["additional_security_groups"], "ISecurityGroup")
    v.require_each("endpoint_security_groups", p["endpoint_security_groups"], "ISecurityGroup")
    v.require("checkpoint_bucket", p["checkpoint_bucket"], "IBucket")
    v.whole("checkpoint_noncurrent_days", p["checkpoint_noncurrent_days"], minimum=1)
    v.require("dataset_bucket", p["dataset_bucket"], "IBucket")
    v.text("dataset_prefix", p["dataset_prefix"], optional=False)
    v.require("encryption_key", p["encryption_key"], "IKey")
    v.require("role", p["role"], "IRole")
    v.prefix_list_id("s3_prefix_list_id", p["s3_prefix_list_id"])
    v.whole("ips_per_instance", p["ips_per_instance"], minimum=5, optional=True,
            why=" (SageMaker: a training instance that uses EFA needs at least 5 private IPs)")
    v.choice("file_system_access_mode", p["file_system_access_mode"], ("ro", "rw"))
    v.number("monthly_cost_warning_usd", p["monthly_cost_warning_usd"], minimum=0, exclusive=True, unit="USD per month")
    return instance


def check_against_app(network: Construct, p: Mapping[str, Any]) -> None:
    """Region, VPC/subnet and group checks; raises before the first resource is created."""
    stack = v.stack_of(network)
    v.check_no_validation_plugin_as_aspect(network)
    region = v.concrete_region(network)
    prefix = az_id_prefix_for(network, p["availability_zone_id_prefix"])
    if v.is_lookup_placeholder(p["availability_zone"]):
        Annotations.of(network).add_info(
            f"availability_zone {p['availability_zone']!r} is a placeholder of a context lookup not performed yet "
            "(stack.availability_zones before cdk.context.json has them): it is checked against the region after the "
            "lookup, when the CDK CLI runs the app again")
    v.az_in_region("availability_zone", p["availability_zone"], region)
    v.az_id_in_region("availability_zone_id", p["availability_zone_id"], region, prefix=prefix,
                      prefix_prop="availability_zone_id_prefix" if p["availability_zone_id_prefix"] else
                      "availability_zone_id_prefix (or context smddp:availabilityZoneIdPrefix)")
    vpc, subnet = p["vpc"], p["training_subnet"]
    if vpc is not None:
        v.resource_region("vpc", vpc, region, "a training network's VPC must be in the stack's region")
        zone = v.subnet_availability_zone("training_subnet", subnet)
        if _zone_known(network, vpc, subnet, zone):
            v.az_in_region("training_subnet's availability_zone", zone, region)
            v.subnet_matches_zone(network, zone, availability_zone=p["availability_zone"],
                                  availability_zone_id=p["availability_zone_id"])
        v.check_subnet_in_vpc(network, subnet, vpc)
        if not v.is_lookup_placeholder(subnet.subnet_id):
            largest = max(p["instance_count"], p.get("max_instance_count") or 0)
            v.check_subnet_holds(network, subnet, count=largest,
                                 count_prop="instance_count" if largest == p["instance_count"] else "max_instance_count",
                                 ips_per_instance=p["ips_per_instance"] or efa_instance(p["instance_type"]).private_ips)
    v.resource_region("encryption_key", p["encryption_key"], region,
                      "KMS keys are regional; FSx and S3 use a key of their own region")
    v.warn_key_in_other_account(network, "encryption_key", p["encryption_key"])
    v.resource_region("dataset_bucket", p["dataset_bucket"], region,
                      "FSx for Lustre links only buckets of its own region (data repository association)")
    v.resource_region("checkpoint_bucket", p["checkpoint_bucket"], region,
                      "SageMaker writes checkpoints only to buckets of the job's region")
    if p["security_group"] is not None:
        v.check_group_takes_rules("security_group", p["security_group"])
    groups = [g for g in (p["security_group"], *p["additional_security_groups"]) if g is not None]
    v.distinct_groups("security_group and additional_security_groups", groups, stack)


def _zone_known(network: Construct, vpc: Any, subnet: Any, zone: str) -> bool:
    """Is the training subnet's AZ known at this synth? Not while a ``Vpc.from_lookup`` waits for
    the CLI's lookup (placeholder ids and AZs such as ``dummy1a``), nor when it is a token. The
    checks that need the AZ are skipped then, with an info that says when they run: throwing on
    a placeholder would stop the app before the CLI can perform the lookup at all."""
    if v.is_lookup_placeholder(zone) or v.is_lookup_placeholder(vpc.vpc_id) or v.is_lookup_placeholder(subnet.subnet_id):
        Annotations.of(network).add_info(
            f"training_subnet {subnet.node.path} comes from a context lookup not performed yet (Availability Zone "
            f"{zone!r}, subnet {subnet.subnet_id!r}): its AZ and size are checked after the lookup, when the CDK CLI "
            "runs the app again with the looked-up values (cdk.context.json)")
        return False
    if Token.is_unresolved(zone):
        Annotations.of(network).add_info(
            f"training_subnet {subnet.node.path}'s Availability Zone is a token, known only at deploy: its checks against "
            "the stack's region and availability_zone / availability_zone_id are not evaluated")
        return False
    return True


def az_id_prefix_for(scope: Construct, prop: Any) -> Any:
    """The AZ ID prefix to check against: the prop, else the context key, else None (the table)."""
    return prop or _context_prefix(scope)


def _context_prefix(scope: Construct) -> Any:
    value = scope.node.try_get_context(CONTEXT_AZ_ID_PREFIX)
    return v.az_id_prefix(f"context {CONTEXT_AZ_ID_PREFIX}", value) if value not in (None, "") else None


def context_cost_warning(scope: Construct) -> Any:
    """``smddp:monthlyCostWarningUSD`` from cdk.json / ``-c`` (a number, or the string ``-c`` gives)."""
    value = scope.node.try_get_context(CONTEXT_COST_WARNING)
    return None if value in (None, "") else context_number(CONTEXT_COST_WARNING, value, minimum=0, exclusive=True)


__all__ = ["check_against_app", "check_values", "context_cost_warning"]

"""SmddpTrainingNetwork's ``validateProps()``: every prop checked, named as the user wrote it.

Kept out of training_network.py so the construct reads as what it builds. Order matters and
is deliberate: :func:`check_values` needs no construct and runs before ``super().__init__``
(so a wrong type never reaches jsii); :func:`check_against_app` needs the stack (region) and
the given VPC/subnet/groups and runs before the first resource is created;
:func:`plan_from_props` sizes the file system and reports in the props' own names
(``read_mbps_per_gpu``, ``dataset_gib``), never the calculator's parameter names.
"""

from __future__ import annotations

from typing import Any, Mapping

from aws_cdk import Annotations, Token
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.errors import ConfigError, SizingError
from smddp_infra.spec.subnets import DEFAULT_INTERFACE_ENDPOINTS, check_subnet_fits
from smddp_infra.settings import context_number
from smddp_infra.sizing.catalog import InstanceType, efa_instance
from smddp_infra.sizing.lustre_rules import MAX_STORAGE_CAPACITY_GIB, PERSISTENT_2, SCRATCH_TYPES
from smddp_infra.sizing.planner import (
    CUSTOMER_KEY_DEPLOYMENT_TYPES,
    CUSTOMER_KEY_WHY,
    DEFAULT_DEPLOYMENT_TYPES,
    TIER_GROUPS,
    LustrePlan,
    plan_lustre,
)
from smddp_infra.sizing.tiering import TieringPlan
from smddp_infra.sizing.workload import throughput_from_cluster

#: Context keys the construct reads when the matching prop is not given (cdk.json or ``-c``).
CONTEXT_AZ_ID_PREFIX = "smddp:availabilityZoneIdPrefix"
CONTEXT_COST_WARNING = "smddp:monthlyCostWarningUSD"

#: Sizing props that a given ``lustre_plan`` would silently override.
_SIZING_PROPS = ("read_mbps_per_gpu", "required_throughput_mbps", "deployment_types", "max_capacity_gib")
_MAX_GROUPS = 5  # VpcConfig.SecurityGroupIds


def check_values(p: Mapping[str, Any]) -> InstanceType:
    """Types and plain values of every prop; returns the instance type's catalog entry."""
    v.text("instance_type", p["instance_type"], optional=False)
    instance = efa_instance(p["instance_type"], setting="instance_type")
    v.whole("instance_count", p["instance_count"], minimum=1)
    if "max_instance_count" in p:
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
        if name in p:
            v.flag(name, p[name])
    if p.get("job_config_output_id") is not None:
        v.text("job_config_output_id", p["job_config_output_id"])
    v.vpc_cidr("vpc_cidr", p["vpc_cidr"])
    v.require("vpc", p["vpc"], "IVpc")
    v.require("training_subnet", p["training_subnet"], "ISubnet")
    v.require("security_group", p["security_group"], "ISecurityGroup")
    extra = v.require_each("additional_security_groups", p["additional_security_groups"], "ISecurityGroup")
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
    _check_combinations(p, extra)
    if p["vpc"] is None:
        _check_subnet_fits(p, instance)
    return instance


def _check_subnet_fits(p: Mapping[str, Any], instance: InstanceType) -> None:
    """The created training subnet, in the L3's names (:func:`check_subnet_fits`)."""
    endpoints = 0 if p["nat_gateway"] else len(DEFAULT_INTERFACE_ENDPOINTS) + (
        1 if p["encryption_key"] is not None or p["create_encryption_key"] else 0)
    check_subnet_fits(p["vpc_cidr"], instance_count=p["instance_count"], nat=p["nat_gateway"], endpoints=endpoints,
                      ips_per_instance=p["ips_per_instance"] or instance.private_ips,
                      max_instance_count=p.get("max_instance_count"))


def _check_combinations(p: Mapping[str, Any], extra: list[Any]) -> None:
    if p["encryption_key"] is not None and p["create_encryption_key"]:
        raise ConfigError("create_encryption_key=True was given with encryption_key: pass one (the given key is used)")
    if p["lustre_plan"] is not None:
        problems = p["lustre_plan"].problems()
        if problems:
            raise ConfigError("lustre_plan is not a file system CloudFormation accepts: " + "; ".join(problems))
        given = [name for name in _SIZING_PROPS if p[name] is not None] + (["dataset_gib"] if p["dataset_gib"] else [])
        if given:
            raise ConfigError(f"lustre_plan was given with {', '.join(given)}: the plan fixes the file system's size "
                              "already; pass the plan or the workload props, not both")
        if p["efa_file_system"] and not p["lustre_plan"].efa_enabled:
            raise ConfigError("efa_file_system=True contradicts lustre_plan, which is not EFA-enabled")
    elif p["read_mbps_per_gpu"] is None and p["required_throughput_mbps"] is None and p.get("file_system") is None:
        raise ConfigError("SmddpTrainingNetwork needs lustre_plan, read_mbps_per_gpu or required_throughput_mbps, got none")
    elif p["read_mbps_per_gpu"] is not None and p["required_throughput_mbps"] is not None:
        raise ConfigError(
            f"read_mbps_per_gpu={p['read_mbps_per_gpu']!r} and required_throughput_mbps={p['required_throughput_mbps']!r} "
            "both state the read rate: pass one (per accelerator, or the cluster's total)"
        )
    if p["lustre_plan"] is None and p["deployment_types"] is not None:
        _check_deployment_types(p["deployment_types"], efa=p["efa_file_system"])
    _check_key_on_scratch(p)
    if p["vpc"] is None:
        if p["training_subnet"] is not None:
            raise ConfigError("training_subnet was given without vpc: pass both, or neither to create them")
        if p["availability_zone"] is None and p["availability_zone_id"] is None:
            raise ConfigError("SmddpTrainingNetwork needs availability_zone or availability_zone_id to place the training subnet")
        if p["availability_zone"] is not None and p["availability_zone_id"] is not None:
            raise ConfigError(f"availability_zone={p['availability_zone']!r} and availability_zone_id="
                              f"{p['availability_zone_id']!r} both place the training subnet: pass one")
    elif p["training_subnet"] is None:
        raise ConfigError("vpc was given without training_subnet: pass the private subnet (one AZ) for jobs and FSx")
    if 1 + len(extra) > _MAX_GROUPS:
        raise ConfigError(f"additional_security_groups has {len(extra)} groups: a training job takes at most {_MAX_GROUPS} "
                          f"security groups (VpcConfig.SecurityGroupIds), the EFA group and up to {_MAX_GROUPS - 1} more")


def _check_deployment_types(value: Any, *, efa: bool) -> None:
    names = [value] if isinstance(value, str) else list(value)
    if not names:
        raise ConfigError(f"deployment_types must name at least one of {', '.join(TIER_GROUPS)}, got none")
    for name in names:
        if name not in TIER_GROUPS:
            raise ConfigError(f"deployment_types must be among {', '.join(TIER_GROUPS)}, got {name!r}")
        if efa and name != PERSISTENT_2:
            raise ConfigError(f"deployment_types contains {name!r}, but efa_file_system=True allows only PERSISTENT_2 "
                              "(FSx for Lustre supports EFA on PERSISTENT_2 only)")


def _key_prop(p: Mapping[str, Any]) -> str:
    """The prop that gives the file system a customer KMS key ('' when none does)."""
    return "encryption_key" if p["encryption_key"] is not None else "create_encryption_key=True" if p["create_encryption_key"] else ""


def _check_key_on_scratch(p: Mapping[str, Any]) -> None:
    """A customer key and a SCRATCH type contradict each other: FSx would not use the key."""
    key = _key_prop(p)
    if not key:
        return
    if p["lustre_plan"] is not None and p["lustre_plan"].deployment_type in SCRATCH_TYPES:
        raise ConfigError(f"lustre_plan is {p['lustre_plan'].deployment_type} but {key} is given: {CUSTOMER_KEY_WHY}; "
                          "plan a PERSISTENT type (plan_lustre(..., customer_key=True)) or drop the key")
    types = p["deployment_types"]
    names = [types] if isinstance(types, str) else list(types or ())
    scratch = [name for name in names if name in SCRATCH_TYPES]
    if p["lustre_plan"] is None and scratch:
        raise ConfigError(f"deployment_types contains {scratch[0]!r} but {key} is given: {CUSTOMER_KEY_WHY}; "
                          "name PERSISTENT types only, or drop the key")


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


def plan_from_props(p: Mapping[str, Any], instance: InstanceType) -> LustrePlan:
    """The calculator's plan for the workload props; failures are told in those props' names."""
    dataset = float(p["dataset_gib"])
    if p["required_throughput_mbps"] is not None:
        need = float(p["required_throughput_mbps"])
        stated = f"required_throughput_mbps={need:,g} MB/s"
    else:
        need = throughput_from_cluster(p["instance_type"], p["instance_count"], p["read_mbps_per_gpu"])
        stated = (f"read_mbps_per_gpu={p['read_mbps_per_gpu']:,g} ({instance.accelerators} accelerators x "
                  f"{p['instance_count']} instances = {need:,g} MB/s)")
    try:
        return plan_lustre(need, dataset, efa_enabled=p["efa_file_system"], deployment_types=p["deployment_types"],
                           max_capacity_gib=p["max_capacity_gib"], customer_key=bool(_key_prop(p)))
    except SizingError as exc:
        if "more than any FSx for Lustre file system can deliver" in str(exc):
            raise SizingError(
                f"{stated} with dataset_gib={dataset:,g} is more than one FSx for Lustre file system can serve: it needs "
                f"more than {MAX_STORAGE_CAPACITY_GIB:,} GiB, the largest StorageCapacity CloudFormation accepts; read "
                "less per GPU or split the dataset across file systems"
            ) from None
        types = p["deployment_types"]
        default = ((PERSISTENT_2,) if p["efa_file_system"] else
                   CUSTOMER_KEY_DEPLOYMENT_TYPES if _key_prop(p) else DEFAULT_DEPLOYMENT_TYPES)
        considered = ", ".join([types] if isinstance(types, str) else list(types or default))
        raise SizingError(f"no FSx for Lustre file system ({considered}) fits {stated} and dataset_gib={dataset:,g}: "
                          f"{exc}") from None


__all__ = ["check_against_app", "check_values", "context_cost_warning", "plan_from_props"]

"""TrainingNetwork's checks that need CDK: the escape hatches' types, and the app.

The values themselves are the schema's (:mod:`smddp_infra.schema`): each group refuses a bad
value when built, the spec runs its cross-field rules when built. Here: :func:`check_existing`
(``Existing``'s CDK objects, when it is built, so a wrong type never reaches jsii) and
:func:`check_against_app`, which needs the given VPC/subnet/groups and runs before the first
resource is created. Every message names the field as the user wrote it (``spec.name``).
"""

from __future__ import annotations

import warnings
from typing import Any

from aws_cdk import Annotations, Token
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.schema.fields import rule_for
from smddp_infra.schema.network import NetworkSpec, Placement, Storage
from smddp_infra.sizing.catalog import efa_instance

#: Context keys the construct reads when the matching prop is not given (cdk.json or ``-c``).
CONTEXT_AZ_ID_PREFIX = "smddp:availabilityZoneIdPrefix"
CONTEXT_COST_WARNING = "smddp:monthlyCostWarningUSD"


def check_existing(e: Any) -> None:
    """Each escape hatch is the CDK object its field names (``Existing``, when it is built)."""
    v.require("vpc", e.vpc, "IVpc")
    v.require("training_subnet", e.training_subnet, "ISubnet")
    v.require("security_group", e.security_group, "ISecurityGroup")
    v.require_each("additional_security_groups", e.additional_security_groups, "ISecurityGroup")
    v.require_each("endpoint_security_groups", e.endpoint_security_groups, "ISecurityGroup")
    v.require("checkpoint_bucket", e.checkpoint_bucket, "IBucket")
    v.require("dataset_bucket", e.dataset_bucket, "IBucket")
    v.require("encryption_key", e.encryption_key, "IKey")
    v.require("role", e.role, "IRole")


def check_against_app(network: Construct, spec: NetworkSpec, e: Any) -> None:
    """VPC/subnet, regional resources and group checks; raises before the first resource is created.
    The values themselves (and the AZ against the region) are the spec's: checked when it was built."""
    stack = v.stack_of(network)
    v.check_no_validation_plugin_as_aspect(network)
    region, p, n = v.concrete_region(network), spec.placement, spec.name
    if v.is_lookup_placeholder(p.availability_zone):
        Annotations.of(network).add_info(
            f"{n('availability_zone')} {p.availability_zone!r} is a placeholder of a context lookup not performed yet "
            "(stack.availability_zones before cdk.context.json has them): it is checked against the region after the "
            "lookup, when the CDK CLI runs the app again")
    vpc, subnet = e.vpc, e.training_subnet
    if vpc is not None:
        v.resource_region(n("vpc"), vpc, region, "a training network's VPC must be in the stack's region")
        zone = v.subnet_availability_zone(n("training_subnet"), subnet)
        if _zone_known(network, vpc, subnet, zone):
            v.az_in_region(f"{n('training_subnet')}'s availability_zone", zone, region)
            v.subnet_matches_zone(network, zone, availability_zone=p.availability_zone,
                                  availability_zone_id=p.availability_zone_id)
        v.check_subnet_in_vpc(network, subnet, vpc)
        if not v.is_lookup_placeholder(subnet.subnet_id):
            w = spec.workload
            largest = max(w.instance_count, p.max_instance_count or 0)
            v.check_subnet_holds(network, subnet, count=largest,
                                 count_prop=n("instance_count") if largest == w.instance_count else n("max_instance_count"),
                                 ips_per_instance=p.ips_per_instance or efa_instance(w.instance_type).private_ips)
    v.resource_region(n("encryption_key"), e.encryption_key, region,
                      "KMS keys are regional; FSx and S3 use a key of their own region")
    v.warn_key_in_other_account(network, n("encryption_key"), e.encryption_key)
    v.check_bucket_name(n("dataset_bucket"), e.dataset_bucket)
    v.resource_region(n("dataset_bucket"), e.dataset_bucket, region,
                      "FSx for Lustre links only buckets of its own region (data repository association)")
    v.resource_region(n("checkpoint_bucket"), e.checkpoint_bucket, region,
                      "SageMaker writes checkpoints only to buckets of the job's region")
    if e.security_group is not None:
        v.check_group_takes_rules(n("security_group"), e.security_group)
    groups = [g for g in (e.security_group, *e.additional_security_groups) if g is not None]
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
    """The AZ ID prefix to check against: the prop, else (deprecated) the context key, else None."""
    return prop if prop is not None else _legacy_context(scope, CONTEXT_AZ_ID_PREFIX, Placement,
                                                         "availability_zone_id_prefix")


def context_cost_warning(scope: Construct) -> Any:
    """Deprecated: ``smddp:monthlyCostWarningUSD`` read by the construct itself."""
    return _legacy_context(scope, CONTEXT_COST_WARNING, Storage, "monthly_cost_warning_usd")


def _legacy_context(scope: Construct, key: str, group: type, prop: str) -> Any:
    """A context key a construct read before settings.py became the app's one context reader: still
    read for one minor release, with one warning naming the prop to pass instead, and checked by
    the same field rule the app's reader uses."""
    raw = scope.node.try_get_context(key)
    if raw in (None, ""):
        return None
    warnings.warn(f"{scope.node.path} read context key {key}: constructs no longer read context; pass "
                  f"{prop}= (TrainingNetwork: its group field of that name)", DeprecationWarning, stacklevel=2)
    return rule_for(group, prop).read(f"context {key}", raw)


__all__ = ["az_id_prefix_for", "check_against_app", "check_existing", "context_cost_warning"]

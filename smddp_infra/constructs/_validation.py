"""Prop validation for the constructs: one small validator per rule, in aws-cdk-lib's manner.

aws-cdk-lib's ``fsx.LustreFileSystem`` runs ``validateProps()``, which calls one validator
per rule before it creates anything. The constructs here do the same, for the reason a user
sees: a wrong prop must end in ONE line that names the prop the user wrote, the value and
what is allowed (a :class:`~smddp_infra.errors.ConfigError`, or a
:class:`~smddp_infra.errors.PropTypeError`, which is also a ``TypeError``, for a value of the
wrong type), never in a jsii deserialisation error or a trace from deep inside CDK.

Two kinds of checks:

* value checks (:func:`require`, :func:`number`, :func:`whole`, ...) need no construct and run
  before ``super().__init__``;
* checks against the app (the stack's region, the VPC's subnets, whether an imported group
  takes rules) run once the construct is in the tree. Each says "unknown" (returns None, or
  adds a synth warning) when the app does not hold the answer: an environment-agnostic stack
  has no region, and an imported VPC only knows the subnets it was told about.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Optional, Sequence

from aws_cdk import Annotations, Aspects, Stack, Token, aws_ec2 as ec2
from constructs import IConstruct

from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.facts import regions
from smddp_infra.facts.regions import check_availability_zone, check_availability_zone_id, is_az_id
from smddp_infra.facts.s3 import bucket_name_problem
from smddp_infra.facts.subnets import FILE_SYSTEM_IPS, HEADROOM, smallest_mask_for, usable_addresses
from smddp_infra.schema import fields
from smddp_infra.schema.fields import LOOKUP_PLACEHOLDER_AZS
from smddp_infra.schema.network import Placement

#: What each jsii interface is recognised by: jsii's Python interfaces are typing Protocols
#: that ``isinstance`` cannot check, so a value qualifies by the attribute that defines the
#: interface (an ``IVpc`` has ``vpc_id``, an ``IBucket`` has ``bucket_arn``, ...).
INTERFACES: dict[str, tuple[str, str]] = {
    "IVpc": ("vpc_id", "aws_ec2.IVpc, e.g. ec2.Vpc(...) or ec2.Vpc.from_vpc_attributes(...)"),
    "ISubnet": ("subnet_id", "aws_ec2.ISubnet, e.g. ec2.Subnet.from_subnet_attributes(..., availability_zone=...)"),
    "ISecurityGroup": ("security_group_id", "aws_ec2.ISecurityGroup, e.g. ec2.SecurityGroup.from_security_group_id(...)"),
    "IBucket": ("bucket_arn", "aws_s3.IBucket, e.g. s3.Bucket.from_bucket_name(...)"),
    "IKey": ("key_arn", "aws_kms.IKey, e.g. kms.Key.from_key_arn(...)"),
    "IRole": ("role_arn", "aws_iam.IRole, e.g. iam.Role.from_role_arn(...)"),
    "ICluster": ("cluster_arn", "aws_eks_v2.ICluster, e.g. eks.Cluster.from_cluster_attributes(...)"),
    "ILayerVersion": ("layer_version_arn", "aws_lambda.ILayerVersion, e.g. lambda_.LayerVersion.from_layer_version_arn(...)"),
}

#: Synth-warning ids (``Annotations.add_warning_v2``): stable, so an app can acknowledge one.
WARN_SUBNET_UNVERIFIED = "smddp:subnetNotListedInVpc"
WARN_AZ_ID_UNVERIFIED = "smddp:azIdNotVerifiable"
WARN_SUBNET_HEADROOM = "smddp:subnetWithoutHeadroom"
WARN_KEY_OTHER_ACCOUNT = "smddp:keyInOtherAccount"

#: What aws-cdk-lib's context lookups return BEFORE the CLI has performed them (aws-cdk-lib
#: ``aws-ec2/lib/vpc.js``: the dummy ``Vpc.from_lookup`` answer; ``Stack.availability_zones``' dummy
#: list is the schema's :data:`~smddp_infra.schema.fields.LOOKUP_PLACEHOLDER_AZS`). The CLI then looks
#: the values up, writes cdk.context.json and runs the app again, so a check that throws on these
#: values prevents the very lookup that would answer it.
LOOKUP_PLACEHOLDER_VPC_IDS = frozenset({"vpc-12345"})
LOOKUP_PLACEHOLDER_SUBNET_IDS = frozenset({"s-12345", "s-67890", "p-12345", "p-67890"})
LOOKUP_PLACEHOLDER_CIDR = "1.2.3.4/5"


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f"str {value!r}"
    node = getattr(value, "node", None)
    if node is not None and hasattr(node, "path"):
        kinds = [name for name, (attribute, _) in INTERFACES.items() if hasattr(value, attribute)]
        return f"{' / '.join(kinds) or 'construct'} {node.path}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


# --- value checks (no construct needed) ----------------------------------------------------------


def is_lookup_placeholder(value: Any) -> bool:
    """A value aws-cdk-lib returns before the CLI's context lookup: not known yet (see above)."""
    return isinstance(value, str) and value in (
        LOOKUP_PLACEHOLDER_AZS | LOOKUP_PLACEHOLDER_VPC_IDS | LOOKUP_PLACEHOLDER_SUBNET_IDS | {LOOKUP_PLACEHOLDER_CIDR})


def not_known_yet(value: Any) -> bool:
    """A token or a lookup placeholder: the checks that need the value wait for the next pass."""
    return is_lookup_placeholder(value) or (isinstance(value, str) and unresolved(value))


def may_hold_token(value: Any) -> bool:
    """False only for a string aws-cdk-lib cannot read as a token: core's ``TokenString`` finds a string
    token by its marker ``${Token[...]}`` or a stringified number token (``-1.8881545897e+289``), so a
    string with neither is resolved. Asked here, not of the node process (a round trip each)."""
    return not isinstance(value, str) or "${Token[" in value or "e+289" in value


def unresolved(value: Any) -> bool:
    """``Token.is_unresolved(value)``, without the round trip for a string that holds no token."""
    return may_hold_token(value) and bool(Token.is_unresolved(value))


def require(prop: str, value: Any, interface: str, *, optional: bool = True) -> None:
    """``value`` must implement the jsii ``interface`` (None allowed when ``optional``)."""
    if value is None:
        if optional:
            return
        raise PropTypeError(f"{prop} is required: pass an {INTERFACES[interface][1]}")
    attribute, expected = INTERFACES[interface]
    if isinstance(value, (str, bytes, int, float, bool, list, tuple, dict, set)) or not _has(value, attribute):
        raise PropTypeError(f"{prop} must be an {expected}, got {_shown(value)}")


def _has(value: Any, attribute: str) -> bool:
    """``hasattr``, asking the class first: on a jsii object ``hasattr`` reads the property through the
    node process, while the interface's property is declared on its class."""
    return any(attribute in vars(k) for k in type(value).__mro__) or hasattr(value, attribute)


def require_each(prop: str, values: Any, interface: str) -> list[Any]:
    """A list/tuple of ``interface`` values (a single value or a string is a type error)."""
    attribute, expected = INTERFACES[interface]
    if isinstance(values, (str, bytes)) or hasattr(values, attribute) or not isinstance(values, (list, tuple)):
        hint = " (one value: wrap it in a list, [value])" if hasattr(values, attribute) else ""
        raise PropTypeError(f"{prop} must be a list of {expected.split(',')[0]}, got {_shown(values)}{hint}")
    for index, value in enumerate(values):
        require(f"{prop}[{index}]", value, interface, optional=False)
    return list(values)


def text(prop: str, value: Any, *, optional: bool = True, allow_token: bool = False) -> Optional[str]:
    if not allow_token and isinstance(value, str) and unresolved(value):
        raise ConfigError(f"{prop} must be known at synth (a literal string), got a token {value!r}")
    checked: Optional[str] = fields.text("a str", optional=optional, tokens=True).check(prop, value)
    return checked


def text_list(prop: str, values: Any, *, optional: bool = True) -> Optional[list[str]]:
    if fields.Rule("a list of str", (list, tuple), optional=optional).check(prop, values) is None:
        return None
    for index, value in enumerate(values):
        text(f"{prop}[{index}]", value, optional=False, allow_token=True)
    return list(values)


def flag(prop: str, value: Any, *, optional: bool = False) -> Optional[bool]:
    checked: Optional[bool] = fields.flag(optional=optional).check(prop, value)
    return checked


def number(prop: str, value: Any, *, minimum: float, exclusive: bool = False, unit: str = "",
           optional: bool = True) -> None:
    """A finite literal number >= (or >) ``minimum``."""
    fields.number(minimum, exclusive=exclusive, unit=unit, optional=optional).check(prop, value)


def whole(prop: str, value: Any, *, minimum: int, maximum: Optional[int] = None, why: str = "",
          optional: bool = False) -> None:
    fields.whole(minimum, maximum, optional=optional, why=why).check(prop, value)


def choice(prop: str, value: Any, allowed: Sequence[str]) -> str:
    checked: str = fields.choice(allowed).check(prop, value)
    return checked


def instance(prop: str, value: Any, cls: type, how: str) -> None:
    if value is not None and not isinstance(value, cls):
        raise PropTypeError(f"{prop} must be a {cls.__name__} ({how}), got {_shown(value)}")


def placement(prop: str, name: str, value: Any) -> Any:
    """``value`` checked by the rule of :class:`~smddp_infra.schema.network.Placement`'s field ``name``
    (its one owner), named ``prop`` as the user wrote it."""
    return fields.rule_for(Placement, name).check(prop, value)


#: A managed prefix list id (``pl-63a5400a``), or a token (known at deploy).
PREFIX_LIST_ID = fields.text("a managed prefix list id like pl-63a5400a", regions.is_prefix_list_id, optional=True,
                            tokens=True)


# --- checks against the app ------------------------------------------------------------------------


def stack_of(scope: IConstruct, what: str = "") -> Stack:
    """``Stack.of``, with one line instead of jsii's trace when the construct is not in a stack
    (``what``: the construct about to be created in ``scope``, when it is not ``scope`` itself)."""
    try:
        return Stack.of(scope)
    except RuntimeError:
        raise ConfigError(
            f"{what or f'{type(scope).__name__} {scope.node.path!r}'} is not inside a Stack: pass a Stack (or a construct "
            "inside one) as its scope, not the App or a Stage"
        ) from None


def check_no_validation_plugin_as_aspect(scope: IConstruct) -> None:
    """cdk-nag 3's packs are validation plugins, not Aspects: the cdk-nag 2 habit
    ``Aspects.of(app).add(AwsSolutionsChecks())`` ends in a jsii ``aspect.visit is not a
    function`` at synth, with no word of why. Said here when the pack was added before this
    construct (docs/embedding.md has both styles)."""
    for ancestor in scope.node.scopes:
        for aspect in Aspects.of(ancestor).all:
            if not hasattr(aspect, "visit") and hasattr(aspect, "validate"):
                name = type(aspect).__name__
                raise ConfigError(
                    f"{name} was added with Aspects.of({ancestor.node.path or 'app'}).add(...), but it is a cdk-nag 3 "
                    f"validation plugin, not an Aspect (synth would fail with 'aspect.visit is not a function'): use "
                    f"Validations.of(app).add_plugins({name}(app)); Aspects.of(app).add({name}()) is cdk-nag 2's style")


def concrete_region(scope: IConstruct, what: str = "") -> Optional[str]:
    """The stack's region, or None in an environment-agnostic stack (nothing regional is checked);
    ``what`` as for :func:`stack_of`."""
    region = stack_of(scope, what).region
    return None if unresolved(region) else region


def az_in_region(prop: str, value: Optional[str], region: Optional[str]) -> None:
    if value is None or region is None or not_known_yet(value):
        return
    check_availability_zone(prop, value, region)


def az_id_in_region(prop: str, value: Optional[str], region: Optional[str], *, prefix: Optional[str],
                    prefix_prop: str = "availability_zone_id_prefix") -> None:
    if value is None or region is None or unresolved(value):
        return
    check_availability_zone_id(prop, value, region, prefix=prefix, prefix_setting=prefix_prop)


def resource_region(prop: str, resource: Any, region: Optional[str], why: str) -> None:
    """A resource whose ``env.region`` is known must be in the stack's region."""
    if region is None or resource is None:
        return
    theirs = resource.env.region
    if not unresolved(theirs) and theirs != region:
        raise ConfigError(f"{prop} is in region {theirs}, the stack in {region}: {why}")


def check_bucket_name(prop: str, bucket: Any) -> None:
    """An imported bucket whose literal name S3 refuses (``Bucket.from_bucket_name(..., "My_Data")``):
    no such bucket can exist, so the file system's data repository and the job's grants would name
    nothing; said in one line here instead of at deploy. A bucket created in the app (its name a
    token) is named by CloudFormation and not checked."""
    if bucket is None:
        return
    name = bucket.bucket_name
    if not isinstance(name, str) or unresolved(name):
        return
    problem = bucket_name_problem(name)
    if problem is not None:
        raise ConfigError(f"{prop} {name!r} {problem} (Amazon S3 User Guide, general purpose bucket naming rules)")


def warn_key_in_other_account(scope: IConstruct, prop: str, key: Any) -> None:
    """A key whose account (from its ARN) is not the stack's: IAM in this account is not enough.

    KMS allows a cross-account use only when the key's own policy allows it as well as the
    caller's IAM policy (AWS KMS developer guide, "Allowing users in other accounts to use a KMS
    key"); this app cannot see or change that policy, so the grants it needs are named here.
    """
    if key is None:
        return
    theirs, ours = key.env.account, stack_of(scope).account
    if unresolved(theirs) or unresolved(ours) or theirs == ours:
        return
    Annotations.of(scope).add_warning_v2(
        WARN_KEY_OTHER_ACCOUNT,
        f"{prop} {key.key_arn} belongs to account {theirs}, the stack to {ours}: the key's own key policy (in {theirs}) "
        f"must allow account {ours}'s principals, or the deploy and the jobs fail with AccessDenied: the training "
        "execution role kms:Decrypt, kms:GenerateDataKey and kms:DescribeKey (checkpoints and job data); and, for FSx for "
        f"Lustre to encrypt the file system with it, the principal that creates the file system (the CloudFormation "
        "deploy role) kms:CreateGrant, kms:DescribeKey, kms:Encrypt, kms:Decrypt, kms:ReEncrypt* and kms:GenerateDataKey* "
        "(via fsx, kms:ViaService)")


def subnet_availability_zone(prop: str, subnet: Any) -> str:
    """The subnet's AZ; an imported subnet without one is refused with the import that fixes it."""
    try:
        zone = subnet.availability_zone
    except RuntimeError:  # jsii: CannotReferenceSubnetSAvailability
        zone = None
    if not isinstance(zone, str) or not zone:
        raise ConfigError(
            f"{prop} {subnet.subnet_id!r} has no Availability Zone (imported with Subnet.from_subnet_id?): EFA, FSx for "
            "Lustre and the job settings need it; import it with ec2.Subnet.from_subnet_attributes(scope, id, "
            "subnet_id=..., availability_zone='<its AZ, e.g. us-east-1a>', route_table_id=...)"
        )
    return zone


def subnet_cidr(subnet: Any) -> Optional[str]:
    """The subnet's IPv4 CIDR when the app knows it: created, looked up, or imported with
    ``ipv4_cidr_block``; None for an import without it, a token or a lookup placeholder."""
    try:
        cidr = subnet.ipv4_cidr_block
    except RuntimeError:  # jsii: an imported subnet's CIDR that was not supplied
        return None
    return None if not isinstance(cidr, str) or not cidr or not_known_yet(cidr) else cidr


def check_subnet_holds(scope: IConstruct, subnet: Any, *, count_prop: str, count: int,
                       ips_per_instance: int, subnet_prop: str = "training_subnet") -> None:
    """An existing subnet with a known CIDR must hold the cluster, as a created one must.

    Error when it certainly cannot (``count`` x the instance's private IPs + the file system's
    addresses exceed the usable addresses: AWS reserves 5 in every subnet); a warning when it
    holds the cluster once but not twice over (the headroom a created subnet is planned with);
    an info when the CIDR is not known at synth (the check is not evaluated).
    """
    cidr = subnet_cidr(subnet)
    if cidr is None:
        Annotations.of(scope).add_info(
            f"{subnet_prop} {subnet.node.path}: its CIDR is not known at synth (import it with ipv4_cidr_block=...), so "
            f"whether it holds {count_prop}={count} instances is not evaluated")
        return
    try:
        usable = usable_addresses(ipaddress.IPv4Network(cidr, strict=False).prefixlen)
    except ValueError:
        return
    needed = count * ips_per_instance + FILE_SYSTEM_IPS
    if needed > usable:
        raise ConfigError(
            f"{count_prop}={count} does not fit {subnet_prop} {subnet.node.path} ({cidr}, {max(usable, 0)} usable addresses): "
            f"{count} instances x {ips_per_instance} private IPs + {FILE_SYSTEM_IPS} for the file system need {needed}; "
            f"pass a subnet of /{smallest_mask_for(needed)} or larger, or fewer instances")
    if HEADROOM * needed > usable:
        Annotations.of(scope).add_warning_v2(
            WARN_SUBNET_HEADROOM,
            f"{subnet_prop} {subnet.node.path} ({cidr}, {usable} usable addresses) holds {count_prop}={count} instances "
            f"({needed} addresses) but not twice over: a job started while the previous job's network interfaces are "
            "still being released may find too few free addresses (created subnets are planned with twice the room)")


def _all_subnets(vpc: Any) -> list[Any]:
    return [*vpc.public_subnets, *vpc.private_subnets, *vpc.isolated_subnets]


def subnet_in_vpc(subnet: Any, vpc: Any) -> tuple[Optional[bool], str]:
    """Is ``subnet`` one of ``vpc``'s subnets? (True/False when the app says, None when it cannot; why)

    Known: the same subnet object (or the same literal id) is among the VPC's subnets; a subnet
    created in the app names its VpcId; a VPC created in the app has only the subnets it
    creates, so a subnet imported by id cannot be one of them; a VPC imported with its subnet
    ids (``Vpc.from_vpc_attributes(private_subnet_ids=...)``) has exactly those. Unknown: an
    imported VPC that lists no subnets, or a subnet id that is a token.
    """
    stack = Stack.of(subnet)
    subnets = _all_subnets(vpc)
    if any(s.node.path == subnet.node.path for s in subnets):
        return True, ""
    subnet_id = subnet.subnet_id
    literal_ids = [s.subnet_id for s in subnets if not unresolved(s.subnet_id)]
    if not unresolved(subnet_id) and subnet_id in literal_ids:
        return True, ""
    cfn = subnet.node.default_child if isinstance(subnet, ec2.Subnet) else None
    if isinstance(cfn, ec2.CfnSubnet):
        same = Stack.of(cfn) is Stack.of(vpc) and stack.resolve(cfn.vpc_id) == stack.resolve(vpc.vpc_id)
        return same, "" if same else "the subnet is created in this app with another VpcId"
    if isinstance(vpc, ec2.Vpc):
        return False, "the VPC is created by this app, so its subnets are the ones it creates, and this one is not among them"
    if unresolved(subnet_id) or not subnets:
        return None, ""
    listed = ", ".join(literal_ids) if literal_ids else "only tokens"
    return False, (f"the VPC was imported with the subnets {listed}, and {subnet_id} is not one of them "
                   "(if it is in that VPC, add it to Vpc.from_vpc_attributes)")


def check_subnet_in_vpc(scope: IConstruct, subnet: Any, vpc: Any, *, subnet_prop: str = "training_subnet") -> None:
    found, why = subnet_in_vpc(subnet, vpc)
    if found is False:
        raise ConfigError(
            f"{subnet_prop} {subnet.node.path} is not a subnet of vpc {vpc.node.path}: {why}; FSx for Lustre and the "
            "job's interfaces must be in the VPC the EFA group belongs to: pass one of the VPC's own subnets "
            "(vpc.private_subnets / vpc.isolated_subnets / vpc.select_subnets(...))"
        )
    if found is None and _all_subnets(vpc):
        Annotations.of(scope).add_warning_v2(
            WARN_SUBNET_UNVERIFIED,
            f"{subnet_prop} {subnet.node.path} cannot be checked against the subnets of vpc {vpc.node.path} at synth "
            "(its id is a token): make sure it is a subnet of that VPC",
        )


def subnet_matches_zone(scope: IConstruct, subnet_zone: str, *, availability_zone: Optional[str],
                        availability_zone_id: Optional[str]) -> None:
    """``availability_zone`` / ``availability_zone_id`` given beside a subnet must name its AZ."""
    if unresolved(subnet_zone):
        return
    if availability_zone is not None and not unresolved(availability_zone) and availability_zone != subnet_zone:
        raise ConfigError(
            f"availability_zone {availability_zone!r} contradicts training_subnet, which is in {subnet_zone!r}: the job "
            "and the file system run in the subnet's AZ; drop availability_zone or pass a subnet in that AZ"
        )
    if availability_zone_id is None or unresolved(availability_zone_id):
        return
    if is_az_id(subnet_zone):
        if subnet_zone != availability_zone_id:
            raise ConfigError(f"availability_zone_id {availability_zone_id!r} contradicts training_subnet, which is in "
                              f"{subnet_zone!r}")
        return
    Annotations.of(scope).add_warning_v2(
        WARN_AZ_ID_UNVERIFIED,
        f"availability_zone_id {availability_zone_id} cannot be checked against training_subnet's AZ {subnet_zone} at "
        "synth: AZ names map to AZ IDs per account (aws ec2 describe-availability-zones shows the mapping)",
    )


def group_takes_rules(group: Any) -> bool:
    """Does the group keep the rules added to it? A group imported with ``mutable=False`` drops
    every ``add_ingress_rule``/``add_egress_rule`` without a word.

    aws-cdk-lib exposes no mutability attribute, so this asks the group itself: it adds one
    throwaway ingress rule, sees whether a rule construct appeared, and removes it again
    (nothing reaches the template either way).
    """
    if isinstance(group, ec2.SecurityGroup):
        return True
    before = {child.node.id for child in group.node.children}
    group.add_ingress_rule(ec2.Peer.ipv4("192.0.2.1/32"), ec2.Port.tcp(9), "smddp_infra mutability probe")
    added = [child.node.id for child in group.node.children if child.node.id not in before]
    for child_id in added:
        group.node.try_remove_child(child_id)
    return bool(added)


def check_group_takes_rules(prop: str, group: Any) -> None:
    if not group_takes_rules(group):
        raise ConfigError(
            f"{prop} {group.security_group_id!r} cannot take rules (imported with mutable=False): as the EFA group it "
            "needs its all-traffic self rules and HTTPS egress, which CDK would drop silently; import it with "
            "mutable=True (allow_all_outbound=False so egress rules are kept), or pass it in "
            "additional_security_groups and let the network create the EFA group"
        )


def distinct_groups(prop: str, groups: Sequence[Any], stack: Stack) -> None:
    seen: dict[str, int] = {}
    for index, group in enumerate(groups):
        key = repr(stack.resolve(group.security_group_id))
        if key in seen:
            raise ConfigError(f"{prop} names security group {group.security_group_id!r} twice (a job's groups are a set)")
        seen[key] = index


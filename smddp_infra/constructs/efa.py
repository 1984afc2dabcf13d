"""The EFA security group: the fix for "job stalls at initialization on EFA instances".

SageMaker's SMDDP troubleshooting guide: EFA traffic between training instances is only
allowed when the security group admits all traffic FROM itself and sends all traffic TO
itself. An egress rule to 0.0.0.0/0 does not cover EFA (it is not IP traffic), so the self
egress rule is mandatory, and every group on the job needs both rules.

CDK trap: ``ec2.SecurityGroup(allow_all_outbound=True)`` (the default) silently drops
``add_egress_rule(sg, Port.all_traffic())``. :func:`add_self_rules` therefore writes the two
rules as explicit ``AWS::EC2::SecurityGroupIngress`` / ``AWS::EC2::SecurityGroupEgress``
resources, which works for groups we create and for groups passed in by a platform stack.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from aws_cdk import Annotations, Tags, aws_ec2 as ec2
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.constructs.acknowledgements import acknowledge
from smddp_infra.contract import TAG_ROLE, TAG_ROLE_TRAINING
from smddp_infra.errors import ConfigError

#: Tag that marks a training security group for smddp_infra.rules (any template).
ROLE_TAG_KEY, ROLE_TAG_VALUE = TAG_ROLE, TAG_ROLE_TRAINING

HTTPS = ec2.Port.tcp(443)


def add_self_rules(scope: Construct, id: str, group: ec2.ISecurityGroup) -> tuple[ec2.CfnSecurityGroupIngress, ec2.CfnSecurityGroupEgress]:
    """All-traffic ingress from ``group`` and all-traffic egress to ``group``, as resources.

    ``scope``/``id`` name a construct under which the two rules live, so the logical IDs are
    stable and a platform group gets its own pair (``<id>SelfIngress``/``<id>SelfEgress``).
    """
    holder = Construct(scope, id)
    ingress = ec2.CfnSecurityGroupIngress(
        holder,
        "SelfIngress",
        group_id=group.security_group_id,
        ip_protocol="-1",
        source_security_group_id=group.security_group_id,
        description="EFA and NCCL/SMDDP traffic from other training instances (all traffic from itself)",
    )
    egress = ec2.CfnSecurityGroupEgress(
        holder,
        "SelfEgress",
        group_id=group.security_group_id,
        ip_protocol="-1",
        destination_security_group_id=group.security_group_id,
        description="EFA and NCCL/SMDDP traffic to other training instances (all traffic to itself)",
    )
    acknowledge(ingress, "efa-self-ingress")
    return ingress, egress


#: EC2's GroupDescription: up to 255 characters from this set (VPC security groups).
_DESCRIPTION = re.compile(r"[a-zA-Z0-9. _\-:/()#,@\[\]+=&;{}!$*]{1,255}")


def _check_description(description: object) -> None:
    v.text("description", description, optional=False)
    assert isinstance(description, str)
    if not _DESCRIPTION.fullmatch(description):
        raise ConfigError("description must be 1-255 characters of a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$* "
                          f"(EC2's GroupDescription), got {description!r}")


class EfaSecurityGroup(Construct):
    """The one security group every training instance and the FSx file system share.

    Rules: all traffic from and to itself (EFA, NCCL, Lustre 988/1018-1023 between the
    instances and the file system); HTTPS to the VPC's interface endpoints and the S3
    prefix list. Anything wider only by an explicit option (``allow_https_to_anywhere``,
    which the NAT configuration turns on because AWS APIs are then reached through NAT).

    Attributes: ``security_group`` (the ``ec2.ISecurityGroup``), ``connections``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        vpc: ec2.IVpc,
        security_group: Optional[ec2.ISecurityGroup] = None,
        endpoint_security_groups: Sequence[ec2.ISecurityGroup] = (),
        s3_prefix_list_id: Optional[str] = None,
        allow_https_to_anywhere: bool = False,
        description: str = "SMDDP training instances and FSx for Lustre: all traffic to and from itself (EFA)",
    ) -> None:
        """
        :param vpc: the VPC of the training subnet.
        :param security_group: escape hatch: use this existing group instead of creating one.
            The self rules are still added to it (as separate resources). Default: a new group.
        :param endpoint_security_groups: interface endpoints' groups to allow HTTPS to.
            Default: none.
        :param s3_prefix_list_id: the S3 managed prefix list (``pl-...``) for HTTPS to the S3
            gateway endpoint. Default: no S3 rule (set it, or ``allow_https_to_anywhere``).
        :param allow_https_to_anywhere: allow TCP 443 to 0.0.0.0/0 (needed when AWS APIs are
            reached through a NAT gateway). Default: False.
        :param description: GroupDescription of a created group. Changing it replaces the group (and
            the file system that carries it). Default: a description naming the self rules.
        """
        v.require("vpc", vpc, "IVpc", optional=False)
        v.require("security_group", security_group, "ISecurityGroup")
        v.require_each("endpoint_security_groups", endpoint_security_groups, "ISecurityGroup")
        v.PREFIX_LIST_ID.check("s3_prefix_list_id", s3_prefix_list_id)
        v.flag("allow_https_to_anywhere", allow_https_to_anywhere)
        _check_description(description)
        super().__init__(scope, id)
        v.stack_of(self)  # one line, not a jsii trace, when created outside a stack
        if security_group is not None:
            # A group imported with mutable=False drops every rule added to it, silently.
            v.check_group_takes_rules("security_group", security_group)
            if security_group.allow_all_outbound:
                Annotations.of(self).add_warning_v2(
                    "smddp:efaGroupAllowsAllOutbound",
                    f"security_group {security_group.security_group_id} allows all outbound traffic (allow_all_outbound=True, "
                    "the default of SecurityGroup and of its imports): CDK drops the HTTPS egress rules added to it, and "
                    "egress is wider than the network's own EFA group; import or create it with allow_all_outbound=False "
                    "(the EFA self rules are separate resources and are kept either way)",
                )
        if security_group is None:
            security_group = ec2.SecurityGroup(
                self,
                "Group",
                vpc=vpc,
                description=description,
                allow_all_outbound=False,  # see module docstring: True would drop the self egress rule
            )
            Tags.of(security_group).add(ROLE_TAG_KEY, ROLE_TAG_VALUE)
        self.security_group: ec2.ISecurityGroup = security_group
        add_self_rules(self, "Efa", security_group)

        for endpoint_group in endpoint_security_groups:
            security_group.add_egress_rule(endpoint_group, HTTPS, "HTTPS to VPC interface endpoints")
        if s3_prefix_list_id:
            security_group.add_egress_rule(ec2.Peer.prefix_list(s3_prefix_list_id), HTTPS, "HTTPS to S3 through the gateway endpoint")
        if allow_https_to_anywhere:
            security_group.add_egress_rule(ec2.Peer.any_ipv4(), HTTPS, "HTTPS to AWS APIs through the NAT gateway")

    @property
    def connections(self) -> ec2.Connections:
        return self.security_group.connections

    @property
    def security_group_id(self) -> str:
        return self.security_group.security_group_id

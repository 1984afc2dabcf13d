"""SMDDP-SG1 / SMDDP-SG2: every training group allows all traffic from and to itself.

The guide's "job stalls at initialization on EFA instances": EFA's SRD traffic is not
TCP, so only an all-protocol (``IpProtocol: -1``) rule whose peer is the group itself lets
instances reach each other. Egress to 0.0.0.0/0 does not cover it; AWS's EFA setup asks
for an explicit self egress rule. If a job uses several groups, each needs both rules.
"""

from __future__ import annotations

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.groups import EGRESS, INGRESS, SecurityGroups
from smddp_infra.rules.model import TemplateModel
from smddp_infra.rules.training import training_groups


def security_groups(model: TemplateModel) -> SecurityGroups:
    return model.memo("security_groups", SecurityGroups)


def _training_groups(model: TemplateModel) -> dict[str, str]:
    return model.memo("training_groups", lambda m: training_groups(m, security_groups(m)))


def _has_self_rule(groups: SecurityGroups, group: str, direction: str) -> bool:
    return any(p.all_traffic and p.peer_group == group for p in groups.of(group, direction))


def check_self_ingress(model: TemplateModel) -> list[Finding]:
    groups = security_groups(model)
    findings = []
    for group, reason in _training_groups(model).items():
        if not _has_self_rule(groups, group, "ingress"):
            findings.append(
                SELF_INGRESS.finding(
                    group,
                    f"training security group {group} ({reason}) has no all-traffic ingress rule from itself: "
                    f"add an {INGRESS} with GroupId and SourceSecurityGroupId both !GetAtt {group}.GroupId and IpProtocol -1",
                    "Properties",
                )
            )
    return findings


def check_self_egress(model: TemplateModel) -> list[Finding]:
    groups = security_groups(model)
    findings = []
    for group, reason in _training_groups(model).items():
        if _has_self_rule(groups, group, "egress"):
            continue
        note = ""
        if any(p.all_traffic and p.cidr in ("0.0.0.0/0", "::/0") for p in groups.of(group, "egress")):
            note = " (its egress to 0.0.0.0/0 does not count: EFA needs the group itself as destination)"
        findings.append(
            SELF_EGRESS.finding(
                group,
                f"training security group {group} ({reason}) has no all-traffic egress rule to itself{note}: "
                f"add an {EGRESS} with GroupId and DestinationSecurityGroupId both !GetAtt {group}.GroupId and IpProtocol -1",
                "Properties",
            )
        )
    return findings


_SYMPTOM = "job stalls at initialization on EFA instances"

SELF_INGRESS = Rule(
    id="SMDDP-SG1",
    severity=Severity.ERROR,
    cfn_lint_id="E9101",
    title="Training security group lacks all-traffic ingress from itself",
    explanation="Add an ingress rule with IpProtocol -1 whose source is the group itself (EFA traffic is not TCP).",
    symptom=_SYMPTOM,
    check=check_self_ingress,
)

SELF_EGRESS = Rule(
    id="SMDDP-SG2",
    severity=Severity.ERROR,
    cfn_lint_id="E9102",
    title="Training security group lacks all-traffic egress to itself",
    explanation="Add an egress rule with IpProtocol -1 whose destination is the group itself; egress to 0.0.0.0/0 does not count for EFA.",
    symptom=_SYMPTOM,
    check=check_self_egress,
)

RULES = (SELF_INGRESS, SELF_EGRESS)

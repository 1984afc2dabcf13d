"""SMDDP-SG1 / SG2 (errors) and SG3 (warning): all traffic to and from the training groups.

The guide's "job stalls at initialization on EFA instances": EFA's SRD traffic is not TCP,
so only all-protocol (``IpProtocol: -1``) rules whose peer is a security group on the
instances let them reach each other. Egress to 0.0.0.0/0 does not cover it: AWS's EFA
setup asks for egress to the group itself.

AWS evaluates the groups on a network interface as a union: traffic flows when any group
on the sender allows the egress and any group on the receiver allows the ingress. So an
*attachment* (a training resource and the groups on it, see
:mod:`smddp_infra.rules.training`) passes SG1 when some group on it has an all-traffic
ingress rule whose source is a group on the same attachment, and SG2 likewise for egress;
one EFA group with both self rules is enough, other groups on the same interfaces need
nothing. The finding names the attachment and its groups.

Unknown is not missing: a group the template does not define (a literal ``sg-...``, an
import, a parameter), an undecided ``Fn::If`` or a rule resource under an undecided
``Condition`` could supply the rule, so the verdict is then *unknown* (an SMDDP-INFO1
note), never an error. A group that only its name suggests is an EFA group (nothing in the
template carries it) is SMDDP-SG3, an informational note: names never outweigh rules and
attachments, and a group the template attaches to a file system or endpoints is not judged.
"""

from __future__ import annotations

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.groups import ALL, EGRESS, INGRESS, SecurityGroups, security_groups
from smddp_infra.rules.handoff import launch_targets
from smddp_infra.rules.model import World
from smddp_infra.rules.training import Attachment, attachments
from smddp_infra.rules.unresolved import UNRESOLVED

PASS, FAIL, UNKNOWN_VERDICT = "pass", "fail", "unknown"


def self_verdict(groups: SecurityGroups, attachment: Attachment, direction: str) -> tuple[str, str]:
    """("pass" | "fail" | "unknown", what was unresolved) for one direction of one attachment."""
    if attachment.groups is None:
        return UNKNOWN_VERDICT, f"its security groups ({attachment.unresolved_list}) are not resolved by the template"
    if not attachment.groups:
        return UNKNOWN_VERDICT, "it lists no security group, so the VPC's default group (not in the template) applies"
    members = set(attachment.template_groups) & set(groups.groups)
    others = attachment.other_groups + tuple(sorted(set(attachment.template_groups) - members))
    maybe: list[str] = []
    for group in sorted(members):
        for p in groups.of(group, direction):
            if p.protocol not in (ALL, "?"):
                continue
            if p.peer_group in members:
                if p.all_traffic and p.certain:
                    return PASS, ""
                maybe.append(f"{p.declared_in} (its condition or protocol is undecided)")
            elif p.peer_unresolved and (others or set(p.peer_candidates) & members):
                maybe.append(f"{p.declared_in} (peer {p.peer_unresolved})")
    if others:
        return UNKNOWN_VERDICT, f"its rules may come from {', '.join(others)}, which the template does not define"
    if maybe:
        return UNKNOWN_VERDICT, "it depends on " + ", ".join(maybe)
    if not attachment.certain:
        return UNKNOWN_VERDICT, f"{attachment.resource} exists only under an undecided Condition"
    return FAIL, ""


def self_rule(direction: str) -> str:
    """The self rule a group lacks in ``direction``, in words (SG3 and SG4 name it the same way)."""
    return "all-traffic ingress from itself" if direction == "ingress" else "all-traffic egress to itself"


def self_rule_fix(direction: str, group: str) -> str:
    """The rule resource that adds ``group``'s self rule in ``direction`` (SG1-SG4 give the same fix)."""
    if direction == "ingress":
        return f"add an {INGRESS} with GroupId and SourceSecurityGroupId both !GetAtt {group}.GroupId and IpProtocol -1"
    return f"add an {EGRESS} with GroupId and DestinationSecurityGroupId both !GetAtt {group}.GroupId and IpProtocol -1"


def egresses_anywhere(groups: SecurityGroups, names: tuple[str, ...]) -> bool:
    """Some group of ``names`` allows all traffic out to 0.0.0.0/0 or ::/0, which SG1-SG4 point
    out because it does not count for EFA (the destination must be a group)."""
    return any(p.all_traffic and p.cidr in ("0.0.0.0/0", "::/0") for g in names for p in groups.of(g, "egress"))


def _egress_note(groups: SecurityGroups, attachment: Attachment) -> str:
    if egresses_anywhere(groups, attachment.template_groups):
        return " (egress to 0.0.0.0/0 does not count: EFA needs a security group as destination)"
    return ""


def _check(world: World, direction: str, rule: Rule) -> list[Finding]:
    groups = security_groups(world)
    findings: list[Finding] = []
    word = "ingress from" if direction == "ingress" else "egress to"
    failing: dict[str, list[Attachment]] = {}
    for attachment in attachments(world):
        if attachment.evidence != "strong":
            continue
        verdict, why = self_verdict(groups, attachment, direction)
        if verdict == FAIL:
            failing.setdefault(attachment.resource, []).append(attachment)
        elif verdict == UNKNOWN_VERDICT:
            findings.append(
                UNRESOLVED.finding(
                    attachment.resource,
                    f"{rule.id} not judged for {attachment.what}: {why}",
                    *attachment.path,
                )
            )
    for resource, failed in failing.items():  # one finding per resource, naming each attachment
        target = failed[0].template_groups[0]
        note = "".join(dict.fromkeys(_egress_note(groups, a) for a in failed)) if direction == "egress" else ""
        carried = "; ".join(f"{a.what} carries {a.describe_groups()}" for a in failed)
        findings.append(
            rule.finding(
                resource,
                f"{carried}, and none of them allows all-traffic {word} a group on it{note}: "
                f"{self_rule_fix(direction, target)} (one EFA group with both self rules is enough)",
                *failed[0].path,
            )
        )
    return findings


def check_self_ingress(world: World) -> list[Finding]:
    return _check(world, "ingress", SELF_INGRESS)


def check_self_egress(world: World) -> list[Finding]:
    return _check(world, "egress", SELF_EGRESS)


def check_named_groups(world: World) -> list[Finding]:
    groups = security_groups(world)
    handed_out = launch_targets(world)  # SG4 judges those: one finding per problem
    findings = []
    for attachment in attachments(world):
        if attachment.evidence != "weak" or attachment.resource in handed_out:
            continue
        missing = [d for d in ("ingress", "egress") if self_verdict(groups, attachment, d)[0] == FAIL]
        if missing:
            group = attachment.template_groups[0]
            wording = " and ".join(self_rule(d) for d in missing)
            findings.append(
                NAMED_GROUP.finding(
                    group,
                    f"{attachment.what} has no {wording}; nothing in this template carries it, so only its name suggests "
                    f"it is for EFA instances: if EFA instances elsewhere use it, "
                    + "; ".join(self_rule_fix(d, group) for d in missing),
                    "Properties",
                )
            )
    return findings


_SYMPTOM = "job stalls at initialization on EFA instances"
_EFA_SOURCE = (
    "Amazon EC2 User Guide, 'Get started with EFA and NCCL for ML workloads on Amazon EC2', step 'Prepare an "
    "EFA-enabled security group' (allow all inbound and all outbound traffic to and from the group itself); SageMaker "
    "Developer Guide, SMDDP troubleshooting (data-parallel-troubleshooting), the entry on jobs that stall at "
    "initialization on EFA instances (the same self rules)."
)

SELF_INGRESS = Rule(
    id="SMDDP-SG1",
    severity=Severity.ERROR,
    cfn_lint_id="E9101",
    title="No security group on a training resource allows all-traffic ingress from a group on it",
    explanation="Give one group on the training instances an IpProtocol -1 ingress rule whose source is the group itself (EFA traffic is not TCP).",
    symptom=_SYMPTOM,
    check=check_self_ingress,
    source=_EFA_SOURCE,
)

SELF_EGRESS = Rule(
    id="SMDDP-SG2",
    severity=Severity.ERROR,
    cfn_lint_id="E9102",
    title="No security group on a training resource allows all-traffic egress to a group on it",
    explanation="Give one group on the training instances an IpProtocol -1 egress rule whose destination is the group itself; egress to 0.0.0.0/0 does not count for EFA.",
    symptom=_SYMPTOM,
    check=check_self_egress,
    source=_EFA_SOURCE,
)

NAMED_GROUP = Rule(
    id="SMDDP-SG3",
    severity=Severity.INFO,
    cfn_lint_id="I9103",
    title="Group named for EFA/training, carried by nothing in this template, lacks all-traffic self rules",
    explanation="If training instances use this group, add IpProtocol -1 ingress from and egress to itself.",
    symptom=_SYMPTOM,
    check=check_named_groups,
    source=_EFA_SOURCE + " Whether instances use the group is not in the template (information only).",
)

RULES = (SELF_INGRESS, SELF_EGRESS, NAMED_GROUP)

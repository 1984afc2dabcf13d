"""SMDDP-SG4 and SMDDP-NET5 (warnings): what a template hands to training jobs outside it.

A template that builds the network and hands its group and subnet to jobs started elsewhere
(see :mod:`.handoff`) decides whether those jobs stall, but no training resource in the
template carries the group, so SG1/SG2 (errors, which need a carrier) cannot judge it.

* SG4: a launch-target group without all-traffic ingress from itself or egress to itself.
  SageMaker's VPC page for training: in distributed training the job's group must allow
  inbound connections between members of the same group; for EFA instances the guide asks
  for all traffic in AND out to the group itself. Whether the jobs started with it are
  multi-instance or EFA is outside the template: a warning that names the hand-out and the
  words that say what it is for. Where a training resource of the template carries the
  group, SG1/SG2 judge it (errors) and SG4 stays silent.
* NET5: a launch-target subnet whose route tables reach S3 through neither a gateway
  endpoint nor NAT. Where SageMaker trains in it, the job fails downloading data or uploading
  artifacts (the consequence NET2 cites); that jobs are started in it is the hand-out's word,
  not a resource: a warning.

A verdict the template cannot decide (an import, a parameter, an undecided Condition) is an
SMDDP-INFO1 note, never a pass.
"""

from __future__ import annotations

from smddp_infra.rules.efa_rules import FAIL, UNKNOWN_VERDICT, egresses_anywhere, self_rule, self_rule_fix, self_verdict
from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.groups import SECURITY_GROUP, GroupRef, security_groups
from smddp_infra.rules.handoff import SUBNET, launch_targets
from smddp_infra.rules.model import World
from smddp_infra.rules.training import Attachment, attachments, training_subnets
from smddp_infra.rules.unresolved import UNRESOLVED
from smddp_infra.rules.vpc import endpoint_service, network_of


def _carried(world: World) -> set[str]:
    """Groups a training resource of the template carries for certain (SG1/SG2 judge them)."""
    return {g for a in attachments(world) if a.evidence == "strong" and a.certain for g in a.template_groups}


def check_launch_groups(world: World) -> list[Finding]:
    groups = security_groups(world)
    carried = _carried(world)
    findings: list[Finding] = []
    for name, target in launch_targets(world).items():
        if target.type != SECURITY_GROUP or name in carried or name not in groups.groups:
            continue
        attachment = Attachment(name, f"group {name}", (GroupRef(name),), None, world.exists(world.resources[name]) is True, "launch")
        verdicts = {d: self_verdict(groups, attachment, d) for d in ("ingress", "egress")}
        missing = [d for d, (verdict, _) in verdicts.items() if verdict == FAIL]
        unknown = [f"{d}: {why}" for d, (verdict, why) in verdicts.items() if verdict == UNKNOWN_VERDICT]
        if missing:
            wording = " and no ".join(self_rule(d) for d in missing)
            fixes = "; ".join(self_rule_fix(d, name) for d in missing)
            egress_note = ""
            if "egress" in missing and egresses_anywhere(groups, (name,)):
                egress_note = " (its egress to 0.0.0.0/0 does not count for EFA: the destination must be the group)"
            findings.append(
                LAUNCH_GROUP.finding(
                    name,
                    f"group {name} is {target.evidence()}, and has no {wording}{egress_note}: jobs started with it stall at "
                    f"initialization when they run on several instances (SageMaker needs ingress from the group itself) or "
                    f"on EFA instances (EFA needs both directions); {fixes}",
                    "Properties",
                )
            )
        elif unknown:
            findings.append(
                UNRESOLVED.finding(name, f"{LAUNCH_GROUP.id} not judged for group {name} ({target.evidence()}): " + "; ".join(unknown), "Properties")
            )
    return findings


def check_launch_subnets(world: World) -> list[Finding]:
    network = network_of(world)
    findings: list[Finding] = []
    judged = training_subnets(world)  # NET2/NET3 judge subnets that training resources use
    for name, target in launch_targets(world).items():
        if target.type != SUBNET or name in judged or world.exists(world.resources[name]) is not True:
            continue
        if network.unresolved_routes or not network.tables_of(name):
            findings.append(UNRESOLVED.finding(name, f"{LAUNCH_SUBNET.id} not judged for subnet {name} ({target.evidence()}): "
                                                     f"its route tables are not decided by the template", "Properties"))
            continue
        if network.has_nat(name) or network.has_s3_gateway(name):
            continue
        tables = ", ".join(sorted(network.tables_of(name)))
        findings.append(
            LAUNCH_SUBNET.finding(
                name,
                f"subnet {name} is {target.evidence()}, and its route table {tables} has neither an S3 gateway endpoint nor a "
                f"NAT route: a SageMaker job placed in it fails downloading its data or uploading its artifacts; add an "
                f"AWS::EC2::VPCEndpoint with ServiceName {endpoint_service(world, 's3')} and RouteTableIds [{tables}]",
                "Properties",
            )
        )
    return findings


_SG_SOURCE = (
    "SageMaker Developer Guide, 'Give SageMaker AI Training Jobs Access to Resources in Your Amazon VPC', section "
    "'Configure Your Private VPC for SageMaker AI Training' (distributed training: the group must allow inbound "
    "connections between members of the same group); SageMaker Developer Guide, SMDDP troubleshooting "
    "(data-parallel-troubleshooting), the entry on jobs that stall at initialization on EFA instances (all traffic in "
    "and out to the group itself). That jobs use the group is the template's hand-out, not a resource: a warning."
)

LAUNCH_GROUP = Rule(
    id="SMDDP-SG4",
    severity=Severity.WARNING,
    cfn_lint_id="W9104",
    title="Group handed out for training outside the template lacks all-traffic self rules",
    explanation="Give the group IpProtocol -1 ingress from itself and egress to itself, as SG1/SG2 ask of carried groups.",
    symptom="job stalls at initialization on EFA instances (and multi-instance jobs cannot connect)",
    check=check_launch_groups,
    source=_SG_SOURCE,
)

LAUNCH_SUBNET = Rule(
    id="SMDDP-NET5",
    severity=Severity.WARNING,
    cfn_lint_id="W9305",
    title="Subnet handed out for training outside the template has no route to S3",
    explanation="Attach an S3 gateway endpoint to the subnet's route table (or route 0.0.0.0/0 to a NAT gateway).",
    symptom="job fails downloading data or uploading artifacts: subnet's route table has no route to an S3 VPC endpoint or a NAT device",
    check=check_launch_subnets,
    source=(
        "SageMaker Developer Guide, 'Give SageMaker AI Training Jobs Access to Resources in Your Amazon VPC', section "
        "'Configure Your Private VPC for SageMaker AI Training' (the S3 endpoint; 'Please ensure that the subnet's route "
        "table has a route to an S3 VPC endpoint or a NAT device'). That jobs run in the subnet is the template's "
        "hand-out, not a resource: a warning."
    ),
)

RULES = (LAUNCH_GROUP, LAUNCH_SUBNET)

"""`review`'s HyperPod section shows task governance: per team its quota's instances, fair-share weight,
borrowing and preemption, and the cluster policy's priority classes; read from the construct's snapshot
(read-only) and from a hand-written fixture whose quota names a cluster outside the template."""

from __future__ import annotations

import json
from pathlib import Path

from _rules_helpers import load
from smddp_infra.review.summary import _hyperpod_section
from smddp_infra.review.template import TemplateView

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "hyperpod" / "HyperPodEksGovernance.template.json"


def _section(template: dict) -> str:
    return "\n".join(_hyperpod_section(TemplateView(template), "##"))


def test_the_summary_lists_each_team_with_instances_borrowing_and_preemption() -> None:
    text = _section(json.loads(SNAPSHOT.read_text()))
    assert "| product | GovernanceTeamproductQuota8F061DA0 | ml.m5.2xlarge x 1, ml.p5.48xlarge x 2 | 40 | Lend | Never |" in text
    assert ("| research | GovernanceTeamresearchQuota45AE05AD | ml.p5.48xlarge x 4 | 60 | LendAndBorrow, borrows up to "
            "100 %, at most ml.p5.48xlarge x 2 | LowerPriority |") in text


def test_the_summary_gives_the_policys_priority_classes_under_its_cluster() -> None:
    text = _section(json.loads(SNAPSHOT.read_text()))
    policy = "Task governance policy GovernanceSchedulerConfigCFF9C519: fair share Enabled; priority classes " \
             "inference (weight 100), training (weight 50)."
    assert policy in text and text.index("Address plan:") < text.index(policy)


def test_what_a_quota_does_not_write_is_shown_with_the_services_default_and_an_outside_cluster_is_said() -> None:
    text = _section(load("i42_governance_not_evaluated.yaml"))
    assert "| research | Research | ml.p5.48xlarge x 8 | not written | LendAndBorrow, borrows up to 50 % (the service's " \
           "default) | LowerPriority (the service's default) |" in text
    outside = text.split("Task governance on a cluster outside this template:", 1)
    assert len(outside) == 2 and "| elsewhere | Elsewhere | ml.p4d.24xlarge x 1 |" in outside[1]
    assert "| elsewhere |" not in outside[0]


def test_a_template_with_governance_only_still_gets_the_section() -> None:
    template = load("i42_governance_not_evaluated.yaml")
    del template["Resources"]["HyperPod"], template["Resources"]["Research"]
    text = _section(template)
    assert text.startswith("## HyperPod clusters (0)") and "| elsewhere | Elsewhere |" in text

"""Issue 10, point 9: the review pack and the rules read templates through ONE model.

The reviewer's tables (security-group rules, who carries a group, file-system sizing, the
diagram's training groups) come from smddp_infra.rules.model/groups/training, so where a
template uses conditions or Fn::If the review shows what the checks judge.
"""

from __future__ import annotations

from _rules_helpers import load


def _view(name: str):
    from smddp_infra.review.template import TemplateView

    return TemplateView(load(name))


def test_review_rules_are_the_models_permissions_including_fn_if_group_ids() -> None:
    from smddp_infra.review.network import security_group_rules
    from smddp_infra.rules.groups import security_groups

    view = _view("p1_if_group_bad.yaml")  # SelfIn's GroupId is an Fn::If that picks NewSG
    rows = {(r.group, r.direction, r.defined_by, r.peer_group) for r in security_group_rules(view)}
    assert ("NewSG", "ingress", "SelfIn", "NewSG") in rows and ("NewSG", "egress", "AnyOut", None) in rows
    model = {(p.group, p.direction, p.declared_in) for p in security_groups(view.model.world()).all_permissions() if not p.implicit}
    assert {(g, d, by) for g, d, by, _ in rows} == model


def test_review_members_see_groups_on_launch_template_interfaces() -> None:
    from smddp_infra.review.network import group_members

    members = group_members(_view("p3_union_ok.yaml"))
    assert members == {"AppSG": ["ComputeTemplate"], "EfaSG": ["ComputeTemplate"]}


def test_review_sizing_reads_settings_as_fsx1_does() -> None:
    from smddp_infra.review.filesystems import file_system_sizing

    (efa_off,) = file_system_sizing(_view("p5_efa_if_ok.yaml"))  # EfaEnabled: !If [UseEfa, true, false], default false
    assert (efa_off.deployment_type, efa_off.capacity_gib, efa_off.efa_enabled, efa_off.tier_key) == ("PERSISTENT_2", 38400, False, "PERSISTENT_2/125")
    (tiering,) = file_system_sizing(_view("p5_intelligent_tiering_ok.yaml"))
    assert tiering.storage_type == "INTELLIGENT_TIERING" and "Intelligent-Tiering" in tiering.note


def test_diagram_training_groups_are_the_rules_strong_attachments() -> None:
    from smddp_infra.review.diagram import _training_groups

    assert _training_groups(_view("p3_union_ok.yaml")) == ["EfaSG", "AppSG"]  # template order
    assert _training_groups(_view("p4_named_only_warn.yaml")) == []  # a name is weak evidence


def test_endpoint_service_names_use_the_rules_reading() -> None:
    from smddp_infra.review.network import endpoints

    services = {e.service for e in endpoints(_view("compliant.yaml"))}
    assert {"s3", "sts", "logs", "sagemaker.api"} <= services

"""SMDDP-GOV1/GOV2/GOV3 through `smddp-infra check`, in-process: task governance judged on any template by the
functions the TaskGovernance construct validates with (smddp_infra.hyperpod.governance). One fixture per
pattern under tests/fixtures/templates (i42_governance_*.yaml, also on the shared case list), and the
construct's own snapshot, which must pass."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from _rules_helpers import FIXTURES, load
from smddp_infra.cli import main
from smddp_infra.rules import check_template

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "hyperpod" / "HyperPodEksGovernance.template.json"


def check(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", "--json", *(str(p) for p in paths)])
    payload = json.loads(capsys.readouterr().out)
    return code, [f for t in payload["templates"] for f in t["findings"] if f["rule"].startswith(("SMDDP-GOV", "SMDDP-INFO1"))]


def test_a_quota_for_a_type_the_cluster_lacks_is_an_error_naming_the_type_and_the_clusters_types(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, [finding] = check(capsys, FIXTURES / "i42_governance_quota_type.yaml")
    assert code == 1 and (finding["rule"], finding["severity"], finding["resource"]) == ("SMDDP-GOV1", "error", "Research")
    assert "cluster HyperPod has no instance group of ml.p4d.24xlarge (its groups' types: ml.p5.48xlarge)" in finding["message"]
    assert "team research on HyperPod cluster HyperPod" in finding["message"]
    assert finding["path"][:3] == ["Properties", "ComputeQuotaConfig", "ComputeQuotaResources"]


def test_quotas_past_the_clusters_instances_are_one_unconfirmed_warning_on_the_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    code, [finding] = check(capsys, FIXTURES / "i42_governance_overcommit.yaml")
    assert code == 0 and (finding["rule"], finding["severity"], finding["resource"]) == ("SMDDP-GOV2", "warning", "HyperPod")
    # Ref and GetAtt both name the cluster; the flexible group counts under each of its types (g5 quotas fit)
    assert "ml.p5.48xlarge add up to 6 (research 4, product 2), more than cluster HyperPod's 4" in finding["message"]
    assert "UNCONFIRMED" in finding["message"] and "g5" not in finding["message"]


def test_governance_on_a_slurm_cluster_is_one_error_naming_every_governance_resource(capsys: pytest.CaptureFixture[str]) -> None:
    code, [finding] = check(capsys, FIXTURES / "i42_governance_slurm.yaml")
    assert code == 1 and (finding["rule"], finding["severity"], finding["resource"]) == ("SMDDP-GOV3", "error", "HyperPod")
    assert "not EKS-orchestrated" in finding["message"] and "Research" in finding["message"] and "Policy" in finding["message"]


def test_a_cluster_without_an_orchestrator_is_slurm_and_an_undecided_one_is_not_judged() -> None:
    template = load("i42_governance_quota_type.yaml")
    cluster = template["Resources"]["HyperPod"]["Properties"]
    del cluster["Orchestrator"]
    assert [(f.rule_id, f.resource) for f in check_template(template) if f.rule_id.startswith("SMDDP-GOV")] == [("SMDDP-GOV3", "HyperPod")]
    template["Parameters"] = {"Eks": {"Type": "String"}}
    cluster["Orchestrator"] = {"Fn::If": ["Undecided", {"Eks": {"ClusterArn": {"Ref": "Eks"}}}, {"Slurm": {}}]}
    found = [(f.rule_id, f.severity.value) for f in check_template(template) if f.rule_id.startswith(("SMDDP-GOV", "SMDDP-INFO1"))]
    assert ("SMDDP-GOV3", "error") not in found and ("SMDDP-INFO1", "info") in found
    assert ("SMDDP-GOV1", "error") in found  # the types are still the template's: judged


def test_what_the_template_does_not_decide_is_an_info_note_never_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = check(capsys, FIXTURES / "i42_governance_not_evaluated.yaml")
    assert code == 0 and {(f["rule"], f["severity"], f["resource"]) for f in found} == {
        ("SMDDP-INFO1", "info", "HyperPod"), ("SMDDP-INFO1", "info", "Elsewhere")}
    by_resource = {f["resource"]: f["message"] for f in found}
    assert "SMDDP-GOV2 not judged for cluster HyperPod" in by_resource["HyperPod"] and "InstanceCount" in by_resource["HyperPod"]
    assert "cluster/abcdef012345 is not in this template" in by_resource["Elsewhere"]


def test_an_undecided_quota_type_is_a_note_and_the_decided_ones_are_still_judged() -> None:
    template = load("i42_governance_quota_type.yaml")
    template["Parameters"] = {"Type": {"Type": "String"}}
    template["Resources"]["Research"]["Properties"]["ComputeQuotaConfig"]["ComputeQuotaResources"].append(
        {"InstanceType": {"Ref": "Type"}, "Count": 1})
    found = {(f.rule_id, f.resource) for f in check_template(template)}
    assert found >= {("SMDDP-GOV1", "Research"), ("SMDDP-INFO1", "Research")}


def test_the_task_governance_constructs_snapshot_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, found = check(capsys, SNAPSHOT)
    assert [f for f in found if f["rule"].startswith("SMDDP-GOV")] == []


def test_the_snapshot_with_a_team_quota_raised_past_the_cluster_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = copy.deepcopy(json.loads(SNAPSHOT.read_text()))
    quota = template["Resources"]["GovernanceTeamresearchQuota45AE05AD"]["Properties"]["ComputeQuotaConfig"]
    quota["ComputeQuotaResources"][0]["Count"] = 5  # research 5 + product 2 > the train group's 6
    path = tmp_path / "Raised.template.json"
    path.write_text(json.dumps(template))
    _code, found = check(capsys, path)
    assert [(f["rule"], f["resource"]) for f in found if f["rule"].startswith("SMDDP-GOV")] == [("SMDDP-GOV2", "HyperPodCluster11759092")]

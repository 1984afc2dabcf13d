"""Every rule against its compliant and non-compliant fixture templates (YAML and JSON).

Each fixture's findings are pinned EXACTLY as (rule id, resource): a rule that stops
firing, or starts firing where it should not, fails here.
"""

from __future__ import annotations

import pytest

from _rules_helpers import hits, load

EXPECTED = {
    "compliant.yaml": set(),
    "compliant.json": set(),
    # SMDDP-SG1 / SG2
    "sg_inline.yaml": {("SMDDP-SG1", "EfaGroup"), ("SMDDP-SG2", "EfaGroup")},
    "sg_separate.yaml": {("SMDDP-SG1", "WorkerGroup"), ("SMDDP-SG2", "WorkerGroup")},
    "sg_egress_missing.json": {("SMDDP-SG2", "TrainingGroup")},
    # SMDDP-FSX1
    "fsx_invalid.yaml": {
        ("SMDDP-FSX1", "ParameterisedFileSystem"),
        ("SMDDP-FSX1", "OldVersionFileSystem"),
        ("SMDDP-FSX1", "NoThroughputFileSystem"),
    },
    "fsx_efa_no_metadata.json": {("SMDDP-FSX1", "EfaFileSystem")},
    "fsx_efa_ok.json": set(),
    # SMDDP-FSX2
    "fsx_throughput_low.yaml": {("SMDDP-FSX2", "FileSystem")},
    # SMDDP-FSX3 (GoodFileSystem's PortsGroup is compliant in the same template)
    "lustre_ports.yaml": {("SMDDP-FSX3", "StorageGroup")},
    # SMDDP-NET1
    "az_mismatch.yaml": {("SMDDP-NET1", "FileSystem")},
    "az_same_id.json": set(),
    # SMDDP-NET2 / NET3
    "no_s3_route.yaml": {("SMDDP-NET2", "TrainingSubnet"), ("SMDDP-NET3", "TrainingSubnet")},
    "nat_subnet.yaml": set(),
    # booleans written "Yes": EfaEnabled "Yes" makes FsxGroup a training group
    "yes_booleans.yaml": {("SMDDP-SG1", "FsxGroup"), ("SMDDP-SG2", "FsxGroup"), ("SMDDP-FSX3", "FsxGroup")},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings_are_exactly_the_expected_ones(name: str) -> None:
    assert hits(load(name)) == EXPECTED[name]


def test_every_rule_has_a_compliant_and_a_non_compliant_fixture() -> None:
    from smddp_infra.rules import RULES

    fired = {rule for found in EXPECTED.values() for rule, _ in found}
    assert fired == {rule.id for rule in RULES}
    assert any(not found for found in EXPECTED.values())


def test_yaml_and_json_forms_of_the_same_template_agree() -> None:
    yaml_template, json_template = load("compliant.yaml"), load("compliant.json")
    assert yaml_template["Resources"].keys() == json_template["Resources"].keys()
    assert hits(yaml_template) == hits(json_template) == set()


def test_fsx_findings_name_the_parameter_value_that_breaks() -> None:
    from smddp_infra.rules import check_template

    messages = [f.message for f in check_template(load("fsx_invalid.yaml")) if f.resource == "ParameterisedFileSystem"]
    assert any("parameter Capacity=1000" in m and "got 1000" in m for m in messages)
    assert any("parameter DeploymentType='SCRATCH_2'" in m and "PerUnitStorageThroughput is not settable" in m for m in messages)
    # the defaults (PERSISTENT_2, 2400) are valid, so no message blames that combination alone
    assert not any("Capacity=2400, parameter DeploymentType='PERSISTENT_2'" in m for m in messages)

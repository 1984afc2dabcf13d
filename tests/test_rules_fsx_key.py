"""SMDDP-FSX5: a customer KMS key on a SCRATCH FSx for Lustre file system, in any template."""

from __future__ import annotations

from typing import Any

import pytest

from smddp_infra.rules import RULES_BY_ID
from smddp_infra.rules.engine import check_template

KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _template(lustre: dict[str, Any], **extra: Any) -> dict[str, Any]:
    properties = {"FileSystemType": "LUSTRE", "StorageCapacity": 1200, "SubnetIds": ["subnet-0aa11bb22cc33dd44"],
                  "KmsKeyId": KEY, "LustreConfiguration": lustre}
    return {"Resources": {"Data": {"Type": "AWS::FSx::FileSystem", "Properties": properties}}, **extra}


def _fsx5(template: dict[str, Any]) -> list[Any]:
    return check_template(template, rules=[RULES_BY_ID["SMDDP-FSX5"]])


@pytest.mark.parametrize("lustre", [{"DeploymentType": "SCRATCH_2"}, {"DeploymentType": "SCRATCH_1"}, {}])
def test_a_key_on_a_scratch_file_system_is_an_error(lustre):
    (finding,) = _fsx5(_template(lustre))
    assert finding.severity.value == "error" and finding.resource == "Data" and finding.path == ("Properties", "KmsKeyId")
    assert "PERSISTENT_1 and PERSISTENT_2 only" in finding.message


@pytest.mark.parametrize("deployment", ["PERSISTENT_1", "PERSISTENT_2"])
def test_a_key_on_a_persistent_file_system_is_fine(deployment):
    assert _fsx5(_template({"DeploymentType": deployment, "PerUnitStorageThroughput": 125})) == []


def test_a_scratch_file_system_without_a_key_is_fine():
    template = _template({"DeploymentType": "SCRATCH_2"})
    del template["Resources"]["Data"]["Properties"]["KmsKeyId"]
    assert _fsx5(template) == []


def test_a_deployment_type_parameter_is_judged_for_the_scratch_assignment():
    template = _template({"DeploymentType": {"Ref": "DeploymentType"}},
                         Parameters={"DeploymentType": {"Type": "String", "AllowedValues": ["SCRATCH_2", "PERSISTENT_2"]}})
    (finding,) = _fsx5(template)
    assert finding.when == ({"DeploymentType": "SCRATCH_2"},)

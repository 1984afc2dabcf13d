"""A change that would REPLACE the file system, a bucket, the VPC or the training subnet fails here.

Baseline: the committed review template (docs/review/TrainingNetworkStack.template.yaml),
i.e. what was last reviewed. Replacement data comes from cfn-lint's bundled resource
schemas (createOnlyProperties) and the CDK CLI's own service spec (what `cdk diff` uses):
nothing is hand-listed. When a replacement is intended, regenerate docs/review
(`make review`) so the reviewer sees it in the diff.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from smddp_infra.review import load_assembly
from smddp_infra.review.replacement import GUARDED_TYPES, ReplacementData, find_replacements

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "review" / "TrainingNetworkStack.template.yaml"


@pytest.fixture(scope="module")
def data() -> ReplacementData:
    return ReplacementData(require_service_spec=True)


@pytest.fixture(scope="module")
def committed() -> dict:
    return yaml.safe_load(COMMITTED.read_text())


@pytest.fixture(scope="module")
def fresh(default_app) -> dict:
    return load_assembly(default_app.assembly.directory).stack("TrainingNetworkStack").reviewable_template()


def _only(template: dict, type_name: str) -> str:
    (logical_id,) = [k for k, v in template["Resources"].items() if v["Type"] == type_name]
    return logical_id


def _messages(old: dict, new: dict, data: ReplacementData) -> list[str]:
    return [r.message() for r in find_replacements(old, new, data=data)]


def test_fresh_template_replaces_nothing_the_review_guarded(committed, fresh, data):
    found = find_replacements(committed, fresh, data=data)
    assert not found, (
        "this change would REPLACE stateful resources (data loss / new ids); if intended, regenerate "
        "docs/review with `make review` and call it out in the review:\n" + "\n".join(r.message() for r in found)
    )


def test_guarded_resources_exist_in_the_baseline(committed):
    """Every guarded type but the KMS key (created only with smddp:kmsKey=create) is in the default app."""
    types = {v["Type"] for v in committed["Resources"].values()}
    assert set(GUARDED_TYPES) - {"AWS::KMS::Key"} <= types


@pytest.mark.parametrize(
    ("type_name", "path", "value", "named"),
    [
        ("AWS::FSx::FileSystem", ("SubnetIds",), [{"Ref": "SomeOtherSubnet"}], "SubnetIds"),
        ("AWS::FSx::FileSystem", ("LustreConfiguration", "DeploymentType"), "PERSISTENT_2", "LustreConfiguration.DeploymentType"),
        ("AWS::FSx::FileSystem", ("FileSystemTypeVersion",), "2.12", "FileSystemTypeVersion"),
        ("AWS::FSx::FileSystem", ("KmsKeyId",), "arn:aws:kms:us-east-1:111122223333:key/x", "KmsKeyId"),
        ("AWS::EC2::Subnet", ("CidrBlock",), "10.0.8.0/24", "CidrBlock"),
        ("AWS::EC2::Subnet", ("AvailabilityZone",), "us-east-1b", "AvailabilityZone"),
        ("AWS::EC2::VPC", ("CidrBlock",), "10.9.0.0/16", "CidrBlock"),
    ],
)
def test_guard_names_the_resource_and_the_replacing_property(committed, data, type_name, path, value, named):
    changed = copy.deepcopy(committed)
    logical_id = _only(changed, type_name)
    props = changed["Resources"][logical_id]["Properties"]
    for key in path[:-1]:
        props = props.setdefault(key, {})
    props[path[-1]] = value
    messages = _messages(committed, changed, data)
    assert any(m.startswith(f"{logical_id} ({type_name}") and f": {named}: " in m for m in messages), messages


def test_bucket_name_change_replaces_the_checkpoint_bucket(committed, data):
    changed = copy.deepcopy(committed)
    bucket = next(k for k, v in changed["Resources"].items() if v["Type"] == "AWS::S3::Bucket" and "Checkpoints" in k)
    changed["Resources"][bucket]["Properties"]["BucketName"] = "acme-checkpoints"
    messages = _messages(committed, changed, data)
    assert any(m.startswith(f"{bucket} (AWS::S3::Bucket") and ": BucketName: " in m for m in messages), messages


def test_renamed_construct_id_is_a_replacement(committed, data):
    changed = copy.deepcopy(committed)
    fs = _only(changed, "AWS::FSx::FileSystem")
    changed["Resources"]["RenamedFileSystem0000"] = changed["Resources"].pop(fs)
    messages = _messages(committed, changed, data)
    assert any(m.startswith(f"{fs} (AWS::FSx::FileSystem") and "(logical id)" in m for m in messages), messages


def test_replacing_the_efa_group_replaces_the_file_system_that_carries_it(committed, data):
    # GroupDescription is create-only: a new group id flows into FileSystem.SecurityGroupIds (create-only too).
    changed = copy.deepcopy(committed)
    group = next(k for k, v in changed["Resources"].items() if v["Type"] == "AWS::EC2::SecurityGroup" and "Efa" in k)
    changed["Resources"][group]["Properties"]["GroupDescription"] = "reworded"
    messages = _messages(committed, changed, data)
    fs = _only(changed, "AWS::FSx::FileSystem")
    assert any(m.startswith(fs) and "SecurityGroupIds" in m and group in m for m in messages), messages


def test_vpc_replacement_travels_to_the_subnet(committed, data):
    changed = copy.deepcopy(committed)
    changed["Resources"][_only(changed, "AWS::EC2::VPC")]["Properties"]["CidrBlock"] = "10.9.0.0/16"
    messages = _messages(committed, changed, data)
    subnet = _only(changed, "AWS::EC2::Subnet")
    assert any(m.startswith(subnet) and ": VpcId: refers to" in m for m in messages), messages


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda t, ids: t["Resources"][ids["sg"]]["Properties"].setdefault("Tags", []).append({"Key": "team", "Value": "ml"}), id="tag-on-sg"),
        pytest.param(lambda t, ids: t["Resources"][ids["fs"]]["Properties"].update(StorageCapacity=12000), id="fsx-capacity-grows"),
        pytest.param(lambda t, ids: t["Resources"][ids["fs"]]["Properties"]["LustreConfiguration"].update(DataCompressionType="NONE"), id="fsx-compression"),
        pytest.param(lambda t, ids: t["Resources"][ids["fs"]]["Properties"]["Tags"].append({"Key": "team", "Value": "ml"}), id="tag-on-fsx"),
    ],
)
def test_in_place_updates_pass(committed, data, mutate):
    changed = copy.deepcopy(committed)
    ids = {
        "sg": next(k for k, v in changed["Resources"].items() if v["Type"] == "AWS::EC2::SecurityGroup" and "Efa" in k),
        "fs": _only(changed, "AWS::FSx::FileSystem"),
    }
    mutate(changed, ids)
    assert changed != committed
    assert _messages(committed, changed, data) == []


def test_replacement_data_is_read_from_both_published_sources(data):
    fsx = {".".join(r.path): r.source for r in data.rules("AWS::FSx::FileSystem")}
    assert fsx["SubnetIds"].startswith("cfn-lint")
    assert fsx["LustreConfiguration.DeploymentType"].startswith("CDK service spec")  # absent from the registry schema
    assert fsx["LustreConfiguration.PerUnitStorageThroughput"].startswith("CDK service spec")
    assert "StorageCapacity" not in fsx  # grows in place
    assert len(data.sources) == 2

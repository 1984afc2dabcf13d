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
    """Every guarded type but the KMS key (created only with smddp:kmsKey=create), the HyperPod
    cluster (only with smddp:hyperpod=true; tests/test_hyperpod.py guards it) and the EKS cluster
    (only with HyperPodCluster(orchestrator="eks"); tests/test_hyperpod_eks.py guards it) and a team's
    compute quota (only with TaskGovernance; tests/test_task_governance.py guards it) is in the default app."""
    types = {v["Type"] for v in committed["Resources"].values()}
    assert set(GUARDED_TYPES) - {"AWS::KMS::Key", "AWS::SageMaker::Cluster", "AWS::EKS::Cluster",
                                 "AWS::SageMaker::ComputeQuota"} <= types


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


# --- the guard: meaning and advice (smddp-infra guard / make deploy) ---------------------------

from smddp_infra.review.replacement import guard, parse_template_text  # noqa: E402
from smddp_infra.sizing.planner import SIZING_METADATA, plan_lustre  # noqa: E402


def _with_tier(template: dict, deployment_type: str, per_unit, *, required: float, min_gib: float = 2000,
               capacity: int | None = None) -> dict:
    """The committed template with its file system switched to another tier, as a grown synth would be."""
    changed = copy.deepcopy(template)
    fs = changed["Resources"][_only(changed, "AWS::FSx::FileSystem")]
    lustre = fs["Properties"]["LustreConfiguration"]
    lustre["DeploymentType"] = deployment_type
    if per_unit is None:
        lustre.pop("PerUnitStorageThroughput", None)
    else:
        lustre["PerUnitStorageThroughput"] = per_unit
    if capacity is not None:
        fs["Properties"]["StorageCapacity"] = capacity
    fs["Metadata"][SIZING_METADATA] = {"deploymentType": deployment_type, "requiredThroughputMBps": required,
                                       "minCapacityGiB": min_gib, "chosenBy": "calculator"}
    return changed


def test_guard_passes_an_unchanged_template(committed, data):
    report = guard(committed, copy.deepcopy(committed), data=data)
    assert (report.findings, report.exit_code) == ((), 0)
    assert report.lines()[0].startswith("guard: no stateful resource")


def test_guard_refuses_the_calculators_new_type_and_names_the_in_place_plan(committed, data):
    grown = _with_tier(committed, "PERSISTENT_2", 1000, required=12800)
    report = guard(committed, grown, data=data)
    assert report.blocked and report.exit_code == 1
    (finding,) = report.findings
    text = "\n".join(finding.lines())
    assert finding.verb == "REPLACE" and finding.first.resource_type == "AWS::FSx::FileSystem"
    assert 'LustreConfiguration.DeploymentType: "SCRATCH_2" -> "PERSISTENT_2" requires replacement' in text
    assert "replaced by an EMPTY one" in text and "retained outside the stack and still billed" in text
    pinned = plan_lustre(12800, 2000, deployment_types=["SCRATCH_2"])
    assert "avoid: keep the deployed SCRATCH_2 and grow it in place: -c smddp:deploymentType=SCRATCH_2\n" in text + "\n"
    assert f"the pinned plan is {pinned.storage_capacity_gib:,} GiB" in text
    assert pinned.storage_capacity_gib == 67_200  # 12,800 MB/s at 200 MB/s/TiB, in 2,400 GiB steps


def test_a_per_unit_throughput_change_is_avoided_by_pinning_the_tier_the_app_then_builds(data, committed):
    from conftest import cdk_context
    from smddp_infra.settings import NetworkSettings
    from smddp_infra.schema import size_file_system

    deployed = _with_tier(committed, "PERSISTENT_2", 250, required=3000, capacity=14400)
    grown = _with_tier(committed, "PERSISTENT_2", 1000, required=12800, capacity=14400)
    (finding,) = guard(deployed, grown, data=data).findings
    avoid = " ".join(finding.avoid)
    context = "-c smddp:deploymentType=PERSISTENT_2 -c smddp:perUnitStorageThroughput=250"
    assert context in avoid
    # The advice is what the app really builds with that context: same tier, at least as large.
    settings = NetworkSettings.from_context(cdk_context(**{
        "smddp:requiredThroughputMBps": 12800, "smddp:datasetGiB": 2000,
        "smddp:deploymentType": "PERSISTENT_2", "smddp:perUnitStorageThroughput": 250}))
    plan = size_file_system(settings.spec)
    assert (plan.deployment_type, plan.per_unit_storage_throughput) == ("PERSISTENT_2", 250)
    assert f"the pinned plan is {plan.storage_capacity_gib:,} GiB" in avoid and plan.storage_capacity_gib > 14400


def test_a_capacity_shrink_fails_the_update_and_is_refused(committed, data):
    changed = copy.deepcopy(committed)
    fs = _only(changed, "AWS::FSx::FileSystem")
    old_gib = changed["Resources"][fs]["Properties"]["StorageCapacity"]
    changed["Resources"][fs]["Properties"]["StorageCapacity"] = 2400
    assert old_gib > 2400
    report = guard(committed, changed, data=data)
    (finding,) = report.findings
    assert finding.verb == "FAILS" and report.exit_code == 1
    assert "cannot shrink" in finding.lines()[1] and f"-c smddp:datasetGiB={old_gib}" in finding.avoid[0]


def test_the_file_systems_security_group_is_listed_with_the_file_system(committed, data):
    changed = copy.deepcopy(committed)
    group = next(k for k, v in changed["Resources"].items() if v["Type"] == "AWS::EC2::SecurityGroup" and "Efa" in k)
    endpoint_group = next(k for k, v in changed["Resources"].items()
                          if v["Type"] == "AWS::EC2::SecurityGroup" and "Endpoint" in k)
    changed["Resources"][group]["Properties"]["GroupDescription"] = "reworded"
    changed["Resources"][endpoint_group]["Properties"]["GroupDescription"] = "reworded too"
    report = guard(committed, changed, data=data)
    ids = [f.first.logical_id for f in report.findings]
    assert group in ids and _only(changed, "AWS::FSx::FileSystem") in ids
    assert endpoint_group not in ids  # no file system carries it: replaced, but not stateful
    (sg,) = [f for f in report.findings if f.first.logical_id == group]
    assert "the file system that carries it is replaced" in sg.meaning


def test_a_kms_key_that_disappears_is_a_guarded_deletion(committed, data):
    with_key = copy.deepcopy(committed)
    with_key["Resources"]["Key961B73FD"] = {"Type": "AWS::KMS::Key", "DeletionPolicy": "Retain",
                                            "Properties": {"EnableKeyRotation": True, "KeyPolicy": {}}}
    report = guard(with_key, committed, data=data)
    (finding,) = report.findings
    assert finding.verb == "DELETE" and finding.first.resource_type == "AWS::KMS::Key"
    assert "the old key is retained" in finding.meaning and "restore the construct id" in finding.avoid[0]


def test_meaning_follows_the_deployed_replace_policy(committed, data):
    deployed = copy.deepcopy(committed)
    fs = _only(deployed, "AWS::FSx::FileSystem")
    deployed["Resources"][fs].pop("UpdateReplacePolicy", None)
    grown = _with_tier(committed, "PERSISTENT_2", 1000, required=12800)
    (finding,) = guard(deployed, grown, data=data).findings
    assert "the old one is deleted with its data" in finding.meaning


def test_a_subnet_sized_by_the_old_rule_is_kept_with_max_instance_count(committed, data):
    """Upgrading: a network deployed with a count-sized /24 meets the new /20 default."""
    from smddp_infra.facts.subnets import FILE_SYSTEM_IPS, plan_subnet_mask

    deployed = copy.deepcopy(committed)
    subnet = _only(deployed, "AWS::EC2::Subnet")
    deployed["Resources"][subnet]["Properties"]["CidrBlock"] = "10.0.0.0/24"
    report = guard(deployed, committed, data=data)
    kinds = {f.first.resource_type: f for f in report.findings}
    assert {"AWS::EC2::Subnet", "AWS::FSx::FileSystem"} <= set(kinds)
    assert "refers to" in kinds["AWS::FSx::FileSystem"].first.reason
    assert "-c smddp:maxInstanceCount=22" in kinds["AWS::EC2::Subnet"].avoid[0]
    assert plan_subnet_mask(instances=22, other_ips=6 + FILE_SYSTEM_IPS) == 24
    assert plan_subnet_mask(instances=23, other_ips=6 + FILE_SYSTEM_IPS) == 23


def test_accepted_replacements_are_listed_but_pass(committed, data):
    report = guard(committed, _with_tier(committed, "PERSISTENT_2", 1000, required=12800), data=data, accepted=True)
    assert report.findings and report.exit_code == 0
    assert "ACCEPTED by smddp:allowReplacement=true" in report.lines()[-1]


def test_yaml_templates_with_short_form_tags_are_read():
    text = "Resources:\n  A:\n    Type: AWS::EC2::Subnet\n    Properties:\n      VpcId: !Ref Vpc\n      X: !GetAtt B.Arn\n      Y: !Sub 'a-${B}'\n"
    props = parse_template_text(text, where="t")["Resources"]["A"]["Properties"]
    assert props == {"VpcId": {"Ref": "Vpc"}, "X": {"Fn::GetAtt": ["B", "Arn"]}, "Y": {"Fn::Sub": "a-${B}"}}


def test_the_guard_reads_templates_with_the_rules_reader() -> None:
    """One reader for templates: ``!Condition`` is CloudFormation's ``Condition`` (as the rules read it)
    and a key written twice is refused, not silently overwritten by its second value."""
    from smddp_infra.errors import ConfigError
    from smddp_infra.review.replacement import parse_template_text

    template = parse_template_text("Resources:\n  A:\n    Type: AWS::S3::Bucket\n    Condition: C\n"
                                   "Conditions:\n  C: !And [!Condition D, !Condition E]\n", where="t.yaml")
    assert template["Conditions"]["C"] == {"Fn::And": [{"Condition": "D"}, {"Condition": "E"}]}
    with pytest.raises(ConfigError, match=r"^t.yaml is neither JSON nor YAML: key 'A' appears twice in one mapping"):
        parse_template_text("Resources:\n  A: {Type: AWS::S3::Bucket}\n  A: {Type: AWS::SNS::Topic}\n", where="t.yaml")

"""Every kind of plan the calculator emits is accepted by aws-cdk-lib's fsx.LustreFileSystem.

aws-cdk-lib validates StorageCapacity / PerUnitStorageThroughput per deployment type when a
LustreFileSystem is constructed and CloudFormation-validates the template at synth. A
diverse sample of emitted plans (every group, HDD, EFA steps, boundaries, huge sizes) goes
into ONE stack and ONE synth; the template must carry exactly the plans' values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smddp_infra.sizing import lustre_rules as rules
from smddp_infra.sizing.planner import LustrePlan, best_per_deployment_type, plan_lustre
from smddp_infra.sizing.prices import DEFAULT_PRICES

CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"

REQUIRED_MBPS = (1, 146.484375, 234.375, 300, 1_000, 4_687.5, 12_800, 25_600, 120_000)
MIN_CAPACITY_GIB = (0, 1_200, 2_401, 20_000, 150_000)
OPTIONS = (
    {},
    {"deployment_types": ["SCRATCH_2"]},
    {"deployment_types": ["PERSISTENT_1"]},
    {"deployment_types": ["PERSISTENT_1_HDD"]},
    {"deployment_types": ["SCRATCH_1"], "prices": {"SCRATCH_1": 0.14}},
    {"efa_enabled": True},
)


def _sample_plans() -> list[LustrePlan]:
    """Distinct emitted configurations (by the values CloudFormation sees), in a stable order."""
    seen: dict[tuple, LustrePlan] = {}
    for options in OPTIONS:
        for required in REQUIRED_MBPS:
            for min_capacity in MIN_CAPACITY_GIB:
                plans = [plan_lustre(required, min_capacity, **options)]
                if not options:
                    plans += best_per_deployment_type(required, min_capacity).values()
                for plan in plans:
                    key = (
                        plan.deployment_type,
                        plan.storage_type,
                        plan.storage_capacity_gib,
                        plan.per_unit_storage_throughput,
                        plan.efa_enabled,
                    )
                    seen.setdefault(key, plan)
    return list(seen.values())


SAMPLE = _sample_plans()


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """One App, one Stack, one LustreFileSystem per sampled plan, one synth."""
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_fsx as fsx

    context = json.loads(CDK_JSON.read_text())["context"]
    app = cdk.App(context=context, outdir=str(tmp_path_factory.mktemp("cdk.out")))
    stack = cdk.Stack(app, "SizingAccepts", env=cdk.Environment(account="111111111111", region="us-east-1"))
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"],
    )
    subnet = ec2.Subnet.from_subnet_attributes(
        stack, "Subnet", subnet_id="subnet-0123456789abcdef0", availability_zone="us-east-1a"
    )
    group = ec2.SecurityGroup(stack, "Lustre", vpc=vpc, allow_all_outbound=False, description="sizing acceptance")
    logical_ids: list[str] = []
    for index, plan in enumerate(SAMPLE):
        config = fsx.LustreConfiguration(
            deployment_type=getattr(fsx.LustreDeploymentType, plan.deployment_type),
            per_unit_storage_throughput=plan.per_unit_storage_throughput,
            drive_cache_type=getattr(fsx.DriveCacheType, plan.drive_cache_type) if plan.drive_cache_type else None,
        )
        file_system = fsx.LustreFileSystem(
            stack,
            f"Plan{index}",
            lustre_configuration=config,
            storage_capacity_gib=plan.storage_capacity_gib,
            storage_type=getattr(fsx.StorageType, plan.storage_type),
            file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
            vpc=vpc,
            vpc_subnet=subnet,
            security_group=group,
        )
        resource = file_system.node.default_child
        if plan.efa_enabled:
            # aws-cdk-lib has no efa_enabled / metadata_configuration props (REFERENCE section 3).
            resource.add_property_override("LustreConfiguration.EfaEnabled", True)
            resource.add_property_override("LustreConfiguration.MetadataConfiguration", {"Mode": "AUTOMATIC"})
        logical_ids.append(stack.get_logical_id(resource))
    assembly = app.synth()
    template = assembly.get_stack_artifact(stack.artifact_id).template
    resolved_ids = [stack.resolve(logical_id) for logical_id in logical_ids]
    return template, resolved_ids


def test_sample_is_diverse_enough_to_mean_something():
    groups = {(p.deployment_type, p.storage_type, p.efa_enabled) for p in SAMPLE}
    assert groups == {
        ("SCRATCH_1", "SSD", False),
        ("SCRATCH_2", "SSD", False),
        ("PERSISTENT_1", "SSD", False),
        ("PERSISTENT_1", "HDD", False),
        ("PERSISTENT_2", "SSD", False),
        ("PERSISTENT_2", "SSD", True),
    }
    assert 30 <= len(SAMPLE) <= 120
    capacities = {p.storage_capacity_gib for p in SAMPLE}
    assert {1200, 2400, 4800}.issubset(capacities)
    assert max(capacities) > rules.DEFAULT_REGIONAL_QUOTA_GIB
    throughputs = {p.per_unit_storage_throughput for p in SAMPLE}
    assert {None, 12, 40, 50, 100, 200, 125, 250, 500, 1000}.issubset(throughputs)


def test_every_sampled_plan_synthesizes_with_its_exact_values(synthesized):
    template, logical_ids = synthesized
    resources = template["Resources"]
    for plan, logical_id in zip(SAMPLE, logical_ids):
        resource = resources[logical_id]
        assert resource["Type"] == "AWS::FSx::FileSystem"
        props = resource["Properties"]
        lustre = props["LustreConfiguration"]
        assert props["StorageCapacity"] == plan.storage_capacity_gib, plan
        assert props["StorageType"] == plan.storage_type, plan
        assert props["FileSystemTypeVersion"] == rules.FILE_SYSTEM_TYPE_VERSION
        assert lustre["DeploymentType"] == plan.deployment_type, plan
        assert lustre.get("PerUnitStorageThroughput") == plan.per_unit_storage_throughput, plan
        assert lustre.get("DriveCacheType") == plan.drive_cache_type, plan
        assert lustre.get("EfaEnabled", False) is plan.efa_enabled, plan
        if plan.efa_enabled:
            assert lustre["MetadataConfiguration"] == {"Mode": "AUTOMATIC"}


def test_every_sampled_plan_is_valid_under_the_rule_table():
    for plan in SAMPLE:
        assert plan.problems() == [], plan


def test_every_default_priced_tier_appears_in_the_sample():
    keys = {p.tier_key for p in SAMPLE}
    assert set(DEFAULT_PRICES) <= keys

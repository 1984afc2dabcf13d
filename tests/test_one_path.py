"""One path: the app's context and the library's groups give the same plan and the same refusal.

The app reads the ``smddp:*`` keys into the schema and hands the spec to ``TrainingNetwork``; a
library user writes the groups. For every region kind (commercial, China, GovCloud) and option
that changes the file system or where it may live, both are built here and compared: the same
deployment type, capacity and tier, or the same one-line refusal in the words each user wrote
(the app's message with its keys read back as the fields they set).
"""

from __future__ import annotations

import re
from typing import Any

import aws_cdk as cdk
import pytest

from conftest import cdk_context
from smddp_infra.app_builder import build_app
from smddp_infra.constructs.training_network import TrainingNetwork
from smddp_infra.errors import ConfigError, SmddpError
from smddp_infra.schema import Jobs, Placement, Security, Storage, Workload
from smddp_infra.settings import _SPEC_NAMES, NetworkSettings

PREFIX_LIST = "pl-0123456789abcdef0"  # a prefix list id of the right shape: regions outside the built-in table
REGIONS = ["us-east-1", "cn-north-1", "us-gov-west-1"]
#: option -> (context keys, library group fields)
OPTIONS: dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]] = {
    "defaults": ({}, {}),
    "kms-create": ({"smddp:kmsKey": "create"}, {"security": {"create_encryption_key": True}}),
    "efa-file-system": ({"smddp:efaFileSystem": "true"}, {"storage": {"efa_file_system": True}}),
    "persistent-2": ({"smddp:deploymentType": "PERSISTENT_2"}, {"storage": {"deployment_types": ("PERSISTENT_2",)}}),
    "nat-gateway": ({"smddp:natGateway": "true"}, {"placement": {"nat_gateway": True}}),
    "eight-at-200": ({"smddp:instanceCount": "8", "smddp:readMBpsPerGpu": "200"},
                     {"workload": {"instance_count": 8, "read_mbps_per_gpu": 200}}),
}
#: Options whose answer depends on the partition, tried in every region; the rest in one region.
BY_PARTITION = ("defaults", "kms-create", "efa-file-system", "persistent-2")
MATRIX = [(r, o) for r in REGIONS for o in BY_PARTITION] + [("us-east-1", o) for o in OPTIONS if o not in BY_PARTITION]
#: What the matrix must show where the partitions differ (the issue's two build paths, two answers).
EXPECTED = {
    ("us-gov-west-1", "kms-create"): ("planned", "PERSISTENT_1"),  # GovCloud has no PERSISTENT_2
    ("us-gov-west-1", "efa-file-system"): ("refused", "smddp:efaFileSystem=True asks for a PERSISTENT_2 file system, "
                                                      "which the aws-us-gov partition (region us-gov-west-1) does not have"),
}


def _outcome(build: Any) -> tuple[str, Any]:
    try:
        network = build()
    except SmddpError as exc:
        return "refused", str(exc)
    plan = network.lustre_plan
    return "planned", (plan.deployment_type, plan.storage_capacity_gib, plan.per_unit_storage_throughput)


def _by_app(region: str, keys: dict[str, Any]) -> TrainingNetwork:
    context = cdk_context(**{"smddp:region": region, "smddp:availabilityZone": f"{region}a",
                             "smddp:s3PrefixListId": PREFIX_LIST, **keys})
    app = cdk.App(context=context)
    return build_app(app).network


def _by_library(region: str, groups: dict[str, dict[str, Any]]) -> TrainingNetwork:
    stack = cdk.Stack(cdk.App(), "Library", env=cdk.Environment(region=region))
    g = {name: dict(values) for name, values in groups.items()}
    return TrainingNetwork(
        stack, "TrainingNetwork",
        workload=Workload(**{"read_mbps_per_gpu": 50, "dataset_gib": 2000, **g.get("workload", {})}),
        placement=Placement(**{"availability_zone": f"{region}a", "s3_prefix_list_id": PREFIX_LIST,
                               **g.get("placement", {})}),
        storage=Storage(**g.get("storage", {})), security=Security(**g.get("security", {})), jobs=Jobs())


def _as_fields(message: str) -> str:
    """The app's message in the library's words: each context key read back as its field."""
    for field, key in sorted(_SPEC_NAMES.items(), key=lambda kv: -len(kv[1])):
        if key and not key.endswith("=create"):
            message = message.replace(key, field)
    return re.sub(r"=true\b", "=True", message)


@pytest.mark.parametrize(("region", "option"), MATRIX, ids=[f"{r}-{o}" for r, o in MATRIX])
def test_the_app_and_the_library_give_the_same_answer(region: str, option: str) -> None:
    keys, groups = OPTIONS[option]
    app_kind, app_answer = _outcome(lambda: _by_app(region, keys))
    lib_kind, lib_answer = _outcome(lambda: _by_library(region, groups))
    assert app_kind == lib_kind, (app_answer, lib_answer)
    if app_kind == "refused":
        assert _as_fields(app_answer) == lib_answer
        assert "smddp:" in app_answer  # the app's line names its keys
    else:
        assert app_answer == lib_answer
    if (region, option) in EXPECTED:
        kind, start = EXPECTED[region, option]
        assert app_kind == kind and str(app_answer[0] if kind == "planned" else app_answer).startswith(start)


def test_a_missing_prefix_list_names_the_context_key_from_the_app() -> None:
    context = cdk_context(**{"smddp:region": "us-gov-west-1", "smddp:availabilityZone": "us-gov-west-1a"})
    with pytest.raises(ConfigError) as caught:
        build_app(cdk.App(context=context))
    assert str(caught.value).startswith("smddp:s3PrefixListId is needed for HTTPS egress to the S3 gateway endpoint "
                                        "in region 'us-gov-west-1'")


def test_a_key_of_another_region_names_the_context_key() -> None:
    arn = "arn:aws:kms:us-west-2:123456789012:key/11111111-2222-3333-4444-555555555555"
    with pytest.raises(ConfigError, match=r"^smddp:kmsKey is in region us-west-2, the stack in us-east-1: KMS keys "
                                          r"are regional"):
        build_app(cdk.App(context=cdk_context(**{"smddp:kmsKey": arn})))


def test_hyperpod_where_the_partition_has_none_names_the_context_key() -> None:
    with pytest.raises(ConfigError) as caught:
        NetworkSettings.from_context(cdk_context(**{
            "smddp:region": "us-gov-west-1", "smddp:availabilityZone": "us-gov-west-1a", "smddp:hyperpod": "true",
            "smddp:s3PrefixListId": PREFIX_LIST}))
    assert str(caught.value).startswith("smddp:hyperpod=true cannot be deployed in smddp:region us-gov-west-1 "
                                        "(partition aws-us-gov)")


def test_the_app_builds_its_spec_once_and_the_network_uses_it_as_read() -> None:
    app = cdk.App(context=cdk_context())
    stack = build_app(app)
    assert stack.network.spec.jobs.job_config_output_id is not None
    assert stack.network.spec.names == stack.settings.spec.names  # the keys' names reached the construct
    assert stack.network.spec.workload is stack.settings.spec.workload  # the groups as read, not rebuilt


def test_the_old_flat_keyword_names_its_new_place() -> None:
    stack = cdk.Stack(cdk.App(), "Flat", env=cdk.Environment(region="us-east-1"))
    with pytest.raises(TypeError) as caught:
        TrainingNetwork(stack, "Network", instance_count=4)  # type: ignore[call-arg]
    assert str(caught.value) == "TrainingNetwork has no 'instance_count': it moved to workload=Workload(instance_count=...)"
    with pytest.raises(TypeError, match=r"^TrainingNetwork has no field 'workloads': did you mean 'workload'\?$"):
        TrainingNetwork(stack, "Network", workloads=Workload())  # type: ignore[call-arg]



def test_an_alarm_topic_of_another_region_names_the_context_key() -> None:
    """Values from another place are checked against the stack, in the words the app's user wrote
    (the construct's check names monitoring.alarm_topic; the same rule, facts.arns.alarm_topic_problem)."""
    arn = "arn:aws:sns:us-west-2:123456789012:alarms"
    with pytest.raises(ConfigError) as caught:
        NetworkSettings.from_context(cdk_context(**{"smddp:alarmTopicArn": arn}))
    assert str(caught.value) == (f"smddp:alarmTopicArn {arn} is in us-west-2 (aws), the stack in us-east-1 (aws): "
                                 "CloudWatch alarm actions must be in the alarm's Region; pass a topic of the stack's "
                                 "Region")
    same_region = arn.replace("us-west-2", "us-east-1")
    assert NetworkSettings.from_context(cdk_context(**{"smddp:alarmTopicArn": same_region})).alarm_topic_arn == same_region

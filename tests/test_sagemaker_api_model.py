"""What `smddp-infra job-config` emits is accepted by SageMaker's own API model (issue 4 §1).

For every representative cdk-outputs.json, the REAL CLI's output (subprocess) is embedded in
a complete CreateTrainingJob request and checked twice over the pinned botocore's `sagemaker`
service model: by botocore's validator (required/unknown members, types, minimums) and by the
shape walker in tests/_sagemaker_shape_walker.py (enums, maximums, list lengths, patterns:
what botocore skips and the service does not). The v3 pieces are mapped back to the API
members their names come from and checked the same way. Negative tests prove the harness
catches bad requests, including the ones botocore alone lets through.
"""

from __future__ import annotations

import copy

import pytest
from botocore import xform_name

from _jobconfig_helpers import CONFIG_IDS, OLDER_STACK_ID, PLAN_CONFIG_ID, USER_CHOSEN_OUTPUT, complete_request, emitted
from _sagemaker_shape_walker import all_problems, botocore_errors, sagemaker_operation, walk
from smddp_infra.contract import parse_document
from smddp_infra.jobconfig import create_training_job_fragment
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

INPUT = sagemaker_operation("CreateTrainingJob").input_shape


def good_request(config_id: str = "default-p4d") -> dict:
    return complete_request(emitted(config_id, "boto3"))


# --- the emitted requests are accepted ---------------------------------------------------------

@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_boto3_fragment_in_a_complete_request_passes_botocore_and_the_walker(config_id):
    request = good_request(config_id)
    assert botocore_errors(request) == ""
    assert walk(request, INPUT) == []


def test_the_plan_request_names_its_plan_and_passes_botocore():
    request = good_request(PLAN_CONFIG_ID)
    assert request["ResourceConfig"]["TrainingPlanArn"].split(":")[5].startswith("training-plan/")
    assert botocore_errors(request) == "" and walk(request, INPUT) == []


def test_job_config_checks_the_plan_arn_with_botocores_own_pattern():
    """One pattern, the API's: the validator's regex and length are botocore's shape metadata,
    and a value the walker refuses is one job-config refuses too."""
    from smddp_infra.jobconfig.validation import TRAINING_PLAN_ARN_LENGTH, TRAINING_PLAN_ARN_RE, training_plan_arn_problem

    shape = INPUT.members["ResourceConfig"].members["TrainingPlanArn"]
    assert TRAINING_PLAN_ARN_RE.pattern == shape.metadata["pattern"]
    assert TRAINING_PLAN_ARN_LENGTH == (shape.metadata["min"], shape.metadata["max"])
    for bad in ("arn:aws:sagemaker:us-east-1:123456789012:reserved-capacity/p5-16-node-x",
                "arn:aws:sagemaker:us-east-1:1234:training-plan/p5-16-node-reserved-2027",
                "arn:aws:sagemaker:us-east-1:123456789012:training-plans/p5-reserved"):
        request = good_request(PLAN_CONFIG_ID)
        request["ResourceConfig"]["TrainingPlanArn"] = bad
        assert all_problems(request), bad
        assert training_plan_arn_problem(bad) is not None, bad


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_boto3_fragment_says_what_the_troubleshooting_guide_needs(config_id):
    request = good_request(config_id)
    assert request["CheckpointConfig"]["LocalPath"] == "/opt/ml/checkpoints"
    assert request["CheckpointConfig"]["S3Uri"].endswith("/")
    channel = request["InputDataConfig"][0]
    assert channel["DataSource"]["FileSystemDataSource"]["FileSystemType"] == "FSxLustre"
    assert channel["InputMode"] == "File"
    assert "DebugHookConfig" not in request
    assert 1 <= len(request["VpcConfig"]["SecurityGroupIds"]) <= 5
    assert len(request["VpcConfig"]["Subnets"]) == 1  # EFA does not cross Availability Zones


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_model_artifacts_go_to_the_prefix_the_stack_publishes(config_id):
    """OutputDataConfig is required by the API; the fragment carries the stack's output prefix
    (the role may write only there), except for the older stack that has none."""
    fragment = emitted(config_id, "boto3")
    if config_id == OLDER_STACK_ID:
        assert "OutputDataConfig" not in fragment
        assert complete_request(fragment)["OutputDataConfig"] == {"S3OutputPath": USER_CHOSEN_OUTPUT}
        return
    output = fragment["OutputDataConfig"]["S3OutputPath"]
    assert output.startswith("s3://") and output.endswith("/")
    assert output != fragment["CheckpointConfig"]["S3Uri"]
    assert complete_request(fragment)["OutputDataConfig"] == fragment["OutputDataConfig"]


# The v3 pieces carry sagemaker-core field names, which are botocore's xform_name of the
# API members; each piece maps onto one part of the CreateTrainingJob request.
V3_TO_API = {
    "compute": "ResourceConfig",
    "stopping_condition": "StoppingCondition",
    "checkpoint_config": "CheckpointConfig",
    "output_data_config": "OutputDataConfig",  # absent for an older stack
}
NETWORKING_TO_API = {  # Networking = VpcConfig members + two top-level request members
    "subnets": ("VpcConfig", "Subnets"),
    "security_group_ids": ("VpcConfig", "SecurityGroupIds"),
    "enable_inter_container_traffic_encryption": (None, "EnableInterContainerTrafficEncryption"),
    "enable_network_isolation": (None, "EnableNetworkIsolation"),
}


def _api_member(shape, snake: str) -> str:
    by_snake = {xform_name(name): name for name in shape.members}
    assert snake in by_snake, f"{snake!r} is not a field of {shape.name}: {sorted(by_snake)}"
    return by_snake[snake]


def v3_to_request(pieces: dict) -> dict:
    """Rebuild the CreateTrainingJob members from the v3 pieces, failing on any field name
    that is not the snake_case of a real API member."""
    request: dict = {"RoleArn": pieces["role"]}
    for piece, api in V3_TO_API.items():
        if piece not in pieces:
            continue
        shape = INPUT.members[api]
        request[api] = {_api_member(shape, k): v for k, v in pieces[piece].items()}
    for key, value in pieces["networking"].items():
        parent, member = NETWORKING_TO_API[key]
        if parent is None:
            request[member] = value
        else:
            request.setdefault(parent, {})[member] = value
    channel_shape = INPUT.members["InputDataConfig"].member
    fs_shape = channel_shape.members["DataSource"].members["FileSystemDataSource"]
    request["InputDataConfig"] = [
        {
            _api_member(channel_shape, "channel_name"): item["channel_name"],
            "DataSource": {"FileSystemDataSource": {_api_member(fs_shape, k): v
                                                    for k, v in item["data_source"].items()}},
            _api_member(channel_shape, "input_mode"): pieces["training_input_mode"],
        }
        for item in pieces["input_data_config"]
    ]
    return request


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v3_field_names_are_real_api_members_and_the_request_they_make_is_valid(config_id):
    rebuilt = v3_to_request(emitted(config_id, "v3"))
    assert rebuilt == emitted(config_id, "boto3")
    assert all_problems(complete_request(rebuilt)) == []


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_v2_kwargs_carry_the_same_network_as_the_request(config_id):
    v2, request = emitted(config_id, "v2"), good_request(config_id)
    estimator = v2["estimator"]
    assert estimator["subnets"] == request["VpcConfig"]["Subnets"]
    assert estimator["security_group_ids"] == request["VpcConfig"]["SecurityGroupIds"]
    assert estimator["max_run"] == request["StoppingCondition"]["MaxRuntimeInSeconds"]
    assert estimator.get("output_path") == emitted(config_id, "boto3").get("OutputDataConfig", {}).get("S3OutputPath")
    (channel,) = v2["fit"]["inputs"].values()
    fs = request["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]
    assert {xform_name(k): v for k, v in fs.items()} == channel


def test_every_catalog_instance_type_is_in_the_pinned_api_enum():
    enum = INPUT.members["ResourceConfig"].members["InstanceType"].enum
    assert set(EFA_INSTANCE_TYPES) <= set(enum), sorted(set(EFA_INSTANCE_TYPES) - set(enum))


# --- the harness rejects bad requests --------------------------------------------------------

def _set(request: dict, path: str, value) -> dict:
    request = copy.deepcopy(request)
    node = request
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if key.isdigit() else node[key]
    last = keys[-1]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return request


_DELETE = object()
FS = "InputDataConfig.0.DataSource.FileSystemDataSource"

# (mutation path, bad value, text the walker must report) — all of these pass botocore.
WALKER_ONLY = [
    (f"{FS}.FileSystemType", "Lustre", "is not one of EFS, FSxLustre"),
    (f"{FS}.FileSystemAccessMode", "readonly", "is not one of rw, ro"),
    ("VpcConfig.SecurityGroupIds", [f"sg-0123456789abcdef{i}" for i in range(6)], "6 entries is above the maximum 5"),
    ("VpcConfig.Subnets", [f"subnet-0123456789abcde{i:02d}" for i in range(17)], "17 entries is above the maximum 16"),
    ("VpcConfig.Subnets", ["subnet_0123456789abcdef0!"], "does not match the pattern [-0-9a-zA-Z]+"),
    ("VpcConfig.SecurityGroupIds", ["sg-0123456789abcdef0123456789abcdef"], "above the maximum 32"),
    (f"{FS}.FileSystemId", "fs-zz23456789abcdef0", "does not match the pattern (fs-[0-9a-f]{8,})"),
    (f"{FS}.FileSystemId", "fs-0123456789abcdef0123", "23 characters is above the maximum 21"),
    ("ResourceConfig.InstanceType", "ml.p9.96xlarge", "is not one of"),
    ("InputDataConfig.0.ChannelName", "my channel", "does not match the pattern"),
    ("InputDataConfig.0.ChannelName", "c" * 65, "65 characters is above the maximum 64"),
    ("InputDataConfig.0.InputMode", "Stream", "is not one of Pipe, File, FastFile"),
    ("CheckpointConfig.S3Uri", "gs://bucket/checkpoints/", "does not match the pattern"),
    ("OutputDataConfig.S3OutputPath", "gs://bucket/output/", "does not match the pattern"),
    ("RoleArn", "arn:aws:iam::123456789012:user/someone", "does not match the pattern"),
    ("TrainingJobName", "bad_name", "does not match the pattern"),
    ("StoppingCondition.MaxPendingTimeInSeconds", 3_000_000, "above the maximum 2419200"),
]


@pytest.mark.parametrize("path, value, reported", WALKER_ONLY, ids=[f"{p.split('.')[-1]}={str(v)[:20]}"
                                                                     for p, v, _ in WALKER_ONLY])
def test_walker_catches_what_botocore_lets_through(path, value, reported):
    bad = _set(good_request(), path, value)
    assert botocore_errors(bad) == "", "botocore now checks this; the walker case is still right"
    problems = walk(bad, INPUT)
    assert len(problems) == 1 and reported in problems[0], problems


BOTOCORE_CATCHES = [
    (f"{FS}.FileSystemId", _DELETE, "Missing required parameter"),
    ("ResourceConfig.InstanceCount", "4", "Invalid type"),
    ("VpcConfig.SecurityGroupIds", [], "Invalid length"),
    (f"{FS}.FileSystemPath", "/abcdefgh", "Unknown parameter"),
    ("EnableInterContainerTrafficEncryption", "true", "Invalid type"),
]


@pytest.mark.parametrize("path, value, reported", BOTOCORE_CATCHES,
                         ids=[p.split(".")[-1] for p, _, _ in BOTOCORE_CATCHES])
def test_harness_catches_what_botocore_itself_rejects(path, value, reported):
    bad = _set(good_request(), path, value)
    problems = all_problems(bad)
    assert problems and reported in problems[0], problems


def test_an_unvalidated_bad_config_is_caught_by_the_harness():
    """If the CLI's own checks were bypassed, the emitted fragment would still be caught here."""
    settings = parse_document(dict(
        emitted_document(), securityGroupIds=[f"sg-0123456789abcdef{i}" for i in range(6)],
        fileSystem={"id": "fs-0123456789abcdef0", "type": "Lustre", "mountName": "abcdefgh",
                    "directoryPath": "/abcdefgh", "accessMode": "ro"}), where="test")
    problems = all_problems(complete_request(create_training_job_fragment(settings)))
    assert any("SecurityGroupIds: 6 entries is above the maximum 5" in p for p in problems), problems
    assert any("FileSystemType: 'Lustre' is not one of" in p for p in problems), problems


def emitted_document() -> dict:
    import json

    from _jobconfig_helpers import OUTPUTS_DIR
    outputs = json.loads((OUTPUTS_DIR / "default-p4d.json").read_text())["TrainingNetworkStack"]
    return json.loads(outputs["TrainingJobConfig"])


def test_walker_translates_java_character_classes():
    from _sagemaker_shape_walker import compile_pattern
    lambda_arn = compile_pattern(r"arn:[\p{Alnum}\-]+:lambda:[\p{Alnum}\-]+:[0-9]{12}:function:.*")
    assert lambda_arn.fullmatch("arn:aws:lambda:us-east-1:123456789012:function:auth")
    assert not lambda_arn.fullmatch("arn:aws:lambda:us_east_1:123456789012:function:auth")

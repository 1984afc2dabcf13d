"""`smddp-infra job-config`: cdk-outputs.json -> SDK v2 / SDK v3 / boto3 settings.

Unit tests of smddp_infra.jobconfig plus the CLI's behaviour on good and bad outputs
files. That the emitted settings are accepted by SageMaker's API model and by the real
SDK is proven in test_sagemaker_api_model.py and test_sagemaker_sdk.py.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from _jobconfig_helpers import (CONFIG_IDS, OLDER_STACK_FILE, OUTPUTS_DIR, REPO, channel_of, cli_env, emitted,
                                run_cli)
from smddp_infra.cli import main
from smddp_infra.errors import ConfigError, SmddpError
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES
from smddp_infra.contract import (
    CHECKPOINT_LOCAL_PATH,
    DEFAULT_MAX_RUNTIME_SECONDS,
    MAX_RUNTIME_LIMIT_SECONDS,
    DOCUMENT_OUTPUT,
    LOCATION_OUTPUTS as LOCATION_OUTPUT_KEYS,
    REQUIRED_INDIVIDUAL_OUTPUTS as INDIVIDUAL_OUTPUT_KEYS,
    STACK_OUTPUTS,
    FileSystemRef,
    JobDocument,
    checkpoint_s3_uri,
    networks_in_outputs,
)
from smddp_infra.jobconfig import (
    SMDDP_DISTRIBUTION,
    create_training_job_fragment,
    missing_locations_warning,
    render,
    sdk_v2_kwargs,
    sdk_v3_pieces,
    validate_document,
    validated,
)

OUTPUT_KEYS = (*STACK_OUTPUTS, DOCUMENT_OUTPUT)


def settings_of(outputs: dict, *, stack: str = "stack", instance_type=None, instance_count=None) -> JobDocument:
    """One stack's outputs through the one reader, then validated (what job-config does)."""
    (network,) = networks_in_outputs({stack: outputs})
    return validated(network, instance_type=instance_type, instance_count=instance_count)

DEFAULT_FILE = OUTPUTS_DIR / "default-p4d.json"
SNAPSHOT = REPO / "tests" / "snapshots" / "TrainingNetworkStack.template.json"
BUCKET = "trainingnetworkstack-checkpoints1a2b3c4d-0123456789ab"
OUTPUT_URI, CODE_URI = f"s3://{BUCKET}/output/", f"s3://{BUCKET}/code/"


def default_outputs() -> dict:
    return json.loads(DEFAULT_FILE.read_text())["TrainingNetworkStack"]


def default_document() -> dict:
    return json.loads(default_outputs()["TrainingJobConfig"])


def write_outputs(tmp_path: Path, outputs: dict, stack: str = "TrainingNetworkStack") -> Path:
    path = tmp_path / "cdk-outputs.json"
    path.write_text(json.dumps({stack: outputs}))
    return path


def with_document(**changes) -> dict:
    """Default outputs with the TrainingJobConfig document changed and the individual outputs
    dropped (so that only the document is judged)."""
    doc = default_document()
    for key, value in changes.items():
        if "." in key:
            outer, inner = key.split(".")
            doc[outer][inner] = value
        elif value is None:
            doc.pop(key)
        else:
            doc[key] = value
    return {"TrainingJobConfig": json.dumps(doc)}


def cli_error(capsys, *argv: str) -> str:
    """Run the CLI in-process; it must refuse with exit 2 and ONE line on stderr."""
    code = main(["job-config", *argv])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("smddp-infra job-config: error: ")
    return lines[0]


# --- the document ----------------------------------------------------------------------------

ids = st.text(alphabet="0123456789abcdef", min_size=17, max_size=17)


@hsettings(max_examples=40, deadline=None)
@given(
    subnet=ids, groups=st.lists(ids, min_size=1, max_size=5, unique=True), fs=ids,
    count=st.integers(min_value=1, max_value=512), mode=st.sampled_from(["ro", "rw"]),
    instance=st.sampled_from(sorted(EFA_INSTANCE_TYPES)), sub=st.sampled_from(["", "/data", "/a/b-c_d"]),
    zones=st.booleans(), throughput=st.none() | st.integers(1, 10**6),
    icte=st.booleans(), isolation=st.none() | st.booleans(),
    output=st.none() | st.sampled_from(["s3://bucket-1/output/", "s3://other.bucket/models/run-7/"]),
    code=st.none() | st.sampled_from(["s3://bucket-1/code/", "s3://bucket-1/code/team-a/"]),
    kms=st.none() | st.just("arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"),
    runtime=st.none() | st.integers(1, MAX_RUNTIME_LIMIT_SECONDS),
)
def test_document_round_trips_through_cdk_outputs(subnet, groups, fs, count, mode, instance, sub, zones, throughput,
                                                  icte, isolation, output, code, kms, runtime):
    settings = JobDocument(
        subnets=(f"subnet-{subnet}",), security_group_ids=tuple(f"sg-{g}" for g in groups),
        role_arn="arn:aws:iam::123456789012:role/Training", checkpoint_s3_uri="s3://bucket-1/ckpt/",
        file_system=FileSystemRef(id=f"fs-{fs}", mount_name="abcdefgh", directory_path=f"/abcdefgh{sub}",
                                  access_mode=mode),
        instance_type=instance, instance_count=count, region="us-east-1", availability_zone="us-east-1a",
        subnet_availability_zones=("us-east-1a",) if zones else (), required_throughput_mbps=throughput,
        encrypt_inter_container_traffic=icte, enable_network_isolation=isolation,
        output_s3_uri=output, code_s3_uri=code, kms_key_arn=kms, max_runtime_seconds=runtime,
    )
    outputs = {"TrainingJobConfig": json.dumps(settings.to_json(), separators=(",", ":"))}
    assert settings_of(outputs) == settings


def test_document_keys_are_the_ones_the_construct_emits():
    doc = default_document()
    assert {"version", "region", "availabilityZone", "instanceType", "instanceCount", "subnets",
            "securityGroupIds", "roleArn", "checkpoint", "fileSystem", "output", "code"} <= set(doc)
    assert set(doc["checkpoint"]) == {"s3Uri", "localPath"}
    assert set(doc["fileSystem"]) == {"id", "type", "mountName", "directoryPath", "accessMode"}
    assert doc["output"] == {"s3Uri": OUTPUT_URI} and doc["code"] == {"s3Uri": CODE_URI}
    assert set(OUTPUT_KEYS) - set(INDIVIDUAL_OUTPUT_KEYS) == {"TrainingJobConfig", *LOCATION_OUTPUT_KEYS}
    assert LOCATION_OUTPUT_KEYS == ("OutputS3Uri", "CodeS3Uri")


def _resolve(value, template: dict, ids: dict):
    """A template output value with its Ref/GetAtt replaced by the fixture's physical ids."""
    if isinstance(value, str):
        return value
    (fn, arg), = value.items()
    if fn == "Fn::Join":
        return arg[0].join(_resolve(part, template, ids) for part in arg[1])
    logical, attr = (arg, "Ref") if fn == "Ref" else arg
    kind = template["Resources"][logical]["Type"]
    return ids[(kind, attr, logical)] if (kind, attr, logical) in ids else ids[(kind, attr)]


def test_default_fixture_is_what_the_reviewed_template_outputs():
    """The representative file is not invented: with the fixture's ids put in for the
    Ref/GetAtt tokens, every output of the committed snapshot template (the default app)
    gives exactly the fixture's value, including the TrainingJobConfig text."""
    template = json.loads(SNAPSHOT.read_text())
    outputs = default_outputs()
    ids = {
        ("AWS::EC2::Subnet", "Ref"): outputs["TrainingSubnetIds"],
        ("AWS::EC2::SecurityGroup", "GroupId"): outputs["SecurityGroupIds"],
        ("AWS::IAM::Role", "Arn"): outputs["RoleArn"],
        ("AWS::S3::Bucket", "Ref"): BUCKET,
        ("AWS::FSx::FileSystem", "Ref"): outputs["FileSystemId"],
        ("AWS::FSx::FileSystem", "LustreMountName"): outputs["FileSystemMountName"],
        ("AWS::SSM::Parameter", "Ref"): outputs["TrainingJobConfigParameterName"],
        ("AWS::IAM::ManagedPolicy", "Ref"): outputs["LaunchPolicyArn"],
    }
    # The file system's monitoring (issue 20): names CloudFormation generates, as the fixture says.
    monitoring = json.loads(outputs["TrainingJobConfig"])["monitoring"]
    for logical, resource in template["Resources"].items():
        name = {"ThroughputAlarm": "throughputAlarm", "CapacityAlarm": "capacityAlarm", "Dashboard": "dashboard",
                "AlarmTopic": "alarmTopicArn"}
        for part, key in name.items():
            if f"Monitoring{part}" in logical and resource["Type"] != "AWS::SNS::TopicPolicy":
                ids[(resource["Type"], "Ref", logical)] = monitoring[key]
    resolved = {key: _resolve(out["Value"], template, ids) for key, out in template["Outputs"].items()}
    assert resolved == outputs
    assert set(OUTPUT_KEYS) <= set(resolved)


def test_optional_document_keys_are_typed():
    settings = settings_of(default_outputs())
    assert (settings.subnet_availability_zones, settings.encrypt_inter_container_traffic,
            settings.required_throughput_mbps) == (("us-east-1a",), True, 1600)
    assert settings.to_json()["subnetAvailabilityZones"] == ["us-east-1a"]
    assert (settings.output_s3_uri, settings.code_s3_uri) == (OUTPUT_URI, CODE_URI)


def test_checkpoint_uri_helper_always_ends_with_a_slash():
    assert checkpoint_s3_uri("b", "runs/x") == "s3://b/runs/x/"
    assert checkpoint_s3_uri("b", "/runs/x/") == "s3://b/runs/x/"
    assert checkpoint_s3_uri("b", None) == "s3://b/"


# --- reading cdk-outputs.json ----------------------------------------------------------------

def test_individual_outputs_rebuild_the_same_settings_as_the_document():
    outputs = default_outputs()
    from_doc = settings_of(outputs)
    rebuilt = settings_of(
        {k: v for k, v in outputs.items() if k != "TrainingJobConfig"},
        instance_type=from_doc.instance_type, instance_count=from_doc.instance_count)
    # region, AZ and extras are only in the document; everything a job needs matches
    assert (rebuilt.output_s3_uri, rebuilt.code_s3_uri) == (OUTPUT_URI, CODE_URI)
    for fmt in ("v2", "v3", "boto3"):
        assert render(rebuilt, fmt) == render(from_doc, fmt)


def test_individual_outputs_of_an_older_stack_rebuild_without_locations():
    outputs = {k: v for k, v in default_outputs().items() if k not in ("TrainingJobConfig", *LOCATION_OUTPUT_KEYS)}
    settings = settings_of(outputs, instance_type="ml.p4d.24xlarge", instance_count=2)
    assert (settings.output_s3_uri, settings.code_s3_uri) == (None, None)
    assert "output_path" not in sdk_v2_kwargs(settings)["estimator"]


def test_comma_separated_ids_with_spaces_are_split():
    outputs = default_outputs()
    del outputs["TrainingJobConfig"]
    outputs["SecurityGroupIds"] = " sg-0123456789abcdef0 , sg-0fedcba9876543210 "
    settings = settings_of(outputs, instance_type="ml.p4d.24xlarge", instance_count=2)
    assert settings.security_group_ids == ("sg-0123456789abcdef0", "sg-0fedcba9876543210")


def test_flags_override_the_document_cluster_shape():
    settings = settings_of(default_outputs(), instance_type="ml.p5.48xlarge",
                                                instance_count=16)
    assert (settings.instance_type, settings.instance_count) == ("ml.p5.48xlarge", 16)


def test_settings_value_is_frozen():
    settings = settings_of(default_outputs())
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.instance_count = 3  # type: ignore[misc]


# --- the three formats -----------------------------------------------------------------------

def test_v2_separates_estimator_arguments_from_fit_arguments():
    """``inputs`` belongs to ``fit``; in the constructor's arguments it is a TypeError."""
    v2 = sdk_v2_kwargs(settings_of(default_outputs()))
    assert list(v2) == ["estimator", "fit", "notes"]
    assert "inputs" not in v2["estimator"]
    assert v2["fit"] == {"inputs": {"training": {
        "file_system_id": "fs-0123456789abcdef0", "file_system_type": "FSxLustre",
        "directory_path": "/abcdefgh", "file_system_access_mode": "ro"}}}


def test_v2_kwargs_switch_off_debugger_and_profiler_and_enable_smddp():
    kw = sdk_v2_kwargs(settings_of(default_outputs()))["estimator"]
    assert kw["debugger_hook_config"] is False
    assert kw["disable_profiler"] is True
    assert kw["distribution"] == {"smdistributed": {"dataparallel": {"enabled": True}}}
    assert kw["checkpoint_local_path"] == CHECKPOINT_LOCAL_PATH == "/opt/ml/checkpoints"
    assert kw["checkpoint_s3_uri"].endswith("/")
    assert kw["encrypt_inter_container_traffic"] is True
    assert (kw["output_path"], kw["code_location"]) == (OUTPUT_URI, CODE_URI)
    assert set(kw) == {"role", "instance_type", "instance_count", "max_run", "subnets", "security_group_ids",
                       "checkpoint_s3_uri", "checkpoint_local_path", "output_path", "code_location",
                       "debugger_hook_config", "disable_profiler", "encrypt_inter_container_traffic", "distribution"}


@pytest.mark.parametrize("instance_type, launcher", [
    ("ml.p4d.24xlarge", {"smdistributed": {"dataparallel": {"enabled": True}}}),
    ("ml.p4de.24xlarge", {"smdistributed": {"dataparallel": {"enabled": True}}}),
    # SMDDP runs only on p4d/p4de: the p5 and p6 families run NCCL under torchrun
    ("ml.p5.48xlarge", {"torch_distributed": {"enabled": True}}),
    ("ml.p5en.48xlarge", {"torch_distributed": {"enabled": True}}),
    ("ml.trn1.32xlarge", {"torch_distributed": {"enabled": True}}),
])
def test_v2_launcher_follows_the_instance_family(instance_type, launcher):
    settings = settings_of(default_outputs(), instance_type=instance_type)
    assert sdk_v2_kwargs(settings)["estimator"]["distribution"] == launcher


@pytest.mark.parametrize("instance_type, backend", [
    ("ml.p4d.24xlarge", "smddp"), ("ml.p4de.24xlarge", "smddp"),
    ("ml.p5.48xlarge", "nccl"), ("ml.p5e.48xlarge", "nccl"), ("ml.p5en.48xlarge", "nccl"),
    ("ml.trn1.32xlarge", "xla"),
])
def test_smddp_is_offered_only_where_it_runs(instance_type, backend):
    """SMDDP supports ml.p4d/p4de only: nowhere else may a note (v2 or v3) tell users to pick
    backend="smddp", and the p5 family is told why it gets NCCL."""
    settings = settings_of(default_outputs(), instance_type=instance_type)
    for notes in (sdk_v2_kwargs(settings)["notes"], sdk_v3_pieces(settings)["notes"]):
        text = " ".join(notes)
        assert f'backend="{backend}"' in text
        assert ('backend="smddp"' in text) == (backend == "smddp")
        if backend == "nccl":
            assert "SMDDP runs only on ml.p4d.24xlarge and ml.p4de.24xlarge" in text


def test_v2_distribution_is_a_copy_not_the_shared_constant():
    kw = sdk_v2_kwargs(settings_of(default_outputs()))["estimator"]
    kw["distribution"]["smdistributed"]["dataparallel"]["enabled"] = False
    assert SMDDP_DISTRIBUTION["smdistributed"]["dataparallel"]["enabled"] is True


def test_v3_pieces_use_model_trainer_field_names_and_say_how_to_run_smddp():
    pieces = sdk_v3_pieces(settings_of(default_outputs()), channel="fsx")
    assert set(pieces) == {"role", "compute", "stopping_condition", "networking", "checkpoint_config", "output_data_config", "session",
                           "training_input_mode", "input_data_config", "distributed", "notes"}
    # sagemaker.core.training.configs.OutputDataConfig(s3_output_path=...)
    assert pieces["output_data_config"] == {"s3_output_path": OUTPUT_URI}
    # v3 has no code_location: the Session's bucket + prefix ARE the code prefix
    # (tests/test_sagemaker_sdk_v3.py proves where the real SDK then uploads)
    bucket, prefix = pieces["session"]["default_bucket"], pieces["session"]["default_bucket_prefix"]
    assert f"s3://{bucket}/{prefix}/" == CODE_URI
    assert any("no code_location" in note for note in pieces["notes"])
    assert pieces["networking"] == {"subnets": ["subnet-0123456789abcdef0"],
                                    "security_group_ids": ["sg-0123456789abcdef0"],
                                    "enable_inter_container_traffic_encryption": True}
    assert pieces["checkpoint_config"]["local_path"] == "/opt/ml/checkpoints"
    assert pieces["input_data_config"][0]["channel_name"] == "fsx"
    assert set(pieces["input_data_config"][0]["data_source"]) == {
        "file_system_id", "file_system_type", "directory_path", "file_system_access_mode"}
    assert pieces["distributed"] == {"Torchrun": {}}
    assert any('backend="smddp"' in note for note in pieces["notes"])


def test_boto3_fragment_has_the_network_members_and_file_mode():
    frag = create_training_job_fragment(settings_of(default_outputs()))
    assert set(frag) == {"RoleArn", "ResourceConfig", "StoppingCondition", "VpcConfig", "CheckpointConfig", "OutputDataConfig",
                         "InputDataConfig", "EnableInterContainerTrafficEncryption"}
    assert frag["OutputDataConfig"] == {"S3OutputPath": OUTPUT_URI}
    assert frag["InputDataConfig"][0]["InputMode"] == "File"
    assert frag["ResourceConfig"] == {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 4}


def test_document_switches_for_encryption_and_isolation_reach_every_format():
    outputs = with_document(encryptInterContainerTraffic=False, enableNetworkIsolation=True)
    settings = settings_of(outputs)
    assert sdk_v2_kwargs(settings)["estimator"]["encrypt_inter_container_traffic"] is False
    assert sdk_v2_kwargs(settings)["estimator"]["enable_network_isolation"] is True
    assert sdk_v3_pieces(settings)["networking"]["enable_inter_container_traffic_encryption"] is False
    assert sdk_v3_pieces(settings)["networking"]["enable_network_isolation"] is True
    frag = create_training_job_fragment(settings)
    assert (frag["EnableInterContainerTrafficEncryption"], frag["EnableNetworkIsolation"]) == (False, True)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_the_three_formats_agree_for_every_representative_file(config_id):
    emitted_v2, v3, frag = emitted(config_id, "v2"), emitted(config_id, "v3"), emitted(config_id, "boto3")
    v2, fit = emitted_v2["estimator"], emitted_v2["fit"]
    channel = channel_of(config_id)
    assert v2["subnets"] == v3["networking"]["subnets"] == frag["VpcConfig"]["Subnets"]
    assert v2["security_group_ids"] == v3["networking"]["security_group_ids"] == frag["VpcConfig"]["SecurityGroupIds"]
    assert v2["role"] == v3["role"] == frag["RoleArn"]
    assert v2["checkpoint_s3_uri"] == v3["checkpoint_config"]["s3_uri"] == frag["CheckpointConfig"]["S3Uri"]
    assert v2["instance_count"] == v3["compute"]["instance_count"] == frag["ResourceConfig"]["InstanceCount"]
    fs = frag["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]
    assert fit["inputs"][channel]["file_system_id"] == v3["input_data_config"][0]["data_source"]["file_system_id"] \
        == fs["FileSystemId"]
    # the output prefix reaches every format, or (an older stack) none
    outputs = {v2.get("output_path"), v3.get("output_data_config", {}).get("s3_output_path"),
               frag.get("OutputDataConfig", {}).get("S3OutputPath")}
    assert len(outputs) == 1
    assert ("code_location" in v2) == ("output_path" in v2)
    assert frag["InputDataConfig"][0]["ChannelName"] == v3["input_data_config"][0]["channel_name"] == channel


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_preflight_reads_the_nested_v2_output_as_the_estimator_arguments(config_id):
    from smddp_infra.preflight.job import parse_job

    v2 = emitted(config_id, "v2")
    job = parse_job(v2, path=Path("job-v2.json"))
    estimator = v2["estimator"]
    assert (job.shape, job.estimator) == ("estimator", "PyTorch")
    assert job.subnets == tuple(estimator["subnets"])
    assert (job.checkpoint_s3_uri, job.checkpoint_local_path) == (estimator["checkpoint_s3_uri"], CHECKPOINT_LOCAL_PATH)
    assert job.debugger_hook == "false"
    assert job.distribution == estimator["distribution"]
    assert (job.instance_type, job.instance_count) == (estimator["instance_type"], estimator["instance_count"])


def test_preflight_refuses_arguments_both_nested_and_at_the_top_level():
    from smddp_infra.preflight.errors import PreflightInputError
    from smddp_infra.preflight.job import parse_job

    v2 = emitted("default-p4d", "v2")
    v2["checkpoint_s3_uri"] = "s3://elsewhere/checkpoints/"
    with pytest.raises(PreflightInputError, match=r"under estimator: and also at the top level \(checkpoint_s3_uri\)"):
        parse_job(v2, path=Path("job.json"))


# --- bad input: one clear line, exit 2 -------------------------------------------------------

@pytest.mark.parametrize("outputs, expected", [
    (with_document(securityGroupIds=[f"sg-0123456789abcdef{i}" for i in range(6)]), "securityGroupIds must list 1 to 5"),
    (with_document(securityGroupIds=[]), "securityGroupIds must list 1 to 5"),
    (with_document(subnets=[f"subnet-0123456789abcde{i:02d}" for i in range(17)], subnetAvailabilityZones=[]),
     "subnets must list 1 to 16"),
    (with_document(subnets=["subnet_0123456789abcdef0"]), "subnets entries must look like subnet-"),
    (with_document(subnets="subnet-0123456789abcdef0"), "subnets must be a JSON list"),
    (with_document(securityGroupIds=["sg-0123456789abcdef0", "sg-0123456789abcdef0"]), "must not repeat"),
    (with_document(**{"fileSystem.type": "Lustre"}), "fileSystem.type must be 'FSxLustre'"),
    (with_document(**{"fileSystem.type": "EFS"}), "fileSystem.type must be 'FSxLustre'"),
    (with_document(**{"fileSystem.accessMode": "readonly"}), "fileSystem.accessMode must be one of ro, rw"),
    (with_document(**{"fileSystem.id": "fs-123"}), "fileSystem.id must be an FSx file system id"),
    (with_document(**{"fileSystem.directoryPath": "/data"}), "fileSystem.directoryPath must start with /abcdefgh"),
    (with_document(**{"fileSystem.directoryPath": "/abcdefghij"}), "fileSystem.directoryPath must start with"),
    (with_document(**{"checkpoint.s3Uri": "s3://bucket-1/checkpoints"}), "ending in '/'"),
    (with_document(**{"checkpoint.s3Uri": "https://bucket-1/checkpoints/"}),
     "checkpoint.s3Uri (output CheckpointS3Uri) must be s3://"),
    (with_document(**{"checkpoint.localPath": "checkpoints"}), "checkpoint.localPath must be an absolute path"),
    (with_document(**{"output.s3Uri": f"s3://{BUCKET}/output"}),
     f"output.s3Uri (output OutputS3Uri) must be s3://<bucket>/<prefix>/ ending in '/' (at most 1024 characters), "
     f"got 's3://{BUCKET}/output'"),
    (with_document(**{"output.s3Uri": "/output/"}), "output.s3Uri (output OutputS3Uri) must be s3://"),
    (with_document(**{"code.s3Uri": f"https://{BUCKET}.s3.amazonaws.com/code/"}),
     "code.s3Uri (output CodeS3Uri) must be s3://<bucket>/<prefix>/ ending in '/'"),
    (with_document(**{"code.s3Uri": 7}), "output TrainingJobConfig: code.s3Uri must be a non-empty string, got 7"),
    (with_document(**{"code.s3Uri": f"s3://{BUCKET}/" + "c/" * 520}), "code.s3Uri (output CodeS3Uri) must be"),
    (with_document(output=OUTPUT_URI), f"output TrainingJobConfig: output must be a JSON object, got '{OUTPUT_URI}'"),
    (with_document(roleArn="arn:aws:iam::123:role/x"), "roleArn must be an IAM role ARN"),
    (with_document(instanceType="ml.g5.48xlarge"), "instanceType must be a SageMaker EFA training instance type"),
    (with_document(instanceCount=0), "instanceCount must be a whole number >= 1, got 0"),
    (with_document(instanceCount="4"), "instanceCount must be a whole number >= 1, got '4'"),
    (with_document(maxRuntimeInSeconds=0), "'TrainingNetworkStack': maxRuntimeInSeconds must be a whole number of "
                                           "seconds from 1 to 2,419,200 (28 days, the CreateTrainingJob "
                                           "StoppingCondition.MaxRuntimeInSeconds limit), got 0"),
    (with_document(maxRuntimeInSeconds=MAX_RUNTIME_LIMIT_SECONDS + 1), "maxRuntimeInSeconds must be a whole number of "
                                                                       "seconds from 1 to 2,419,200"),
    (with_document(maxRuntimeInSeconds="86400"), "maxRuntimeInSeconds must be a whole number of seconds, got '86400'"),
    (with_document(maxRuntimeInSeconds=True), "maxRuntimeInSeconds must be a whole number of seconds, got True"),
    (with_document(encryptInterContainerTraffic="yes"), "encryptInterContainerTraffic must be true or false"),
    (with_document(version=3), "TrainingJobConfig: version must be 1..2"),
    (with_document(roleArn=None), "TrainingJobConfig is missing 'roleArn'"),
    ({"TrainingJobConfig": "{not json"}, "TrainingJobConfig must be a JSON document"),
    ({"TrainingJobConfig": "[1, 2]"}, "TrainingJobConfig must be a JSON object"),
    ({"VpcId": "vpc-0123456789abcdef0"}, "holds no training network: no stack has a TrainingJobConfig output"),
    ({"TrainingSubnetIds": "subnet-0123456789abcdef0"}, "has no TrainingJobConfig output, so the cluster shape"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_bad_outputs_are_refused_with_one_line_naming_the_setting(tmp_path, capsys, outputs, expected):
    line = cli_error(capsys, "--outputs", str(write_outputs(tmp_path, outputs)), "--format", "boto3")
    assert expected in line
    assert "'TrainingNetworkStack'" in line


def test_outputs_that_disagree_with_the_document_are_refused(tmp_path, capsys):
    outputs = default_outputs()
    outputs["FileSystemId"] = "fs-0fedcba9876543210"
    line = cli_error(capsys, "--outputs", str(write_outputs(tmp_path, outputs)), "--format", "v2")
    assert "output FileSystemId is 'fs-0fedcba9876543210' but TrainingJobConfig says 'fs-0123456789abcdef0'" in line


@pytest.mark.parametrize("key, other", [("OutputS3Uri", f"s3://{BUCKET}/models/"), ("CodeS3Uri", f"s3://{BUCKET}/src/")])
def test_location_outputs_that_disagree_with_the_document_are_refused(tmp_path, capsys, key, other):
    outputs = default_outputs()
    outputs[key] = other
    line = cli_error(capsys, "--outputs", str(write_outputs(tmp_path, outputs)), "--format", "v2")
    expected = OUTPUT_URI if key == "OutputS3Uri" else CODE_URI
    assert f"output {key} is {other!r} but TrainingJobConfig says {expected!r}; the outputs file mixes" in line


def test_a_location_output_the_document_lacks_is_a_disagreement(tmp_path, capsys):
    outputs = default_outputs()
    doc = default_document()
    del doc["output"]
    outputs["TrainingJobConfig"] = json.dumps(doc)
    line = cli_error(capsys, "--outputs", str(write_outputs(tmp_path, outputs)), "--format", "v3")
    assert f"output OutputS3Uri is {OUTPUT_URI!r} but TrainingJobConfig says nothing (it has no output.s3Uri)" in line


@pytest.mark.parametrize("key, value, expected", [
    ("OutputS3Uri", f"s3://{BUCKET}/output", "output.s3Uri (output OutputS3Uri) must be s3://<bucket>/<prefix>/ "
                                              "ending in '/'"),
    ("CodeS3Uri", "code/", "code.s3Uri (output CodeS3Uri) must be s3://<bucket>/<prefix>/ ending in '/'"),
    ("CodeS3Uri", "  ", "output CodeS3Uri must be a non-empty string"),
])
def test_rebuilt_location_outputs_are_validated(tmp_path, capsys, key, value, expected):
    outputs = {k: v for k, v in default_outputs().items() if k != "TrainingJobConfig"}
    outputs[key] = value
    line = cli_error(capsys, "--outputs", str(write_outputs(tmp_path, outputs)), "--format", "v2",
                     "--instance-type", "ml.p4d.24xlarge", "--instance-count", "2")
    assert expected in line


def test_individual_outputs_without_cluster_shape_ask_for_the_flags(capsys):
    line = cli_error(capsys, "--outputs", str(OUTPUTS_DIR / "individual-outputs-only.json"), "--format", "v2")
    assert "pass --instance-type and --instance-count" in line


def test_the_only_network_among_several_stacks_is_used_without_asking(capsys):
    """A platform app's file holds other stacks too: the one network in it needs no flag."""
    assert main(["job-config", "--outputs", str(OUTPUTS_DIR / "platform-two-stacks.json"), "--format", "boto3"]) == 0
    assert json.loads(capsys.readouterr().out)["VpcConfig"]["Subnets"]
    line = cli_error(capsys, "--outputs", str(OUTPUTS_DIR / "platform-two-stacks.json"), "--format", "v2",
                     "--stack", "Nope")
    assert "--stack 'Nope' holds no training network; stacks with one: TrainingNetworkStack" in line


def _embedded(name: str, subnet: str) -> str:
    doc = default_document()
    doc.update(network=name, subnets=[subnet])
    return json.dumps(doc)


def test_two_networks_in_one_stack_are_listed_and_selectable(tmp_path, capsys):
    """Two SmddpTrainingNetworks embedded in one platform stack: each publishes its document
    under its own output id; job-config lists both and --network picks one."""
    path = tmp_path / "cdk-outputs.json"
    path.write_text(json.dumps({"Platform": {
        "VpcId": "vpc-0123456789abcdef0",
        "TeamAClusterTrainingJobConfig": _embedded("TeamA/Cluster", "subnet-0aaaaaaaaaaaaaaa1"),
        "TeamBClusterTrainingJobConfig": _embedded("TeamB/Cluster", "subnet-0bbbbbbbbbbbbbbb2"),
    }}))
    line = cli_error(capsys, "--outputs", str(path), "--format", "boto3")
    assert line.endswith("holds 2 training networks, pass --network NAME; networks: Platform/TeamA/Cluster, "
                         "Platform/TeamB/Cluster")
    for name, subnet in (("TeamB/Cluster", "subnet-0bbbbbbbbbbbbbbb2"), ("Platform/TeamA/Cluster", "subnet-0aaaaaaaaaaaaaaa1"),
                         ("TeamBClusterTrainingJobConfig", "subnet-0bbbbbbbbbbbbbbb2")):
        assert main(["job-config", "--outputs", str(path), "--format", "boto3", "--network", name]) == 0
        assert json.loads(capsys.readouterr().out)["VpcConfig"]["Subnets"] == [subnet]
    line = cli_error(capsys, "--outputs", str(path), "--format", "v2", "--network", "TeamC")
    assert "--network 'TeamC' is not in the outputs file; networks: Platform/TeamA/Cluster, Platform/TeamB/Cluster" in line


def test_missing_file_and_bad_json_are_one_line(tmp_path, capsys):
    line = cli_error(capsys, "--outputs", str(tmp_path / "nope.json"), "--format", "v2")
    assert "does not exist" in line and "--outputs-file" in line
    bad = tmp_path / "bad.json"
    bad.write_text('{"TrainingNetworkStack": {')
    assert "is not valid JSON" in cli_error(capsys, "--outputs", str(bad), "--format", "v2")
    bad.write_text("[]")
    assert "must be a JSON object of stacks" in cli_error(capsys, "--outputs", str(bad), "--format", "v2")


def test_an_outputs_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    bad = tmp_path / "cdk-outputs.json"
    content = b'{"TrainingNetworkStack": {"RoleArn": "\xff\xfe"}}'  # Latin-1 bytes, not UTF-8
    bad.write_bytes(content)
    line = cli_error(capsys, "--outputs", str(bad), "--format", "v2")
    assert f"--outputs file {str(bad)!r} is not UTF-8 text (byte 0xff at offset {content.index(0xff)})" in line


def test_an_outputs_file_in_utf16_is_one_line_in_a_real_process(tmp_path):
    """What PowerShell's `>` writes by default; before the fix this was a traceback."""
    bad = tmp_path / "cdk-outputs.json"
    bad.write_text(DEFAULT_FILE.read_text(), encoding="utf-16")
    result = run_cli("--outputs", str(bad), "--format", "boto3")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"smddp-infra job-config: error: --outputs file {str(bad)!r} is not UTF-8 text (byte 0xff at offset 0); "
        "it must be the JSON `cdk deploy --outputs-file` writes"]


def test_an_outputs_file_with_a_byte_order_mark_is_read(tmp_path, capsys):
    bom = tmp_path / "cdk-outputs.json"
    bom.write_text(DEFAULT_FILE.read_text(), encoding="utf-8-sig")
    assert main(["job-config", "--outputs", str(bom), "--format", "boto3"]) == 0
    assert json.loads(capsys.readouterr().out)["OutputDataConfig"] == {"S3OutputPath": OUTPUT_URI}


def test_a_bad_channel_name_is_refused(capsys):
    line = cli_error(capsys, "--outputs", str(DEFAULT_FILE), "--format", "boto3", "--channel", "my channel")
    assert "channel must be 1-64 letters" in line and "'my channel'" in line


def test_errors_are_smddp_errors():
    with pytest.raises(SmddpError):
        settings_of(with_document(instanceCount=0))
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ConfigError):
        doc = settings_of(default_outputs())
        validate_document(replace(doc, file_system=replace(doc.file_system, type="EFS")))


# --- the real command ------------------------------------------------------------------------

def test_cli_prints_json_and_exits_zero():
    result = run_cli("--outputs", str(DEFAULT_FILE), "--format", "boto3")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout)["VpcConfig"]["Subnets"] == ["subnet-0123456789abcdef0"]


# --- a stack deployed before the output and code prefixes ------------------------------------

@pytest.mark.parametrize("fmt, missing, expected", [
    ("v2", ("output_path", "code_location"),
     "publishes no OutputS3Uri/CodeS3Uri (deployed before smddp-infra added them), so output_path and "
     "code_location are left out and the SDK will fall back to its default bucket sagemaker-<region>-<account>, "
     "which the execution role cannot write; redeploy the stack or set them yourself"),
    ("v3", ("output_data_config", "session"),
     "publishes no OutputS3Uri/CodeS3Uri (deployed before smddp-infra added them), so output_data_config and "
     "session are left out and the SDK will fall back to its default bucket sagemaker-<region>-<account>, which "
     "the execution role cannot write; redeploy the stack or set them yourself"),
    ("boto3", ("OutputDataConfig",),
     "publishes no OutputS3Uri (deployed before smddp-infra added them), so OutputDataConfig is left out; "
     "CreateTrainingJob requires one: give it a prefix the execution role can write, or redeploy the stack"),
])
def test_an_older_stack_still_renders_with_one_warning_line(fmt, missing, expected):
    result = run_cli("--outputs", str(OLDER_STACK_FILE), "--format", fmt)
    assert result.returncode == 0
    assert result.stderr.splitlines() == [f"smddp-infra job-config: warning: stack 'SmddpGov' {expected}"]
    printed = json.loads(result.stdout)  # stdout stays pure JSON
    section = printed["estimator"] if fmt == "v2" else printed
    assert not set(missing) & set(section)
    assert "s3://sagemaker-" not in result.stdout


def test_a_stack_with_only_the_output_prefix_warns_about_the_code_location_for_v2_and_v3():
    settings = settings_of(with_document(code=None))
    assert missing_locations_warning(settings, "boto3") is None
    assert "session" not in sdk_v3_pieces(settings)
    assert missing_locations_warning(settings, "v3", where="stack 'S'").startswith(
        "stack 'S' publishes no CodeS3Uri (deployed before smddp-infra added them), so session is left out")
    warning = missing_locations_warning(settings, "v2", where="stack 'S'")
    assert warning.startswith("stack 'S' publishes no CodeS3Uri (deployed before smddp-infra added them), "
                              "so code_location is left out and the SDK")
    assert warning.endswith("set it yourself")
    assert sdk_v2_kwargs(settings)["estimator"]["output_path"] == OUTPUT_URI


@pytest.mark.parametrize("fmt", ["v2", "v3", "boto3"])
def test_a_current_stack_prints_no_warning(fmt):
    result = run_cli("--outputs", str(DEFAULT_FILE), "--format", fmt)
    assert result.returncode == 0 and result.stderr == ""


def test_cli_bad_input_exits_2_in_a_real_process(tmp_path):
    result = run_cli("--outputs", str(tmp_path / "missing.json"), "--format", "v3")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("smddp-infra job-config: error: --outputs file")
    assert "Traceback" not in result.stderr


# --- the docs show what the command prints ----------------------------------------------------

DOCS = (REPO / "docs" / "job-config.md").read_text()


def test_docs_v2_example_is_what_the_command_prints():
    import re

    command = "smddp-infra job-config --outputs tests/fixtures/outputs/default-p4d.json --format v2"
    match = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", DOCS, flags=re.S)
    assert match, "docs/job-config.md lost the v2 example"
    result = run_cli(*command.split()[2:])
    assert (result.returncode, result.stderr) == (0, "")
    assert match.group(1) == result.stdout


def test_docs_older_stack_warning_is_what_the_command_prints(tmp_path, capsys):
    outputs = {k: v for k, v in default_outputs().items() if k not in LOCATION_OUTPUT_KEYS}
    doc = default_document()
    del doc["output"], doc["code"]
    outputs["TrainingJobConfig"] = json.dumps(doc)
    assert main(["job-config", "--outputs", str(write_outputs(tmp_path, outputs)), "--format", "v2"]) == 0
    (warning,) = capsys.readouterr().err.splitlines()
    assert f"```text\n{warning}\n```" in DOCS


def test_job_config_never_imports_aws_cdk():
    """The CLI path must work where Node/jsii are absent: no aws_cdk, jsii, constructs or
    smddp_infra.constructs may be imported, even indirectly."""
    code = (
        "import sys, io, contextlib\n"
        "import smddp_infra.jobconfig, smddp_infra.contract, smddp_infra.jobconfig.render, smddp_infra.jobconfig.validation\n"
        "from smddp_infra.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main(['job-config', '--outputs', {str(DEFAULT_FILE)!r}, '--format', 'v2'])\n"
        "assert rc == 0 and '\"subnets\"' in out.getvalue(), rc\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('aws_cdk', 'jsii', 'constructs', 'cdk_nag')\n"
        "             or m.startswith('smddp_infra.constructs') or m == 'smddp_infra.stack')\n"
        "print('HEAVY:' + ','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                            env=cli_env(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "HEAVY:"


# --- the maximum runtime (StoppingCondition) ----------------------------------------------------

def _runtimes(config_id: str) -> tuple:
    v2, v3, frag = (emitted(config_id, fmt) for fmt in ("v2", "v3", "boto3"))
    return (v2["estimator"]["max_run"], v3["stopping_condition"]["max_runtime_in_seconds"],
            frag["StoppingCondition"]["MaxRuntimeInSeconds"])


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_every_format_states_the_maximum_runtime(config_id):
    """Emitted explicitly: SDK v3 would otherwise send 3600 s and stop a multi-node run after an hour."""
    expected = 432000 if config_id == "p5-64-node" else DEFAULT_MAX_RUNTIME_SECONDS  # the p5 network sets 5 days
    assert _runtimes(config_id) == (expected,) * 3


def test_the_default_and_the_limit_are_the_apis_as_botocore_documents_them():
    """Read from the pinned botocore's sagemaker model (its StoppingCondition documentation),
    so a service change in the limit or the default fails here."""
    import re

    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    doc = model.shape_for("StoppingCondition").members["MaxRuntimeInSeconds"].documentation
    assert re.search(r"The default value is 1 day\.", doc) and re.search(r"The maximum value is 28 days\.", doc), doc
    assert (DEFAULT_MAX_RUNTIME_SECONDS, MAX_RUNTIME_LIMIT_SECONDS) == (86400, 28 * 86400)
    assert model.shape_for("MaxRuntimeInSeconds").metadata.get("min") == 1


@pytest.mark.parametrize("seconds", ["1", "172800", str(MAX_RUNTIME_LIMIT_SECONDS)])
def test_the_flag_overrides_the_network_in_every_format(seconds):
    outputs = OUTPUTS_DIR / "p5-64-node-two-groups.json"
    found = set()
    for fmt, path in (("v2", ("estimator", "max_run")), ("v3", ("stopping_condition", "max_runtime_in_seconds")),
                      ("boto3", ("StoppingCondition", "MaxRuntimeInSeconds"))):
        result = run_cli("--outputs", str(outputs), "--format", fmt, "--max-runtime-seconds", seconds)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        found.add(json.loads(result.stdout)[path[0]][path[1]])
    assert found == {int(seconds)}


@pytest.mark.parametrize("value", ["0", "-5", "2419201", "1.5", "24h", ""])
def test_a_bad_max_runtime_flag_exits_2_naming_the_flag(value):
    result = run_cli("--outputs", str(DEFAULT_FILE), "--format", "v3", "--max-runtime-seconds", value)
    assert (result.returncode, result.stdout) == (2, "")
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # one line: no argparse usage block
    last = result.stderr.strip()
    assert last.startswith("smddp-infra job-config: error: --max-runtime-seconds must be a whole number "
                           "of seconds from 1 to 2,419,200"), last
    assert last.endswith(f"got {int(value) if value.lstrip('-').isdigit() else value!r}")


def test_the_notes_state_the_runtime_and_the_sdk_v3_default_it_replaces():
    v3_notes = " ".join(emitted("default-p4d", "v3")["notes"])
    assert "maximum runtime 86,400 s (1 day; smddp-infra's default" in v3_notes
    assert "instead of the SDK's own 3600 s" in v3_notes
    v2_notes = " ".join(emitted("p5-64-node", "v2")["notes"])
    assert "maximum runtime 432,000 s (5 days; set by the network's max_runtime_seconds" in v2_notes
    assert "3600" not in v2_notes  # SDK v2's own default is 24 h: nothing to warn about


@pytest.mark.parametrize("value, expected", [
    ("432000", 432000), (604800, 604800), (None, None),
])
def test_the_context_key_sets_the_networks_runtime(value, expected):
    from smddp_infra.settings import NetworkSettings

    context = {"smddp:readMBpsPerGpu": 50} | ({} if value is None else {"smddp:maxRuntimeSeconds": value})
    assert NetworkSettings.from_context(context).max_runtime_seconds == expected


@pytest.mark.parametrize("value", ["0", "2419201", "abc", "1.5", True])
def test_a_bad_context_key_is_one_line_naming_the_key(value):
    from smddp_infra.settings import NetworkSettings

    with pytest.raises(ConfigError) as caught:
        NetworkSettings.from_context({"smddp:readMBpsPerGpu": 50, "smddp:maxRuntimeSeconds": value})
    assert str(caught.value).startswith("smddp:maxRuntimeSeconds must be a whole number of seconds from 1 to 2,419,200")


def test_a_document_whose_subnet_zones_do_not_pair_with_its_subnets_is_refused_by_the_parser() -> None:
    """subnetAvailabilityZones pairs with subnets by position (JobDocument.zone_of): the document's
    parser, which every reader (job-config, preflight, the launch policy) goes through, refuses a
    list of another length instead of pairing the wrong AZ with a subnet."""
    from smddp_infra.contract import parse_document, read_outputs_file
    from smddp_infra.errors import ConfigError

    (network,) = read_outputs_file(OUTPUTS_DIR / "default-p4d.json")
    assert network.document is not None
    raw = network.document.to_json()
    raw.update(subnets=["subnet-0aaa1111", "subnet-0bbb2222"], subnetAvailabilityZones=["us-east-1a"])
    with pytest.raises(ConfigError, match=r"^test: subnetAvailabilityZones must list one AZ per subnet \(2\), "
                                          r"got \['us-east-1a'\]$"):
        parse_document(raw, where="test")
    raw.update(subnetAvailabilityZones=["us-east-1a", "us-east-1b"])
    assert parse_document(raw, where="test").zone_of("subnet-0bbb2222") == "us-east-1b"

"""`smddp-infra job-config`: cdk-outputs.json -> SDK v2 / SDK v3 / boto3 settings.

Unit tests of smddp_infra.jobconfig plus the CLI's behaviour on good and bad outputs
files. That the emitted settings are accepted by SageMaker's API model and by the real
SDK is proven in test_sagemaker_api_model.py and test_sagemaker_sdk.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from _jobconfig_helpers import CONFIG_IDS, OUTPUTS_DIR, REPO, channel_of, cli_env, emitted, run_cli
from smddp_infra.cli import main
from smddp_infra.errors import ConfigError, SmddpError
from smddp_infra.jobconfig import (
    CHECKPOINT_LOCAL_PATH,
    INDIVIDUAL_OUTPUT_KEYS,
    OUTPUT_KEYS,
    SMDDP_DISTRIBUTION,
    TrainingJobSettings,
    checkpoint_s3_uri,
)
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES

DEFAULT_FILE = OUTPUTS_DIR / "default-p4d.json"


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
    extra=st.dictionaries(st.sampled_from(["subnetAvailabilityZones", "note", "requiredThroughputMBps"]),
                          st.integers() | st.text(max_size=5), max_size=3),
)
def test_document_round_trips_through_cdk_outputs(subnet, groups, fs, count, mode, instance, sub, extra):
    settings = TrainingJobSettings(
        subnets=(f"subnet-{subnet}",), security_group_ids=tuple(f"sg-{g}" for g in groups),
        role_arn="arn:aws:iam::123456789012:role/Training", checkpoint_s3_uri="s3://bucket-1/ckpt/",
        file_system_id=f"fs-{fs}", file_system_mount_name="abcdefgh", file_system_directory_path=f"/abcdefgh{sub}",
        instance_type=instance, instance_count=count, region="us-east-1", availability_zone="us-east-1a",
        file_system_access_mode=mode, extra=extra,
    )
    outputs = {"TrainingJobConfig": json.dumps(settings.to_document(), separators=(",", ":"))}
    assert TrainingJobSettings.from_outputs(outputs) == settings


def test_document_keys_are_the_ones_the_construct_emits():
    doc = default_document()
    assert {"version", "region", "availabilityZone", "instanceType", "instanceCount", "subnets",
            "securityGroupIds", "roleArn", "checkpoint", "fileSystem"} <= set(doc)
    assert set(doc["checkpoint"]) == {"s3Uri", "localPath"}
    assert set(doc["fileSystem"]) == {"id", "type", "mountName", "directoryPath", "accessMode"}
    assert set(OUTPUT_KEYS) - set(INDIVIDUAL_OUTPUT_KEYS) == {"TrainingJobConfig"}


def test_extra_document_keys_are_kept():
    settings = TrainingJobSettings.from_outputs(default_outputs())
    assert settings.extra == {"subnetAvailabilityZones": ["us-east-1a"]}
    assert settings.to_document()["subnetAvailabilityZones"] == ["us-east-1a"]


def test_checkpoint_uri_helper_always_ends_with_a_slash():
    assert checkpoint_s3_uri("b", "runs/x") == "s3://b/runs/x/"
    assert checkpoint_s3_uri("b", "/runs/x/") == "s3://b/runs/x/"
    assert checkpoint_s3_uri("b", None) == "s3://b/"


# --- reading cdk-outputs.json ----------------------------------------------------------------

def test_individual_outputs_rebuild_the_same_settings_as_the_document():
    outputs = default_outputs()
    from_doc = TrainingJobSettings.from_outputs(outputs)
    rebuilt = TrainingJobSettings.from_outputs(
        {k: v for k, v in outputs.items() if k != "TrainingJobConfig"},
        instance_type=from_doc.instance_type, instance_count=from_doc.instance_count)
    # region, AZ and extras are only in the document; everything a job needs matches
    for fmt in ("v2", "v3", "boto3"):
        assert rebuilt.render(fmt) == from_doc.render(fmt)


def test_comma_separated_ids_with_spaces_are_split():
    outputs = default_outputs()
    del outputs["TrainingJobConfig"]
    outputs["SecurityGroupIds"] = " sg-0123456789abcdef0 , sg-0fedcba9876543210 "
    settings = TrainingJobSettings.from_outputs(outputs, instance_type="ml.p4d.24xlarge", instance_count=2)
    assert settings.security_group_ids == ("sg-0123456789abcdef0", "sg-0fedcba9876543210")


def test_flags_override_the_document_cluster_shape():
    settings = TrainingJobSettings.from_outputs(default_outputs(), instance_type="ml.p5.48xlarge",
                                                instance_count=16)
    assert (settings.instance_type, settings.instance_count) == ("ml.p5.48xlarge", 16)


def test_settings_value_is_frozen():
    settings = TrainingJobSettings.from_outputs(default_outputs())
    with pytest.raises(Exception):
        settings.instance_count = 3  # type: ignore[misc]


# --- the three formats -----------------------------------------------------------------------

def test_v2_kwargs_switch_off_debugger_and_profiler_and_enable_smddp():
    kw = TrainingJobSettings.from_outputs(default_outputs()).sdk_v2_kwargs()
    assert kw["debugger_hook_config"] is False
    assert kw["disable_profiler"] is True
    assert kw["distribution"] == {"smdistributed": {"dataparallel": {"enabled": True}}}
    assert kw["checkpoint_local_path"] == CHECKPOINT_LOCAL_PATH == "/opt/ml/checkpoints"
    assert kw["checkpoint_s3_uri"].endswith("/")
    assert kw["encrypt_inter_container_traffic"] is True
    assert kw["inputs"] == {"training": {"file_system_id": "fs-0123456789abcdef0", "file_system_type": "FSxLustre",
                                         "directory_path": "/abcdefgh", "file_system_access_mode": "ro"}}
    assert set(kw) == {"role", "instance_type", "instance_count", "subnets", "security_group_ids",
                       "checkpoint_s3_uri", "checkpoint_local_path", "debugger_hook_config", "disable_profiler",
                       "encrypt_inter_container_traffic", "distribution", "inputs"}


@pytest.mark.parametrize("instance_type, launcher", [
    ("ml.p4d.24xlarge", {"smdistributed": {"dataparallel": {"enabled": True}}}),
    ("ml.p4de.24xlarge", {"smdistributed": {"dataparallel": {"enabled": True}}}),
    # SDK v2 refuses the smdistributed launcher on p5; torchrun + backend="smddp" instead
    ("ml.p5.48xlarge", {"torch_distributed": {"enabled": True}}),
    ("ml.p5en.48xlarge", {"torch_distributed": {"enabled": True}}),
    ("ml.trn1.32xlarge", {"torch_distributed": {"enabled": True}}),
])
def test_v2_launcher_follows_the_instance_family(instance_type, launcher):
    settings = TrainingJobSettings.from_outputs(default_outputs(), instance_type=instance_type)
    assert settings.sdk_v2_kwargs()["distribution"] == launcher


def test_v2_distribution_is_a_copy_not_the_shared_constant():
    kw = TrainingJobSettings.from_outputs(default_outputs()).sdk_v2_kwargs()
    kw["distribution"]["smdistributed"]["dataparallel"]["enabled"] = False
    assert SMDDP_DISTRIBUTION["smdistributed"]["dataparallel"]["enabled"] is True


def test_v3_pieces_use_model_trainer_field_names_and_say_how_to_run_smddp():
    pieces = TrainingJobSettings.from_outputs(default_outputs()).sdk_v3_pieces(channel="fsx")
    assert set(pieces) == {"role", "compute", "networking", "checkpoint_config", "training_input_mode",
                           "input_data_config", "distributed", "notes"}
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
    frag = TrainingJobSettings.from_outputs(default_outputs()).create_training_job_fragment()
    assert set(frag) == {"RoleArn", "ResourceConfig", "VpcConfig", "CheckpointConfig", "InputDataConfig",
                         "EnableInterContainerTrafficEncryption"}
    assert frag["InputDataConfig"][0]["InputMode"] == "File"
    assert frag["ResourceConfig"] == {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 4}


def test_document_switches_for_encryption_and_isolation_reach_every_format():
    outputs = with_document(encryptInterContainerTraffic=False, enableNetworkIsolation=True)
    settings = TrainingJobSettings.from_outputs(outputs)
    assert settings.sdk_v2_kwargs()["encrypt_inter_container_traffic"] is False
    assert settings.sdk_v2_kwargs()["enable_network_isolation"] is True
    assert settings.sdk_v3_pieces()["networking"]["enable_inter_container_traffic_encryption"] is False
    assert settings.sdk_v3_pieces()["networking"]["enable_network_isolation"] is True
    frag = settings.create_training_job_fragment()
    assert (frag["EnableInterContainerTrafficEncryption"], frag["EnableNetworkIsolation"]) == (False, True)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_the_three_formats_agree_for_every_representative_file(config_id):
    v2, v3, frag = (emitted(config_id, f) for f in ("v2", "v3", "boto3"))
    channel = channel_of(config_id)
    assert v2["subnets"] == v3["networking"]["subnets"] == frag["VpcConfig"]["Subnets"]
    assert v2["security_group_ids"] == v3["networking"]["security_group_ids"] == frag["VpcConfig"]["SecurityGroupIds"]
    assert v2["role"] == v3["role"] == frag["RoleArn"]
    assert v2["checkpoint_s3_uri"] == v3["checkpoint_config"]["s3_uri"] == frag["CheckpointConfig"]["S3Uri"]
    assert v2["instance_count"] == v3["compute"]["instance_count"] == frag["ResourceConfig"]["InstanceCount"]
    fs = frag["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]
    assert v2["inputs"][channel]["file_system_id"] == v3["input_data_config"][0]["data_source"]["file_system_id"] \
        == fs["FileSystemId"]
    assert frag["InputDataConfig"][0]["ChannelName"] == v3["input_data_config"][0]["channel_name"] == channel


# --- bad input: one clear line, exit 2 -------------------------------------------------------

@pytest.mark.parametrize("outputs, expected", [
    (with_document(securityGroupIds=[f"sg-0123456789abcdef{i}" for i in range(6)]), "securityGroupIds must list 1 to 5"),
    (with_document(securityGroupIds=[]), "securityGroupIds must list 1 to 5"),
    (with_document(subnets=[f"subnet-0123456789abcde{i:02d}" for i in range(17)]), "subnets must list 1 to 16"),
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
    (with_document(**{"checkpoint.s3Uri": "https://bucket-1/checkpoints/"}), "checkpoint.s3Uri must be s3://"),
    (with_document(**{"checkpoint.localPath": "checkpoints"}), "checkpoint.localPath must be an absolute path"),
    (with_document(roleArn="arn:aws:iam::123:role/x"), "roleArn must be an IAM role ARN"),
    (with_document(instanceType="ml.g5.48xlarge"), "instanceType must be a SageMaker EFA training instance type"),
    (with_document(instanceCount=0), "instanceCount must be a whole number >= 1, got 0"),
    (with_document(instanceCount="4"), "instanceCount must be a whole number >= 1, got '4'"),
    (with_document(encryptInterContainerTraffic="yes"), "encryptInterContainerTraffic must be true or false"),
    (with_document(version=2), "TrainingJobConfig.version must be 1..1"),
    (with_document(roleArn=None), "TrainingJobConfig is missing the key 'roleArn'"),
    ({"TrainingJobConfig": "{not json"}, "TrainingJobConfig must be a JSON document"),
    ({"TrainingJobConfig": "[1, 2]"}, "TrainingJobConfig must be a JSON object"),
    ({"VpcId": "vpc-0123456789abcdef0"}, "is missing TrainingSubnetIds"),
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


def test_individual_outputs_without_cluster_shape_ask_for_the_flags(capsys):
    line = cli_error(capsys, "--outputs", str(OUTPUTS_DIR / "individual-outputs-only.json"), "--format", "v2")
    assert "pass --instance-type and --instance-count" in line


def test_several_stacks_need_stack_and_the_error_lists_them(capsys):
    line = cli_error(capsys, "--outputs", str(OUTPUTS_DIR / "platform-two-stacks.json"), "--format", "v2")
    assert "pass --stack NAME; stacks: PlatformVpcStack, TrainingNetworkStack" in line
    assert "with training outputs: TrainingNetworkStack" in line
    line = cli_error(capsys, "--outputs", str(OUTPUTS_DIR / "platform-two-stacks.json"), "--format", "v2",
                     "--stack", "Nope")
    assert "--stack 'Nope' is not in the outputs file; stacks: PlatformVpcStack, TrainingNetworkStack" in line


def test_missing_file_and_bad_json_are_one_line(tmp_path, capsys):
    line = cli_error(capsys, "--outputs", str(tmp_path / "nope.json"), "--format", "v2")
    assert "does not exist" in line and "--outputs-file" in line
    bad = tmp_path / "bad.json"
    bad.write_text('{"TrainingNetworkStack": {')
    assert "is not valid JSON" in cli_error(capsys, "--outputs", str(bad), "--format", "v2")
    bad.write_text("[]")
    assert "must be a JSON object of stacks" in cli_error(capsys, "--outputs", str(bad), "--format", "v2")


def test_a_bad_channel_name_is_refused(capsys):
    line = cli_error(capsys, "--outputs", str(DEFAULT_FILE), "--format", "boto3", "--channel", "my channel")
    assert "channel must be 1-64 letters" in line and "'my channel'" in line


def test_errors_are_smddp_errors():
    with pytest.raises(SmddpError):
        TrainingJobSettings.from_outputs(with_document(instanceCount=0))
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ConfigError):
        replace(TrainingJobSettings.from_outputs(default_outputs()), file_system_type="EFS").validate()


# --- the real command ------------------------------------------------------------------------

def test_cli_prints_json_and_exits_zero():
    result = run_cli("--outputs", str(DEFAULT_FILE), "--format", "boto3")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout)["VpcConfig"]["Subnets"] == ["subnet-0123456789abcdef0"]


def test_cli_bad_input_exits_2_in_a_real_process(tmp_path):
    result = run_cli("--outputs", str(tmp_path / "missing.json"), "--format", "v3")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("smddp-infra job-config: error: --outputs file")
    assert "Traceback" not in result.stderr


def test_job_config_never_imports_aws_cdk():
    """The CLI path must work where Node/jsii are absent: no aws_cdk, jsii, constructs or
    smddp_infra.constructs may be imported, even indirectly."""
    code = (
        "import sys, io, contextlib\n"
        "import smddp_infra.jobconfig\n"
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

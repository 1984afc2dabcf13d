"""The real SageMaker Python SDK v2 builds a valid SMDDP job from `job-config --format v2`, offline.

For every representative cdk-outputs.json the REAL CLI's v2 output (subprocess) is used as a
user would: ``PyTorch(entry_point=..., source_dir=<local dir>, **cfg["estimator"])`` on a
``sagemaker.Session`` whose SageMaker client is a real botocore client wrapped in botocore's
``Stubber``, then ``fit(inputs={name: FileSystemInput(**args) ...cfg["fit"]["inputs"]},
wait=False)``. The SDK tars the script and uploads it (S3 PutObject, answered by a two-call
S3 double in the session's ``before-send`` hook, which records where it went), then sends its
CreateTrainingJob to the stub; the test reads both. Nothing about S3 locations is invented
here: ``output_path`` and ``code_location`` come from job-config, and the older stack without
them shows the SDK falling back to its default bucket, as the CLI's warning says.

Nothing reaches the network:
- the socket guard (tests/_net_guard.py) refuses and records any non-loopback attempt for
  the whole module, including the SDK's import (which builds a default Session);
- dummy credentials in the environment and ``AWS_EC2_METADATA_DISABLED`` keep botocore's
  credential chain off the instance metadata service;
- a ``before-send`` hook on the boto3 session answers S3 PutObject/ListBuckets and refuses
  any other HTTP request a stub did not answer;
- SDK v2 telemetry (a GET to an S3 bucket after ``fit``) is switched off with the SDK's own
  switch, ``SageMaker.PythonSDK.Modules.TelemetryOptOut`` in the SDK defaults config
  (v2 has no environment variable for it); the tests prove it is off AND that the guard
  would catch it if it were on.

SDK v2 only in this process: v2 and v3 both own the ``sagemaker`` import name. SDK v3 runs in
its own venv (.venv-sdkv3), driven by tests/test_sagemaker_sdk_v3.py.
"""

from __future__ import annotations

import copy
import inspect
import json
import types
from typing import Any, Iterator

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber

from _jobconfig_helpers import CONFIG_IDS, OLDER_STACK_ID, PLAN_CONFIG_ID, channel_of, emitted
from _net_guard import NetGuard, module_no_network  # noqa: F401  (fixture)
from _sagemaker_shape_walker import all_problems
from smddp_infra.account.session import share_data_loader

DUMMY_KEY, DUMMY_SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TELEMETRY_OFF = {"SchemaVersion": "1.0", "SageMaker": {"PythonSDK": {"Modules": {"TelemetryOptOut": True}}}}
TELEMETRY_ON = {"SchemaVersion": "1.0", "SageMaker": {"PythonSDK": {"Modules": {"TelemetryOptOut": False}}}}
REGIONS = {"default-p4d": "us-east-1", "p5-64-node": "us-west-2", "govcloud-older-stack": "us-gov-west-1",
           "two-stacks": "us-east-1", "individual-outputs": "eu-west-1", "training-plan": "us-east-1"}
DEFAULT_BUCKET = "smddp-offline-default-bucket"


@pytest.fixture(scope="module")
def sdk(module_no_network, tmp_path_factory) -> Iterator[types.SimpleNamespace]:  # noqa: F811
    """The SDK, imported under the guard with an environment that cannot reach AWS."""
    config = tmp_path_factory.mktemp("sagemaker-config") / "config.yaml"
    config.write_text("SchemaVersion: '1.0'\nSageMaker:\n  PythonSDK:\n    Modules:\n      TelemetryOptOut: true\n")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SAGEMAKER",
                     "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
            mp.delenv(name, raising=False)
        mp.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
        mp.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        mp.setenv("AWS_EC2_METADATA_DISABLED", "true")
        mp.setenv("AWS_CONFIG_FILE", str(config.parent / "no-aws-config"))
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", str(config.parent / "no-aws-credentials"))
        # The SDK reads its defaults from these (also at import): only ours, telemetry off.
        mp.setenv("SAGEMAKER_ADMIN_CONFIG_OVERRIDE", str(config))
        import jsonschema

        from _jsonschema_once import checking_each_schema_once

        mp.setattr(jsonschema, "validate", checking_each_schema_once(jsonschema))
        mp.setenv("SAGEMAKER_USER_CONFIG_OVERRIDE", str(config))
        mp.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
        import sagemaker
        import sagemaker.telemetry.telemetry_logging as telemetry
        from sagemaker.config.config_schema import TELEMETRY_OPT_OUT_PATH
        from sagemaker.inputs import FileSystemInput
        from sagemaker.pytorch import PyTorch
        from sagemaker.utils import resolve_value_from_config

        assert module_no_network.blocked == [], "importing the SDK tried the network"
        source_dir = tmp_path_factory.mktemp("src")
        (source_dir / "train.py").write_text("import torch.distributed as dist\n"
                                             "import smdistributed.dataparallel.torch.torch_smddp  # noqa: F401\n"
                                             "dist.init_process_group(backend='smddp')\n")
        yield types.SimpleNamespace(sagemaker=sagemaker, PyTorch=PyTorch, FileSystemInput=FileSystemInput,
                                    telemetry=telemetry, TELEMETRY_OPT_OUT_PATH=TELEMETRY_OPT_OUT_PATH,
                                    resolve_value_from_config=resolve_value_from_config, guard=module_no_network,
                                    source_dir=source_dir)


class _Body:
    """The raw body botocore reads an HTTP response from."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.data


#: ListBuckets as S3 answers it: the SDK checks that its default bucket exists before it
#: uses it (only the older stack's job gets that far).
_LIST_BUCKETS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
    "<Owner><ID>0123456789abcdef</ID></Owner><Buckets><Bucket>"
    f"<Name>{DEFAULT_BUCKET}</Name><CreationDate>2024-01-01T00:00:00.000Z</CreationDate>"
    "</Bucket></Buckets></ListAllMyBucketsResult>"
).encode()


class OfflineJob:
    """One SDK session with a stubbed SageMaker client, and the requests it produced."""

    def __init__(self, sdk: types.SimpleNamespace, region: str, *, sagemaker_config: dict = TELEMETRY_OFF):
        self.escaped: list[str] = []
        self.uploads: list[str] = []  # s3://bucket/key of every PutObject the SDK made
        self.boto_session = share_data_loader(boto3.Session(aws_access_key_id=DUMMY_KEY, aws_secret_access_key=DUMMY_SECRET,
                                                                region_name=region))
        self.boto_session.events.register("before-send", self._answer_s3_or_refuse)
        self.boto_session.events.register(
            "provide-client-params.s3.PutObject",
            lambda params, **_: self.uploads.append(f"s3://{params['Bucket']}/{params['Key']}"))
        self.client = self.boto_session.client("sagemaker")
        self.requests: list[dict] = []
        self.client.meta.events.register("provide-client-params.sagemaker.CreateTrainingJob",
                                         lambda params, **_: self.requests.append(copy.deepcopy(params)))
        self.stubber = Stubber(self.client)
        self.stubber.add_response(
            "create_training_job",
            {"TrainingJobArn": f"arn:aws:sagemaker:{region}:123456789012:training-job/smddp-offline"},
            expected_params=None)
        self.stubber.activate()
        self.session = sdk.sagemaker.Session(boto_session=self.boto_session, sagemaker_client=self.client,
                                             default_bucket=DEFAULT_BUCKET,
                                             sagemaker_config=sagemaker_config)

    def _answer_s3_or_refuse(self, request: Any, event_name: str = "", **_: Any) -> Any:
        """A test double of S3 for the two calls the SDK makes (the code upload, and the
        default-bucket check of an older stack's job); anything else is refused."""
        if event_name == "before-send.s3.PutObject":
            return AWSResponse(request.url, 200, {"ETag": '"d41d8cd98f00b204e9800998ecf8427e"'}, _Body())
        if event_name == "before-send.s3.ListBuckets":
            return AWSResponse(request.url, 200, {"Content-Type": "application/xml"}, _Body(_LIST_BUCKETS))
        self.escaped.append(f"{request.method} {request.url}")
        raise RuntimeError(f"unstubbed AWS call {request.method} {request.url}")

    def fit(self, sdk: types.SimpleNamespace, v2: dict) -> dict:
        """What the docs tell a user to write, with everything else taken from job-config."""
        cfg = copy.deepcopy(v2)
        estimator = sdk.PyTorch(
            entry_point="train.py",
            source_dir=str(sdk.source_dir),  # local: the SDK tars and uploads it to code_location
            framework_version="2.2.0",  # the newest PyTorch v2 accepts for smdistributed dataparallel
            py_version="py310",
            sagemaker_session=self.session,
            **cfg["estimator"],
        )
        estimator.fit(inputs={name: sdk.FileSystemInput(**args) for name, args in cfg["fit"]["inputs"].items()},
                      wait=False)
        self.stubber.assert_no_pending_responses()
        assert len(self.requests) == 1
        return self.requests[0]


@pytest.fixture(scope="module")
def sdk_run(sdk) -> types.SimpleNamespace:
    """The CreateTrainingJob request the SDK built per configuration (one fit each), and every
    telemetry send the SDK attempted meanwhile (the sender is replaced by a recorder)."""
    built, sessions, uploads, telemetry_sent = {}, {}, {}, []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sdk.telemetry, "_send_telemetry_request", lambda *a, **k: telemetry_sent.append(a))
        for config_id in CONFIG_IDS:
            job = OfflineJob(sdk, REGIONS[config_id])
            built[config_id] = job.fit(sdk, emitted(config_id, "v2"))
            assert job.escaped == [], f"{config_id}: the SDK made AWS calls no stub answered"
            sessions[config_id] = job.session
            uploads[config_id] = job.uploads
    sdk.guard.assert_clean()
    return types.SimpleNamespace(requests=built, sessions=sessions, uploads=uploads, telemetry_sent=telemetry_sent)


@pytest.fixture(scope="module")
def sdk_requests(sdk_run) -> dict[str, dict]:
    return sdk_run.requests


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_has_the_vpc_and_checkpoint_config(sdk_requests, config_id):
    request, v2 = sdk_requests[config_id], emitted(config_id, "v2")["estimator"]
    assert request["VpcConfig"] == {"Subnets": v2["subnets"], "SecurityGroupIds": v2["security_group_ids"]}
    assert request["CheckpointConfig"] == {"S3Uri": v2["checkpoint_s3_uri"], "LocalPath": "/opt/ml/checkpoints"}
    assert request["CheckpointConfig"]["S3Uri"].endswith("/")
    assert request["RoleArn"] == v2["role"]
    assert request["ResourceConfig"]["InstanceType"] == v2["instance_type"]
    assert request["ResourceConfig"]["InstanceCount"] == v2["instance_count"]


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_carries_the_emitted_maximum_runtime(sdk_requests, config_id):
    """``max_run`` reaches the request as StoppingCondition (v2's own default is also 24 h, so the
    p5 network's 5 days is what shows the value is job-config's)."""
    v2 = emitted(config_id, "v2")["estimator"]
    assert sdk_requests[config_id]["StoppingCondition"]["MaxRuntimeInSeconds"] == v2["max_run"]
    assert v2["max_run"] == (432000 if config_id == "p5-64-node" else 86400)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_runs_on_the_training_plan_job_config_names(sdk_requests, config_id):
    """v2's ``training_plan`` reaches the request as ResourceConfig.TrainingPlanArn; a network
    without a plan sends none (on-demand capacity)."""
    v2 = emitted(config_id, "v2")["estimator"]
    plan = sdk_requests[config_id]["ResourceConfig"].get("TrainingPlanArn")
    assert plan == v2.get("training_plan")
    assert (plan is not None) == (config_id == PLAN_CONFIG_ID)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_mounts_the_fsx_channel_in_file_mode(sdk_requests, config_id):
    request, fragment = sdk_requests[config_id], emitted(config_id, "boto3")
    channels = {c["ChannelName"]: c for c in request["InputDataConfig"]}
    channel = channels.pop(channel_of(config_id))
    # with network isolation the SDK adds an S3 "code" channel: the container cannot fetch it
    # (what it points at is checked in test_sdk_uploads_the_script_under_the_emitted_code_prefix)
    assert set(channels) == ({"code"} if fragment.get("EnableNetworkIsolation") else set())
    assert channel["DataSource"] == fragment["InputDataConfig"][0]["DataSource"]
    assert channel["DataSource"]["FileSystemDataSource"]["FileSystemType"] == "FSxLustre"
    # the SDK leaves the channel's InputMode to the job-wide mode, which is File
    assert channel.get("InputMode", request["AlgorithmSpecification"]["TrainingInputMode"]) == "File"


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_has_no_debugger_hook_and_the_profiler_off(sdk_requests, config_id):
    request = sdk_requests[config_id]
    assert "DebugHookConfig" not in request
    assert "DebugRuleConfigurations" not in request
    assert request["ProfilerConfig"] == {"DisableProfiler": True}
    assert "ProfilerRuleConfigurations" not in request


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_enables_smddp_and_keeps_the_security_switches(sdk_requests, config_id):
    request, fragment = sdk_requests[config_id], emitted(config_id, "boto3")
    hyper = request["HyperParameters"]
    if "torch_distributed" in emitted(config_id, "v2")["estimator"]["distribution"]:  # p5: torchrun launcher
        assert hyper["sagemaker_torch_distributed_enabled"] == "true"
        assert "sagemaker_distributed_dataparallel_enabled" not in hyper
    else:  # p4d/p4de: mpirun + smddprun
        assert hyper["sagemaker_distributed_dataparallel_enabled"] == "true"
    # the SDK sends the member only when it is true
    assert request.get("EnableInterContainerTrafficEncryption", False) is fragment["EnableInterContainerTrafficEncryption"]
    assert request.get("EnableNetworkIsolation", False) is fragment.get("EnableNetworkIsolation", False)


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_sdk_request_passes_botocore_and_the_shape_walker(sdk_requests, config_id):
    assert all_problems(sdk_requests[config_id]) == []


# --- where the model and the code go: the prefixes the execution role can use ------------------

@pytest.mark.parametrize("config_id", [c for c in CONFIG_IDS if c != OLDER_STACK_ID])
def test_sdk_writes_the_model_to_the_emitted_output_prefix(sdk_requests, config_id):
    estimator = emitted(config_id, "v2")["estimator"]
    assert sdk_requests[config_id]["OutputDataConfig"]["S3OutputPath"] == estimator["output_path"]
    assert sdk_requests[config_id]["OutputDataConfig"] == emitted(config_id, "boto3")["OutputDataConfig"]


@pytest.mark.parametrize("config_id", [c for c in CONFIG_IDS if c != OLDER_STACK_ID])
def test_sdk_uploads_the_script_under_the_emitted_code_prefix(sdk_run, config_id):
    """The SDK uploads with the USER's credentials; the job reads the archive with the
    execution role, which may read only the code prefix."""
    estimator = emitted(config_id, "v2")["estimator"]
    code_prefix = estimator["code_location"]
    request = sdk_run.requests[config_id]
    submitted = json.loads(request["HyperParameters"]["sagemaker_submit_directory"])
    s3_channels = [c for c in request["InputDataConfig"] if "S3DataSource" in c["DataSource"]]
    if estimator.get("enable_network_isolation"):
        # the container cannot reach S3: SageMaker delivers the archive as the "code" channel
        assert submitted == "/opt/ml/input/data/code/sourcedir.tar.gz"
        (channel,) = s3_channels
        assert channel["ChannelName"] == "code"
        archive = channel["DataSource"]["S3DataSource"]["S3Uri"]
    else:
        assert s3_channels == []
        archive = submitted
    assert sdk_run.uploads[config_id] == [archive]  # one upload: the archive the job runs
    assert archive.startswith(code_prefix)
    assert archive.endswith("/source/sourcedir.tar.gz")
    assert "//" not in archive.removeprefix("s3://")  # code_location's trailing "/" is joined cleanly


def test_an_older_stack_job_falls_back_to_the_sdk_default_bucket(sdk_run):
    """What the CLI's warning for an older stack says, shown by the SDK itself: with no
    output_path/code_location the model and the code go to the session's default bucket
    (``sagemaker-<region>-<account>`` unless set), which the execution role cannot use."""
    request = sdk_run.requests[OLDER_STACK_ID]
    estimator = emitted(OLDER_STACK_ID, "v2")["estimator"]
    assert "output_path" not in estimator and "code_location" not in estimator
    assert request["OutputDataConfig"]["S3OutputPath"] == f"s3://{DEFAULT_BUCKET}/"
    submitted = json.loads(request["HyperParameters"]["sagemaker_submit_directory"])
    assert submitted.startswith(f"s3://{DEFAULT_BUCKET}/")
    assert sdk_run.uploads[OLDER_STACK_ID] == [submitted]


def test_the_estimator_section_is_constructor_arguments_and_fit_takes_the_fit_section(sdk):
    """Why v2 has two sections. ``inputs`` is a ``fit`` argument; handed to the constructor
    (the old flat form splatted whole), sagemaker 2.257.7 does not even raise: EstimatorBase
    swallows unknown keyword arguments, and the job is created WITHOUT the FSx channel."""
    cfg = emitted("default-p4d", "v2")
    assert set(cfg["fit"]) <= set(inspect.signature(sdk.PyTorch.fit).parameters)
    assert "inputs" not in inspect.signature(sdk.sagemaker.estimator.EstimatorBase.__init__).parameters
    job = OfflineJob(sdk, "us-east-1")
    flat = sdk.PyTorch(entry_point="train.py", source_dir=str(sdk.source_dir), framework_version="2.2.0",
                       py_version="py310", sagemaker_session=job.session, **cfg["estimator"], **cfg["fit"])
    flat.fit(wait=False)
    assert job.escaped == []
    assert "InputDataConfig" not in job.requests[0]  # the data silently gone
    sdk.guard.assert_clean()


def test_sdk_passes_six_security_groups_through_and_the_walker_catches_it(sdk):
    """The SDK (and botocore's own validation, which the stubbed call still runs) let six
    groups through to the service; the harness is what catches it before AWS would."""
    v2 = emitted("default-p4d", "v2")
    v2["estimator"]["security_group_ids"] = [f"sg-0123456789abcdef{i}" for i in range(6)]
    job = OfflineJob(sdk, "us-east-1")
    request = job.fit(sdk, v2)
    assert job.escaped == []
    assert len(request["VpcConfig"]["SecurityGroupIds"]) == 6
    assert any("SecurityGroupIds: 6 entries is above the maximum 5" in p for p in all_problems(request))
    sdk.guard.assert_clean()


def test_sdk_refuses_a_wrong_file_system_type(sdk):
    args = emitted("default-p4d", "v2")["fit"]["inputs"]["training"]
    with pytest.raises(ValueError, match="Unrecognized file system type: Lustre"):
        sdk.FileSystemInput(**dict(args, file_system_type="Lustre"))


# --- the guard and the telemetry switch ---------------------------------------------------------

def test_socket_guard_is_active_for_the_sdk_tests(sdk):
    assert sdk.guard.active
    assert sdk.guard.probe()
    assert sdk.guard.blocked == []


def test_socket_guard_leaves_loopback_open_for_local_servers(sdk):
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        client = socket.create_connection(server.getsockname(), timeout=5)
        client.close()
    finally:
        server.close()
    assert sdk.guard.blocked == []


def test_unstubbed_aws_calls_are_refused_before_any_socket(sdk):
    job = OfflineJob(sdk, "us-east-1")
    with pytest.raises(RuntimeError, match="unstubbed AWS call POST https://sts"):
        job.boto_session.client("sts").get_caller_identity()
    assert len(job.escaped) == 1
    sdk.guard.assert_clean()


def test_telemetry_is_switched_off_and_nothing_is_sent(sdk, sdk_run):
    for session in sdk_run.sessions.values():
        assert sdk.resolve_value_from_config(None, sdk.TELEMETRY_OPT_OUT_PATH, default_value=False,
                                             sagemaker_session=session) is True
    assert sdk_run.telemetry_sent == []


def test_guard_catches_real_sdk_telemetry_if_it_were_on(sdk):
    """Control for the test above: ``fit`` IS instrumented, so the switch is what keeps it
    quiet. With the switch off the real telemetry code runs and swallows every error; the
    guard still records its attempt to reach the telemetry bucket."""
    with pytest.MonkeyPatch.context() as mp:
        inner = NetGuard().install(mp)  # inside the module guard: sees attempts first
        job = OfflineJob(sdk, "us-east-1", sagemaker_config=TELEMETRY_ON)
        job.fit(sdk, emitted("default-p4d", "v2"))
    assert any("sm-pysdk-t-us-east-1" in attempt for attempt in inner.blocked), inner.blocked
    assert job.escaped == ["POST https://sts.us-east-1.amazonaws.com/"]  # its account-id lookup
    sdk.guard.assert_clean()

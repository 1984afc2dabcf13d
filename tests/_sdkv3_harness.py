"""Run INSIDE .venv-sdkv3: the real SageMaker Python SDK v3 builds and submits jobs, offline.

Usage: ``.venv-sdkv3/bin/python tests/_sdkv3_harness.py INPUT.json`` prints one JSON document.
tests/test_sagemaker_sdk_v3.py writes INPUT.json (every ``job-config --format v3`` output of the
configuration matrix, the synthesized execution-role policy and trust policy) and asserts on
what this prints. One process for the whole matrix: importing sagemaker-train costs seconds.

Per job, what a user does with the v3 output: ``Session(boto_session=..., **cfg["session"])``,
``ModelTrainer(role=..., compute=Compute(**...), networking=Networking(**...), ...,
source_code=SourceCode(...), distributed=Torchrun(**...))`` and ``.train(wait=False)``. Every
AWS call is answered in botocore's ``before-send`` event (the wire request is parsed, a wire
response is returned, botocore parses it as it would AWS's):

- ``iam:SimulatePrincipalPolicy`` by tests/_iam_simulator.py over the role's real policy (the
  SDK's role check and its staging-bucket check), or refused with AccessDenied for a caller
  that may not simulate; ``iam:GetRole`` with the role's real trust policy;
- S3 ``ListBuckets`` (the session's bucket check) and ``PutObject`` (uploads are recorded, and
  the small JSON files the SDK writes into sm_drivers are kept);
- SageMaker ``CreateTrainingJob`` (recorded: the request body as sent) and the
  ``DescribeTrainingJob`` that sagemaker-core sends right after it;
- anything else is recorded as escaped and refused. A socket guard records and refuses any
  connection beyond loopback (SDK telemetry, instance metadata), on top of the SDK's own
  telemetry switch that the caller sets in the environment.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import io
import json
import socket
import sys
import threading
import traceback
import urllib.parse
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _iam_simulator import simulate

BLOCKED: list[str] = []


LOOPBACK = ("127.0.0.1", "::1", "localhost")
#: TEST-NET-1 (RFC 5737), never routed: the probe that proves the guard is live.
PROBE = ("192.0.2.1", 443)


def _guard_sockets() -> None:
    """Refuse and record every non-loopback connection and name lookup (SDK telemetry and
    botocore's credential fetchers swallow errors, so refusing alone would go unnoticed)."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if sock.family != getattr(socket, "AF_UNIX", None) and host not in LOOPBACK:
            BLOCKED.append(f"connect {address}")
            raise OSError(f"_sdkv3_harness blocked a connection to {address}")
        return real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and name not in LOOPBACK:
            BLOCKED.append(f"getaddrinfo {name}")
            raise socket.gaierror(f"_sdkv3_harness blocked a name lookup of {name}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo


def _probe_guard() -> bool:
    """True when a connection to an unroutable address is refused by the guard, not the OS."""
    before = len(BLOCKED)
    with socket.socket() as sock:
        try:
            sock.connect(PROBE)
        except OSError:
            pass
    caught = len(BLOCKED) == before + 1
    del BLOCKED[before:]
    return caught


_guard_sockets()

import boto3  # noqa: E402 - after the socket guard, on purpose
from botocore.awsrequest import AWSResponse  # noqa: E402

TRAINING_IMAGE = "763104351884.dkr.ecr.{region}.amazonaws.com/pytorch-training:2.8.0-gpu-py312"
IAM_NS = "https://iam.amazonaws.com/doc/2010-05-08/"


class _Body:
    def __init__(self, data: bytes = b"") -> None:
        self.data = data

    def stream(self, **_: Any) -> Any:
        yield self.data


def _xml(operation: str, result: str) -> bytes:
    return (f'<{operation}Response xmlns="{IAM_NS}"><{operation}Result>{result}</{operation}Result>'
            f"<ResponseMetadata><RequestId>offline</RequestId></ResponseMetadata></{operation}Response>").encode()


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    if hasattr(body, "read"):
        position = body.tell() if hasattr(body, "tell") else None
        data = body.read()
        if position is not None and hasattr(body, "seek"):
            body.seek(position)
        return data if isinstance(data, bytes) else data.encode()
    return b""


def _aws_chunked(data: bytes) -> bytes:
    """The payload of an ``aws-chunked`` body (botocore sends uploads this way with a checksum
    trailer): ``<hex size>[;ext]\\r\\n<data>\\r\\n ... 0\\r\\n<trailers>``."""
    payload, rest = b"", data
    while rest:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            break
        payload, rest = payload + rest[:size], rest[size + 2:]
    return payload



_LOADER: Any = None


def _share_loader(session: Any) -> None:
    """One botocore model loader for every job's Session (smddp_infra.account.session's share_data_loader;
    this runs in .venv-sdkv3, where smddp_infra is not installed): each new Session parsed SageMaker's, IAM's and S3's
    JSON models again. Events and credentials stay the job's own."""
    global _LOADER
    if _LOADER is None:
        _LOADER = session._session.get_component("data_loader")
    else:
        session._session.register_component("data_loader", _LOADER)

class OfflineAws:
    """One job's AWS: answers in ``before-send``, records what the SDK sent."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.region: str = job["region"]
        self.caller_simulates: bool = job["caller"] == "simulates"
        self.statements: list[dict[str, Any]] = job["policy"]
        self.trust: dict[str, Any] = job["trust"]
        self.role_arn: str = job["v3"]["role"]
        self.account = self.role_arn.split(":")[4]
        self.buckets: list[str] = job["buckets"]
        self.create_requests: list[dict[str, Any]] = []
        self.simulations: list[dict[str, Any]] = []
        self.uploads: list[str] = []
        self.small_files: dict[str, Any] = {}
        self.escaped: list[str] = []
        self.boto_session = boto3.Session(aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
                                          aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                          region_name=self.region)
        _share_loader(self.boto_session)
        self.boto_session.events.register("before-send", self.answer)

    def answer(self, request: Any, event_name: str = "", **_: Any) -> Any:
        operation = event_name.removeprefix("before-send.")
        handler: Callable[[Any], AWSResponse] | None = {
            "iam.SimulatePrincipalPolicy": self._simulate,
            "iam.GetRole": self._get_role,
            "sts.GetCallerIdentity": self._caller_identity,
            "s3.ListBuckets": self._list_buckets,
            "s3.HeadBucket": self._head_bucket,
            "s3.PutObject": self._put_object,
            "sagemaker.CreateTrainingJob": self._create_training_job,
            "sagemaker.DescribeTrainingJob": self._describe_training_job,
        }.get(operation)
        if handler is None:
            self.escaped.append(f"{operation} {request.method} {request.url}")
            raise RuntimeError(f"unanswered AWS call {operation} {request.method} {request.url}")
        return handler(request)

    # -- IAM --------------------------------------------------------------------------------
    def _simulate(self, request: Any) -> AWSResponse:
        form = urllib.parse.parse_qs(_body_bytes(request.body).decode())
        actions = [form[k][0] for k in sorted(form, key=_member_order) if k.startswith("ActionNames.member.")]
        resources = [form[k][0] for k in sorted(form, key=_member_order) if k.startswith("ResourceArns.member.")]
        record: dict[str, Any] = {"actions": actions, "resources": resources,
                                  "context": sorted(k for k in form if k.startswith("ContextEntries"))}
        self.simulations.append(record)
        if not self.caller_simulates:
            record["answer"] = "AccessDenied"
            body = (f'<ErrorResponse xmlns="{IAM_NS}"><Error><Type>Sender</Type><Code>AccessDenied</Code>'
                    "<Message>User is not authorized to perform: iam:SimulatePrincipalPolicy</Message></Error>"
                    "<RequestId>offline</RequestId></ErrorResponse>").encode()
            return AWSResponse(request.url, 403, {"Content-Type": "text/xml"}, _Body(body))
        results = simulate(self.statements, actions, resources or None)
        record["answer"] = results
        members = "".join(
            f"<member><EvalActionName>{escape(r['EvalActionName'])}</EvalActionName>"
            f"<EvalResourceName>{escape(r['EvalResourceName'])}</EvalResourceName>"
            f"<EvalDecision>{r['EvalDecision']}</EvalDecision><MatchedStatements/>"
            "<MissingContextValues/></member>" for r in results)
        return AWSResponse(request.url, 200, {"Content-Type": "text/xml"}, _Body(_xml(
            "SimulatePrincipalPolicy", f"<IsTruncated>false</IsTruncated><EvaluationResults>{members}</EvaluationResults>")))

    def _get_role(self, request: Any) -> AWSResponse:
        name = urllib.parse.parse_qs(_body_bytes(request.body).decode())["RoleName"][0]
        if name != self.role_arn.split("/")[-1]:
            body = (f'<ErrorResponse xmlns="{IAM_NS}"><Error><Type>Sender</Type><Code>NoSuchEntity</Code>'
                    f"<Message>The role with name {escape(name)} cannot be found.</Message></Error>"
                    "<RequestId>offline</RequestId></ErrorResponse>").encode()
            return AWSResponse(request.url, 404, {"Content-Type": "text/xml"}, _Body(body))
        trust = urllib.parse.quote(json.dumps(self.trust))  # IAM returns the document URL-encoded
        role = (f"<Path>/</Path><RoleName>{escape(name)}</RoleName><RoleId>AROAOFFLINEOFFLINE0000</RoleId>"
                f"<Arn>{escape(self.role_arn)}</Arn><CreateDate>2026-01-01T00:00:00Z</CreateDate>"
                f"<AssumeRolePolicyDocument>{trust}</AssumeRolePolicyDocument>")
        return AWSResponse(request.url, 200, {"Content-Type": "text/xml"}, _Body(_xml("GetRole", f"<Role>{role}</Role>")))

    def _caller_identity(self, request: Any) -> AWSResponse:
        """The person launching: a CI role (the session's account lookup needs one)."""
        body = ('<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>'
                f"<Arn>arn:aws:sts::{self.account}:assumed-role/ci-launcher/offline</Arn>"
                f"<UserId>AROAOFFLINE:offline</UserId><Account>{self.account}</Account></GetCallerIdentityResult>"
                "<ResponseMetadata><RequestId>offline</RequestId></ResponseMetadata></GetCallerIdentityResponse>")
        return AWSResponse(request.url, 200, {"Content-Type": "text/xml"}, _Body(body.encode()))

    # -- S3 ---------------------------------------------------------------------------------
    def _list_buckets(self, request: Any) -> AWSResponse:
        buckets = "".join(f"<Bucket><Name>{escape(b)}</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate>"
                          "</Bucket>" for b in self.buckets)
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult '
                'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>offline</ID></Owner>'
                f"<Buckets>{buckets}</Buckets></ListAllMyBucketsResult>").encode()
        return AWSResponse(request.url, 200, {"Content-Type": "application/xml"}, _Body(body))

    def _head_bucket(self, request: Any) -> AWSResponse:
        """The SDK's own default bucket (an older stack's job) is checked before use."""
        host = urllib.parse.urlsplit(request.url).hostname or ""
        found = any(host.startswith(f"{b}.") for b in self.buckets)
        return AWSResponse(request.url, 200 if found else 404, {"x-amz-bucket-region": self.region}, _Body())

    def _put_object(self, request: Any) -> AWSResponse:
        url = urllib.parse.urlsplit(request.url)
        host_bucket = url.hostname.split(".s3", 1)[0] if ".s3" in (url.hostname or "") else ""
        path = urllib.parse.unquote(url.path.lstrip("/"))
        bucket, key = (host_bucket, path) if host_bucket and not (url.hostname or "").startswith("s3") else path.split("/", 1)
        uri = f"s3://{bucket}/{key}"
        self.uploads.append(uri)
        if key.endswith(".json"):
            data = _body_bytes(request.body)
            if "aws-chunked" in str(request.headers.get("Content-Encoding", "")):
                data = _aws_chunked(data)
            try:
                self.small_files[uri] = json.loads(data or b"null")
            except ValueError:
                self.small_files[uri] = "<not JSON>"
        return AWSResponse(request.url, 200, {"ETag": '"d41d8cd98f00b204e9800998ecf8427e"'}, _Body())

    # -- SageMaker --------------------------------------------------------------------------
    def _create_training_job(self, request: Any) -> AWSResponse:
        sent = json.loads(_body_bytes(request.body))
        self.create_requests.append(sent)
        arn = f"arn:aws:sagemaker:{self.region}:{self.account}:training-job/{sent['TrainingJobName']}"
        return AWSResponse(request.url, 200, {"Content-Type": "application/x-amz-json-1.1"},
                           _Body(json.dumps({"TrainingJobArn": arn}).encode()))

    def _describe_training_job(self, request: Any) -> AWSResponse:
        sent = self.create_requests[-1]
        now = datetime.now(timezone.utc).timestamp()
        described = {k: v for k, v in sent.items() if k not in ("Tags",)}
        described.update({
            "TrainingJobArn": f"arn:aws:sagemaker:{self.region}:{self.account}:training-job/{sent['TrainingJobName']}",
            "TrainingJobStatus": "InProgress", "SecondaryStatus": "Starting",
            "ModelArtifacts": {"S3ModelArtifacts": ""}, "CreationTime": now, "LastModifiedTime": now,
        })
        return AWSResponse(request.url, 200, {"Content-Type": "application/x-amz-json-1.1"},
                           _Body(json.dumps(described).encode()))


def _member_order(key: str) -> tuple[str, int]:
    head, _, index = key.rpartition(".")
    return (head, int(index)) if index.isdigit() else (key, 0)


def _sdk() -> dict[str, Any]:
    from sagemaker.core.helper import iam_role_resolver
    from sagemaker.core.helper.session_helper import Session
    from sagemaker.core.training import configs
    from sagemaker.train import ModelTrainer, distributed

    return {"Session": Session, "configs": configs, "ModelTrainer": ModelTrainer, "distributed": distributed,
            "resolver": iam_role_resolver}


#: What each ModelTrainer piece of ``job-config --format v3`` becomes; a key that is not here
#: (and not one of the two job-config keys) fails the job, so new output cannot go untested.
def _trainer_arguments(sdk: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    c = sdk["configs"]
    built: dict[str, Any] = {}
    for key, value in cfg.items():
        if key in ("notes", "session"):
            continue
        if key in ("role", "training_input_mode", "environment", "base_job_name"):
            built[key] = value
        elif key in ("compute", "networking", "checkpoint_config", "output_data_config", "stopping_condition"):
            cls = {"compute": c.Compute, "networking": c.Networking, "checkpoint_config": c.CheckpointConfig,
                   "output_data_config": c.OutputDataConfig, "stopping_condition": c.StoppingCondition}[key]
            built[key] = cls(**value)
        elif key == "input_data_config":
            built[key] = [c.InputData(channel_name=ch["channel_name"], data_source=c.FileSystemDataSource(**ch["data_source"]))
                          for ch in value]
        elif key == "distributed":
            ((name, kwargs),) = value.items()
            built[key] = getattr(sdk["distributed"], name)(**kwargs)
        else:
            raise KeyError(f"the harness does not know what to build from job-config key {key!r}")
    return built


def run_job(sdk: dict[str, Any], job: dict[str, Any], source_dir: str) -> dict[str, Any]:
    aws = OfflineAws(job)
    cfg = job["v3"]
    outcome: dict[str, Any] = {"error": None}
    blocked_before = len(BLOCKED)
    session_args = dict(cfg.get("session", {}))
    if job.get("telemetry_on"):  # control: the SDK's switch is what keeps telemetry quiet
        session_args["sagemaker_config"] = {"SchemaVersion": "1.0",
                                            "SageMaker": {"PythonSDK": {"Modules": {"TelemetryOptOut": False}}}}
    try:
        session = sdk["Session"](boto_session=aws.boto_session, **session_args)
        arguments = _trainer_arguments(sdk, cfg)
        trainer = sdk["ModelTrainer"](
            sagemaker_session=session,
            training_image=TRAINING_IMAGE.format(region=job["region"]),
            base_job_name="smddp-v3",
            source_code=sdk["configs"].SourceCode(source_dir=source_dir, entry_script="train.py"),
            **arguments,
        )
        trainer.train(wait=False, logs=False)
        for thread in threading.enumerate():  # telemetry is sent from a daemon thread
            if thread.name.startswith("sagemaker-telemetry"):
                thread.join(timeout=30)
    except Exception as exc:  # noqa: BLE001 - reported to the pytest side, which decides what is expected
        outcome["error"] = f"{type(exc).__name__}: {exc}"
        outcome["traceback"] = traceback.format_exc(limit=6)
    outcome["blocked"] = BLOCKED[blocked_before:]
    outcome.update(requests=aws.create_requests, simulations=aws.simulations, uploads=aws.uploads,
                   small_files=aws.small_files, escaped=aws.escaped)
    return outcome


def signatures(sdk: dict[str, Any]) -> dict[str, list[str]]:
    """The argument names preflight's known_keys mirrors, read from the installed SDK."""
    c = sdk["configs"]
    return {
        "ModelTrainer": sorted(sdk["ModelTrainer"].model_fields),
        "compute": sorted(c.Compute.model_fields),
        "source_code": sorted(c.SourceCode.model_fields),
        "checkpoint_config": sorted(c.CheckpointConfig.model_fields),
        "networking": sorted(c.Networking.model_fields),
        "output_data_config": sorted(c.OutputDataConfig.model_fields),
        "stopping_condition": sorted(c.StoppingCondition.model_fields),
        "file_system_data_source": sorted(c.FileSystemDataSource.model_fields),
        "Session": sorted(p for p in inspect.signature(sdk["Session"].__init__).parameters if p != "self"),
    }


def _sdk_default_max_runtime() -> int:
    """What ModelTrainer sends without a stopping_condition, read from the installed SDK."""
    from sagemaker.train import defaults

    value: int = defaults.DEFAULT_MAX_RUNTIME_IN_SECONDS
    return value


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    import jsonschema

    from _jsonschema_once import checking_each_schema_once  # tests/ is this script's directory

    jsonschema.validate = checking_each_schema_once(jsonschema)
    sdk = _sdk()
    result = {
        "versions": {name: importlib.metadata.version(name) for name in ("sagemaker-train", "sagemaker-core", "botocore")},
        "smoke_test_actions": sdk["resolver"]._get_smoke_test_actions("training"),
        "signatures": signatures(sdk),
        "defaults": {"max_runtime_in_seconds": _sdk_default_max_runtime()},
        "jobs": {job["name"]: run_job(sdk, job, spec["source_dir"]) for job in spec["jobs"]},
        "blocked": BLOCKED,
        "guard_live": _probe_guard(),
    }
    out = io.StringIO()
    json.dump(result, out, indent=1, default=str)
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

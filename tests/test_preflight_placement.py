"""Where a job runs, word for word: its subnets' Availability Zones (PF-SUBNETS-MULTI-AZ), its
instance type against botocore's TrainingInstanceType enum (PF-INSTANCE-TYPE-UNKNOWN) and the
shape of SageMaker API JSON (PF-API-SHAPE).

Each finding is compared whole (severity, rule, location, message, fix) for every way a job
reaches the rule: a job file with its own subnet AZs, stack outputs of several networks, a
launcher script, a notebook, a live SDK object, a CreateTrainingJob request and a
DescribeTrainingJob response. Pure and in process: no child process, no SageMaker SDK import,
no synth (issue 41, the preflight room's survivors in ``check_subnets``, ``check_instance_type``
and ``check_api_shape``).
"""

from __future__ import annotations

import difflib
import json
import textwrap
from pathlib import Path
from typing import Any, Optional

import pytest

from smddp_infra.contract import DOCUMENT_OUTPUT, FileSystemRef, JobDocument
from smddp_infra.preflight import PreflightReport, check_api_document, check_estimator, run_preflight
from smddp_infra.preflight.instance_types import training_instance_types

MULTI_AZ = "PF-SUBNETS-MULTI-AZ"
TYPE_UNKNOWN = "PF-INSTANCE-TYPE-UNKNOWN"
API_SHAPE = "PF-API-SHAPE"
EFA_TAIL = "SageMaker may place instances in any of them, and EFA traffic does not cross AZs"


def whole(report: PreflightReport, rule_id: Optional[str] = None) -> list[tuple[str, str, str, str, str]]:
    return [(f.severity, f.rule_id, f.location, f.message, f.fix) for f in report.findings
            if rule_id is None or f.rule_id == rule_id]


def job_file(tmp_path: Path, settings: dict[str, Any], *, outputs: Optional[Path] = None) -> PreflightReport:
    (tmp_path / "train.py").write_text("import torch\n")
    path = tmp_path / "job.json"
    defaults: dict[str, Any] = {} if "compute" in settings else {"entry_point": "train.py", "instance_count": 2}
    path.write_text(json.dumps({**defaults, **settings}))
    return run_preflight(path, outputs=outputs)


def network(zone: str, subnets: tuple[str, ...], zones: tuple[str, ...] = ()) -> str:
    """One network's TrainingJobConfig output, written by the contract's own document."""
    return json.dumps(JobDocument(
        subnets=subnets, security_group_ids=("sg-0123456789abcdef0",), role_arn="arn:aws:iam::123456789012:role/Training",
        checkpoint_s3_uri="s3://team-bucket/checkpoints/",
        file_system=FileSystemRef(id="fs-0123456789abcdef0", mount_name="abcdefgh", directory_path="/abcdefgh/data"),
        instance_type="ml.p4d.24xlarge", instance_count=2, region="us-east-1", availability_zone=zone,
        subnet_availability_zones=zones,
    ).to_json())


@pytest.fixture
def two_zone_outputs(tmp_path: Path) -> Path:
    """One network whose two subnets are in us-east-1a (its training AZ) and us-east-1b."""
    path = tmp_path / "cdk-outputs.json"
    path.write_text(json.dumps({"TrainingNetworkStack": {DOCUMENT_OUTPUT: network(
        "us-east-1a", ("subnet-0aaa1111", "subnet-0bbb2222"), ("us-east-1a", "us-east-1b"))}}))
    return path


# ---------------------------------------------------------------- PF-SUBNETS-MULTI-AZ


def test_job_file_subnets_in_two_zones_keep_the_zone_with_most_subnets_not_the_last_by_name(tmp_path):
    """No stack names a training AZ here, so the fix keeps the zone holding most of the job's
    subnets: eu-west-1a (two), though eu-west-1b sorts after it."""
    report = job_file(tmp_path, {
        "instance_type": "ml.p4d.24xlarge", "subnets": ["subnet-a1", "subnet-b1", "subnet-a2"],
        "subnet_availability_zones": {"subnet-a1": "eu-west-1a", "subnet-b1": "eu-west-1b", "subnet-a2": "eu-west-1a"},
    })
    assert whole(report) == [(
        "error", MULTI_AZ, "job.json: subnets",
        f"the job's subnets span 2 Availability Zones (eu-west-1a: subnet-a1, subnet-a2; eu-west-1b: subnet-b1); {EFA_TAIL}",
        "subnets: [subnet-a1, subnet-a2] (only the subnets in eu-west-1a)",
    )]


def test_a_model_trainer_job_file_names_its_subnets_as_networking_subnets(tmp_path):
    report = job_file(tmp_path, {
        "compute": {"instance_type": "ml.p4d.24xlarge", "instance_count": 2},
        "source_code": {"entry_script": "train.py"},
        "stopping_condition": {"max_runtime_in_seconds": 86400},
        "networking": {"subnets": ["subnet-b1", "subnet-a1"]},
        "subnet_availability_zones": {"subnet-a1": "eu-west-1a", "subnet-b1": "eu-west-1b"},
    })
    assert whole(report) == [(
        "error", MULTI_AZ, "job.json: networking.subnets",
        f"the job's subnets span 2 Availability Zones (eu-west-1a: subnet-a1; eu-west-1b: subnet-b1); {EFA_TAIL}",
        "networking.subnets: [subnet-b1] (only the subnets in eu-west-1b)",
    )]


def test_subnets_from_several_networks_outputs_name_each_networks_document(tmp_path):
    """A job file without subnets takes every network's subnets from the outputs file: the
    location names each document, and the fix keeps the first network's training AZ."""
    outputs = tmp_path / "cdk-outputs.json"
    outputs.write_text(json.dumps({
        "NetworkA": {DOCUMENT_OUTPUT: network("us-east-1a", ("subnet-0aaa1111",))},
        "NetworkB": {DOCUMENT_OUTPUT: network("us-east-1b", ("subnet-0bbb2222",))},
    }))
    report = job_file(tmp_path, {"instance_type": "ml.p4d.24xlarge"}, outputs=outputs)
    assert whole(report) == [(
        "error", MULTI_AZ, "cdk-outputs.json: NetworkA.TrainingJobConfig, NetworkB.TrainingJobConfig",
        f"the job's subnets span 2 Availability Zones (us-east-1a: subnet-0aaa1111; us-east-1b: subnet-0bbb2222); {EFA_TAIL}",
        "subnets: [subnet-0aaa1111] (only the subnets in us-east-1a)",
    )]


def test_a_launcher_scripts_fix_is_the_python_argument(tmp_path, two_zone_outputs):
    (tmp_path / "launch.py").write_text(textwrap.dedent("""\
        from sagemaker.pytorch import PyTorch
        estimator = PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge", instance_count=2,
                            subnets=["subnet-0bbb2222", "subnet-0aaa1111"])
    """))
    report = run_preflight(tmp_path / "launch.py", outputs=two_zone_outputs)
    assert report.kind == "launcher"
    assert whole(report) == [(
        "error", MULTI_AZ, "launch.py:3: subnets",
        f"the job's subnets span 2 Availability Zones (us-east-1a: subnet-0aaa1111; us-east-1b: subnet-0bbb2222); {EFA_TAIL}",
        "subnets=['subnet-0aaa1111'] (only the subnets in us-east-1a)",
    )]


def test_a_notebooks_fix_is_the_python_argument(tmp_path, two_zone_outputs):
    def cell(*lines: str) -> dict[str, Any]:
        return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": list(lines)}

    (tmp_path / "launch.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        cell("from sagemaker.pytorch import PyTorch\n"),
        cell("estimator = PyTorch(entry_point='train.py', instance_type='ml.p4d.24xlarge', instance_count=2,\n",
             "                    subnets=['subnet-0aaa1111', 'subnet-0bbb2222'])\n"),
    ]}))
    report = run_preflight(tmp_path / "launch.ipynb", outputs=two_zone_outputs)
    assert report.kind == "notebook"
    assert whole(report) == [(
        "error", MULTI_AZ, "launch.ipynb cell 2 line 2: subnets",
        f"the job's subnets span 2 Availability Zones (us-east-1a: subnet-0aaa1111; us-east-1b: subnet-0bbb2222); {EFA_TAIL}",
        "subnets=['subnet-0aaa1111'] (only the subnets in us-east-1a)",
    )]


def test_a_live_estimators_fix_is_the_python_argument(tmp_path, two_zone_outputs):
    """check_estimator() runs in a notebook cell, so its fix is Python like every other fix for a
    live object (JobDescription.assign), not the job file's ``subnets: [...]``. The object is a
    stand-in: preflight reads attributes and the class's name and module, never the SDK."""
    live = type("PyTorch", (), {"__module__": "sagemaker.pytorch.estimator"})()
    (tmp_path / "train.py").write_text("import torch\n")
    for name, value in (("entry_point", "train.py"), ("source_dir", str(tmp_path)), ("instance_type", "ml.p4d.24xlarge"),
                        ("instance_count", 2), ("subnets", ["subnet-0aaa1111", "subnet-0bbb2222"])):
        setattr(live, name, value)
    report = check_estimator(live, outputs=two_zone_outputs)
    assert whole(report) == [(
        "error", MULTI_AZ, "PyTorch object: subnets",
        f"the job's subnets span 2 Availability Zones (us-east-1a: subnet-0aaa1111; us-east-1b: subnet-0bbb2222); {EFA_TAIL}",
        "subnets=['subnet-0aaa1111'] (only the subnets in us-east-1a)",
    )]


# ---------------------------------------------------------------- PF-INSTANCE-TYPE-UNKNOWN


def _enum_words() -> str:
    known = training_instance_types()
    assert known is not None  # botocore is a test dependency
    version, enum = known
    return f"the TrainingInstanceType enum of botocore {version}'s SageMaker service model ({len(enum)} types, ResourceConfig.InstanceType)"


def test_a_type_near_no_enum_value_gets_no_guess_and_the_generic_fix(tmp_path):
    """"ml.p4d24" is closest to ml.p4d.24xlarge at a ratio of 0.70: under the rule's 0.8 cutoff,
    so no "did you mean" (difflib's default cutoff, 0.6, would guess)."""
    known = training_instance_types()
    assert known is not None
    best = max(difflib.SequenceMatcher(None, "ml.p4d24", t).ratio() for t in known[1])
    assert 0.6 <= best < 0.8  # the fixture's own premise, against this botocore's enum
    report = job_file(tmp_path, {"instance_type": "ml.p4d24"})
    assert whole(report) == [(
        "error", TYPE_UNKNOWN, "job.json: instance_type",
        f"instance_type ml.p4d24 is not a SageMaker training instance type: {_enum_words()} does not list it, "
        "so CreateTrainingJob rejects the job",
        "set instance_type to a training instance type (ml.p4d.24xlarge, ml.p5.48xlarge, ...)",
    )]


def test_a_type_near_an_enum_value_gets_the_guess_in_message_and_fix(tmp_path):
    report = job_file(tmp_path, {"instance_type": "ml.p4d.large"})
    assert whole(report) == [(
        "error", TYPE_UNKNOWN, "job.json: instance_type",
        f"instance_type ml.p4d.large is not a SageMaker training instance type: {_enum_words()} does not list it, "
        "so CreateTrainingJob rejects the job; did you mean ml.p4d.24xlarge?",
        "instance_type: ml.p4d.24xlarge",
    )]


# ---------------------------------------------------------------- API JSON: PF-API-SHAPE, and a type in a response

_JOB = {
    "AlgorithmSpecification": {"TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
                               "TrainingInputMode": "File"},
    "RoleArn": "arn:aws:iam::123456789012:role/Training",
    "OutputDataConfig": {"S3OutputPath": "s3://team-bucket/output/"},
    "ResourceConfig": {"InstanceType": "ml.p4d24", "InstanceCount": 2, "VolumeSizeInGB": 100},
    "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    "EnableNetworkIsolation": "no",  # botocore's shape wants a boolean
}
_SHAPE_PROBLEM = "Invalid type for parameter EnableNetworkIsolation, value: no, type: <class 'str'>, valid types: <class 'bool'>"


def test_a_describe_response_gets_the_shape_problem_as_information_and_no_instance_type_error():
    """A response describes a job SageMaker already accepted: its instance type is not judged
    against the enum, and what botocore's shape says about it is news, not an error."""
    report = check_api_document({"TrainingJobName": "resnet-7", "TrainingJobStatus": "InProgress",
                                 "TrainingJobArn": "arn:aws:sagemaker:us-east-1:123456789012:training-job/resnet-7",
                                 **_JOB}, label="describe.json")
    assert report.kind == "describe_training_job"
    assert whole(report) == [(
        "info", API_SHAPE, "describe.json", f"botocore's DescribeTrainingJob response shape: {_SHAPE_PROBLEM}",
        "nothing to fix in a response: a newer API or a trimmed copy (the rules read what is there)",
    )]


def test_control_the_same_job_as_a_request_gets_both_errors():
    report = check_api_document({"TrainingJobName": "resnet-7", **_JOB}, label="request.json")
    assert report.kind == "create_training_job"
    assert whole(report) == [
        ("error", TYPE_UNKNOWN, "request.json: ResourceConfig.InstanceType",
         f"ResourceConfig.InstanceType ml.p4d24 is not a SageMaker training instance type: {_enum_words()} does not list it, "
         "so CreateTrainingJob rejects the job",
         "set ResourceConfig.InstanceType to a training instance type (ml.p4d.24xlarge, ml.p5.48xlarge, ...)"),
        ("error", API_SHAPE, "request.json", f"botocore's CreateTrainingJob request shape: {_SHAPE_PROBLEM}",
         "fix the request so botocore accepts it (the client refuses it otherwise)"),
    ]

"""Training plans end to end, in the pure rooms: the job document, job-config in every format,
the plan's AZ against the training subnet's, the context keys and the launch guardrail.

The SDKs' own requests are proven in tests/test_sagemaker_sdk.py (v2 through the Stubber),
tests/test_sagemaker_sdk_v3.py (ModelTrainer offline) and tests/test_sagemaker_api_model.py
(botocore's validator and the shape walker), over the ``training-plan`` outputs fixture.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from _jobconfig_helpers import OUTPUTS_DIR, PLAN_FILE, emitted
from smddp_infra.cli import main
from smddp_infra.contract import DOCUMENT_VERSION, TRAINING_PLAN_VERSION, parse_document, read_outputs_file
from smddp_infra.errors import ConfigError
from smddp_infra.guardrails import SID_LAUNCH, launch_policy_document, scope_from_document
from smddp_infra.jobconfig import validated
from smddp_infra.jobconfig.validation import plan_zone_problem
from smddp_infra.settings import NetworkSettings

PLAN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p4d-8-node-reserved-2027-q2"
DEFAULT = OUTPUTS_DIR / "default-p4d.json"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["job-config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --- the document --------------------------------------------------------------------------------

def test_a_document_with_a_plan_says_version_2_and_one_without_stays_version_1():
    (network,) = read_outputs_file(DEFAULT)
    doc = network.document
    assert doc is not None and doc.to_json()["version"] == 1
    planned = replace(doc, training_plan_arn=PLAN).to_json()
    assert planned["version"] == TRAINING_PLAN_VERSION == DOCUMENT_VERSION
    assert parse_document(planned, where="test").training_plan_arn == PLAN


def test_a_reader_of_version_1_refuses_a_plan_document_instead_of_dropping_the_plan(monkeypatch):
    """An older smddp-infra (DOCUMENT_VERSION 1) says "upgrade" rather than render an on-demand job."""
    import smddp_infra.contract as contract

    raw = json.loads(read_outputs_file(PLAN_FILE)[0].outputs["TrainingJobConfig"])
    assert raw["version"] == 2 and "trainingPlanArn" in raw
    monkeypatch.setattr(contract, "DOCUMENT_VERSION", 1)
    with pytest.raises(ConfigError, match="version must be 1..1 .*upgrade it"):
        contract.parse_document(raw, where="test")
    unplanned = json.loads(read_outputs_file(DEFAULT)[0].outputs["TrainingJobConfig"])
    assert contract.parse_document(unplanned, where="test").version == 1


def test_the_plan_round_trips_with_its_zone_and_the_subnets_zone_id():
    (network,) = read_outputs_file(PLAN_FILE)
    doc = network.document
    assert doc is not None
    assert (doc.availability_zone_id, doc.training_plan_availability_zone_id) == ("use1-az6", "use1-az6")
    assert parse_document(doc.to_json(), where="test") == doc


# --- job-config ----------------------------------------------------------------------------------

def test_every_format_emits_the_plan_of_the_document():
    plan = emitted("training-plan", "boto3")["ResourceConfig"]["TrainingPlanArn"]
    assert emitted("training-plan", "v2")["estimator"]["training_plan"] == plan
    assert emitted("training-plan", "v3")["compute"]["training_plan_arn"] == plan
    for fmt in ("v2", "v3"):
        assert any("training plan" in note for note in emitted("training-plan", fmt)["notes"])


def test_a_network_without_a_plan_emits_none():
    assert "TrainingPlanArn" not in emitted("default-p4d", "boto3")["ResourceConfig"]
    assert "training_plan" not in emitted("default-p4d", "v2")["estimator"]
    assert "training_plan_arn" not in emitted("default-p4d", "v3")["compute"]


@pytest.mark.parametrize("fmt, path", [("boto3", ("ResourceConfig", "TrainingPlanArn")),
                                       ("v2", ("estimator", "training_plan")),
                                       ("v3", ("compute", "training_plan_arn"))])
def test_the_flag_adds_a_plan_in_every_format(capsys, fmt, path):
    code, out, err = run(capsys, "--outputs", str(DEFAULT), "--format", fmt, "--training-plan-arn", PLAN)
    assert code == 0 and err == ""
    value = json.loads(out)
    for key in path:
        value = value[key]
    assert value == PLAN


@pytest.mark.parametrize("bad", ["arn:aws:sagemaker:us-east-1:123456789012:training-job/x-reserved-capacity-plan",
                                 "p5-reserved", "arn:aws:sagemaker:us-east-1:12345:training-plan/p5-16-reserved-2027-q1"])
def test_a_bad_plan_arn_is_one_line_naming_the_flag_and_the_pattern(capsys, bad):
    line = one_line_error(capsys, "--outputs", str(DEFAULT), "--format", "boto3", "--training-plan-arn", bad)
    assert "--training-plan-arn must be a SageMaker training plan ARN" in line and repr(bad) in line


def test_a_bad_plan_arn_in_the_document_names_the_stack_and_key(tmp_path: Path, capsys):
    outputs = json.loads(PLAN_FILE.read_text())
    stack = outputs["ReservedCapacityStack"]
    doc = json.loads(stack["TrainingJobConfig"])
    doc["trainingPlanArn"] = "arn:aws:sagemaker:us-east-1:345678901234:training-job/not-a-plan-but-a-job"
    stack["TrainingJobConfig"] = json.dumps(doc)
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    line = one_line_error(capsys, "--outputs", str(path), "--format", "v2")
    assert "stack 'ReservedCapacityStack': trainingPlanArn must be a SageMaker training plan ARN" in line


# --- the plan's AZ -----------------------------------------------------------------------------

def test_a_plan_in_another_az_than_a_subnet_placed_by_az_id_is_refused_in_one_line(capsys):
    line = one_line_error(capsys, "--outputs", str(PLAN_FILE), "--format", "boto3", "--plan-az-id", "use1-az1")
    assert line.startswith("smddp-infra job-config: error: --plan-az-id 'use1-az1': ")
    assert "reserved capacity is in use1-az1 but the training subnet is in use1-az6" in line


def test_a_plan_in_the_subnets_az_is_accepted_silently(capsys):
    code, out, err = run(capsys, "--outputs", str(PLAN_FILE), "--format", "boto3", "--plan-az-id", "use1-az6")
    assert code == 0 and err == "" and json.loads(out)["ResourceConfig"]["TrainingPlanArn"]


def test_a_subnet_known_by_az_name_only_is_not_evaluated(capsys):
    code, out, err = run(capsys, "--outputs", str(DEFAULT), "--format", "v3", "--training-plan-arn", PLAN,
                         "--plan-az-id", "use1-az1")
    assert code == 0 and json.loads(out)["compute"]["training_plan_arn"] == PLAN
    assert err.count("\n") == 1 and "not evaluated" in err and "us-east-1a is known by name only" in err


def test_a_plan_az_without_a_plan_is_refused(capsys):
    line = one_line_error(capsys, "--outputs", str(DEFAULT), "--format", "v3", "--plan-az-id", "use1-az1")
    assert "--plan-az-id use1-az1 was given without a training plan" in line


def test_a_document_whose_plan_az_contradicts_its_subnet_is_refused():
    (network,) = read_outputs_file(PLAN_FILE)
    with pytest.raises(ConfigError, match="trainingPlanAvailabilityZoneId 'use1-az4': the training plan's reserved "
                                          "capacity is in use1-az4 but the training subnet is in use1-az6"):
        validated(network, training_plan_availability_zone_id="use1-az4")


def test_the_zone_rule_is_certain_only_with_the_subnets_az_id():
    assert plan_zone_problem("use1-az6", "use1-az6") is None
    refused = plan_zone_problem("use1-az6", "use1-az2")
    assert refused is not None and refused.startswith("refused: ")
    unknown = plan_zone_problem(None, "use1-az2", subnet_zone="us-east-1a")
    assert unknown is not None and unknown.startswith("not evaluated: ")


# --- context keys ------------------------------------------------------------------------------

BASE = {"smddp:readMBpsPerGpu": 100}


def test_context_keys_carry_the_plan_and_its_zone():
    settings = NetworkSettings.from_context({**BASE, "smddp:availabilityZoneId": "use1-az6",
                                             "smddp:trainingPlanArn": PLAN,
                                             "smddp:trainingPlanAvailabilityZoneId": "use1-az6"})
    assert (settings.training_plan_arn, settings.training_plan_availability_zone_id) == (PLAN, "use1-az6")


@pytest.mark.parametrize("context, message", [
    ({"smddp:trainingPlanArn": "plan-1"}, "smddp:trainingPlanArn must be a SageMaker training plan ARN"),
    ({"smddp:trainingPlanAvailabilityZoneId": "use1-az6"}, "was given without smddp:trainingPlanArn"),
    ({"smddp:trainingPlanArn": PLAN, "smddp:trainingPlanAvailabilityZoneId": "us-east-1a"},
     "smddp:trainingPlanAvailabilityZoneId must be an AZ ID like use1-az4"),
    ({"smddp:availabilityZoneId": "use1-az6", "smddp:trainingPlanArn": PLAN,
      "smddp:trainingPlanAvailabilityZoneId": "use1-az1"},
     "smddp:trainingPlanAvailabilityZoneId 'use1-az1': the training plan's reserved capacity is in use1-az1 but the "
     "training subnet is in use1-az6"),
])
def test_bad_plan_context_is_one_line_naming_the_key(context, message):
    with pytest.raises(ConfigError) as caught:
        NetworkSettings.from_context({**BASE, **context})
    assert message in str(caught.value) and "\n" not in str(caught.value)


# --- the launch guardrail ------------------------------------------------------------------------

def test_the_guardrail_of_a_plan_network_allows_exactly_its_plan():
    (network,) = read_outputs_file(PLAN_FILE)
    doc = validated(network)
    launch = launch_policy_document(scope_from_document(doc))["Statement"][0]
    assert launch["Sid"] == SID_LAUNCH
    plans = [r for r in launch["Resource"] if ":training-plan/" in r]
    assert plans == [doc.training_plan_arn]
    (default,) = read_outputs_file(DEFAULT)
    assert not [r for r in launch_policy_document(scope_from_document(validated(default)))["Statement"][0]["Resource"]
                if ":training-plan/" in r]

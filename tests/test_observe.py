"""``smddp-infra observe`` and the arithmetic it shares with the alarms (issue 20, parts 2 and 3).

The metric math is checked with property-based tests (hypothesis); the command runs in-process
against moto's CloudWatch (``mock_aws``: PutMetricData then the command's own GetMetricData),
and its re-plan is compared with what ``smddp-infra size`` prints for the same requirement.
The same command against the deployed stack on the local endpoint is in test_deploy_local.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings, strategies as st

from smddp_infra.contract import JobDocument, MonitoringSettings, SizingRecord, parse_document
from smddp_infra.errors import ConfigError
from smddp_infra.observe import metrics as m
from smddp_infra.sizing.planner import plan_lustre

ROOT = Path(__file__).resolve().parent.parent
#: Timing is not what these properties are about, and the machine is shared: no per-example deadline.
NO_DEADLINE = settings(deadline=None)
finite = st.floats(min_value=0, max_value=1e15, allow_nan=False, allow_infinity=False)
periods = st.sampled_from([60, 120, 300, 600, 3600])


# --- bytes per period -> MB/s ---------------------------------------------------------------------


@NO_DEADLINE
@given(mbps=st.floats(min_value=0, max_value=1e6, allow_nan=False), period=periods)
def test_a_steady_rate_read_for_a_period_comes_back_as_that_rate(mbps: float, period: int) -> None:
    assert m.mbps(mbps * 1e6 * period, period) == pytest.approx(mbps, rel=1e-12, abs=1e-12)


@NO_DEADLINE
@given(a=finite, b=finite, period=periods)
def test_mbps_is_additive_and_never_negative(a: float, b: float, period: int) -> None:
    assert m.mbps(a + b, period) == pytest.approx(m.mbps(a, period) + m.mbps(b, period), rel=1e-9, abs=1e-9)
    assert m.mbps(a, period) >= 0


def test_mbps_matches_the_alarms_metric_math_text() -> None:
    """The alarm evaluates ``read / PERIOD(read) / 1000000``; observe evaluates mbps(): one formula."""
    assert m.mbps_expression("read") == "read / PERIOD(read) / 1000000"
    assert m.mbps(1_500_000_000 * 300, 300) == 1500
    assert m.gib_expression("free") == "free / 1073741824" and m.gib(960 * 2**30) == 960


# --- percentiles ------------------------------------------------------------------------------------


values_lists = st.lists(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False), min_size=1, max_size=200)


@NO_DEADLINE
@given(values=values_lists, q=st.floats(min_value=0, max_value=100))
def test_percentile_stays_within_the_values(values: list[float], q: float) -> None:
    assert min(values) <= m.percentile(values, q) <= max(values)


@NO_DEADLINE
@given(values=values_lists)
def test_p0_is_the_minimum_and_p100_the_maximum(values: list[float]) -> None:
    assert m.percentile(values, 0) == min(values) and m.percentile(values, 100) == max(values)


@NO_DEADLINE
@given(values=values_lists, q1=st.floats(min_value=0, max_value=100), q2=st.floats(min_value=0, max_value=100))
def test_percentile_grows_with_q(values: list[float], q1: float, q2: float) -> None:
    low, high = sorted((q1, q2))
    assert m.percentile(values, low) <= m.percentile(values, high)


@NO_DEADLINE
@given(values=values_lists, q=st.floats(min_value=0, max_value=100), data=st.data())
def test_percentile_does_not_depend_on_order(values: list[float], q: float, data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(values))
    assert m.percentile(shuffled, q) == m.percentile(values, q)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=100),
       q=st.floats(min_value=0, max_value=100))
def test_percentile_agrees_with_numpy_linear(values: list[float], q: float) -> None:
    import numpy  # a test dependency (requirements-dev.txt): a missing one fails, never skips
    assert m.percentile(values, q) == pytest.approx(float(numpy.percentile(values, q)), rel=1e-9, abs=1e-6)


def test_percentile_refuses_nothing_and_out_of_range_q() -> None:
    with pytest.raises(ValueError):
        m.percentile([], 50)
    with pytest.raises(ValueError):
        m.percentile([1.0], 101)


# --- verdict and thresholds ---------------------------------------------------------------------------


@NO_DEADLINE
@given(baseline=st.floats(min_value=1, max_value=1e6), share=st.floats(min_value=0, max_value=2))
def test_verdict_follows_the_share_of_the_baseline(baseline: float, share: float) -> None:
    p95 = share * baseline
    found = m.verdict(p95, baseline)
    if p95 >= 0.8 * baseline:
        assert found is m.Verdict.UNDER_SIZED
    elif p95 < 0.3 * baseline:
        assert found is m.Verdict.OVER_SIZED
    else:
        assert found is m.Verdict.RIGHT_SIZED


def test_verdict_edges_and_no_data() -> None:
    assert m.verdict(800, 1000) is m.Verdict.UNDER_SIZED  # "at or above"
    assert m.verdict(300, 1000) is m.Verdict.RIGHT_SIZED
    assert m.verdict(299.9, 1000) is m.Verdict.OVER_SIZED
    assert m.verdict(None, 1000) is m.Verdict.NOT_EVALUATED


@NO_DEADLINE
@given(capacity=st.integers(min_value=1200, max_value=500_000), checkpoint=st.none() | st.floats(min_value=1, max_value=500))
def test_free_capacity_threshold_is_twice_the_checkpoint_or_ten_percent(capacity: int, checkpoint: float | None) -> None:
    threshold = m.free_capacity_threshold_gib(capacity, checkpoint_gib=checkpoint)
    assert threshold == (2 * checkpoint if checkpoint is not None else 0.1 * capacity)


@NO_DEADLINE
@given(start=st.floats(min_value=100, max_value=10_000), slope=st.floats(min_value=-500, max_value=500),
       samples=st.integers(min_value=2, max_value=50))
def test_capacity_trend_recovers_a_linear_slope(start: float, slope: float, samples: int) -> None:
    t0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
    points = [(t0 + timedelta(hours=h), (start + slope * h / 24) * 2**30) for h in range(samples)]
    trend = m.capacity_trend(points, threshold_gib=50)
    assert trend is not None
    assert trend.gib_per_day == pytest.approx(slope, rel=1e-6, abs=1e-6)
    assert trend.first_gib == pytest.approx(start)
    assert trend.min_gib == pytest.approx(min(start, trend.last_gib))
    if trend.days_to_threshold is None:
        assert slope > -m.FLAT_GIB_PER_DAY * 2
    else:
        assert slope < 0
        assume(trend.last_gib > 50)
        assert trend.last_gib + trend.gib_per_day * trend.days_to_threshold == pytest.approx(50, abs=1e-6)


# --- the contract ------------------------------------------------------------------------------------


def test_sizing_record_and_monitoring_settings_round_trip_through_the_document() -> None:
    plan = plan_lustre(1600, 2000)
    sizing = plan.sizing_record()
    assert sizing.baseline_throughput_mbps == plan.baseline_throughput_mbps
    settings_ = MonitoringSettings(period_seconds=300, throughput_fraction=0.8, datapoints_to_alarm=3, evaluation_periods=4,
                                   free_capacity_threshold_gib=960, throughput_alarm="a", dashboard="d")
    doc = JobDocument(subnets=("subnet-1",), security_group_ids=("sg-1",), role_arn="arn:aws:iam::1:role/r",
                      checkpoint_s3_uri="s3://b/c/", file_system=_fs(), instance_type="ml.p4d.24xlarge", instance_count=4,
                      region="us-east-1", availability_zone="us-east-1a", sizing=sizing, monitoring=settings_)
    again = parse_document(json.dumps(doc.to_json()), where="doc")
    assert again.sizing == sizing and again.monitoring == settings_


@pytest.mark.parametrize("field, value, message", [
    ("periodSeconds", 0, "monitoring.periodSeconds must be a whole number > 0, got 0"),
    ("throughputFraction", "0.8", "monitoring.throughputFraction must be a number > 0, got '0.8'"),
])
def test_a_bad_monitoring_section_is_one_line(field: str, value: Any, message: str) -> None:
    raw = MonitoringSettings(period_seconds=300, throughput_fraction=0.8, datapoints_to_alarm=3, evaluation_periods=4,
                             free_capacity_threshold_gib=960).to_json()
    raw[field] = value
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        MonitoringSettings.parse(raw, where="monitoring")


def _fs(fs_id: str = "fs-0123456789abcdef0") -> Any:
    from smddp_infra.contract import FileSystemRef

    return FileSystemRef(id=fs_id, mount_name="abcdefgh", directory_path="/abcdefgh")


# --- re-plan: growth in place first, replacements beside it ---------------------------------------------


def _size_json(args: tuple[str, ...]) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "size", *args, "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def _deployed(kind: str, capacity: int, per_unit: int | None = None, **kw: Any) -> Any:
    from smddp_infra.sizing.growth import DeployedFileSystem

    return DeployedFileSystem(deployment_type=kind, storage_type=kw.pop("storage_type", "SSD"), storage_capacity_gib=capacity,
                              per_unit_storage_throughput=per_unit, **kw)


def test_each_alternative_is_what_size_prints_for_the_same_question() -> None:
    from smddp_infra.observe.replan import advise

    advice = advise(_deployed("PERSISTENT_2", 2400, 125), "fs-0123456789abcdef0", 355.2, floor_gib=1000, grow=True)
    assert advice.alternatives
    alternative = advice.alternatives[0]
    assert alternative.plan is not None and alternative.plan.to_dict() == _size_json(alternative.command[2:])


def test_an_under_sized_persistent_2_grows_in_place_and_replacements_are_alternatives() -> None:
    """The issue's case: PERSISTENT_2/125 of 2,400 GiB, under-sized: 4,800 GiB in place, not a new /250."""
    from smddp_infra.observe.replan import IN_PLACE, NEW, advise

    advice = advise(_deployed("PERSISTENT_2", 2400, 125), "fs-0123456789abcdef0", 355.2, floor_gib=1000, grow=True)
    head = advice.headline
    assert head is not None and head.change == IN_PLACE and head.plan is not None
    assert (head.plan.tier_key, head.plan.storage_capacity_gib) == ("PERSISTENT_2/125", 4800)
    assert head.command[-2:] == ("--storage-capacity", "4800")
    assert head.monthly_cost_delta_usd == pytest.approx(2400 * 0.145)
    assert all(a.change == NEW and a.plan is not None for a in advice.alternatives)
    assert all(a.plan.tier_key != "PERSISTENT_2/125" for a in advice.alternatives if a.plan)  # the in-place one is the headline
    for a in advice.alternatives:
        assert a.plan is not None and a.monthly_cost_delta_usd == pytest.approx(a.plan.monthly_cost_usd - 2400 * 0.145)
        assert "new, empty file system" in json.dumps(a.to_json())


def test_an_over_sized_file_system_is_kept_and_no_alternative_holds_less_than_it_stores() -> None:
    """The issue's case: SCRATCH_2 of 14,400 GiB holding 8,000 GiB is no longer re-planned to 7,200 GiB."""
    from smddp_infra.observe.replan import KEEP, advise, floor_gib

    floor = floor_gib(14400, 6400, 2000)
    assert floor == 8000
    advice = advise(_deployed("SCRATCH_2", 14400), "fs-0123456789abcdef0", 351.6, floor_gib=floor, grow=False)
    assert advice.headline is not None and advice.headline.change == KEEP
    capacities = [a.plan.storage_capacity_gib for a in advice.alternatives if a.plan]
    assert capacities and min(capacities) >= 8000
    assert ("SCRATCH_2", 9600) in [(a.plan.tier_key, a.plan.storage_capacity_gib) for a in advice.alternatives if a.plan]


def test_without_free_capacity_data_the_whole_capacity_is_assumed_used() -> None:
    from smddp_infra.observe.replan import advise, floor_gib

    assert floor_gib(14400, None, 2000) == 14400 and floor_gib(0, None, 2000) == 2000  # 0: Intelligent-Tiering
    advice = advise(_deployed("SCRATCH_2", 14400), "fs-0123456789abcdef0", 351.6, floor_gib=14400, grow=False)
    assert all(a.plan is not None and a.plan.storage_capacity_gib >= 14400 for a in advice.alternatives)


@NO_DEADLINE
@given(capacity=st.sampled_from([1200, 2400, 4800, 9600, 14400]), used=st.floats(min_value=0, max_value=1),
       declared=st.floats(min_value=0, max_value=20000), share=st.floats(min_value=0.05, max_value=3))
def test_no_plan_is_smaller_than_what_the_file_system_holds(capacity: int, used: float, declared: float, share: float) -> None:
    from smddp_infra.observe.replan import advise, floor_gib

    free = capacity * (1 - used)
    floor = floor_gib(capacity, free, declared)
    assert floor >= capacity - free - 1e-9 and floor >= declared
    required = round(share * capacity / 1024 * 200 * 1.25, 1) or 1
    advice = advise(_deployed("SCRATCH_2", capacity), "fs-0123456789abcdef0", required, floor_gib=floor, grow=share >= 0.8)
    for option in ([advice.headline] if advice.headline else []) + list(advice.alternatives):
        if option.plan is not None:
            assert option.plan.storage_capacity_gib >= floor


@pytest.mark.parametrize("deployed, why", [
    (dict(kind="SCRATCH_1", capacity=3600), "a SCRATCH_1 file system cannot grow"),
    (dict(kind="PERSISTENT_2", capacity=38400, per_unit=125, efa_enabled=True), "its throughput tier cannot change"),
])
def test_nothing_in_place_says_why(deployed: dict[str, Any], why: str) -> None:
    from smddp_infra.observe.replan import advise

    fs = _deployed(deployed.pop("kind"), deployed.pop("capacity"), deployed.pop("per_unit", None), **deployed)
    advice = advise(fs, "fs-0123456789abcdef0", 9000, floor_gib=0, grow=True, max_capacity_gib=40000)
    assert advice.headline is None and advice.in_place_why_not is not None and why in advice.in_place_why_not


def test_intelligent_tiering_grows_its_throughput_capacity_in_place() -> None:
    from smddp_infra.observe.replan import IN_PLACE, advise

    fs = _deployed("PERSISTENT_2", 0, storage_type="INTELLIGENT_TIERING", throughput_capacity_mbps=4000)
    advice = advise(fs, "fs-0123456789abcdef0", 4875, floor_gib=0, grow=True)
    assert advice.headline is not None and advice.headline.change == IN_PLACE
    assert advice.headline.command[-1] == "ThroughputCapacity=8000"
    assert advice.alternatives == () and advice.alternatives_why_not is not None


def test_the_guard_and_observe_give_the_same_in_place_plan() -> None:
    """One in-place plan (sizing.growth): the guard's pinned plan is observe's headline for the same need."""
    from smddp_infra.observe.replan import advise
    from smddp_infra.review.replacement import _pinned_plan_advice

    record = {"requiredThroughputMBps": 355.2, "minCapacityGiB": 1000}
    lines = _pinned_plan_advice({"StorageCapacity": 2400, "LustreConfiguration": {
        "DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125}}, {"Metadata": {"smddp:sizing": record}})
    advice = advise(_deployed("PERSISTENT_2", 2400, 125), "fs-0123456789abcdef0", 355.2, floor_gib=1000, grow=True)
    assert advice.headline is not None and advice.headline.plan is not None
    assert f"the pinned plan is {advice.headline.plan.storage_capacity_gib:,} GiB" in lines[1]


# --- the command, in-process against moto's CloudWatch ----------------------------------------------

FS_ID = "fs-0123456789abcdef0"
DAY = datetime(2026, 11, 2, tzinfo=timezone.utc)


def _outputs(tmp_path: Path, *, monitoring: bool = True, fs_id: str = FS_ID) -> tuple[Path, SizingRecord]:
    sizing = plan_lustre(1600, 2000).sizing_record()
    settings_ = MonitoringSettings(period_seconds=300, throughput_fraction=0.8, datapoints_to_alarm=3, evaluation_periods=4,
                                   free_capacity_threshold_gib=960) if monitoring else None
    doc = JobDocument(subnets=("subnet-1",), security_group_ids=("sg-1",), role_arn="arn:aws:iam::111122223333:role/r",
                      checkpoint_s3_uri="s3://b/c/", file_system=_fs(fs_id), instance_type="ml.p4d.24xlarge", instance_count=4,
                      region="us-east-1", availability_zone="us-east-1a", sizing=sizing, monitoring=settings_)
    path = tmp_path / "cdk-outputs.json"
    path.write_text(json.dumps({"TrainingNetworkStack": {"TrainingJobConfig": json.dumps(doc.to_json())}}))
    return path, sizing


def _created(sizing: SizingRecord) -> str:
    """The record's file system, created through FSx's API (moto's): observe reads it back."""
    import boto3

    fsx = boto3.client("fsx", region_name="us-east-1")
    return str(fsx.create_file_system(FileSystemType="LUSTRE", StorageCapacity=sizing.storage_capacity_gib,
                                      SubnetIds=["subnet-0123456789abcdef0"], LustreConfiguration={"DeploymentType": sizing.deployment_type})
               ["FileSystem"]["FileSystemId"])


def _put_day(cloudwatch: Any, share: float, baseline: float, fs_id: str) -> None:
    """One day of 5-minute datapoints: reads at ``share`` of the baseline for 6 hours, idle otherwise."""
    data = []
    for i in range(72):
        at = DAY + timedelta(minutes=5 * i)
        data += [{"MetricName": "DataReadBytes", "Dimensions": [{"Name": "FileSystemId", "Value": fs_id}],
                  "Timestamp": at, "Value": share * baseline * 1e6 * 300},
                 {"MetricName": "FreeDataStorageCapacity", "Dimensions": [{"Name": "FileSystemId", "Value": fs_id}],
                  "Timestamp": at, "Value": (5000 - i) * 2**30}]
    for start in range(0, len(data), 500):
        cloudwatch.put_metric_data(Namespace="AWS/FSx", MetricData=data[start:start + 500])


@pytest.fixture()
def moto_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    import moto  # a test dependency (requirements-dev.txt): a missing one fails, never skips
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with moto.mock_aws():
        yield


@pytest.mark.parametrize("share, verdict, code", [(0.97, "under-sized", 1), (0.5, "right-sized", 0), (0.1, "over-sized", 1)])
def test_observe_judges_a_day_of_reads(moto_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       share: float, verdict: str, code: int) -> None:
    import boto3

    from smddp_infra.cli import main

    fs_id = _created(plan_lustre(1600, 2000).sizing_record())
    outputs, sizing = _outputs(tmp_path, fs_id=fs_id)
    _put_day(boto3.client("cloudwatch", region_name="us-east-1"), share, sizing.baseline_throughput_mbps, fs_id)
    window = ["--since", "2026-11-02T00:00", "--until", "2026-11-02T06:00"]
    assert main(["observe", "--outputs", str(outputs), *window, "--json"]) == code
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == verdict
    assert report["read"]["p95"] == pytest.approx(share * sizing.baseline_throughput_mbps)
    assert report["read"]["samples"] == 72
    assert report["freeCapacity"]["gibPerDay"] == pytest.approx(-288, rel=1e-6)  # 1 GiB per 5 minutes
    assert report["stored"]["floorGiB"] == 9600 - 4929  # the most it held: capacity minus its least free capacity
    if verdict == "right-sized":
        assert report["headline"] is None and report["alternatives"] == []
    else:
        assert report["requiredMBps"] == round(report["read"]["p95"] * 1.25, 1)
        assert report["headline"]["change"] == ("in place" if verdict == "under-sized" else "keep")
        for alternative in report["alternatives"]:
            assert alternative["plan"] == _size_json(tuple(alternative["command"][2:]))
            assert alternative["plan"]["storage_capacity_gib"] >= report["stored"]["floorGiB"]
    assert main(["observe", "--outputs", str(outputs), *window]) == code
    text = capsys.readouterr().out
    assert f"verdict: {verdict.upper()}" in text


def test_observe_without_datapoints_is_not_evaluated(moto_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from smddp_infra.cli import main

    outputs, _ = _outputs(tmp_path, monitoring=False, fs_id=_created(plan_lustre(1600, 2000).sizing_record()))
    assert main(["observe", "--outputs", str(outputs), "--since", "2026-10-01T00:00", "--until", "2026-10-02T00:00"]) == 1
    assert "verdict: NOT EVALUATED" in capsys.readouterr().out


def test_an_outputs_file_naming_a_missing_file_system_is_one_line_and_exit_2(
        moto_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to read as "no datapoints ... nothing read it", exit 1."""
    from smddp_infra.cli import main

    outputs, _ = _outputs(tmp_path)
    assert main(["observe", "--outputs", str(outputs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no FSx file system {FS_ID} in us-east-1" in err


@pytest.mark.parametrize("args, message", [
    (["--since", "yesterday"], "--since must be an ISO 8601 time such as 2026-11-01T00:00, got 'yesterday'"),
    (["--headroom", "0.5"], "--headroom must be a number >= 1 (the factor on the observed p95), got 0.5"),
    (["--job", "j", "--since", "2026-11-01"], "--job sets the window from the training job"),
    (["--since", "2026-11-02", "--until", "2026-11-01"], "the window must end after it starts"),
    (["--network", "Nope"], "--network 'Nope' is not in the outputs file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    from smddp_infra.cli import main

    outputs, _ = _outputs(tmp_path)
    assert main(["observe", "--outputs", str(outputs), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_job_window_is_the_training_jobs_start_and_end() -> None:
    import boto3
    from botocore.stub import Stubber

    from smddp_infra.account import Account
    from smddp_infra.commands.observe import job_window

    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    account = Account(region="us-east-1", clients={"sagemaker": client})  # the account room, its client stubbed
    start, end = datetime(2026, 11, 2, 1, tzinfo=timezone.utc), datetime(2026, 11, 2, 7, tzinfo=timezone.utc)
    response = {"TrainingJobName": "llama-1", "TrainingJobArn": "arn:aws:sagemaker:us-east-1:1:training-job/llama-1",
                "ModelArtifacts": {"S3ModelArtifacts": "s3://b/m"}, "TrainingJobStatus": "Completed",
                "SecondaryStatus": "Completed", "AlgorithmSpecification": {"TrainingInputMode": "File"},
                "ResourceConfig": {"VolumeSizeInGB": 1}, "StoppingCondition": {}, "CreationTime": start,
                "TrainingStartTime": start, "TrainingEndTime": end}
    with Stubber(client) as stub:
        stub.add_response("describe_training_job", response, {"TrainingJobName": "llama-1"})
        assert job_window(account, "llama-1") == (start, end)
        pending = {k: v for k, v in response.items() if k not in ("TrainingStartTime", "TrainingEndTime")}
        stub.add_response("describe_training_job", {**pending, "TrainingJobStatus": "InProgress"}, {"TrainingJobName": "llama-1"})
        with pytest.raises(ConfigError, match="has not started training yet"):
            job_window(account, "llama-1")


def test_observe_imports_no_cdk() -> None:
    code = ("import sys; from smddp_infra.cli import build_parser; build_parser(); import smddp_infra.observe.replan; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('aws_cdk', 'jsii', 'constructs', 'cdk_nag', 'boto3')); "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@NO_DEADLINE
@given(n=st.integers(min_value=1, max_value=5), extra=st.integers(min_value=0, max_value=5),
       pattern=st.lists(st.booleans(), min_size=1, max_size=60))
def test_alarm_model_is_n_of_the_last_m_periods(n: int, extra: int, pattern: list[bool]) -> None:
    m_periods = n + extra
    values = [2.0 if hot else 0.0 for hot in pattern]
    states = m.alarm_states(values, 1.0, datapoints_to_alarm=n, evaluation_periods=m_periods)
    for index, state in enumerate(states):
        assert state == (sum(pattern[max(0, index - m_periods + 1): index + 1]) >= n)
    one_dip = [2.0, 2.0, 0.0, 2.0]  # the default 3 of 4 rides over one quiet period
    assert m.alarm_states(one_dip, 1.0, datapoints_to_alarm=3, evaluation_periods=4)[-1] is True


def test_print_policy_lists_observes_reads_and_is_parliament_clean(capsys: pytest.CaptureFixture[str]) -> None:
    from parliament import analyze_policy_string

    from smddp_infra.cli import main
    from smddp_infra.commands.observe import ACTIONS

    assert main(["observe", "--print-policy"]) == 0
    document = capsys.readouterr().out
    actions = sorted(a for s in json.loads(document)["Statement"] for a in s["Action"])
    assert actions == sorted(ACTIONS)
    assert [f.issue for f in analyze_policy_string(document).findings] == []


@pytest.mark.parametrize("args, message", [
    (["--file-system", "nope"], "--file-system must be an FSx id like fs-0123456789abcdef0, got 'nope'"),
    ([], "observe needs the file system: --outputs FILE, --file-system ID, --cluster NAME or --job NAME"),
    (["--job", "a", "--job", "a"], "--job names the same job twice: a, a"),
    (["--file-system", "fs-0123456789abcdef0", "--cluster", "c"], "observe reads one file system: pass one of"),
    (["--file-system", "fs-0123456789abcdef0", "--network", "n"], "--network and --stack pick a network in --outputs"),
])
def test_bad_file_system_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                                      message: str) -> None:
    from smddp_infra.cli import main

    assert main(["observe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1

"""`smddp-infra size`: the table, the JSON, one-line errors with exit 2, and a cold start without CDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from smddp_infra.cli import main
from smddp_infra.sizing import plan_lustre

ROOT = Path(__file__).resolve().parents[1]
P5_16 = ["--instance-type", "ml.p5.48xlarge", "--instance-count", "16", "--read-mbps-per-gpu", "200"]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["size", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_the_plan_for_the_cluster(capsys):
    code, out, err = _run(capsys, *P5_16, "--dataset-gib", "20000", "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    expected = plan_lustre(16 * 8 * 200, 20_000, clients=16)
    assert data == json.loads(json.dumps(expected.to_dict()))
    assert data["required_throughput_mbps"] == 25_600
    assert (data["deployment_type"], data["per_unit_storage_throughput"], data["storage_capacity_gib"]) == (
        "PERSISTENT_2", 1000, 26_400)


def test_table_shows_the_chosen_plan_beside_the_best_of_each_other_type(capsys):
    code, out, _ = _run(capsys, *P5_16, "--dataset-gib", "20000")
    assert code == 0
    assert "25,600 MB/s" in out and "20,000 GiB" in out
    lines = out.splitlines()
    chosen = next(line for line in lines if "(chosen)" in line)
    assert "PERSISTENT_2" in chosen and "26,400" in chosen and "15,840.00" in chosen and "+0.7%" in chosen
    scratch = next(line for line in lines if "SCRATCH_2" in line and "132,000" in line)
    assert "18,480.00" in scratch
    assert any("PERSISTENT_1 " in line and "38,280.00" in line for line in lines)
    assert "size set by throughput" in out


def test_hdd_and_efa_and_the_cap_reach_the_planner(capsys):
    code, out, _ = _run(capsys, "--required-mbps", "1", "--dataset-gib", "6000", "--deployment-type", "PERSISTENT_1_HDD", "--json")
    assert code == 0 and json.loads(out)["drive_cache_type"] == "NONE"
    code, out, _ = _run(capsys, "--required-mbps", "1", "--efa", "--json")
    data = json.loads(out)
    assert (data["efa_enabled"], data["storage_capacity_gib"]) == (True, 4800)
    code, out, _ = _run(capsys, "--required-mbps", "30000", "--max-capacity-gib", "40000", "--json")
    assert json.loads(out)["storage_capacity_gib"] <= 40_000
    code, out, _ = _run(capsys, "--required-mbps", "300", "--deployment-type", "SCRATCH_2", "--deployment-type", "PERSISTENT_1")
    assert "SCRATCH_2 (chosen)" in out and "PERSISTENT_2" not in out


def test_required_mbps_overrides_and_epoch_time_adds_a_need(capsys):
    _, out, _ = _run(capsys, *P5_16, "--required-mbps", "1000", "--json")
    assert json.loads(out)["required_throughput_mbps"] == 1000
    _, out, _ = _run(capsys, "--dataset-gib", "1000", "--epoch-seconds", "100", "--json")
    assert json.loads(out)["required_throughput_mbps"] == pytest.approx(10_737.41824)
    _, out, _ = _run(capsys, *P5_16, "--dataset-gib", "1000", "--epoch-seconds", "100", "--json")
    assert json.loads(out)["required_throughput_mbps"] == 25_600  # the larger need wins


def test_epoch_time_is_a_need_beside_required_mbps_too(capsys):
    # 2,000 GiB in 60 s is 35,791 MB/s: the epoch need is larger than --required-mbps 100 and wins
    _, out, _ = _run(capsys, "--required-mbps", "100", "--dataset-gib", "2000", "--epoch-seconds", "60", "--json")
    assert json.loads(out)["required_throughput_mbps"] == pytest.approx(2000 * 1073.741824 / 60)
    _, out, _ = _run(capsys, "--required-mbps", "50000", "--dataset-gib", "2000", "--epoch-seconds", "60", "--json")
    assert json.loads(out)["required_throughput_mbps"] == 50_000


def test_deployment_type_help_offers_exactly_the_priced_types():
    from smddp_infra.commands.size import PRICED_TYPES
    from smddp_infra.sizing.planner import TIER_GROUPS
    from smddp_infra.sizing.prices import DEFAULT_PRICES

    priced = [name for name, tiers in TIER_GROUPS.items() if all(t.key in DEFAULT_PRICES for t in tiers)]
    assert list(PRICED_TYPES) == priced


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--instance-type", "ml.g5.48xlarge", "--instance-count", "2", "--read-mbps-per-gpu", "1"],
         "--instance-type must be a SageMaker EFA training instance type (ml.p4d.24xlarge"),
        (["--instance-type", "ml.p5.48xlarge", "--instance-count", "0", "--read-mbps-per-gpu", "1"],
         "--instance-count must be a whole number >= 1, got '0'"),
        (["--instance-type", "ml.p5.48xlarge", "--instance-count", "2.5", "--read-mbps-per-gpu", "1"],
         "--instance-count must be a whole number >= 1, got '2.5'"),
        (["--instance-type", "ml.p5.48xlarge", "--instance-count", "2", "--read-mbps-per-gpu", "fast"],
         "--read-mbps-per-gpu must be a number > 0, got 'fast'"),
        (["--instance-type", "ml.p5.48xlarge", "--instance-count", "2"], "--read-mbps-per-gpu must be given"),
        (["--required-mbps", "nan"], "--required-mbps must be a number > 0, got 'nan'"),
        (["--required-mbps", "-1"], "--required-mbps must be a number > 0"),
        (["--required-mbps", "10", "--dataset-gib", "-5"], "--dataset-gib must be a number >= 0, got '-5'"),
        (["--required-mbps", "10", "--max-capacity-gib", "100"], "--max-capacity-gib=100 is too small"),
        (["--required-mbps", "10", "--deployment-type", "FAST"], "--deployment-type must be among"),
        (["--required-mbps", "10", "--efa", "--deployment-type", "SCRATCH_2"], "with --efa only PERSISTENT_2"),
        (["--epoch-seconds", "10"], "--epoch-seconds needs --dataset-gib"),
        (["--required-mbps", "100", "--epoch-seconds", "60"], "--epoch-seconds needs --dataset-gib"),
        (["--required-mbps", "100", "--deployment-type", "SCRATCH_1"],
         "--deployment-type SCRATCH_1 has no default price, so the CLI cannot cost it; choose among SCRATCH_2, "),
        ([], "no throughput to size for"),
    ],
)
def test_bad_flag_values_exit_2_with_one_line(capsys, argv, message):
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("smddp-infra size: error: ")
    assert message in err


def _python(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_real_command_runs_in_a_subprocess():
    done = _python("-m", "smddp_infra.cli", "size", *P5_16, "--dataset-gib", "20000", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["storage_capacity_gib"] == 26_400
    bad = _python("-m", "smddp_infra.cli", "size", "--required-mbps", "0")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["smddp-infra size: error: --required-mbps must be a number > 0, got '0'"]


def test_the_command_module_does_not_import_cdk_or_jsii():
    done = _python(
        "-c",
        "import smddp_infra.commands.size, sys; "
        "assert not any(m.startswith(('aws_cdk','jsii')) for m in sys.modules)",
    )
    assert done.returncode == 0, done.stderr
    # and neither does actually running it
    done = _python(
        "-c",
        "import sys; from smddp_infra.commands import size; import argparse; p = argparse.ArgumentParser(); "
        "size.add_arguments(p); size.run(p.parse_args(['--required-mbps', '500', '--json'])); "
        "bad = sorted(m for m in sys.modules if m.startswith(('aws_cdk', 'jsii', 'constructs'))); "
        "assert not bad, bad",
    )
    assert done.returncode == 0, done.stderr


def test_version_is_the_installed_package_version():
    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "--version"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"smddp-infra {version('smddp-infra')}"


def test_quota_and_cost_alerts_reach_stderr_and_json_stays_clean():
    """The alerts the constructs raise at synth, for a 10 PB dataset, before anything is built."""
    result = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "size", "--instance-type", "ml.p5.48xlarge",
                             "--instance-count", "16", "--read-mbps-per-gpu", "200", "--dataset-gib", "10000000",
                             "--json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["storage_capacity_gib"] >= 10_000_000
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 2 and all(w.startswith("smddp-infra size: warning: ") for w in warnings)
    assert "above the default regional FSx for Lustre storage quota of 100,800 GiB" in warnings[0]
    assert "--max-capacity-gib" in warnings[0] and "max_capacity_gib" not in warnings[0]
    assert "/month warning threshold" in warnings[1]
    ordinary = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "size", "--instance-type", "ml.p4d.24xlarge",
                               "--instance-count", "4", "--read-mbps-per-gpu", "50"], capture_output=True, text=True,
                              timeout=60)
    assert (ordinary.returncode, ordinary.stderr) == (0, "")


def test_efa_says_training_jobs_mount_it_over_tcp_on_stderr(capsys):
    from smddp_infra.sizing.guards import EFA_OVER_TCP_FOR_TRAINING_JOBS

    code, out, err = _run(capsys, "--required-mbps", "1", "--efa", "--json")
    assert code == 0 and json.loads(out)["efa_enabled"] is True
    (line,) = [w for w in err.splitlines() if "--efa" in w]
    assert line.startswith("smddp-infra size: warning: --efa: ") and EFA_OVER_TCP_FOR_TRAINING_JOBS in line
    code, out, err = _run(capsys, "--required-mbps", "1", "--json")
    assert code == 0 and "over TCP" not in err

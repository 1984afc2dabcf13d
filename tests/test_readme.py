"""The README's promises: its embedding example runs as written, its context table is complete."""

from __future__ import annotations

import re

from conftest import ROOT, cdk_context
from smddp_infra.settings import KEYS

README = (ROOT / "README.md").read_text()


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_embedding_example_runs_as_written() -> None:
    (example,) = [b for b in python_blocks(README) if "TrainingNetwork(" in b]
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102 - the README is ours
    network = namespace["network"]
    settings = namespace["settings"]
    assert network.lustre_plan.baseline_throughput_mbps >= 16 * 8 * 200
    assert network.lustre_plan.storage_capacity_gib >= 20_000
    assert settings.checkpoint_s3_uri.endswith("/")


def test_readme_lists_every_context_key_and_cdk_json_sets_the_documented_defaults() -> None:
    documented = set(re.findall(r"^\| `(smddp:\w+)` \|", README, flags=re.M))
    # every key the settings read (one per schema or app field that has one) is documented, and no other
    parsed_keys = {k for k in cdk_context() if k.startswith("smddp:")}
    assert parsed_keys <= documented
    assert documented == set(KEYS)


def _text_block_after(command: str) -> list[str]:
    match = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", README, flags=re.S)
    assert match, f"README has no output block for `{command}`"
    return [line for line in match.group(1).splitlines() if line.strip()]


def _run(command: str) -> str:
    import os
    import subprocess
    import sys

    args = command.split()[1:]
    env = {**os.environ, "COLUMNS": "110", "NO_COLOR": "1"}
    result = subprocess.run([sys.executable, "-m", "smddp_infra.cli", *args], cwd=ROOT, capture_output=True,
                            text=True, env=env, timeout=60)
    return result.stdout + result.stderr


def test_readme_size_output_is_what_the_command_prints() -> None:
    command = ("smddp-infra size --instance-type ml.p5.48xlarge --instance-count 16 --read-mbps-per-gpu 200 "
               "--dataset-gib 20000")
    actual = _run(command)
    for line in _text_block_after(command):
        if line.startswith("│"):
            assert line in actual, line


def test_readme_check_output_is_what_the_command_prints() -> None:
    command = "smddp-infra check tests/fixtures/templates/sg_separate.yaml"
    actual = _run(command).splitlines()
    assert _text_block_after(command) == [line for line in actual if line.strip()]


def test_readme_job_config_output_is_what_the_command_prints_for_the_default_fixture() -> None:
    shown = "\n".join(_text_block_after("smddp-infra job-config --outputs cdk-outputs.json --format v2"))
    actual = _run("smddp-infra job-config --outputs tests/fixtures/outputs/default-p4d.json --format v2")
    assert shown.strip() == actual.strip()


def test_readme_system_check_output_is_what_the_command_prints() -> None:
    command = "smddp-infra check tests/fixtures/corpus/system_hyperpod_exports"
    actual = _run(command).splitlines()
    assert _text_block_after(command) == [line for line in actual if line.strip()]

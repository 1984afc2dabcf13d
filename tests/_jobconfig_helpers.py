"""Shared by the job-config tests: the representative outputs files and the real CLI.

Every format is produced by running the installed CLI in a subprocess exactly as a user
would (``python -m smddp_infra.cli job-config ...``), once per (configuration, format) per
test session.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
OUTPUTS_DIR = Path(__file__).resolve().parent / "fixtures" / "outputs"
FORMATS = ("v2", "v3", "boto3")


class Config(NamedTuple):
    """One representative deployment: its cdk-outputs.json and the CLI flags it needs."""

    id: str
    file: str
    args: tuple[str, ...] = ()


CONFIGS = (
    # the default app: 4 x ml.p4d.24xlarge, one subnet, one EFA group
    Config("default-p4d", "default-p4d.json"),
    # 64 x ml.p5.48xlarge, two groups, a sub-directory, rw, no ICT encryption, network isolation
    Config("p5-64-node", "p5-64-node-two-groups.json"),
    # an OLDER stack (no OutputS3Uri/CodeS3Uri): GovCloud partition, short (8-hex) legacy ids,
    # SCRATCH_1's "fsx" mount name
    Config("govcloud-older-stack", "govcloud-short-ids.json"),
    # a platform app with a second stack: --stack picks ours
    Config("two-stacks", "platform-two-stacks.json", ("--stack", "TrainingNetworkStack")),
    # a stack without the TrainingJobConfig output: rebuilt from the individual outputs
    Config("individual-outputs", "individual-outputs-only.json",
           ("--instance-type", "ml.p5.48xlarge", "--instance-count", "2", "--channel", "train-fsx")),
    # 16 x ml.p5.48xlarge on a training plan's reserved capacity (document version 2), the
    # network placed by AZ ID in the plan's AZ
    Config("training-plan", "p5-training-plan.json"),
)
#: The one representative deployment whose jobs run on a training plan.
PLAN_CONFIG_ID = "training-plan"
PLAN_FILE = OUTPUTS_DIR / "p5-training-plan.json"
CONFIG_IDS = [c.id for c in CONFIGS]
#: The one representative stack deployed before the output and code prefixes existed.
OLDER_STACK_ID = "govcloud-older-stack"
OLDER_STACK_FILE = OUTPUTS_DIR / "govcloud-short-ids.json"
#: Where a user of an older stack would have to send model artifacts (their choice, not ours).
USER_CHOSEN_OUTPUT = "s3://user-chosen-output-bucket/models/"


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "smddp_infra.cli", "job-config", *args],
                          capture_output=True, text=True, cwd=REPO, env=cli_env(), timeout=120)


@lru_cache(maxsize=None)
def _emitted_text(config_id: str, fmt: str) -> str:
    config = next(c for c in CONFIGS if c.id == config_id)
    result = run_cli("--outputs", str(OUTPUTS_DIR / config.file), "--format", fmt, *config.args)
    if result.returncode != 0:
        raise AssertionError(f"job-config {config_id} {fmt} exited {result.returncode}: {result.stderr}")
    return result.stdout


def emitted(config_id: str, fmt: str) -> Any:
    """The parsed output of the real CLI (a fresh copy each call: tests may mutate it)."""
    return json.loads(_emitted_text(config_id, fmt))


def channel_of(config_id: str) -> str:
    config = next(c for c in CONFIGS if c.id == config_id)
    args = list(config.args)
    return args[args.index("--channel") + 1] if "--channel" in args else "training"


def complete_request(fragment: dict, *, job_name: str = "smddp-job-config-check") -> dict:
    """The fragment plus the members a real CreateTrainingJob needs that the network does not
    decide (name, image). The stopping condition and the output location come from the
    fragment; only an older stack's fragment lacks the output, and then the user must choose one."""
    request = copy.deepcopy(fragment)
    request.update({
        "TrainingJobName": job_name,
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.2.0-gpu-py310",
            "TrainingInputMode": "File",
        },
    })
    request.setdefault("OutputDataConfig", {"S3OutputPath": USER_CHOSEN_OUTPUT})
    return request

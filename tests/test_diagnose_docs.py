"""docs/diagnose.md's outputs are what ``smddp-infra diagnose`` prints for its scenarios.

Every ``$ smddp-infra diagnose --job NAME`` block of docs/diagnose.md marked
``run-by tests/test_diagnose_docs.py::test_each_doc_output_is_what_diagnose_prints`` is run here
against moto's server, on the scenario of that job name (built through boto3 by :data:`SCENARIOS`),
and the doc's lines must be exactly what the command prints. moto's ids and times differ on every
run, so both sides are normalised the same way: each id becomes a fixed id of its kind in order of
first appearance (the first group seen is ``sg-0aaaaaaaaaaaaaaa1``), each time a fixed time.

``DIAGNOSE_DOCS_WRITE=1`` rewrites the blocks from what the command prints (how the doc was made:
captured, never typed).
"""

from __future__ import annotations

import io
import os
import re
from contextlib import redirect_stdout
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from _diagnose_scenarios import Aws
from smddp_infra.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "diagnose.md"
MARKER = "<!-- doc-test: run-by tests/test_diagnose_docs.py::test_each_doc_output_is_what_diagnose_prints -->"
BLOCK = re.compile(re.escape(MARKER) + r"\n```console\n(\$ smddp-infra diagnose --job (\S+)\n)(.*?)```", re.S)
_IDS = re.compile(r"\b(sg|subnet|vpc|rtb|fs|acl|vpce|nat)-[0-9a-f]{8,17}\b")
_TIMES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\+00:00")


def normalise(text: str) -> str:
    ids: dict[str, str] = {}
    counts: dict[str, int] = {}

    def fixed_id(match: re.Match[str]) -> str:
        if match.group(0) not in ids:
            kind = match.group(1)
            counts[kind] = counts.get(kind, 0) + 1
            width = 8 if kind == "fs" else 17
            ids[match.group(0)] = f"{kind}-0" + "a" * (width - 2) + str(counts[kind])
        return ids[match.group(0)]

    times: dict[str, str] = {}

    def fixed_time(match: re.Match[str]) -> str:
        if match.group(0) not in times:
            times[match.group(0)] = f"2026-11-02T09:{len(times):02d}:00+00:00"
        return times[match.group(0)]

    return _TIMES.sub(fixed_time, _IDS.sub(fixed_id, text))


def _debugger(aws: Aws, name: str) -> None:
    aws.job(name, aws.network(), debugger=True, checkpoints=True)


def _prefix(aws: Aws, name: str) -> None:
    aws.job(name, aws.network())
    start = aws.sm.describe_training_job(TrainingJobName=name)["TrainingStartTime"]
    aws.log(name, ["loading checkpoint /opt/ml/checkpoints/epoch-3.pt",
                   'RuntimeError: Error(s) in loading state_dict for ResNet: Unexpected key(s) in state_dict: '
                   '"module.conv1.weight", "module.bn1.weight".'], at=start)


def _init_stall(aws: Aws, name: str) -> None:
    aws.job(name, aws.network(self_out=False))


def _end_stall(aws: Aws, name: str) -> None:
    aws.job(name, aws.network())
    start = aws.sm.describe_training_job(TrainingJobName=name)["TrainingStartTime"]
    aws.log(name, ["epoch 9 step 4000 loss 1.93",
                   "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=81920, OpType=ALLREDUCE, "
                   "NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800093 milliseconds before timing out."], at=start)


def _throughput(aws: Aws, name: str) -> None:
    net = aws.network()
    fs = aws.file_system(net["subnets"][0], net["group"])  # 1,200 GiB PERSISTENT_2/125: 146.5 MB/s baseline
    aws.job(name, net, fs=fs, count=8)
    start = aws.sm.describe_training_job(TrainingJobName=name)["TrainingStartTime"]
    aws.cw.put_metric_data(Namespace="AWS/FSx", MetricData=[
        {"MetricName": "DataReadBytes", "Dimensions": [{"Name": "FileSystemId", "Value": fs}],
         "Timestamp": start + timedelta(seconds=10), "Value": 142 * 1e6 * 300}])


def _deprecation(aws: Aws, name: str) -> None:
    aws.job(name, aws.network())
    start = aws.sm.describe_training_job(TrainingJobName=name)["TrainingStartTime"]
    aws.log(name, ["smdistributed.dataparallel.torch.dist is deprecated in the SageMaker AI distributed data parallel "
                   "library v1.4.0+."], at=start)


#: job name in the doc -> how its scenario is built
SCENARIOS: dict[str, Callable[[Aws, str], None]] = {
    "bert-debugger": _debugger,
    "resnet-resume": _prefix,
    "llama-efa": _init_stall,
    "gpt-epoch-end": _end_stall,
    "vit-io-bound": _throughput,
    "bert-deprecated": _deprecation,
}


@pytest.fixture(scope="module")
def outputs() -> Iterator[dict[str, tuple[int, str]]]:
    """job name -> (exit code, normalised output), every scenario on one endpoint."""
    from _moto_server import account_env, moto_server

    # another module's log group would change the output: start from a reset account
    with moto_server(reset=True) as url, account_env(url):
        aws = Aws(url)
        result: dict[str, tuple[int, str]] = {}
        for name, build in SCENARIOS.items():
            build(aws, name)
            out = io.StringIO()
            with redirect_stdout(out):
                code = main(["diagnose", "--job", name])
            result[name] = (code, normalise(out.getvalue()))
        yield result


def test_each_doc_output_is_what_diagnose_prints(outputs: dict[str, tuple[int, str]]) -> None:
    text = DOC.read_text()
    if os.environ.get("DIAGNOSE_DOCS_WRITE") == "1":
        text = BLOCK.sub(lambda m: f"{MARKER}\n```console\n{m.group(1)}{outputs[m.group(2)][1]}```", text)
        DOC.write_text(text)
    blocks = BLOCK.findall(text)
    assert sorted(name for _, name, _ in blocks) == sorted(SCENARIOS), "docs/diagnose.md has one block per scenario"
    for _, name, shown in blocks:
        code, printed = outputs[name]
        assert shown == printed, f"docs/diagnose.md's output for --job {name} is not what diagnose prints:\n{printed}"
    codes: dict[str, Any] = {name: code for name, (code, _) in outputs.items()}
    assert codes == {"bert-debugger": 1, "resnet-resume": 1, "llama-efa": 1, "gpt-epoch-end": 1, "vit-io-bound": 0,
                     "bert-deprecated": 0}

"""``smddp-infra observe`` on file systems, jobs and clusters no one here deployed (issue 36), on moto's server.

File systems are created through FSx's API, jobs and a HyperPod cluster through SageMaker's,
metrics through PutMetricData (tests/_observe_scenarios.py); every command runs once, through the
CLI's ``main``, and each test asserts on what it printed. docs/observe.md's ``$ smddp-infra
observe`` blocks marked ``run-by`` this module are compared with the same runs (ids normalised:
moto's differ on every run); ``OBSERVE_DOCS_WRITE=1`` rewrites them from what the command prints.
"""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Iterator

import pytest

from _observe_scenarios import Aws, build
from smddp_infra.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "observe.md"
MARKER = "<!-- doc-test: run-by tests/test_observe_account.py::test_docs_observe_md_shows_what_observe_prints -->"
BLOCK = re.compile(re.escape(MARKER) + r"\n```console\n\$ (smddp-infra observe [^\n]*)\n(.*?)```", re.S)
_FS = re.compile(r"\bfs-[0-9a-f]{8,17}\b")
WINDOW = ["--since", "2026-11-02T00:00", "--until", "2026-11-02T06:00"]

#: run name -> the command's arguments ({name} is the scenario's file system id)
RUNS: dict[str, list[str]] = {
    "over-sized": ["--file-system", "{over-sized}", *WINDOW],
    "under-sized": ["--file-system", "{under-sized}", *WINDOW],
    "scratch-1": ["--file-system", "{scratch-1}", *WINDOW],
    "tiering": ["--file-system", "{tiering}", *WINDOW],
    "cluster": ["--cluster", "pod-1", *WINDOW],
    "job": ["--job", "resnet-16"],
    "limits": ["--job", "resnet-4", "--job", "resnet-16"],
    "not-the-fs": ["--job", "bert-4", "--job", "bert-16"],
    "unknown": ["--file-system", "fs-0123456789abcdef0", *WINDOW],
}
#: Shown in docs/observe.md, in this order.
IN_DOCS = ("unknown", "under-sized", "over-sized", "limits", "not-the-fs")


def normalise(text: str) -> str:
    ids: dict[str, str] = {}

    def fixed(match: re.Match[str]) -> str:
        if match.group(0) == "fs-0123456789abcdef0":  # the docs' example of an id that does not exist
            return match.group(0)
        if match.group(0) not in ids:
            ids[match.group(0)] = f"fs-0{'a' * 6}{len(ids) + 1}"
        return ids[match.group(0)]

    return _FS.sub(fixed, text)


class Run:
    def __init__(self, args: list[str], code: int, text: str, err: str, report: Any) -> None:
        self.args, self.code, self.text, self.err, self.report = args, code, text, err, report

    @property
    def shown(self) -> tuple[str, str]:
        """(command line, output) as docs/observe.md shows them, ids normalised together."""
        both = normalise(f"smddp-infra observe {' '.join(self.args)}\n\x00{self.text}{self.err}")
        command, output = both.split("\n\x00", 1)
        return command, output


def _main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["observe", *args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Run]]:
    from _moto_server import account_env, moto_server

    with moto_server(reset=True) as url, account_env(url):
        made = build(Aws(url))
        ids = {name: fs["FileSystemId"] for name, fs in made.items()}
        result: dict[str, Run] = {}
        for name, template in RUNS.items():
            args = [a.format(**ids) if a.startswith("{") else a for a in template]
            code, text, err = _main(args)
            json_code, out, _ = _main([*args, "--json"])
            assert json_code == code
            result[name] = Run(args, code, text, err, json.loads(out) if out.strip() else None)
        result["_ids"] = ids  # type: ignore[assignment]
        yield result


def test_an_over_sized_file_system_is_never_re_planned_below_what_it_holds(runs: dict[str, Run]) -> None:
    """SCRATCH_2 of 14,400 GiB holding 8,000 GiB: was re-planned to 7,200 GiB."""
    run = runs["over-sized"]
    report = run.report
    assert run.code == 1 and report["verdict"] == "over-sized"
    assert report["fileSystem"]["storageCapacityGiB"] == 14400 and report["stored"]["heldGiB"] == 8000
    assert report["stored"]["floorGiB"] == 8000
    assert report["headline"]["change"] == "keep"
    plans = [a["plan"] for a in report["alternatives"]]
    assert plans and min(p["storage_capacity_gib"] for p in plans) >= 8000
    assert ("SCRATCH_2", 9600) in [(p["tier"], p["storage_capacity_gib"]) for p in plans]
    assert all(a["note"].startswith("new, empty file system") for a in report["alternatives"])


def test_an_under_sized_persistent_2_grows_in_place_to_4800(runs: dict[str, Run]) -> None:
    run = runs["under-sized"]
    report = run.report
    assert run.code == 1 and report["verdict"] == "under-sized"
    head = report["headline"]
    assert head["change"] == "in place" and head["fileSystem"] == "PERSISTENT_2/125 4,800 GiB"
    assert head["command"][-2:] == ["--storage-capacity", "4800"]
    assert head["monthlyCostDeltaUSD"] == pytest.approx(2400 * 0.145)
    assert report["alternatives"] and all(a["change"] == "new file system" for a in report["alternatives"])
    assert all(a["monthlyCostDeltaUSD"] is not None for a in report["alternatives"])
    assert "headline: grow in place to PERSISTENT_2/125 4,800 GiB" in run.text
    assert "new, empty file system" in run.text


def test_when_nothing_in_place_meets_the_need_observe_says_why(runs: dict[str, Run]) -> None:
    report = runs["scratch-1"].report
    assert report["verdict"] == "under-sized" and report["headline"] is None
    assert "a SCRATCH_1 file system cannot grow" in report["inPlaceWhyNot"]
    assert report["alternatives"]  # the way out is a new file system, and it says so
    assert "headline: nothing in place meets" in runs["scratch-1"].text


def test_intelligent_tiering_grows_its_throughput_capacity(runs: dict[str, Run]) -> None:
    report = runs["tiering"].report
    assert report["fileSystem"]["storageType"] == "INTELLIGENT_TIERING" and report["fileSystem"]["baselineMBps"] == 4000
    assert report["headline"]["command"][-1] == "ThroughputCapacity=8000"


def test_a_hyperpod_clusters_file_system_is_found_by_its_dns_name(runs: dict[str, Run]) -> None:
    ids = runs["_ids"]  # type: ignore[index]
    assert runs["cluster"].report["fileSystemId"] == ids["under-sized"]  # type: ignore[index]
    assert runs["cluster"].report["headline"] == runs["under-sized"].report["headline"]


def test_a_job_alone_names_its_file_system_and_window(runs: dict[str, Run]) -> None:
    report = runs["job"].report
    assert report["fileSystemId"] == runs["_ids"]["limited"]  # type: ignore[index]
    assert report["window"]["job"] == "resnet-16" and report["read"]["samples"] == 24


def test_an_unknown_file_system_is_one_line_and_exit_2(runs: dict[str, Run]) -> None:
    run = runs["unknown"]
    assert run.code == 2 and run.text == "" and run.err.count("\n") == 1
    assert "no FSx file system fs-0123456789abcdef0 in us-east-1" in run.err


def test_four_to_sixteen_instances_at_the_baseline_is_the_guides_verdict(runs: dict[str, Run]) -> None:
    report = runs["limits"].report
    assert runs["limits"].code == 1 and report["verdict"] == "file system limits scaling"
    small, large = report["jobs"]
    assert (small["instances"], large["instances"]) == (4, 16)
    assert small["perInstanceMBps"] == pytest.approx(60) and large["perInstanceMBps"] < small["perInstanceMBps"]
    assert large["atBaseline"] and not small["atBaseline"]
    assert report["scaling"]["demandMBps"] == pytest.approx(60 * 16)
    head = report["headline"]  # the plan that lifts it: what 16 instances would read at 60 MB/s each, x 1.25
    assert report["requiredMBps"] == pytest.approx(1200) and head["change"] == "in place"
    assert head["baselineMBps"] >= 1200
    assert "verdict: FILE SYSTEM LIMITS SCALING" in runs["limits"].text


def test_the_same_drop_with_headroom_is_not_the_file_system(runs: dict[str, Run]) -> None:
    report = runs["not-the-fs"].report
    assert runs["not-the-fs"].code == 0 and report["verdict"] == "not the file system"
    small, large = report["jobs"]
    assert large["perInstanceMBps"] < small["perInstanceMBps"] and not large["atBaseline"]
    assert report["headline"] is None and report["alternatives"] == []
    assert "verdict: NOT THE FILE SYSTEM" in runs["not-the-fs"].text


def test_diagnose_and_observe_share_the_throughput_during_a_job(runs: dict[str, Run]) -> None:
    """One computation: diagnose's SYM-FSX-THROUGHPUT reads the job's window as observe --job does."""
    from smddp_infra.account import Account
    from smddp_infra.diagnose import diagnose_job

    diagnosis = diagnose_job(Account(region="us-east-1"), "resnet-16")
    assert diagnosis.throughput is not None
    observed = runs["job"].report
    assert diagnosis.throughput["read"] == observed["read"]
    assert diagnosis.throughput["verdict"] == observed["verdict"] == "under-sized"


def test_docs_observe_md_shows_what_observe_prints(runs: dict[str, Run]) -> None:
    text = DOC.read_text()
    if os.environ.get("OBSERVE_DOCS_WRITE") == "1":
        order = iter(IN_DOCS)  # block by block: two runs may show the same command line (ids normalised)

        def written(match: re.Match[str]) -> str:
            command, output = runs[next(order)].shown
            return f"{MARKER}\n```console\n$ {command}\n{output}```"

        text = BLOCK.sub(written, text)
        DOC.write_text(text)
    shown = BLOCK.findall(text)
    assert [command for command, _ in shown] == [runs[name].shown[0] for name in IN_DOCS], \
        "docs/observe.md shows one block per documented run, in order"
    for (command, output), name in zip(shown, IN_DOCS):
        assert output == runs[name].shown[1], f"docs/observe.md's output of `{command}` is not what observe prints"


def test_every_account_session_of_a_process_shares_one_model_loader() -> None:
    """``smddp-infra mcp`` runs one command per tool call in one process: each command's Session reads
    the services' JSON models through the same loader (parsed once), while its clients, region and
    credentials stay its own."""
    from smddp_infra.account.session import Account

    first = Account(region="us-east-1")
    loader = first.session._session.get_component("data_loader")
    paths = list(loader.search_paths)
    second, third = Account(region="eu-west-1"), Account(region="eu-west-1")
    assert len({id(first.session), id(second.session), id(third.session)}) == 3
    assert second.session._session.get_component("data_loader") is loader
    assert third.session._session.get_component("data_loader") is loader
    assert loader.search_paths == paths  # not one more boto3 data path per command
    assert (first.region, second.region) == ("us-east-1", "eu-west-1")

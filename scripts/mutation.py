#!/usr/bin/env python3
"""Mutation testing of the pure rooms that carry the product's promises (outside `make test`).

    make mutation                                    # every room, the default time cap
    .venv/bin/python scripts/mutation.py sizing guardrails --max-minutes 20

For each room: a scratch copy of the repository's tracked files under ``.mutation/<room>/``
(the work tree is never touched), a ``[tool.mutmut]`` section naming the room's modules and
the tests that guard them, then ``mutmut run`` (mutmut, pinned in requirements-mutation.txt)
with a wall-clock cap, and a table per module: mutants, killed, survived, timeouts, not run.
Survival rate = (survived + no tests) / checked: the share of the code changes checked that no
test noticed ("no tests": no selected test even runs the changed function). A run stopped by
the cap counts only the mutants it checked ("checked" against "mutants"). A survivor is a question, not a verdict: an equivalent mutant (a change that
cannot alter behaviour) survives every suite; ``mutmut show <name>`` in the room's scratch
directory prints the change.

Each room runs only fast, pure, in-process tests: a test that synthesizes would run once per
mutant (minutes each), and a test that runs the CLI in a child process cannot see the mutant. What the synth-based tests would have killed on top is therefore not counted:
the figures are a floor of what the whole suite guards, not its measure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"


@dataclass(frozen=True)
class Room:
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    #: pytest node ids left out: tests that synthesize (each would rebuild a template per mutant).
    deselect: tuple[str, ...] = ()


ROOMS: dict[str, Room] = {
    "sizing": Room(
        ("smddp_infra/sizing/lustre_rules.py", "smddp_infra/sizing/planner.py", "smddp_infra/sizing/guards.py",
         "smddp_infra/sizing/workload.py"),
        # (not test_cli_size.py: most of it runs the CLI in a child process, which cannot see the mutant)
        ("tests/test_sizing_rules.py", "tests/test_sizing_planner.py", "tests/test_sizing_catalog.py"),
    ),
    "guardrails": Room(
        ("smddp_infra/guardrails.py",),
        ("tests/test_cli_guardrails.py",
         # the launch policy's pure tests (the rest evaluate the synthesized default app)
         *(f"tests/test_launch_policy.py::{t}" for t in (
             "test_parliament_finds_nothing_with_every_option_on",
             "test_parliament_really_checks_condition_keys_against_the_action",
             "test_every_condition_key_is_one_aws_documents_for_its_actions",
             "test_job_name_prefix_limits_the_jobs_that_may_start",
             "test_output_key_is_if_given_by_default_and_required_on_request",
             "test_deny_style_with_a_key_refuses_only_a_foreign_key",
             "test_omitted_and_extra_conditions_change_only_what_they_name",
             "test_bad_scope_is_a_config_error_naming_the_setting"))),
    ),
    "replacement-guard": Room(
        ("smddp_infra/review/replacement.py",),
        ("tests/test_replacement_guard.py",),
        ("tests/test_replacement_guard.py::test_fresh_template_replaces_nothing_the_review_guarded",),
    ),
    "rule-engine": Room(
        ("smddp_infra/rules/engine.py", "smddp_infra/rules/efa_rules.py", "smddp_infra/rules/fsx_rules.py",
         "smddp_infra/rules/network_rules.py"),
        ("tests/test_rules_engine.py", "tests/test_rules_efa.py", "tests/test_rules_fsx.py",
         "tests/test_rules_network.py", "tests/test_rules_fixtures.py"),
    ),
    # the rules and the facts they read (the readers, job.py, script.py, extract.py ..., are not rules)
    "preflight-rules": Room(
        ("smddp_infra/preflight/rules.py", "smddp_infra/preflight/facts.py"),
        ("tests/test_preflight.py", "tests/test_preflight_launchers.py", "tests/test_preflight_corpus.py",
         "tests/test_preflight_inputs.py", "tests/test_preflight_entry.py", "tests/test_preflight_placement.py",
         "tests/test_preflight_smddp_use.py", "tests/test_preflight_checkpoints.py"),
        # a child process cannot see the mutant; the SDK ones import the SageMaker SDK (seconds each)
        ("tests/test_preflight.py::test_preflight_never_imports_sagemaker",
         "tests/test_preflight.py::test_the_known_sdk_names_match_the_installed_sdk_signatures",
         "tests/test_preflight_inputs.py::test_without_botocore_the_shape_check_is_listed_as_not_evaluated",
         "tests/test_preflight_inputs.py::test_check_estimator_reads_a_live_sdk_v2_estimator_and_model_trainer"),
    ),
    # the data path: network ACLs, the FSx client ports, DNS (what diagnose joins too)
    "data-path": Room(
        ("smddp_infra/rules/nacl_rules.py", "smddp_infra/rules/fsx_client_rules.py", "smddp_infra/rules/dns_rules.py"),
        ("tests/test_rules_data_path.py", "tests/test_rules_nacl_paths.py", "tests/test_rules_fsx_clients.py",
         "tests/test_rules_unknown_notes.py"),
    ),
    # the network's schema: each field's rule, one validator per cross-field rule, the one sizing call
    "schema": Room(
        ("smddp_infra/schema/network.py", "smddp_infra/schema/fields.py"),
        ("tests/test_schema.py", "tests/test_stated_limits.py", "tests/test_settings.py"),
        ("tests/test_schema.py::test_the_old_api_warns_once_naming_the_new_one",
         "tests/test_schema.py::test_training_network_takes_at_most_ten_props_and_a_short_constructor",
         "tests/test_schema.py::test_upgrading_table_places_every_old_keyword_in_a_real_field",
         "tests/test_stated_limits.py::test_a_64_character_monitoring_prefix_is_one_line_naming_the_field",
         # runs app.py through the cdk CLI in a child process: it cannot see the mutant
         "tests/test_settings.py::test_app_exits_2_with_one_line_on_bad_context"),
    ),
    # the AWS facts floor: patterns, limits, tables and arithmetic, each once
    "facts": Room(
        ("smddp_infra/facts/subnets.py", "smddp_infra/facts/names.py", "smddp_infra/facts/regions.py",
         "smddp_infra/facts/arns.py", "smddp_infra/facts/s3.py", "smddp_infra/facts/eks.py",
         "smddp_infra/facts/training_jobs.py", "smddp_infra/facts/addresses.py"),
        ("tests/test_facts.py", "tests/test_addresses.py", "tests/test_schema.py", "tests/test_stated_limits.py"),
    ),
}

#: mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), folded into our columns.
#: "no tests": no selected test even runs the mutated function; counted as surviving.
KILLED, SURVIVED, NO_TESTS, TIMEOUT = {1, 3, 37}, {0}, {5, 33}, {36, 24, -24, 152, 255}


def log(message: str) -> None:
    print(f"[mutation {time.strftime('%H:%M:%S')}] {message}", flush=True)


def scratch_copy(name: str, room: Room) -> Path:
    """The tracked files (plus uncommitted edits to them) in .mutation/<room>/, with the config."""
    target = WORK / name
    if target.exists():
        shutil.rmtree(target)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    files = [rel for rel in tracked.decode().split("\0") if rel]
    for rel in files:
        source = ROOT / rel
        if source.is_file() and not rel.endswith(".whl"):
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    config = {
        "source_paths": ["smddp_infra"],
        "only_mutate": list(room.modules),
        "tests_dir": list(room.tests),
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q", *[f"--deselect={d}" for d in room.deselect]],
        "use_git_change_detection": False,
        # the tests run inside mutants/ and read docs, fixtures, cdk.json...: everything tracked
        "also_copy": sorted({rel.split("/", 1)[0] for rel in files} - {"smddp_infra"}),
    }
    lines = ["", "[tool.mutmut]"] + [f"{key} = {json.dumps(value)}" for key, value in config.items()]
    with open(target / "pyproject.toml", "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return target


def run_room(name: str, room: Room, *, seconds: float, children: int) -> dict[str, dict[str, int]]:
    where = scratch_copy(name, room)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    mutmut = Path(sys.executable).with_name("mutmut")
    log(f"{name}: mutmut run over {', '.join(room.modules)} (cap {seconds / 60:.0f} min, {children} children)")
    started = time.monotonic()
    with open(where / "mutmut.log", "w", encoding="utf-8") as out:
        process = subprocess.Popen([str(mutmut), "run", "--max-children", str(children)], cwd=where, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while process.poll() is None:
                if time.monotonic() - started > seconds:
                    log(f"{name}: time cap reached; stopping mutmut (the table counts what it finished)")
                    os.killpg(process.pid, signal.SIGTERM)
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        os.killpg(process.pid, signal.SIGKILL)
                    break
                time.sleep(10)
                done = sum(len(_exit_codes(meta)) for meta in (where / "mutants").rglob("*.meta"))
                log(f"{name}: {time.monotonic() - started:4.0f} s, {done} mutants checked so far")
        except KeyboardInterrupt:
            os.killpg(process.pid, signal.SIGTERM)
            raise
    log(f"{name}: mutmut exited {process.returncode} after {time.monotonic() - started:.0f} s (log: {where / 'mutmut.log'})")
    return tally(where, room)


def _exit_codes(meta: Path) -> dict[str, object]:
    try:
        data = json.loads(meta.read_text())
    except (OSError, ValueError):
        return {}
    codes = data.get("exit_code_by_key", {})
    return {k: v for k, v in codes.items() if v is not None}


def tally(where: Path, room: Room) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for module in room.modules:
        meta = where / "mutants" / (module + ".meta")
        counts = {"mutants": 0, "killed": 0, "survived": 0, "no tests": 0, "timeout": 0, "not run": 0}
        if meta.exists():
            data = json.loads(meta.read_text())
            for code in data.get("exit_code_by_key", {}).values():
                counts["mutants"] += 1
                key = ("killed" if code in KILLED else "survived" if code in SURVIVED else "no tests" if code in NO_TESTS
                       else "timeout" if code in TIMEOUT else "not run")
                counts[key] += 1
        table[module] = counts
    return table


def report(results: dict[str, dict[str, dict[str, int]]]) -> str:
    rows = ["| room | module | mutants | checked | killed | survived | no tests | timeout | survival |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for room, table in results.items():
        for module, c in table.items():
            checked = c["killed"] + c["survived"] + c["no tests"] + c["timeout"]
            rate = f"{100 * (c['survived'] + c['no tests']) / checked:.1f} %" if checked else "n/a"
            rows.append(f"| {room} | {module} | {c['mutants']} | {checked} | {c['killed']} | {c['survived']} "
                        f"| {c['no tests']} | {c['timeout']} | {rate} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("rooms", nargs="*", choices=[[], *ROOMS], default=[], metavar="ROOM",
                        help=f"rooms to mutate (default: all): {', '.join(ROOMS)}")
    parser.add_argument("--max-minutes", type=float, default=15.0,
                        help="wall-clock cap per room (default 15); unfinished mutants are counted as not run")
    parser.add_argument("--max-children", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="parallel test processes (default: cores - 1)")
    parser.add_argument("--json", type=Path, default=None, help="also write the table as JSON here")
    args = parser.parse_args(argv)
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutation: mutmut is not installed in this venv: run `make mutation` (it installs "
              "requirements-mutation.txt) or `pip install -r requirements-mutation.txt`", file=sys.stderr)
        return 2
    chosen = args.rooms or list(ROOMS)
    results = {name: run_room(name, ROOMS[name], seconds=args.max_minutes * 60, children=args.max_children)
               for name in chosen}
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark ``smddp-infra check`` (not a test: prints figures, asserts nothing).

    python benchmarks/bench_check.py [--runs 5] [--profile] [CORPUS_DIR]

Wall time, best and median of ``--runs`` cold starts, of:

* ``python -c pass``: the floor every CLI call pays (interpreter start);
* ``python -c "import smddp_infra.commands.check"`` : what the command imports before reading;
* ``smddp-infra check ONE`` for the corpus's smallest template and for its template with the
  most judged parameter assignments;
* ``smddp-infra check CORPUS_DIR``: the whole corpus in one call (default tests/fixtures/corpus);
* a directory of 50 templates (the corpus's single templates copied until there are 50, plus
  each multi-template system once, so imports and nested stacks are linked), through
  ``smddp-infra check DIR`` and through cfn-lint on the same files (issue 24: under 1 s).

At org scale (issue 41): ``--org N`` templates (default 1,030) varied from the repository's own
fixtures (tests/fixtures/corpus and tests/fixtures/templates, each copy with its own Description
and Metadata, written as YAML or JSON in turn, under a temporary directory), through
``smddp-infra check --jobs 1 DIR`` and ``--jobs 2 DIR``: templates per second on one and two
cores, with the load average (on a shared machine it says how many cores were really free).
``--org-only`` prints that section alone.

Then, in-process: per template, reading (the light loader) and the engine (best of runs), and
with ``--profile`` a cProfile of the engine over the slowest template (top functions by
cumulative time). The targets of issue 18: one template under 0.3 s through the CLI, the whole
corpus under 1 s in one call.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def _wall(argv: list[str], runs: int) -> tuple[float, float]:
    # As an installed package runs: bytecode cached (env.sh sets PYTHONDONTWRITEBYTECODE, which
    # would make every run recompile the project's modules); one warm-up run writes it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def _templates(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if p.suffix in (".yaml", ".yml", ".json", ".template") and p.name != "manifest.json")


def _in_process(corpus: Path, runs: int) -> list[tuple[str, float, float, int]]:
    """(name, read ms, engine ms, assignments judged) per template."""
    sys.path.insert(0, str(ROOT))
    from smddp_infra.rules import TemplateModel, check_template
    from smddp_infra.rules.engine import relevant_parameters
    from smddp_infra.rules.loader import load_template_file

    out = []
    for path in _templates(corpus):
        read = min(_timed(lambda p=path: load_template_file(str(p)))[0] for _ in range(runs))
        template = load_template_file(str(path))
        engine = min(_timed(lambda t=template: check_template(t))[0] for _ in range(runs))
        model = TemplateModel(template)
        assignments = len(model.scenarios(relevant_parameters(model)).assignments)
        out.append((path.name, read * 1000, engine * 1000, assignments))
    return out


def _generated(groups: int) -> dict:
    """tests/fixtures/templates/compliant.yaml plus ``groups`` security groups with their
    all-traffic self rules (3 resources each): a few hundred resources at 100."""
    from smddp_infra.rules.loader import load_template_file

    template = load_template_file(str(ROOT / "tests" / "fixtures" / "templates" / "compliant.yaml"))
    for i in range(groups):
        ref = {"Fn::GetAtt": [f"Sg{i}", "GroupId"]}
        template["Resources"][f"Sg{i}"] = {"Type": "AWS::EC2::SecurityGroup",
                                           "Properties": {"GroupDescription": f"efa group {i}", "VpcId": "vpc-1"}}
        for kind, peer in (("Ingress", "SourceSecurityGroupId"), ("Egress", "DestinationSecurityGroupId")):
            template["Resources"][f"Sg{i}{kind}"] = {"Type": f"AWS::EC2::SecurityGroup{kind}",
                                                     "Properties": {"GroupId": ref, peer: ref, "IpProtocol": "-1"}}
    return template


def _large_templates(runs: int) -> list[tuple[int, float]]:
    """(resources, engine ms, best of runs) for generated templates of growing size: the figure
    tests/test_rules_engine.py guards by counting reads instead of timing them."""
    from smddp_infra.rules import check_template

    out = []
    for groups in (50, 100, 200):
        template = _generated(groups)
        best = min(_timed(lambda t=template: check_template(t))[0] for _ in range(runs))
        out.append((len(template["Resources"]), best * 1000))
    return out


def _fifty(corpus: Path, target: Path) -> list[Path]:
    """A directory of at least 50 templates made from the corpus (systems kept whole)."""
    import shutil

    target.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for system in sorted(p for p in corpus.iterdir() if p.is_dir()):
        shutil.copytree(system, target / system.name, dirs_exist_ok=True)
        files += sorted((target / system.name).glob("*.yaml"))
    singles = _templates(corpus)
    copy = 0
    while len(files) < 50:
        source = singles[copy % len(singles)]
        destination = target / f"{copy // len(singles)}_{source.name}"
        shutil.copy(source, destination)
        files.append(destination)
        copy += 1
    return files


def _org(count: int, target: Path) -> int:
    """``count`` templates under ``target`` (100 a folder), varied from the fixtures' single
    templates: the same rules meet the same shapes, the files differ, YAML and JSON alternate."""
    import json

    import yaml

    from smddp_infra.rules.loader import load_template_file

    sources = [p for folder in (DEFAULT_CORPUS, ROOT / "tests" / "fixtures" / "templates") for p in _templates(folder)]
    originals = []
    for path in sources:
        try:
            template = load_template_file(str(path))
        except ValueError:  # the fixtures of unreadable input
            continue
        if isinstance(template, dict) and isinstance(template.get("Resources"), dict):
            originals.append((path.stem, template))
    for i in range(count):
        name, template = originals[i % len(originals)]
        variant = {**template, "Description": f"org-scale variant {i} of {name}",
                   "Metadata": {**(template.get("Metadata") or {}), "BenchVariant": i}}
        folder = target / f"{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 2:
            (folder / f"{i:05d}_{name}.json").write_text(json.dumps(variant, indent=1))
        else:
            (folder / f"{i:05d}_{name}.yaml").write_text(yaml.safe_dump(variant, sort_keys=False))
    return count


def _org_scale(count: int, runs: int) -> None:
    import resource
    import tempfile

    py = sys.executable
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    before = os.getloadavg() if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory() as scratch:
        made = _org(count, Path(scratch) / "org")
        figures = []
        for jobs in (1, 2):
            argv = [py, "-m", "smddp_infra.cli", "check", "--jobs", str(jobs), str(Path(scratch) / "org")]
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # warm-up
            walls, cpus = [], []
            for _ in range(runs):
                used = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and its workers, once waited for
                start = time.perf_counter()
                subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                walls.append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
            figures.append((jobs, min(walls), statistics.median(walls), statistics.median(cpus)))
    load = "n/a" if before is None else (", ".join(f"{x:.2f}" for x in before) + " before, "
                                         + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " after")
    print(f"org scale: check DIR of {made:,} templates varied from the fixtures, {runs} run(s) each after a warm-up, "
          f"{os.cpu_count()} CPUs, load average (1, 5, 15 min) {load}")
    for jobs, best, median, cpu in figures:
        print(f"  --jobs {jobs}: wall best {best:6.2f} s / median {median:6.2f} s = {made / best:5.0f} / {made / median:5.0f} "
              f"templates/s; CPU {cpu:5.2f} s (all processes, median) = {made / cpu:5.0f} templates per CPU-second")


def _timed(call: object) -> tuple[float, object]:
    start = time.perf_counter()
    result = call()  # type: ignore[operator]
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile the engine on the slowest template")
    parser.add_argument("--org", type=int, default=1030, help="templates in the org-scale run (0: leave it out)")
    parser.add_argument("--org-only", action="store_true", help="print the org-scale figures alone")
    args = parser.parse_args(argv)
    if args.org:
        _org_scale(args.org, max(1, min(args.runs, 3)))
    if args.org_only:
        return 0
    templates = _templates(args.corpus)
    smallest = min(templates, key=lambda p: p.stat().st_size)
    py = sys.executable
    cli = [py, "-m", "smddp_infra.cli", "check"]

    rows: list[tuple[str, tuple[float, float]]] = [
        ("python -c pass", _wall([py, "-c", "pass"], args.runs)),
        ("import smddp_infra.commands.check", _wall([py, "-c", "import smddp_infra.commands.check"], args.runs)),
        (f"check {smallest.name} (smallest)", _wall([*cli, str(smallest)], args.runs)),
    ]
    try:
        per_template = _in_process(args.corpus, args.runs)
    except ImportError:  # before the light loader existed: CLI figures only
        per_template = []
    if per_template:
        busiest = max(per_template, key=lambda r: (r[3], r[2]))
        rows.append((f"check {busiest[0]} ({busiest[3]} assignments)", _wall([*cli, str(args.corpus / busiest[0])], args.runs)))
    rows.append((f"check {args.corpus.name}/ ({len(templates)} templates, one call)", _wall([*cli, str(args.corpus)], args.runs)))
    rows.append((f"check --json {args.corpus.name}/", _wall([*cli, "--json", str(args.corpus)], args.runs)))

    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        fifty = _fifty(args.corpus, Path(scratch) / "fifty")
        rows.append((f"check DIR ({len(fifty)} templates, one call)", _wall([*cli, str(Path(scratch) / "fifty")], args.runs)))
        cfn_lint = Path(py).with_name("cfn-lint")
        if cfn_lint.exists():
            rows.append((f"cfn-lint on the same {len(fifty)} files", _wall([str(cfn_lint), "--", *map(str, fifty)], max(1, args.runs // 2))))
        else:
            rows.append(("cfn-lint (not installed beside this python)", (float("nan"), float("nan"))))

    print(f"wall time over {args.runs} cold starts after one warm-up (best / median), {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    for label, (best, median) in rows:
        print(f"  {label:<58} {best * 1000:7.0f} ms / {median * 1000:7.0f} ms")
    if per_template:
        reads = [r[1] for r in per_template]
        engines = [r[2] for r in per_template]
        print(f"in process, per template ({len(per_template)}): read median {statistics.median(reads):.2f} ms, "
              f"max {max(reads):.2f} ms; engine median {statistics.median(engines):.2f} ms, max {max(engines):.2f} ms, "
              f"total {sum(engines):.1f} ms")
        for name, read, engine, assignments in sorted(per_template, key=lambda r: -r[2])[:5]:
            print(f"  {name:<44} read {read:6.2f} ms  engine {engine:7.2f} ms  {assignments:4d} assignment(s)")
    if per_template:
        sizes = ", ".join(f"{n} resources {ms:.1f} ms" for n, ms in _large_templates(args.runs))
        print(f"in process, engine on generated templates (compliant.yaml + security groups): {sizes}")
    if args.profile and per_template:
        from smddp_infra.rules import check_template
        from smddp_infra.rules.loader import load_template_file

        slowest = max(per_template, key=lambda r: r[2])[0]
        template = load_template_file(str(args.corpus / slowest))
        profiler = cProfile.Profile()
        profiler.enable()
        check_template(template)
        profiler.disable()
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("cumulative").print_stats(20)
        print(f"profile of the engine on {slowest}:")
        print(buffer.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

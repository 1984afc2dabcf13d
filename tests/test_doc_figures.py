"""Counts the docs quote are counted here, so they cannot drift (issue 21, item 15).

Timings are not asserted (a benchmark prints figures; it is not a timed test): the docs give
them as ranges and name the benchmark that measures them, which this module checks too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _figure(doc: str, pattern: str) -> int:
    match = re.search(pattern, (ROOT / doc).read_text())
    assert match, f"{doc} no longer quotes /{pattern}/: update this test with the doc"
    return int(match.group(1).replace(",", ""))


def test_rules_doc_quotes_the_default_apps_resource_count() -> None:
    from smddp_infra.review.replacement import parse_template_text

    # the committed review template; tests/test_review.py proves it is the default app's synth
    template = parse_template_text((ROOT / "docs" / "review" / "TrainingNetworkStack.template.yaml").read_text(),
                                   where="docs/review")
    assert _figure("docs/rules.md", r"Measured on the default app \(([\d,]+) resources\)") == len(template["Resources"])


def test_deploy_local_doc_quotes_the_modules_test_count() -> None:
    tree = ast.parse((ROOT / "tests" / "test_deploy_local.py").read_text())
    tests = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]
    # a parametrized test counts once per parameter set, as pytest collects it
    import sys

    sys.path.insert(0, str(ROOT / "tools"))  # as tests/test_deploy_local.py imports it (tools/ is not a package)
    import deploy_local  # the tool whose SCENARIOS the module parametrizes over

    count = 0
    for test in tests:
        sets = [d for d in test.decorator_list if "parametrize" in ast.unparse(d)]
        assert len(sets) <= 1 and (not sets or "SCENARIOS" in ast.unparse(sets[0])), \
            f"{test.name}: count its parameter sets here too"
        count += len(deploy_local.SCENARIOS) if sets else 1
    assert _figure("docs/deploy-local.md", r"the whole module \((\d+) tests") == count


def test_timing_figures_name_the_benchmark_that_measures_them() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "starts in about a tenth of a second" in readme and "benchmarks/bench_sizing.py" in readme
    troubleshooting = (ROOT / "docs" / "troubleshooting.md").read_text()
    assert "0.2-0.4 s measured" in troubleshooting and "benchmarks/bench_preflight.py" in troubleshooting
    for script in ("bench_sizing.py", "bench_preflight.py"):
        assert (ROOT / "benchmarks" / script).is_file()

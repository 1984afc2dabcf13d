"""The labelled corpus (tests/fixtures/corpus): precision and recall of error findings.

Every expected error must be found and nothing else reported as an error, warnings pinned
too. The figures (and the engine's median time per template) are printed for the report;
timings are never asserted.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "rules_corpus.py"


@pytest.fixture(scope="module")
def result():
    spec = importlib.util.spec_from_file_location("rules_corpus", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["rules_corpus"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    measured = module.measure(repeat=3)
    print("\n" + module.report(measured))
    return measured


def test_the_corpus_is_big_enough_to_mean_something(result) -> None:
    assert result.templates >= 25
    assert len(result.expected_errors) >= 12
    assert len({name for name, _, _ in result.expected_errors}) < result.templates  # clean templates too


def test_no_false_errors(result) -> None:
    assert result.found_errors - result.expected_errors == set()
    assert result.precision == 1.0


def test_no_missed_errors(result) -> None:
    assert result.expected_errors - result.found_errors == set()
    assert result.recall == 1.0


def test_warnings_are_the_labelled_ones(result) -> None:
    assert result.found_warnings == result.expected_warnings


def test_every_corpus_file_is_labelled() -> None:
    import json

    corpus = SCRIPT.parent.parent / "tests" / "fixtures" / "corpus"
    labelled = set(json.loads((corpus / "manifest.json").read_text())["templates"])
    systems = {p.name for p in corpus.iterdir() if p.is_dir()}  # several templates judged as one
    assert {p.name for p in corpus.glob("*.yaml")} | systems == labelled
    assert all(list((corpus / name).glob("*.yaml")) or list((corpus / name).glob("*.template.json")) for name in systems)

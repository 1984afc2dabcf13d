"""Precision and recall of the SMDDP rules' error findings on the labelled corpus, and time.

    python scripts/rules_corpus.py [CORPUS_DIR] [--repeat N]

The corpus (tests/fixtures/corpus: templates written for this project, with manifest.json
naming the expected findings) reproduces what public HyperPod, ParallelCluster, PCS, EKS,
Batch and FSx templates do. For error findings, as (template, rule, resource):
precision = true positives / all reported errors, recall = true positives / all expected
errors. Engine time is the median over templates of the best of N runs of
``check_template`` on the decoded template (reading is not counted).
Figures are printed, never asserted: timing depends on the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "tests" / "fixtures" / "corpus"


@dataclass
class CorpusResult:
    templates: int = 0
    expected_errors: set[tuple[str, str, str]] = field(default_factory=set)
    found_errors: set[tuple[str, str, str]] = field(default_factory=set)
    expected_warnings: set[tuple[str, str, str]] = field(default_factory=set)
    found_warnings: set[tuple[str, str, str]] = field(default_factory=set)
    infos: int = 0
    times_ms: list[float] = field(default_factory=list)

    @property
    def true_positives(self) -> set[tuple[str, str, str]]:
        return self.expected_errors & self.found_errors

    @property
    def precision(self) -> float:
        return len(self.true_positives) / len(self.found_errors) if self.found_errors else 1.0

    @property
    def recall(self) -> float:
        return len(self.true_positives) / len(self.expected_errors) if self.expected_errors else 1.0

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) if self.times_ms else 0.0


def decode(path: Path) -> dict[str, Any]:
    """The template as `smddp-infra check` reads it (the light loader, not counted in engine time)."""
    sys.path.insert(0, str(ROOT))
    from smddp_infra.rules.loader import TemplateSyntaxError, load_template_file

    try:
        template = load_template_file(str(path))
    except TemplateSyntaxError as exc:
        raise SystemExit(f"{path}: not a readable template: {exc}") from None
    if not isinstance(template, dict):
        raise SystemExit(f"{path}: not a readable template: not a mapping")
    return template


def measure(corpus: Path = DEFAULT_CORPUS, *, repeat: int = 5) -> CorpusResult:
    sys.path.insert(0, str(ROOT))
    from smddp_infra.rules import check_template

    manifest = json.loads((corpus / "manifest.json").read_text())["templates"]
    result = CorpusResult()
    for name, labels in sorted(manifest.items()):
        result.expected_errors |= {(name, rule, resource) for rule, resource in labels["errors"]}
        result.expected_warnings |= {(name, rule, resource) for rule, resource in labels.get("warnings", [])}
        if (corpus / name).is_dir():  # a system: several templates judged together, labels "file:Resource"
            findings_by_file, seconds = _judge_system(corpus / name, repeat)
            result.templates += len(findings_by_file)
            result.times_ms.append(seconds * 1000)
            for path, findings in findings_by_file.items():
                relative = Path(path).relative_to(corpus / name).as_posix()
                _count(result, [(name, f.rule_id, f"{relative}:{f.resource}", f.severity) for f in findings])
            continue
        template = decode(corpus / name)
        result.templates += 1
        best = float("inf")
        findings: list[Any] = []
        for _ in range(repeat):
            start = time.perf_counter()
            findings = check_template(template)
            best = min(best, time.perf_counter() - start)
        result.times_ms.append(best * 1000)
        _count(result, [(name, f.rule_id, f.resource, f.severity) for f in findings])
    return result


def _count(result: CorpusResult, found: list[tuple[str, str, str, Any]]) -> None:
    from smddp_infra.rules import Severity

    for name, rule, resource, severity in found:
        key = (name, rule, resource)
        if severity is Severity.ERROR:
            result.found_errors.add(key)
        elif severity is Severity.WARNING:
            result.found_warnings.add(key)
        else:
            result.infos += 1


def _judge_system(directory: Path, repeat: int) -> tuple[dict[str, list[Any]], float]:
    """Every template under ``directory`` read as `smddp-infra check DIR` reads it, judged as
    one set (best of ``repeat`` runs, reading not counted)."""
    from smddp_infra.commands.check import _assets, expand_inputs, judge, load_template
    from smddp_infra.errors import ConfigError

    templates: dict[str, dict[str, Any]] = {}
    assets: dict[str, dict[str, str]] = {}
    for path, _ in expand_inputs([str(directory)]):
        try:
            templates[path] = load_template(path)
        except ConfigError:
            if path.endswith(".assets.json"):
                assets.setdefault(str(Path(path).parent), {}).update(_assets(path))
    best = float("inf")
    out: dict[str, list[Any]] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        out, _systems = judge(templates, assets=assets)
        best = min(best, time.perf_counter() - start)
    return out, best


def report(result: CorpusResult) -> str:
    lines = [
        f"templates: {result.templates}",
        f"error findings: expected {len(result.expected_errors)}, reported {len(result.found_errors)}, "
        f"true positives {len(result.true_positives)}",
        f"precision {result.precision:.3f}  recall {result.recall:.3f}",
        f"warnings: expected {len(result.expected_warnings)}, reported {len(result.found_warnings)}, "
        f"matching {len(result.expected_warnings & result.found_warnings)}; info notes: {result.infos}",
        f"engine time per template: median {result.median_ms:.2f} ms, max {max(result.times_ms, default=0):.2f} ms",
    ]
    for name, rule, resource in sorted(result.found_errors - result.expected_errors):
        lines.append(f"  false error: {name} {rule} {resource}")
    for name, rule, resource in sorted(result.expected_errors - result.found_errors):
        lines.append(f"  missed error: {name} {rule} {resource}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(report(measure(args.corpus, repeat=args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

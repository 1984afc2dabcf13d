"""Precision and recall of preflight's errors and warnings on the labelled launcher corpus.

    python scripts/preflight_corpus.py [CORPUS_DIR]

The corpus (tests/fixtures/preflight-corpus: launchers and training scripts written for this
project, with manifest.json naming the expected findings) reproduces what public SageMaker
distributed-training launchers do: multi-job notebooks, shared script folders with helpers
no job runs, guarded ``torch_smddp`` imports with a backend hyperparameter, ``pytorchddp`` on
g5 with NCCL, loaders sharded by Fabric / Accelerate / HF and Lightning Trainers / DeepSpeed,
two entry points in one source_dir, optimizer checkpoints, ``model_fn`` loaders, a notebook's
``os.path.join(os.getcwd(), "../scripts")``, a missing entry point, a ModelTrainer without
stopping_condition; and (issue 26, c27 onwards) the TensorFlow SMDDP API on p4d, p3dn and g5,
smdistributed on p5 (SDK v2's own refusal), an opaque backend or a git_config program under the
smdistributed launcher, the Hugging Face ``is_sagemaker_dp_enabled()`` guard, deep-copied
hyperparameters, f-strings inside ``os.path.join``, a missing source_dir, a misspelt instance
type, recipe jobs, and scripts started by deepspeed / accelerate / ``torchrun -m`` in subprocess
calls and ``command=`` strings. Findings are compared as (launcher, rule, file), the file being the one
the finding's location names. For each severity: precision = expected found / all found,
recall = expected found / all expected. Figures are printed, never asserted here (the test
``tests/test_preflight_corpus.py`` holds the bar).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "tests" / "fixtures" / "preflight-corpus"

Key = tuple[str, str, str]


@dataclass
class Figures:
    expected: set[Key] = field(default_factory=set)
    found: set[Key] = field(default_factory=set)

    @property
    def true_positives(self) -> set[Key]:
        return self.expected & self.found

    @property
    def precision(self) -> float:
        return len(self.true_positives) / len(self.found) if self.found else 1.0

    @property
    def recall(self) -> float:
        return len(self.true_positives) / len(self.expected) if self.expected else 1.0


@dataclass
class CorpusResult:
    launchers: int = 0
    errors: Figures = field(default_factory=Figures)
    warnings: Figures = field(default_factory=Figures)
    infos: int = 0
    duplicates: list[str] = field(default_factory=list)
    seconds: float = 0.0


def location_file(location: str) -> str:
    """``train.py:12`` / ``launch.ipynb cell 3 line 4: instance_type`` / ``job.yaml: key`` -> the file name."""
    head = re.split(r"[:\s]", location.strip(), maxsplit=1)[0]
    return head.rsplit("/", 1)[-1]


def measure(corpus: Path = DEFAULT_CORPUS) -> CorpusResult:
    sys.path.insert(0, str(ROOT))
    from smddp_infra.preflight import run_preflight

    manifest = json.loads((corpus / "manifest.json").read_text())["launchers"]
    result = CorpusResult()
    start = time.perf_counter()
    for name, labels in sorted(manifest.items()):
        result.launchers += 1
        result.errors.expected |= {(name, rule, file) for rule, file in labels["errors"]}
        result.warnings.expected |= {(name, rule, file) for rule, file in labels["warnings"]}
        report = run_preflight(corpus / name)
        seen: set[tuple[str, str, str]] = set()
        for f in report.findings:
            if (f.rule_id, f.location, f.message) in seen:
                result.duplicates.append(f"{name}: {f.rule_id} {f.location}")
            seen.add((f.rule_id, f.location, f.message))
            key = (name, f.rule_id, location_file(f.location))
            if f.severity == "error":
                result.errors.found.add(key)
            elif f.severity == "warning":
                result.warnings.found.add(key)
            else:
                result.infos += 1
    result.seconds = time.perf_counter() - start
    return result


def report(result: CorpusResult) -> str:
    lines = [f"launchers: {result.launchers} ({result.seconds:.2f} s in all)"]
    for label, figures in (("errors", result.errors), ("warnings", result.warnings)):
        lines.append(f"{label}: expected {len(figures.expected)}, reported {len(figures.found)}, "
                     f"true positives {len(figures.true_positives)}; "
                     f"precision {figures.precision:.3f}  recall {figures.recall:.3f}")
    lines.append(f"info notes: {result.infos}; duplicate findings: {len(result.duplicates)}")
    for label, figures in (("error", result.errors), ("warning", result.warnings)):
        for name, rule, file in sorted(figures.found - figures.expected):
            lines.append(f"  false {label}: {name} {rule} {file}")
        for name, rule, file in sorted(figures.expected - figures.found):
            lines.append(f"  missed {label}: {name} {rule} {file}")
    lines.extend(f"  duplicate: {d}" for d in result.duplicates)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args(argv)
    print(report(measure(args.corpus)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Preflight: judge a training job and the program it runs before a GPU hour is spent.

Pure Python (``ast`` for code, never executing it; PyYAML for job files; never aws_cdk).
One pipeline, each step a module with one job:

``inputs`` (a notebook, a launcher script, API JSON or a job file, into jobs)
-> ``program`` (the files each job runs: entry point, the scripts it starts, their imports)
-> ``facts`` (launcher, SMDDP in use, loaders and wrappers, collectives, checkpoint pairs)
-> ``rules`` (findings from facts only; severity follows evidence)
-> ``report`` (each finding once, errors first; ``--json``).

Each rule turns a failure from SageMaker's SMDDP troubleshooting guide into a finding with
the symptom the job would show and the exact fix (see docs/troubleshooting.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from smddp_infra.preflight import rules
from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.facts import derive
from smddp_infra.preflight.findings import RULES, Finding
from smddp_infra.preflight.inputs import Input, read_input
from smddp_infra.preflight.instance_types import training_instance_types
from smddp_infra.preflight.job import JobDescription
from smddp_infra.preflight.outputs import StackSubnets, read_outputs
from smddp_infra.preflight.program import resolve_program
from smddp_infra.preflight.report import JobReport, PreflightReport, ordered

__all__ = ["JobReport", "PreflightInputError", "PreflightReport", "RULES", "Finding", "JobDescription",
           "check_api_document", "check_estimator", "run_preflight"]


def run_preflight(path: Path, scripts: Sequence[Path] = (), *, outputs: Optional[Path] = None) -> PreflightReport:
    """Check a notebook, launcher script, SageMaker API JSON or job file (and its program).

    Everything is read first (unreadable input raises :class:`PreflightInputError`: the CLI
    prints one line and exits 2), then every rule runs on every job found.
    """
    path = Path(path)
    return _judge(path, read_input(path), [Path(s) for s in scripts], outputs)


def check_estimator(estimator: Any, scripts: Sequence[Path] = (), *, outputs: Optional[Path] = None) -> PreflightReport:
    """Check a live SDK v2 estimator or SDK v3 ``ModelTrainer`` before ``.fit()`` / ``.train()``.

    Reads the object's attributes only (no AWS call, no import of ``sagemaker`` by preflight):
    ``est = PyTorch(...); check_estimator(est).exit_code`` in a notebook cell, then ``est.fit()``.
    """
    from smddp_infra.preflight.live import job_from_object

    job = job_from_object(estimator)
    return _judge(job.path, Input("live", (job,)), [Path(s) for s in scripts], outputs)


def check_api_document(document: Any, *, label: str, from_service: bool = False) -> PreflightReport:
    """Check a CreateTrainingJob request or DescribeTrainingJob answer already in memory; ``label``
    names it in the report. Same rules as a JSON file; ``from_service`` (``diagnose`` read it from
    SageMaker) skips the shape check, the service's own answer."""
    from smddp_infra.preflight.inputs import api_document_input

    path = Path(label)
    return _judge(path, api_document_input(path, document, from_service=from_service), [], None)


def _judge(path: Path, found: Input, explicit: Sequence[Path], outputs: Optional[Path]) -> PreflightReport:
    stacks: tuple[StackSubnets, ...] = read_outputs(Path(outputs)) if outputs else ()
    reports = []
    for job in found.jobs:
        facts = derive(job, resolve_program(job, found.files, explicit, source_text=found.source_text))
        bad_type = rules.check_instance_type(job)
        findings = [
            *rules.check_unknown_keys(job),
            *rules.check_entry_point(facts),
            *bad_type,
            *rules.check_debugger(facts),
            # a type that does not exist: what SMDDP supports there is moot
            *([] if bad_type else rules.check_smddp_instance(facts)),
            *([] if bad_type else rules.check_smddp_launcher(facts)),
            *([] if bad_type else rules.check_sdk_refusal(facts)),
            *rules.check_api_shape(job, found.shape_problems),
            *rules.check_stopping_condition(job),
            *rules.check_deprecated_api(facts),
            *rules.check_ddp_prefix(facts),
            *rules.check_batches(facts),
            *rules.check_checkpoint_uri(job),
            *rules.check_checkpoint_paths(job, facts.files),
            *rules.check_subnets(job, stacks, outputs_name=Path(outputs).name if outputs else None),
        ]
        not_evaluated = [*rules.not_evaluated(job), *facts.program.notes]
        if job.recipe_note:
            not_evaluated.append(f"recipe rules not evaluated: {job.recipe_note}")
        if rules.instance_type_to_look_up(job) and training_instance_types() is None:
            not_evaluated.append("PF-INSTANCE-TYPE-UNKNOWN not evaluated: botocore is not installed (pip install 'smddp-infra[api]')")
        if job.shape == "api" and found.shape_problems is None:
            not_evaluated.append("PF-API-SHAPE not evaluated: botocore is not installed (pip install 'smddp-infra[api]')")
        reports.append(JobReport(facts, ordered(findings), tuple(dict.fromkeys(not_evaluated))))
    return PreflightReport(path=path, kind=found.kind, jobs=tuple(reports),
                           outputs=Path(outputs) if outputs else None, notes=found.notes)

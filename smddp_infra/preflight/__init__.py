"""Preflight: judge a training job and its script before a GPU hour is spent.

Pure Python (``ast`` for scripts, PyYAML for job files, never aws_cdk). Each rule turns a
failure from SageMaker's SMDDP troubleshooting guide into a finding with the symptom the
job would show and the exact fix (see docs/troubleshooting.md):

* :mod:`.job` -- the job description (SDK v2 Estimator arguments or a ModelTrainer shape)
* :mod:`.known_keys` -- the SDK's argument names, for keys nobody reads (PF-UNKNOWN-KEY)
* :mod:`.script` -- what the training script imports, loads and writes
* :mod:`.outputs` -- subnets and AZs from ``cdk-outputs.json``
* :mod:`.checks` -- the rules; :mod:`.findings` -- rule ids and the finding type
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from smddp_infra.preflight import checks
from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.findings import ERROR, RULES, SEVERITIES, Finding
from smddp_infra.preflight.job import JobDescription, load_job
from smddp_infra.preflight.outputs import StackSubnets, read_outputs
from smddp_infra.preflight.script import ScriptFacts, analyse_script

__all__ = ["PreflightInputError", "PreflightReport", "RULES", "Finding", "JobDescription", "run_preflight"]


@dataclass(frozen=True)
class PreflightReport:
    job: JobDescription
    scripts: tuple[ScriptFacts, ...]
    outputs: Optional[Path]
    findings: tuple[Finding, ...]

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    @property
    def exit_code(self) -> int:
        """1 when any finding is an error (the job would fail or hang), else 0."""
        return 1 if any(f.severity == ERROR for f in self.findings) else 0

    @property
    def world_size(self) -> Optional[int]:
        return checks.world_size(self.job)

    def to_json(self) -> dict[str, Any]:
        return {
            "job": str(self.job.path),
            "shape": self.job.shape,
            "scripts": [str(s.path) for s in self.scripts],
            "outputs": str(self.outputs) if self.outputs else None,
            "world_size": self.world_size,
            "findings": [f.to_json() for f in self.findings],
            "summary": self.counts,
            "exit_code": self.exit_code,
        }


def script_paths(job: JobDescription, explicit: Sequence[Path]) -> tuple[Path, ...]:
    """The scripts to read: those given, else the job's entry point relative to the job file
    (inside ``source_dir`` when one is set, as the SDK resolves it)."""
    if explicit:
        return tuple(explicit)
    if not job.entry_point:
        return ()
    base = job.path.parent
    if job.source_dir:
        if job.source_dir.startswith("s3://") or job.source_dir.endswith((".tar.gz", ".tgz")):
            raise PreflightInputError(
                f"{job.key('source_dir')} {job.source_dir} is an archive preflight cannot read; "
                f"pass the script: smddp-infra preflight {job.path} path/to/{job.entry_point}"
            )
        base = base / job.source_dir
    return (base / job.entry_point,)


def run_preflight(job_file: Path, scripts: Sequence[Path] = (), *, outputs: Optional[Path] = None) -> PreflightReport:
    """Read everything first (any unreadable input raises :class:`PreflightInputError`),
    then apply every rule."""
    job = load_job(Path(job_file))
    facts = tuple(analyse_script(path) for path in script_paths(job, [Path(s) for s in scripts]))
    stacks: tuple[StackSubnets, ...] = read_outputs(Path(outputs)) if outputs else ()
    found = [
        *checks.check_unknown_keys(job),
        *checks.check_debugger(job, facts),
        *checks.check_deprecated_api(facts),
        *checks.check_batches(job, facts),
        *checks.check_checkpoint_uri(job),
        *checks.check_checkpoint_paths(job, facts),
        *checks.check_subnets(job, stacks, outputs_name=Path(outputs).name if outputs else None),
    ]
    order = {s: i for i, s in enumerate(SEVERITIES)}
    found.sort(key=lambda f: order[f.severity])  # stable: rule order within a severity
    return PreflightReport(job=job, scripts=facts, outputs=Path(outputs) if outputs else None, findings=tuple(found))

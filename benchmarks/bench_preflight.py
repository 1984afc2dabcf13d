"""Benchmark preflight on a large notebook with a large source_dir (not a test: prints figures).

    python benchmarks/bench_preflight.py [--notebook-mb 2] [--files 200] [--runs 5]

Builds, in a temporary directory, a notebook of about ``--notebook-mb`` MB (most of it cell
outputs, as saved notebooks are: base64 images and long logs, plus a few hundred code cells)
whose last cell builds a ``PyTorch`` estimator with ``source_dir="code"``, and a ``code/``
directory of ``--files`` training-style modules (loaders, DDP, torch.save). The entry point
imports every module (half by ``import``, half by relative ``from .`` through a package), so
the program preflight reads is the whole folder: the worst case for the import closure. Prints the best and median wall time of ``run_preflight`` in-process and of
the CLI (``python -m smddp_infra.cli preflight NB --json``, cold start included).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODULE = '''"""Module {i}: one piece of a training package."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

CKPT_DIR = "/opt/ml/checkpoints"


def build_{i}(dataset, model, batch_size=32):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    model = DDP(model)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, batch in enumerate(loader):
            loss = model(batch).sum()
            loss.backward()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), os.path.join(CKPT_DIR, f"m{i}-{{epoch}}.pt"))
    return model
''' + "\n".join(f"\n\ndef helper_{{i}}_{k}(x):\n    return [v * {k} for v in x if v % 3]\n" for k in range(12))


def build(directory: Path, notebook_mb: float, files: int) -> Path:
    code = directory / "code"
    code.mkdir()
    package = code / "parts"
    package.mkdir()
    (package / "__init__.py").write_text("".join(f"from .part_{i:03d} import build_{i}\n" for i in range(1, files, 2)))
    imports = "".join(f"import part_{i:03d}\n" for i in range(2, files, 2))
    (code / "train.py").write_text(imports + "import parts\n" + MODULE.format(i=0)
                                   + "\n\nif __name__ == '__main__':\n    build_0(None, None)\n")
    for i in range(1, files):
        target = package if i % 2 else code
        (target / f"part_{i:03d}.py").write_text(MODULE.format(i=i))
    image = base64.b64encode(bytes(range(256)) * 400).decode()  # ~136 kB of base64 "PNG"
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Big notebook\n"]}]
    cells.append({"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
                  "source": ["import sagemaker\n", "from sagemaker.pytorch import PyTorch\n", "bucket = 'b'\n"]})
    size = 0
    n = 0
    while size < notebook_mb * 1_000_000:
        n += 1
        source = [f"x_{n} = {n}\n", f"prefix_{n} = f's3://{{bucket}}/run-{n}/'\n", "for i in range(3):\n", "    print(i)\n"]
        outputs = [{"output_type": "stream", "name": "stdout", "text": ["line of log output\n"] * 200}]
        if n % 4 == 0:
            outputs.append({"output_type": "display_data", "metadata": {}, "data": {"image/png": image}})
        cell = {"cell_type": "code", "metadata": {}, "execution_count": n + 1, "outputs": outputs, "source": source}
        size += len(json.dumps(cell))
        cells.append(cell)
    cells.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [
        "est = PyTorch(entry_point='train.py', source_dir='code', instance_type='ml.p4d.24xlarge', instance_count=2,\n",
        "              checkpoint_s3_uri=prefix_1 + 'checkpoints/', debugger_hook_config=False,\n",
        "              distribution={'smdistributed': {'dataparallel': {'enabled': True}}})\n",
        "est.fit()\n"]})
    path = directory / "big.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook-mb", type=float, default=2.0)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from smddp_infra.preflight import run_preflight

    with tempfile.TemporaryDirectory() as tmp:
        notebook = build(Path(tmp), args.notebook_mb, args.files)
        code_bytes = sum(p.stat().st_size for p in (Path(tmp) / "code").rglob("*.py"))
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            report = run_preflight(notebook)
            times.append(time.perf_counter() - start)
        cli, cpu = [], []
        for _ in range(max(1, args.runs // 2)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "preflight", str(notebook), "--json"],
                                  capture_output=True, text=True, cwd=ROOT)
            cli.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            assert done.returncode in (0, 1), done.stderr
        cells = json.loads(notebook.read_text())["cells"]
        print(f"notebook: {notebook.stat().st_size / 1e6:.2f} MB, {len(cells)} cells; "
              f"source_dir: {args.files} .py files, {code_bytes / 1e6:.2f} MB")
        program = report.jobs[0].facts.program
        print(f"program: {len(program.files)} files run, {len(program.not_run)} not run; "
              f"findings: {len(report.findings)}; exit code {report.exit_code}")
        print(f"run_preflight: best {min(times):.3f} s, median {statistics.median(times):.3f} s ({args.runs} runs)")
        print(f"CLI --json (cold start included): best {min(cli):.3f} s, median {statistics.median(cli):.3f} s wall; "
              f"CPU time (user + system, what an idle machine's wall time approaches) best {min(cpu):.3f} s")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

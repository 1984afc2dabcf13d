"""Time ``smddp-infra preflight`` on a large input: a 2 MB notebook and a 200-file source_dir.

    python scripts/preflight_bench.py [--runs 5]

Writes the input into a temporary folder (a notebook of about 2 MB: 300 code cells with outputs,
one of them building a PyTorch estimator; a source_dir of 200 Python files where the entry point
imports 60 of them through a package and the rest are helpers nothing runs), then runs the CLI as
a user would (a fresh ``python -m smddp_infra.cli`` process each time) and prints the wall time of
each run and the median. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_input(folder: Path, *, files: int = 200, target_bytes: int = 2_000_000, code_heavy: bool = False) -> Path:
    src = folder / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    imported = 60
    for i in range(imported):
        nxt = f"from pkg.mod{i + 1} import step{i + 1}\n" if i + 1 < imported else ""
        (src / "pkg" / f"mod{i}.py").write_text(
            f"import torch\n{nxt}\n\ndef step{i}(x):\n    return torch.relu(x) * {i}\n" + "# padding\n" * 40)
    for i in range(files - imported - 2):
        (src / f"helper_{i}.py").write_text(
            "import os\nimport torch\nfrom torch.utils.data import DataLoader\n\n"
            f"def export_{i}(model, path):\n    torch.save(model.state_dict(), os.path.join(path, 'm{i}.pt'))\n" * 3)
    (src / "train.py").write_text(
        "import argparse\nimport torch\nimport torch.distributed as dist\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from torch.utils.data import DataLoader, DistributedSampler\nfrom pkg.mod0 import step0\n\n"
        "p = argparse.ArgumentParser()\np.add_argument('--backend', default='nccl')\nargs = p.parse_args()\n"
        "dist.init_process_group(backend=args.backend)\ndata = torch.randn(4096, 16)\n"
        "loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data))\n"
        "net = DDP(torch.nn.Linear(16, 16).cuda())\nfor batch in loader:\n    step0(net(batch.cuda())).sum().backward()\n")
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# A long experiment notebook"}]
    # typical: a few lines of code and a plot per cell; code-heavy: 40 lines and a small output per cell
    png = base64.b64encode(bytes(range(256)) * (2 if code_heavy else 24)).decode()
    lines = 20 if code_heavy else 4
    code = "".join(f"values_{j} = [x * {j} for x in range(100)]\nprint(sum(values_{j}))\n" for j in range(lines))
    cell = 0
    while len(json.dumps({"cells": cells})) < target_bytes - 2000:
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": cell, "source": code,
                      "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}}]})
        cell += 1
    cells.insert(len(cells) // 2, {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                   "source": "from sagemaker.pytorch import PyTorch\n"
                                             "est = PyTorch(entry_point='train.py', source_dir='src', role='r',\n"
                                             "              framework_version='2.2.0', py_version='py310',\n"
                                             "              instance_type='ml.p4d.24xlarge', instance_count=2,\n"
                                             "              distribution={'torch_distributed': {'enabled': True}})\n"})
    notebook = folder / "experiment.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    return notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code-heavy", action="store_true",
                        help="about 1 MB of Python in the cells (11,000 statements) instead of plots")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        notebook = write_input(Path(tmp), code_heavy=args.code_heavy)
        py_files = len(list((Path(tmp) / "src").rglob("*.py")))
        document = json.loads(notebook.read_text())
        code = sum(len(c["source"]) for c in document["cells"] if c["cell_type"] == "code")
        print(f"input: {notebook.stat().st_size / 1e6:.2f} MB notebook ({len(document['cells'])} cells, "
              f"{code / 1e6:.2f} MB of code), {py_files} .py files in source_dir")
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "smddp_infra.cli", "preflight", str(notebook)],
                                  capture_output=True, text=True, cwd=ROOT)
            times.append(time.perf_counter() - start)
        summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()
        print(summary if len(summary) < 200 else summary[:120] + " ... " + summary[-40:])
        print("wall time per CLI run (s): " + ", ".join(f"{t:.2f}" for t in times)
              + f"; median {statistics.median(times):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

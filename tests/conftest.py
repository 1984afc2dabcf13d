"""Shared test set-up: the pinned toolchain on PATH, cdk.json context, one default synth.

Synth costs seconds (jsii), so the default app's template is built ONCE per session here
and every module asserts on it; modules that need other configurations build one App
with several stacks and synthesize it once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The venv's Node 24 (jsii calls the machine's Node 20 end-of-life) and the pinned cdk CLI.
os.environ["PATH"] = os.pathsep.join([str(ROOT / ".venv" / "bin"), str(ROOT / "node_modules" / ".bin"), os.environ.get("PATH", "")])
os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")


#: The modules that cost most (CPU seconds on the shared 2-core machine, 2026-12-05), costliest
#: first. ``make test`` spreads whole modules over the workers (``--dist loadfile``) in collection
#: order (``--no-loadscope-reorder``; xdist's own order is by number of tests, which sent the
#: one-test modules that run a whole scenario, the floor venv's synth and the docs' diagnose
#: runs, to the very end, where one worker ran them while the other idled). Longest first keeps
#: both workers busy to the end. A stale entry costs only order; every module still runs.
SLOW_FIRST = (
    "test_docs_run", "test_deploy_local", "test_configurations", "test_sagemaker_sdk_v3", "test_floors",
    "test_embedding", "test_diagnose_hyperpod", "test_hyperpod_home_dirs", "test_diagnose", "test_embedding_lookups",
    "test_diagnose_data_path", "test_diagnose_docs", "test_mcp", "test_sagemaker_sdk", "test_cfnlint_plugin",
    "test_task_governance", "test_launch_policy", "test_settings", "test_diagnose_joins", "test_hyperpod",
    "test_check_jobs", "test_observe_account", "test_preflight", "test_grant_launch_stacks", "test_hyperpod_eks",
    "test_jobconfig", "test_observe", "test_typing_wheel", "test_one_path", "test_diagnose_same_findings",
    "test_pre_commit_hooks",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Costliest modules first (:data:`SLOW_FIRST`), the rest in their usual order; a module's
    own tests keep their order (the sort is stable)."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))


def cdk_context(**overrides: Any) -> dict[str, Any]:
    """cdk.json's context (feature flags + smddp defaults) with overrides: App() under pytest
    does not read cdk.json by itself."""
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    context.update(overrides)
    return context


class Synthesized:
    """A synthesized stack: the template dict, an assertions.Template, and the app."""

    def __init__(self, app: Any, stack: Any) -> None:
        from aws_cdk import assertions

        self.app = app
        self.stack = stack
        self.assembly = app.synth()
        self.json: dict[str, Any] = self.assembly.get_stack_artifact(stack.artifact_id).template
        self.template = assertions.Template.from_json(self.json)

    def resources(self, type_name: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.json["Resources"].items() if v["Type"] == type_name}


@pytest.fixture(scope="session")
def default_app() -> Synthesized:
    """The default app exactly as app.py builds it (cdk.json context, rule packs on)."""
    from aws_cdk import App

    from smddp_infra.app_builder import build_app

    app = App(context=cdk_context())
    stack = build_app(app)
    return Synthesized(app, stack)


@pytest.fixture(scope="session")
def doc_example() -> dict[str, Any]:
    """docs/embedding.md's platform stack, executed from the markdown once per session (two
    modules assert on it: the template itself, and job-config over its outputs)."""
    import re

    doc = ROOT / "docs" / "embedding.md"
    blocks = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), re.S) if "PlatformTrainingStack" in b]
    assert len(blocks) == 1, "docs/embedding.md has exactly one platform stack example"
    namespace: dict[str, Any] = {"__name__": "docs_embedding_example"}
    exec(compile(blocks[0], str(doc), "exec"), namespace)  # noqa: S102 - our own documentation
    return namespace


@pytest.fixture(scope="module")
def endpoint() -> Any:
    """moto's server for one module (the diagnose scenario modules; a module may define its own)."""
    from _moto_server import moto_server

    with moto_server() as url:
        yield url


@pytest.fixture()
def aws(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The diagnose scenario builder on that server, with boto3 pointed at it through AWS_ENDPOINT_URL."""
    from _diagnose_scenarios import Aws, point_at

    point_at(endpoint, monkeypatch)
    return Aws(endpoint)

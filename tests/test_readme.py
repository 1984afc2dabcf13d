"""The README's promises: its embedding example runs as written, its context table is complete."""

from __future__ import annotations

import re

from conftest import ROOT, cdk_context
from smddp_infra.settings import NetworkSettings

README = (ROOT / "README.md").read_text()


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_embedding_example_runs_as_written() -> None:
    (example,) = [b for b in python_blocks(README) if "SmddpTrainingNetwork" in b]
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102 - the README is ours
    network = namespace["network"]
    settings = namespace["settings"]
    assert network.lustre_plan.baseline_throughput_mbps >= 16 * 8 * 200
    assert network.lustre_plan.storage_capacity_gib >= 20_000
    assert settings.checkpoint_s3_uri.endswith("/")


def test_readme_lists_every_context_key_and_cdk_json_sets_the_documented_defaults() -> None:
    documented = set(re.findall(r"^\| `(smddp:\w+)` \|", README, flags=re.M))
    known = {f"smddp:{k}" for k in re.findall(r"smddp:(\w+)", " ".join(
        [f"smddp:{name}" for name in NetworkSettings.__dataclass_fields__]))}
    # every field of NetworkSettings is a context key (camelCase) and documented
    parsed_keys = {k for k in cdk_context() if k.startswith("smddp:")}
    assert parsed_keys <= documented
    assert len(documented) == len(NetworkSettings.__dataclass_fields__) == len(known)

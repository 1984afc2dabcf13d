"""What a training recipe sets, when it is a local YAML file (nothing is fetched).

``ModelTrainer.from_recipe(training_recipe=...)`` (sagemaker-train 1.27.0) and SDK v2
``PyTorch(training_recipe=...)`` take a recipe name from the SDK's recipe repository or a path
to a local YAML file. The SDK reads ``trainer.num_nodes`` as the instance count when the job
gives none, clones its training adapter for the script and launches it with torchrun and SMP
v2 (GPU). Preflight reads the same file for the count and the collectives backend the recipe
asks for (a ``distributed_backend`` key at any depth); a recipe name is not fetched, and that is
said once as not evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional


@dataclass(frozen=True)
class RecipeFacts:
    num_nodes: Optional[int] = None
    #: (backend, "recipe.yaml:12")
    backend: Optional[tuple[str, str]] = None
    #: why the recipe was not read
    note: Optional[str] = None


def read_recipe(value: Any, *, base_dir: Path, written: str) -> RecipeFacts:
    if not isinstance(value, str) or not value:
        return RecipeFacts(note=f"{written} is not a recipe name or path preflight can read")
    if value.startswith(("http://", "https://", "s3://")):
        return RecipeFacts(note=f"{written} {value} is fetched when the job is built; preflight does not fetch it")
    if not value.endswith((".yaml", ".yml")):
        return RecipeFacts(note=(f"{written} {value} is a recipe from the SDK's recipe repository; preflight does not "
                                 "fetch it (pass a local copy of the YAML to have its backend and node count read)"))
    path = Path(value) if value.startswith("/") else base_dir / value
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return RecipeFacts(note=f"{written} {value} cannot be read here ({getattr(exc, 'strerror', None) or exc})")
    import yaml

    from smddp_infra.rules.loader import TemplateSyntaxError, compose_yaml_text

    try:
        root = compose_yaml_text(text)  # bounded: an alias bomb is a note, not a walk without end
    except TemplateSyntaxError as exc:
        return RecipeFacts(note=f"{written} {value} is not valid YAML ({exc})")
    backend: Optional[tuple[str, str]] = None
    num_nodes: Optional[int] = None
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, keys = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = str(key_node.value)
                if isinstance(value_node, yaml.ScalarNode):
                    if key == "distributed_backend" and backend is None and value_node.value:
                        backend = (str(value_node.value), f"{path.name}:{value_node.start_mark.line + 1}")
                    if keys == ("trainer",) and key == "num_nodes" and str(value_node.value).isdigit():
                        num_nodes = int(value_node.value)
                else:
                    stack.append((value_node, (*keys, key)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, keys) for item in node.value)
    return RecipeFacts(num_nodes=num_nodes, backend=backend)

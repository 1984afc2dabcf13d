"""docs/api.md is generated from the constructs' signatures and docstrings and cannot drift."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest

from smddp_infra.review import api_docs

ROOT = Path(__file__).resolve().parent.parent
API_MD = ROOT / "docs" / "api.md"


def test_docs_api_md_matches_the_code():
    expected = api_docs.render()
    assert API_MD.is_file() and API_MD.read_text() == expected, "docs/api.md is stale: run python -m smddp_infra.review.api_docs --out docs/api.md"


def test_readme_api_section_lists_every_construct_with_its_props_and_attributes():
    readme = ROOT / "README.md"
    assert readme.read_text() == api_docs.update_readme(readme), "README API section is stale: run python -m smddp_infra.review.api_docs"
    section = readme.read_text().split(api_docs.README_START, 1)[1].split(api_docs.README_END, 1)[0]
    for name, path in api_docs.PUBLIC_CONSTRUCTS:
        doc = api_docs.describe(name, path)
        (row,) = [line for line in section.splitlines() if line.startswith(f"| [{name}]")]
        assert all(f"`{prop.name}`" in row for prop in doc.props)


def test_every_prop_is_keyword_only_documented_with_its_default():
    assert api_docs.problems() == []


def test_every_public_construct_is_listed_with_props_and_attributes():
    text = API_MD.read_text()
    for name, _ in api_docs.PUBLIC_CONSTRUCTS:
        section = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        assert "| Prop | Type | Default | Description |" in section
        assert "**Attributes:**" in section


@pytest.mark.parametrize(("name", "path"), api_docs.PUBLIC_CONSTRUCTS)
def test_source_reading_agrees_with_the_runtime_signature(name, path):
    import importlib

    module = importlib.import_module("smddp_infra." + path.removesuffix(".py").replace("/", "."))
    signature = inspect.signature(getattr(module, name).__init__)
    runtime = {
        p.name: (None if p.default is inspect.Parameter.empty else p.default)
        for p in signature.parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    described = {p.name: p for p in api_docs.describe(name, path).props if not p.name.startswith("**")}
    assert set(described) == set(runtime)
    for prop_name, default in runtime.items():
        documented = described[prop_name].default
        if default is None:
            assert documented in (None, "None"), prop_name
        else:
            assert eval(documented, vars(module)) == default, prop_name  # noqa: S307 - defaults from our own source


def test_an_undocumented_prop_or_default_is_reported(tmp_path):
    (tmp_path / "constructs").mkdir()
    (tmp_path / "constructs" / "thing.py").write_text(
        textwrap.dedent(
            '''
            class Thing:
                """A thing.

                Attributes: ``x``.
                """

                def __init__(self, scope, id, size, *, colour: str = "red", shape: str = "round", speed: int = 3) -> None:
                    """
                    :param size: how big.  Default: small.
                    :param colour: what colour it is.
                    :param shape: its shape. Default: round.
                    """
            '''
        )
    )
    problems = api_docs.problems((("Thing", "constructs/thing.py"),), root=tmp_path)
    assert "Thing: prop 'speed' has no ':param speed:' line in __init__'s docstring" in problems
    assert "Thing: prop 'colour' has a default ('red') its docstring does not state ('Default: ...')" in problems
    assert "Thing: prop 'size' must be keyword-only (after '*')" in problems
    assert not any("'shape'" in p for p in problems)
    rendered = api_docs.render((("Thing", "constructs/thing.py"),), root=tmp_path)
    assert "| `speed` | `int` | `3` | (undocumented) |" in rendered

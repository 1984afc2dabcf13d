"""The API reference (docs/api.md), rendered from the constructs' source so it cannot drift.

Read with :mod:`ast`, never imported: the review package stays pure (no aws_cdk/jsii), and
rendering takes milliseconds. For each public construct: the ``__init__`` signature (the
keyword-only props with their annotation and default), each prop's ``:param name:`` text
from the ``__init__`` docstring, the class docstring's summary and its ``Attributes:`` line.

Regenerate::

    python -m smddp_infra.review.api_docs --out docs/api.md

``--check`` exits 1 when the file differs or a prop is undocumented (tests/test_api_docs.py
runs the same check).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

#: Public constructs, in the order the reference lists them, and the module that defines each.
PUBLIC_CONSTRUCTS: tuple[tuple[str, str], ...] = (
    ("TrainingNetwork", "constructs/training_network.py"),
    ("SmddpTrainingNetwork", "constructs/deprecated.py"),
    ("TrainingVpc", "constructs/network.py"),
    ("EfaSecurityGroup", "constructs/efa.py"),
    ("LustreFileSystem", "constructs/filesystem.py"),
    ("FileSystemMonitoring", "constructs/monitoring.py"),
    ("CheckpointBucket", "constructs/checkpoints.py"),
    ("TrainingExecutionRole", "constructs/role.py"),
    ("TrainingLaunchPolicy", "constructs/launch_policy.py"),
    ("HyperPodCluster", "constructs/hyperpod.py"),
    ("HyperPodClusterRole", "constructs/hyperpod_role.py"),
    ("TrainingNetworkStack", "stack.py"),
)

HEADER = """# API reference

Generated from the constructs' signatures and docstrings by
`python -m smddp_infra.review.api_docs --out docs/api.md`; `tests/test_api_docs.py` fails when this
file and the code disagree. Every construct takes `(scope, id, *, ...)`: the props below are
keyword-only.
"""


@dataclass(frozen=True)
class Prop:
    name: str
    type: str
    default: Optional[str]  # None: required
    doc: Optional[str]
    keyword_only: bool


@dataclass(frozen=True)
class ConstructDoc:
    name: str
    module: str
    summary: str
    attributes: str
    props: tuple[Prop, ...]


def describe(name: str, relative_path: str, *, root: Path = PACKAGE_ROOT) -> ConstructDoc:
    path = root / relative_path
    tree = ast.parse(path.read_text(), filename=str(path))
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    if cls is None:
        raise LookupError(f"class {name} is not defined in {path}")
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    class_doc = ast.get_docstring(cls) or ""
    init_doc = (ast.get_docstring(init) if init else "") or ""
    params = _param_docs(init_doc)
    props: list[Prop] = []
    if init is not None:
        args = init.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for arg, default in zip(positional, defaults):
            if arg.arg in ("self", "scope", "id"):
                continue
            props.append(_prop(arg, default, params, keyword_only=False))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            props.append(_prop(arg, default, params, keyword_only=True))
        if args.kwarg is not None:
            props.append(Prop(f"**{args.kwarg.arg}", _annotation(args.kwarg), "", params.get(args.kwarg.arg), True))
    module = "smddp_infra." + relative_path.removesuffix(".py").replace("/", ".")
    return ConstructDoc(name, module, _summary(class_doc), _attributes(class_doc), tuple(props))


def _prop(arg: ast.arg, default: Optional[ast.expr], params: dict[str, str], *, keyword_only: bool) -> Prop:
    return Prop(arg.arg, _annotation(arg), ast.unparse(default) if default is not None else None, params.get(arg.arg), keyword_only)


def _annotation(arg: ast.arg) -> str:
    return ast.unparse(arg.annotation) if arg.annotation is not None else ""


def _param_docs(doc: str) -> dict[str, str]:
    """``:param name: text`` (continuation lines indented) -> {name: text}."""
    found: dict[str, str] = {}
    current: Optional[str] = None
    for line in doc.splitlines():
        match = re.match(r"\s*:param\s+(\*{0,2}\w+):\s*(.*)", line)
        if match:
            current = match.group(1).lstrip("*")
            found[current] = match.group(2).strip()
        elif current and line.strip() and not line.strip().startswith(":"):
            found[current] += " " + line.strip()
        else:
            current = None
    return found


def _summary(doc: str) -> str:
    paragraph = []
    for line in doc.splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)


def _attributes(doc: str) -> str:
    lines = doc.splitlines()
    for index, line in enumerate(lines):
        if line.strip().startswith("Attributes:"):
            block = [line.strip().removeprefix("Attributes:").strip()]
            for more in lines[index + 1:]:
                if not more.strip():
                    break
                block.append(more.strip())
            return " ".join(part for part in block if part)
    return ""


def _md(text: str) -> str:
    """reST inline markup -> Markdown (``x`` -> `x`, :class:`X` -> `X`)."""
    text = re.sub(r":(?:class|func|meth|mod|data|attr):`~?([^`]+)`", lambda m: "`" + m.group(1).rsplit(".", 1)[-1] + "`", text)
    text = text.replace("``", "`")
    return text.replace("|", "\\|")


def render(constructs: Sequence[tuple[str, str]] = PUBLIC_CONSTRUCTS, *, root: Path = PACKAGE_ROOT) -> str:
    out = [HEADER]
    out.append("| Construct | Module | What it is |")
    out.append("|---|---|---|")
    docs = [describe(name, path, root=root) for name, path in constructs]
    for doc in docs:
        out.append(f"| [{doc.name}](#{doc.name.lower()}) | `{doc.module}` | {_md(doc.summary)} |")
    out.append("")
    for doc in docs:
        out.append(f"## {doc.name}")
        out.append("")
        out.append(f"`from {doc.module} import {doc.name}`")
        out.append("")
        out.append(_md(doc.summary))
        out.append("")
        out.append("| Prop | Type | Default | Description |")
        out.append("|---|---|---|---|")
        for prop in doc.props:
            default = "**required**" if prop.default is None else (f"`{prop.default}`" if prop.default else "")
            out.append(f"| `{prop.name}` | `{_md(prop.type)}` | {default} | {_md(prop.doc or '(undocumented)')} |")
        out.append("")
        if doc.attributes:
            out.append(f"**Attributes:** {_md(doc.attributes)}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


README_START = "<!-- api:start (generated by python -m smddp_infra.review.api_docs; do not edit) -->"
README_END = "<!-- api:end -->"


def render_overview(constructs: Sequence[tuple[str, str]] = PUBLIC_CONSTRUCTS, *, root: Path = PACKAGE_ROOT) -> str:
    """The README's API section: each construct with its props and attributes (details in docs/api.md)."""
    out = [README_START, "", "| Construct | Props (keyword-only) | Attributes |", "|---|---|---|"]
    for name, path in constructs:
        doc = describe(name, path, root=root)
        props = ", ".join(f"`{p.name}`" for p in doc.props)
        attributes = _md(doc.attributes).rstrip(".")
        out.append(f"| [{doc.name}](docs/api.md#{doc.name.lower()}) | {props} | {attributes} |")
    out += ["", README_END]
    return "\n".join(out) + "\n"


def update_readme(readme: Path) -> str:
    """README.md with its API section replaced by :func:`render_overview`."""
    text = readme.read_text()
    head, _, rest = text.partition(README_START)
    _, _, tail = rest.partition(README_END + "\n")
    return head + render_overview() + tail


def problems(constructs: Sequence[tuple[str, str]] = PUBLIC_CONSTRUCTS, *, root: Path = PACKAGE_ROOT) -> list[str]:
    """What the docstrings miss: an undocumented prop or default, a positional prop, no Attributes line."""
    found = []
    for name, path in constructs:
        doc = describe(name, path, root=root)
        for prop in doc.props:
            if prop.doc is None:
                found.append(f"{name}: prop {prop.name!r} has no ':param {prop.name.lstrip('*')}:' line in __init__'s docstring")
            elif prop.default not in (None, "") and not re.search(r"\b(default|required)\b", prop.doc, re.IGNORECASE):
                found.append(f"{name}: prop {prop.name!r} has a default ({prop.default}) its docstring does not state ('Default: ...')")
            if not prop.keyword_only:
                found.append(f"{name}: prop {prop.name!r} must be keyword-only (after '*')")
        if not doc.attributes:
            found.append(f"{name}: the class docstring has no 'Attributes:' line")
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m smddp_infra.review.api_docs", description="Render docs/api.md from the constructs' docstrings.")
    parser.add_argument("--out", default="docs/api.md")
    parser.add_argument("--readme", default="README.md", help="README whose API section is regenerated too")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale or a prop is undocumented")
    args = parser.parse_args(argv)
    readme = Path(args.readme)
    text = render()
    issues = problems()
    target = Path(args.out)
    if args.check:
        stale = not target.is_file() or target.read_text() != text
        for issue in issues:
            print(issue, file=sys.stderr)
        if stale:
            print(f"{target} is stale: run python -m smddp_infra.review.api_docs --out {target}", file=sys.stderr)
        readme_stale = readme.is_file() and readme.read_text() != update_readme(readme)
        if readme_stale:
            print(f"the API section of {readme} is stale: run python -m smddp_infra.review.api_docs", file=sys.stderr)
        return 1 if stale or issues or readme_stale else 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    if readme.is_file():
        readme.write_text(update_readme(readme))
    print(f"wrote {target}")
    for issue in issues:
        print(f"warning: {issue}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

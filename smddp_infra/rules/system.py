"""Several templates as one system: exports and imports, nested stacks, SSM hand-offs.

The group that decides SMDDP-SG1/SG2 or FSX3 is often created in one template and used in
another: a HyperPod cluster stack on a VPC stack (``Fn::ImportValue``), an FSx stack nested
in a network stack (``AWS::CloudFormation::Stack`` with ``Parameters``), every CDK app with a
network stack and a training stack (its ``cdk.out`` holds ``Fn::ImportValue`` across
templates), a parameter of type ``AWS::SSM::Parameter::Value<...>`` whose default names an
``AWS::SSM::Parameter`` another template writes. Judged alone, each side says "not defined in
the template". This reader joins the templates it is given into one template (the *system*)
that the one model and the same rules read unchanged:

* ``Fn::ImportValue NAME`` becomes the exporting output's ``Value`` when NAME (resolved with
  the importer's parameter defaults) matches exactly one export of the set (an export name
  built from ``${AWS::StackName}`` matches any stack name; two matches are ambiguous and stay
  unresolved);
* a nested stack's parameters become the values its parent passes, and the parent's
  ``!GetAtt Stack.Outputs.X`` becomes the child's output ``X``; the child is the file its
  ``TemplateURL`` names (a local path, as ``aws cloudformation package`` takes it) or, in a
  CDK cloud assembly, the file its ``aws:asset:path`` metadata or the assembly's
  ``*.assets.json`` names;
* an SSM-typed parameter whose ``Default`` names an SSM parameter written by another
  template becomes that parameter's ``Value``.

Logical ids that two templates share are renamed ``<file stem>_<id>`` in the system; every
finding is mapped back to the file and the logical id it belongs to, and names the other
files whose resources it rests on. Templates with no link to another are judged alone,
exactly as before. Nothing here reads files: callers pass decoded templates (and, for CDK
nested stacks, the assets manifests they found beside them).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from typing import Any, Optional

from smddp_infra.rules.findings import Finding
from smddp_infra.rules.model import TemplateModel, mappings_in

NESTED_STACK = "AWS::CloudFormation::Stack"
SSM_PARAMETER = "AWS::SSM::Parameter"
_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")
_ID = re.compile(r"[^A-Za-z0-9]")
#: An export name pattern must keep this many literal characters to be matched (a name that is
#: all unknowns, such as ``!Ref Param`` without a default, would match every import).
_MIN_LITERAL = 3


@dataclass(frozen=True)
class Link:
    """One edge between two templates of the set, in words for the report."""

    kind: str  # "import" | "nested" | "ssm"
    source: str  # the file that uses the value
    target: str  # the file that defines it
    detail: str  # "imports 'net-SG' (output SecurityGroup)"

    def describe(self) -> str:
        return f"{os.path.basename(_file(self.source))} {self.detail} from {os.path.basename(_file(self.target))}"


def _file(key: str) -> str:
    """The file of a member key: a second deployment of a nested template is keyed
    ``<file>\\0<n>`` (NUL is never part of a path)."""
    return key.split("\0", 1)[0]


@dataclass
class _Member:
    path: str
    template: Mapping[str, Any]
    model: TemplateModel
    prefix: str
    rename: dict[str, str] = field(default_factory=dict)  # resources and parameters (the Ref namespace)
    rename_conditions: dict[str, str] = field(default_factory=dict)
    rename_mappings: dict[str, str] = field(default_factory=dict)
    rename_outputs: dict[str, str] = field(default_factory=dict)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # canonical name expr -> (exporter path, output key)
    parameter_values: dict[str, tuple[str, Any]] = field(default_factory=dict)  # parameter -> (path whose namespace, raw expr)
    nested_children: dict[str, str] = field(default_factory=dict)  # nested stack logical id -> child key
    instance_of: str = ""  # the file this member is another deployment of (a child nested by several parents)
    nested_as: str = ""  # "nested stack Storage of b.yaml", when the file is nested by several parents

    @property
    def file(self) -> str:
        return self.instance_of or self.path

    @property
    def outputs(self) -> Mapping[Any, Any]:
        """The template's ``Outputs`` ({} when it has none, or not as a mapping)."""
        outputs = self.template.get("Outputs")
        return outputs if isinstance(outputs, Mapping) else {}


@dataclass(frozen=True)
class System:
    """Templates judged together: the joined template and how to map findings back."""

    paths: tuple[str, ...]
    template: Mapping[str, Any]
    origin: Mapping[str, tuple[str, str]]  # system logical id -> (file, logical id in that file)
    links: tuple[Link, ...]
    nested_as: Mapping[str, str] = field(default_factory=dict)  # system logical id -> which parent deploys it

    def place(self, finding: Finding) -> tuple[str, Finding]:
        """(file, finding with its own logical id, and the other files it rests on named)."""
        path, logical_id = self.origin.get(finding.resource, (self.paths[0], finding.resource))
        vocabulary = _vocabulary(finding.rule_id)
        others: dict[str, str] = {}
        for token in re.findall(r"[A-Za-z0-9_]+", finding.message):
            where = self.origin.get(token)
            if where is not None and where[0] != path and token not in others and token not in vocabulary:
                others[token] = where[0]
        message = finding.message
        for merged, (_file, original) in self.origin.items():
            if merged != original and merged in message:
                message = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(merged)}(?![A-Za-z0-9_])", original, message)
        if others:
            message += " [judged with " + ", ".join(
                f"{self.origin[t][1]} from {os.path.basename(f)}" for t, f in others.items()
            ) + "]"
        if finding.resource in self.nested_as:
            message += f" [as {self.nested_as[finding.resource]}]"
        return path, replace(finding, resource=logical_id, message=message)


def _vocabulary(rule_id: str) -> frozenset[str]:
    """Words the rule's own texts use ("S3", "NAT", "VPC" ...): in a message they are words, not
    the logical id of a resource that happens to share the name."""
    from smddp_infra.rules.engine import RULES_BY_ID  # the engine imports the rules; read it at call time

    rule = RULES_BY_ID.get(rule_id)
    if rule is None:
        return frozenset()
    text = " ".join((rule.title, rule.explanation, rule.symptom, rule.source))
    return frozenset(re.findall(r"[A-Za-z0-9_]+", text))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _pattern(text: str) -> Optional[re.Pattern[str]]:
    """An export name with ``*`` for the parts only known at deploy time, as a regex."""
    if len(text.replace("*", "")) < _MIN_LITERAL:
        return None
    return re.compile("^" + ".+".join(re.escape(part) for part in text.split("*")) + "$")


def _exports(member: _Member) -> list[tuple[str, Optional[re.Pattern[str]], str]]:
    """(name as resolved, its pattern, output key) of every export of one template."""
    world = member.model.world()
    out = []
    for key, output in member.outputs.items():
        if not isinstance(output, Mapping) or not isinstance(output.get("Export"), Mapping):
            continue
        name = world.resolve(output["Export"].get("Name"), partial=True)
        if isinstance(name, str):
            out.append((name, _pattern(name) if "*" in name else None, str(key)))
    return out


def _child_path(parent: _Member, resource: Mapping[str, Any], known: Mapping[str, _Member],
                assets: Mapping[str, Mapping[str, str]]) -> Optional[str]:
    """The file of the set a nested stack resource deploys, if the set holds it."""
    base = os.path.dirname(parent.path)
    candidates: list[str] = []
    metadata = resource.get("Metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("aws:asset:path"), str):
        candidates.append(os.path.join(base, metadata["aws:asset:path"]))
    props = resource.get("Properties")
    url = props.get("TemplateURL") if isinstance(props, Mapping) else None
    if isinstance(url, str) and "://" not in url:
        candidates.append(os.path.join(base, url))
    text = _canonical(url) if url is not None else ""
    for key, source in assets.get(base, {}).items():  # CDK: .../<hash>.json in TemplateURL
        if key and key in text:
            candidates.append(os.path.join(base, source))
    for candidate in candidates:
        normal = os.path.normpath(candidate)
        if normal in known:
            return normal
    return None


def _prefix(path: str, taken: set[str]) -> str:
    stem = os.path.basename(path)
    for suffix in (".nested.template.json", ".template.json", ".template", ".json", ".yaml", ".yml"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    base = _ID.sub("", stem) or "Template"
    prefix, n = base, 2
    while prefix in taken:
        prefix, n = f"{base}{n}", n + 1
    taken.add(prefix)
    return prefix


def link_templates(
    templates: Mapping[str, Mapping[str, Any]],
    *,
    assets: Optional[Mapping[str, Mapping[str, str]]] = None,
    region: Optional[str] = None,
) -> tuple[list[System], list[str]]:
    """(systems of two or more linked templates, paths judged alone).

    ``templates`` maps a file path to its decoded template; ``assets`` maps a directory to
    {S3 object key: local file} read from CDK ``*.assets.json`` files in it.
    """
    paths = [os.path.normpath(p) for p in templates]
    members: dict[str, _Member] = {}
    taken: set[str] = set()
    for original, path in zip(templates, paths):
        template = templates[original]
        members[path] = _Member(path, template, TemplateModel(template, region=region), _prefix(path, taken))
    links: list[Link] = []
    parent_of: dict[str, str] = {}
    # exports of the set
    exports: list[tuple[str, Optional[re.Pattern[str]], str, str]] = []
    for member in members.values():
        exports += [(name, pattern, key, member.path) for name, pattern, key in _exports(member)]
    for member in members.values():
        world = member.model.world()
        for node in mappings_in(member.template.get("Resources")):
            if len(node) == 1 and "Fn::ImportValue" in node:
                key = _canonical(node["Fn::ImportValue"])
                if key in member.imports:
                    continue
                name = world.resolve(node["Fn::ImportValue"])
                if not isinstance(name, str):
                    continue
                found = [(k, p) for n, pat, k, p in exports if p != member.path and (n == name or (pat is not None and pat.match(name)))]
                if len(found) == 1:
                    member.imports[key] = found[0]
                    links.append(Link("import", member.path, found[0][1], f"imports '{name}' (output {found[0][0]})"))
    # nested stacks: every stack resource deploys its own instance of the child, with the
    # parameters its parent passes; the second and later parents get a copy of the child
    again: list[tuple[_Member, str, Mapping[str, Any], str]] = []
    for member in list(members.values()):
        for logical_id, resource in (member.template.get("Resources") or {}).items():
            if not isinstance(resource, Mapping) or resource.get("Type") != NESTED_STACK:
                continue
            child = _child_path(member, resource, members, assets or {})
            if child is None or child == member.path:
                continue
            if child in parent_of:
                again.append((member, str(logical_id), resource, child))
                continue
            parent_of[child] = member.path
            _nest(member, str(logical_id), resource, members[child], links)
    for parent, logical_id, resource, child in again:
        _instance(members, members[child], parent, logical_id, resource, links, taken, frozenset({parent.file}))
    # SSM parameters written by one template and read by another's parameter default
    written: dict[str, list[tuple[str, Any]]] = {}
    for member in members.values():
        if member.instance_of:
            continue  # the file's own writes are counted once
        world = member.model.world()
        for resource in member.model.of_type(SSM_PARAMETER):
            name = world.resolve(resource.properties.get("Name"))
            if isinstance(name, str):
                written.setdefault(name, []).append((member.path, resource.properties.get("Value")))
    for member in members.values():
        for name, spec in member.model.parameters.items():
            if not str(spec.get("Type", "")).startswith("AWS::SSM::Parameter::Value") or name in member.parameter_values:
                continue
            writers = [w for w in written.get(str(spec.get("Default")), []) if w[0] != member.file]
            if len(writers) == 1:
                member.parameter_values[name] = writers[0]
                links.append(Link("ssm", member.path, writers[0][0], f"reads SSM parameter '{spec.get('Default')}' (parameter {name})"))
    several = {m.instance_of for m in members.values() if m.instance_of}  # files nested by several parents
    # connected components
    groups: dict[str, str] = {p: p for p in members}

    def find(p: str) -> str:
        while groups[p] != p:
            groups[p] = groups[groups[p]]
            p = groups[p]
        return p

    for link in links:
        groups[find(link.source)] = find(link.target)
    components: dict[str, list[str]] = {}
    for p in members:
        components.setdefault(find(p), []).append(p)
    systems: list[System] = []
    alone: list[str] = []
    for component in components.values():
        if len(component) == 1:
            alone.append(component[0])
            continue
        chosen = {p: members[p] for p in sorted(component)}
        systems.append(_join(chosen, [lk for lk in links if lk.source in chosen], several))
    return systems, alone


def _nest(parent: _Member, logical_id: str, resource: Mapping[str, Any], child: _Member, links: list[Link]) -> None:
    """Join one ``AWS::CloudFormation::Stack`` resource to the member it deploys."""
    parent.nested_children[logical_id] = child.path
    child.nested_as = f"nested stack {logical_id} of {os.path.basename(parent.file)}"
    passed = (resource.get("Properties") or {}).get("Parameters")
    for name, value in (passed.items() if isinstance(passed, Mapping) else ()):
        child.parameter_values[str(name)] = (parent.path, value)
    links.append(Link("nested", parent.path, child.path, f"nests stack {logical_id}"))


def _instance(members: dict[str, _Member], first: _Member, parent: _Member, logical_id: str,
              resource: Mapping[str, Any], links: list[Link], taken: set[str], chain: frozenset[str]) -> None:
    """Another deployment of ``first``'s file, nested by ``parent`` as ``logical_id``.

    Each ``AWS::CloudFormation::Stack`` resource creates its own stack from the template, with
    the parameters that resource passes; judged only with its first parent, a child that is
    fine there passes silently where another parent hands it a group without the rules it needs.
    So the copy is a member of its own (its own parameters, its own names in the system), with
    its imports and its own nested stacks deployed again under it (``chain``: the files above,
    so that a loop of nested stacks ends)."""
    chain = chain | {first.file}
    key = f"{first.file}\0{sum(m.instance_of == first.file for m in members.values()) + 1}"
    copy = _Member(key, first.template, first.model, _prefix(first.file, taken), instance_of=first.file)
    copy.imports = first.imports
    members[key] = copy
    _nest(parent, logical_id, resource, copy, links)
    links += [replace(link, source=key) for link in links if link.kind == "import" and link.source == first.path]
    resources = first.template.get("Resources") or {}
    for child_id, child in list(first.nested_children.items()):
        base = members[members[child].file]
        if base.file not in chain:
            _instance(members, base, copy, child_id, resources[child_id], links, taken, chain)


def _join(members: Mapping[str, _Member], links: list[Link], several: set[str]) -> System:
    """One template holding every member, names made unique, hand-offs substituted."""
    counts = Counter(n for m in members.values() for n in {*m.model.resources, *m.model.parameters})
    condition_counts = Counter(n for m in members.values() for n in m.model.conditions)
    mapping_counts = Counter(n for m in members.values() for n in m.model.mappings)
    output_counts = Counter(n for m in members.values() for n in m.outputs)
    for m in members.values():
        m.rename = {n: (f"{m.prefix}_{n}" if counts[n] > 1 else n) for n in {*m.model.resources, *m.model.parameters}}
        m.rename_conditions = {n: (f"{m.prefix}_{n}" if condition_counts[n] > 1 else n) for n in m.model.conditions}
        m.rename_mappings = {n: (f"{m.prefix}_{n}" if mapping_counts[n] > 1 else n) for n in m.model.mappings}
        m.rename_outputs = {str(n): (f"{m.prefix}_{n}" if output_counts[n] > 1 else str(n)) for n in m.outputs}
    rewriter = _Rewriter(members)
    joined: dict[str, Any] = {"Resources": {}, "Parameters": {}, "Conditions": {}, "Mappings": {}, "Outputs": {}}
    origin: dict[str, tuple[str, str]] = {}
    nested_as: dict[str, str] = {}
    for m in members.values():
        for logical_id, body in (m.template.get("Resources") or {}).items():
            new = m.rename.get(str(logical_id), str(logical_id))
            joined["Resources"][new] = rewriter.rewrite(m, body)
            origin[new] = (m.file, str(logical_id))
            if m.file in several:
                nested_as[new] = m.nested_as
        for name, spec in m.model.parameters.items():
            if name not in m.parameter_values:
                joined["Parameters"][m.rename[name]] = spec
        for name, expr in m.model.conditions.items():
            joined["Conditions"][m.rename_conditions[name]] = rewriter.rewrite(m, expr)
        for name, table in m.model.mappings.items():
            joined["Mappings"][m.rename_mappings[name]] = table
        for name, output in m.outputs.items():
            joined["Outputs"][m.rename_outputs[str(name)]] = rewriter.rewrite(m, output)
        rules = m.template.get("Rules")
        if isinstance(rules, Mapping):
            joined.setdefault("Rules", {}).update({f"{m.prefix}_{k}": rewriter.rewrite(m, v) for k, v in rules.items()})
    return System(tuple(dict.fromkeys(m.file for m in members.values())), joined, origin, tuple(links), nested_as)


class _Rewriter:
    """Renames a member's references into the system and substitutes what other members hand over."""

    def __init__(self, members: Mapping[str, _Member]) -> None:
        self.members = members
        self._active: set[tuple[str, str]] = set()

    def _output_value(self, path: str, key: str) -> Any:
        member = self.members[path]
        output = member.outputs.get(key)
        if not isinstance(output, Mapping) or (path, key) in self._active:
            return None
        self._active.add((path, key))
        try:
            return self.rewrite(member, output.get("Value"))
        finally:
            self._active.discard((path, key))

    def _parameter_value(self, member: _Member, name: str) -> Any:
        source, expr = member.parameter_values[name]
        marker = (member.path, "param:" + name)
        if marker in self._active:
            return {"Ref": member.rename.get(name, name)}
        self._active.add(marker)
        try:
            return self.rewrite(self.members[source], expr)
        finally:
            self._active.discard(marker)

    def rewrite(self, m: _Member, node: Any) -> Any:
        if isinstance(node, list):
            return [self.rewrite(m, v) for v in node]
        if not isinstance(node, Mapping):
            return node
        if len(node) == 1:
            (key, arg), = node.items()
            if key == "Fn::ImportValue":
                target = m.imports.get(_canonical(arg))
                if target is not None:
                    value = self._output_value(target[1], target[0])
                    if value is not None:
                        return value
                return {key: self.rewrite(m, arg)}
            if key == "Ref" and isinstance(arg, str):
                if arg in m.parameter_values:
                    return self._parameter_value(m, arg)
                return {"Ref": m.rename.get(arg, arg)}
            if key == "Fn::GetAtt":
                parts = arg.split(".", 1) if isinstance(arg, str) else arg
                if isinstance(parts, list) and len(parts) == 2 and isinstance(parts[0], str):
                    attribute = parts[1]
                    child = m.nested_children.get(parts[0])
                    if child is not None and isinstance(attribute, str) and attribute.startswith("Outputs."):
                        value = self._output_value(child, attribute[len("Outputs."):])
                        if value is not None:
                            return value
                    return {key: [m.rename.get(parts[0], parts[0]), self.rewrite(m, attribute)]}
                return {key: self.rewrite(m, arg)}
            if key == "Fn::Sub":
                return self._sub(m, arg)
            if key == "Condition" and isinstance(arg, str):
                return {key: m.rename_conditions.get(arg, arg)}
            if key == "Fn::If" and isinstance(arg, list) and arg and isinstance(arg[0], str):
                return {key: [m.rename_conditions.get(arg[0], arg[0]), *(self.rewrite(m, v) for v in arg[1:])]}
            if key == "Fn::FindInMap" and isinstance(arg, list) and arg and isinstance(arg[0], str):
                return {key: [m.rename_mappings.get(arg[0], arg[0]), *(self.rewrite(m, v) for v in arg[1:])]}
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k == "Condition" and isinstance(v, str):  # a resource's or output's Condition
                out[k] = m.rename_conditions.get(v, v)
            elif k == "DependsOn":
                out[k] = [m.rename.get(d, d) for d in v] if isinstance(v, list) else m.rename.get(v, v) if isinstance(v, str) else v
            else:
                out[k] = self.rewrite(m, v)
        return out

    def _sub(self, m: _Member, arg: Any) -> Any:
        text, variables = (arg[0], arg[1] if len(arg) > 1 and isinstance(arg[1], Mapping) else {}) if isinstance(arg, list) and arg else (arg, {})
        if not isinstance(text, str):
            return {"Fn::Sub": self.rewrite(m, arg)}
        extra: dict[str, Any] = {}

        def replace_var(match: re.Match[str]) -> str:
            name = match.group(1).strip()
            if name in variables:
                return match.group(0)
            head, _, tail = name.partition(".")
            if not tail and head in m.parameter_values:
                slot = f"{head}_{len(extra)}"
                extra[slot] = self._parameter_value(m, head)
                return "${" + slot + "}"
            if tail.startswith("Outputs.") and head in m.nested_children:
                value = self._output_value(m.nested_children[head], tail[len("Outputs."):])
                if value is not None:
                    slot = f"{head}_{len(extra)}"
                    extra[slot] = value
                    return "${" + slot + "}"
            renamed = m.rename.get(head, head)
            return "${" + renamed + ("." + tail if tail else "") + "}"

        new_text = _SUB_VARIABLE.sub(replace_var, text)
        new_vars = {k: self.rewrite(m, v) for k, v in variables.items()}
        new_vars.update(extra)
        return {"Fn::Sub": [new_text, new_vars] if new_vars else new_text}


def judged_files(system: System) -> str:
    """"a.yaml + b.yaml" for a report line."""
    return " + ".join(os.path.basename(p) for p in system.paths)


__all__ = ["Link", "System", "judged_files", "link_templates"]

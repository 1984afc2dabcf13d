"""Property: the template reader and the notebook reader answer any document with a result or
the project's one-line error, never a traceback, and never run past a time bound (issue 41).

Hypothesis writes the documents: random JSON/YAML trees (odd scalars, NaN, huge numbers,
non-string keys), CloudFormation-shaped templates whose properties hold those trees and broken
intrinsics, adversarial YAML (alias chains, anchors aliased inside themselves, merge keys,
nesting to 3,000 levels, tags Python cannot build) and notebooks with cells of every shape
(magics, ``%%writefile``, sources that are lists of junk, deep expressions). What each reader
may raise is the error type its command turns into one line and exit 2; anything else fails.

Each read has a generous bound on the CPU time it may use (the slowest legitimate read of these
small documents is a few milliseconds): CPU time, not wall time, so a loaded machine that
descheduled the test does not fail it, while a read that really spins still does. The module
runs in well under 20 s.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smddp_infra.errors import SmddpError
from smddp_infra.rules.loader import TemplateSyntaxError, load_template_text

#: Per read, in CPU time: far above a normal read (milliseconds), far below the minutes an alias bomb took.
DEADLINE_MS = 3000
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large])

ODD_SCALARS = ["2001-13-45", "!!float x", "!!int x", "!!timestamp x", "0x" + "f" * 5000, "1" * 5000, "1e999", ".nan",
               "-.inf", "~", "Yes", "no", "0o17", "1:30:00", "!!binary xyz", "!!python/object:os.system x",
               "!Ref", "!GetAtt a.b.c", "!GetAtt [a]", "!Sub [1, 2]", "!If x", "!Condition [1]", "'\\t'",
               "\"\\ud800\"", "? [a]\n: 1", "- \t-"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=12), st.sampled_from(["Ref", "Fn::GetAtt", "Fn::If", "AWS::NoValue", "-1", "0.0.0.0/0",
                                                           "tcp", "988", "sg-1", "ml.p5.48xlarge"]))
trees = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(["Ref", "Fn::If", "Fn::GetAtt", "Fn::Sub",
                                                                     "Fn::Select", "Fn::ImportValue", "Condition"])),
                    inner, max_size=4)), max_leaves=25)

RESOURCE_TYPES = ["AWS::EC2::SecurityGroup", "AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress",
                  "AWS::EC2::Subnet", "AWS::EC2::VPC", "AWS::EC2::NetworkAcl", "AWS::EC2::NetworkAclEntry",
                  "AWS::EC2::SubnetNetworkAclAssociation", "AWS::EC2::RouteTable", "AWS::EC2::Route",
                  "AWS::EC2::VPCEndpoint", "AWS::EC2::LaunchTemplate", "AWS::FSx::FileSystem",
                  "AWS::SageMaker::Cluster", "AWS::SageMaker::Domain", "AWS::CloudFormation::Stack",
                  "AWS::SSM::Parameter", "AWS::S3::Bucket", "AWS::IAM::Role", "AWS::EKS::Cluster",
                  "AWS::KMS::Key", "Custom::Thing"]
PROPERTY_NAMES = ["GroupId", "SourceSecurityGroupId", "DestinationSecurityGroupId", "IpProtocol", "FromPort", "ToPort",
                  "CidrIp", "SecurityGroupIngress", "SecurityGroupEgress", "VpcId", "SubnetId", "SubnetIds",
                  "CidrBlock", "AvailabilityZone", "NetworkAclId", "RuleNumber", "Protocol", "RuleAction", "Egress",
                  "PortRange", "SecurityGroupIds", "StorageCapacity", "LustreConfiguration", "InstanceGroups",
                  "VpcConfig", "Orchestrator", "TemplateURL", "Parameters", "Name", "Value", "Tags",
                  "LaunchTemplateData", "NetworkInterfaces", "ServiceName", "RouteTableIds"]

templates = st.fixed_dictionaries(
    {"Resources": st.dictionaries(
        st.text(alphabet="ABCDEFGH", min_size=1, max_size=3),
        st.fixed_dictionaries({"Type": st.sampled_from(RESOURCE_TYPES)},
                              optional={"Properties": st.one_of(
                                  st.dictionaries(st.sampled_from(PROPERTY_NAMES), trees, max_size=6), trees),
                                  "Condition": trees, "DependsOn": trees}),
        max_size=6)},
    optional={"Parameters": st.dictionaries(st.text(alphabet="PQR", min_size=1, max_size=2), trees, max_size=3),
              "Conditions": st.dictionaries(st.text(alphabet="CD", min_size=1, max_size=2), trees, max_size=3),
              "Mappings": trees, "Outputs": trees, "Rules": trees, "Transform": trees})


@st.composite
def adversarial_yaml(draw: st.DrawFn) -> str:
    """Alias chains of random width and depth, self-aliases, merge bombs, deep nesting, odd scalars."""
    kind = draw(st.sampled_from(["laughs", "merge", "self", "deep-flow", "deep-block", "odd", "mixed"]))
    if kind == "laughs":
        width, levels = draw(st.integers(1, 12)), draw(st.integers(1, 12))
        lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
        return "\n".join(lines) + f"\nResources: {{Q: {{Type: AWS::EC2::SecurityGroup, Properties: {{Tags: *a{levels - 1}}}}}}}\n"
    if kind == "merge":
        levels = draw(st.integers(1, 40))
        lines = ["m0: &m0 {k: v}"] + [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, levels)]
        return "\n".join(lines) + "\nResources: {}\n"
    if kind == "self":
        return draw(st.sampled_from(["Resources: &r {Q: {Properties: *r}}", "Resources: &s [*s]",
                                     "a: &a {<<: *a}\nResources: {}", "Resources: &r\n  Q: [*r, *r]"]))
    depth = draw(st.integers(1, 3000))
    if kind == "deep-flow":
        opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
        return "Resources: " + opener * depth + "1" + closer * depth
    if kind == "deep-block":
        depth = min(depth, 400)
        return "Resources:\n" + "".join("  " * i + "a:\n" for i in range(1, depth)) + "  " * depth + "b"
    if kind == "odd":
        return "Resources:\n  Q:\n    Type: AWS::EC2::SecurityGroup\n    Properties:\n      X: " + draw(st.sampled_from(ODD_SCALARS))
    pieces = draw(st.lists(st.sampled_from(["&a ", "*a", "[", "]", "{", "}", ": ", ", ", "- ", "\n", "  ", "!Ref ",
                                            "<<: ", "x", "1", "? ", "---\n", "'", '"', "\t", "&b [*a, *a]"]), max_size=40))
    return "".join(pieces)


def documents() -> st.SearchStrategy[str]:
    as_json = st.one_of(trees, templates).map(lambda v: json.dumps(v, allow_nan=True))
    as_yaml = st.one_of(trees, templates).map(lambda v: yaml.safe_dump(v, allow_unicode=True))
    return st.one_of(as_json, as_yaml, adversarial_yaml(), st.text(max_size=200),
                     st.binary(max_size=100).map(lambda b: b.decode("latin-1")))


def _bounded(read: Any, *args: Any) -> Any:
    started = time.process_time()
    try:
        return read(*args)
    finally:
        assert time.process_time() - started < DEADLINE_MS / 1000


@SETTINGS
@given(documents())
def test_the_template_reader_answers_any_document_with_a_model_or_one_line(text: str) -> None:
    """What ``check`` does with a file: read it, and judge it when it is a template."""
    from smddp_infra.rules import check_template

    try:
        template = _bounded(load_template_text, text)
    except TemplateSyntaxError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    if isinstance(template, dict) and isinstance(template.get("Resources"), dict):
        for finding in _bounded(check_template, template):
            assert "\n" not in finding.message


@SETTINGS
@given(templates)
def test_the_rules_answer_any_cloudformation_shaped_template(template: dict[str, Any]) -> None:
    from smddp_infra.rules import check_template

    text = json.dumps(template, allow_nan=True)
    read = _bounded(load_template_text, text)
    assert read == json.loads(text) or text.count("NaN")  # NaN != NaN
    _bounded(check_template, read)


# -- notebooks ------------------------------------------------------------------------------------

LINES = ["import sagemaker", "from sagemaker.pytorch import PyTorch",
         "est = PyTorch(entry_point='train.py', instance_type='ml.p4d.24xlarge', instance_count=2, "
         "distribution={'smdistributed': {'dataparallel': {'enabled': True}}})",
         "est.fit()", "%pip install x", "!ls", "files = !ls", "x?", "%%writefile train.py", "%%writefile",
         "%%writefile -a train.py", "%%bash", "%%time", "import torch.distributed as dist",
         "dist.init_process_group(backend='smddp')", "def f(:", "x = " + "(" * 300 + ")" * 300, "\x00",
         "if __name__ == '__main__':", "    pass", "\t", "x = [" * 50, "'''", "λ = 1"]

sources = st.one_of(st.lists(st.sampled_from(LINES), max_size=6).map("\n".join),
                    st.lists(st.sampled_from(LINES).map(lambda line: line + "\n"), max_size=6),
                    st.lists(st.one_of(st.sampled_from(LINES), st.integers(), st.none()), max_size=3), trees)
cells = st.one_of(st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw"]), "source": sources},
                                        optional={"metadata": trees, "outputs": trees}), trees)
notebooks = st.one_of(
    st.fixed_dictionaries({"cells": st.lists(cells, max_size=6)},
                          optional={"metadata": trees, "nbformat": st.one_of(st.just(4), trees), "nbformat_minor": trees}),
    trees)


@pytest.fixture(scope="module")
def notebook_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("notebooks") / "job.ipynb"


#: JSON tokens json.dumps never writes but a file may hold (json.loads reads or refuses each differently).
ODD_JSON = ["1" * 5000, "-" + "9" * 4400, "NaN", "-Infinity", "1e999", '"\\ud800"', '"\\u0000"', "[" * 3000 + "]" * 3000]


@SETTINGS
@given(notebook=notebooks, odd=st.one_of(st.none(), st.sampled_from(ODD_JSON)))
def test_the_notebook_reader_answers_any_notebook_with_jobs_or_one_line(notebook_path: Path, notebook: Any,
                                                                        odd: Any) -> None:
    from smddp_infra.preflight.inputs import read_input

    text = json.dumps(notebook, allow_nan=True)
    if odd is not None and isinstance(notebook, dict):  # one raw token beside the cells
        text = text[:-1] + (", " if notebook else "") + '"odd": ' + odd + "}"
    notebook_path.write_text(text)
    try:
        found = _bounded(read_input, notebook_path)
    except SmddpError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert found.jobs and all(job is not None for job in found.jobs)  # a reader that answers found a job


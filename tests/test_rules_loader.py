"""The light template loader: CloudFormation short forms without importing cfn-lint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from smddp_infra.rules.loader import TemplateSyntaxError, load_template_text

FIXTURE_DIRS = [Path(__file__).resolve().parent / "fixtures" / d for d in ("templates", "corpus")]


def test_short_form_tags_become_the_long_form() -> None:
    text = """
Resources:
  A:
    Properties:
      Ref: !Ref Param
      Dotted: !GetAtt Group.GroupId
      Nested: !GetAtt Stack.Outputs.Name
      Listed: !GetAtt [Group, GroupId]
      Sub: !Sub "${AWS::Region}-x"
      SubList: !Sub ["${X}", {X: !Ref Y}]
      If: !If [Cond, !Ref A, !Ref AWS::NoValue]
      Select: !Select [0, !GetAZs ""]
      Cond: !Condition IsProd
      Eq: !Equals [!Ref P, "yes"]
      Map: !FindInMap [M, !Ref AWS::Region, Key]
      Yes: Yes
"""
    props = load_template_text(text)["Resources"]["A"]["Properties"]
    assert props["Ref"] == {"Ref": "Param"}
    assert props["Dotted"] == {"Fn::GetAtt": ["Group", "GroupId"]}
    assert props["Nested"] == {"Fn::GetAtt": ["Stack", "Outputs.Name"]}
    assert props["Listed"] == {"Fn::GetAtt": ["Group", "GroupId"]}
    assert props["Sub"] == {"Fn::Sub": "${AWS::Region}-x"}
    assert props["SubList"] == {"Fn::Sub": ["${X}", {"X": {"Ref": "Y"}}]}
    assert props["If"] == {"Fn::If": ["Cond", {"Ref": "A"}, {"Ref": "AWS::NoValue"}]}
    assert props["Select"] == {"Fn::Select": [0, {"Fn::GetAZs": ""}]}
    assert props["Cond"] == {"Condition": "IsProd"}
    assert props["Eq"] == {"Fn::Equals": [{"Ref": "P"}, "yes"]}
    assert props["Map"] == {"Fn::FindInMap": ["M", {"Ref": "AWS::Region"}, "Key"]}
    assert props[True] is True  # YAML 1.1 (key and value), as cfn-lint reads it


def test_json_is_read_and_a_json_error_names_the_line() -> None:
    assert load_template_text('{"Resources": {}}') == {"Resources": {}}
    with pytest.raises(TemplateSyntaxError, match="line 2"):
        load_template_text('{"Resources":\n  {,}}')


def test_a_key_written_twice_is_refused_with_both_lines() -> None:
    with pytest.raises(TemplateSyntaxError, match=r"'A' appears twice in one mapping \(lines 2 and 3\)"):
        load_template_text("Resources:\n  A: {}\n  A: {}\n")


def test_bad_yaml_names_line_and_column() -> None:
    with pytest.raises(TemplateSyntaxError, match=r"did not find expected node content \(line \d+, column \d+\)"):
        load_template_text("Resources: [")


@pytest.mark.parametrize("path", sorted(p for d in FIXTURE_DIRS for p in d.iterdir() if p.suffix in (".yaml", ".json")), ids=lambda p: p.name)
def test_every_fixture_reads_as_cfn_lint_reads_it(path: Path) -> None:
    from cfnlint.decode import decode

    expected, matches = decode(str(path))
    assert not matches
    assert _plain(load_template_text(path.read_text())) == _plain(expected)


def _plain(value: object) -> object:
    """cfn-lint's node classes (str_node, dict_node ...) as plain values."""
    if isinstance(value, dict):
        return {(str(k) if isinstance(k, str) else k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, str) else value


def test_check_reads_templates_without_importing_cfn_lint_or_sympy() -> None:
    template = FIXTURE_DIRS[0] / "compliant.yaml"
    code = ("import sys; from smddp_infra.cli import main; rc = main(['check', sys.argv[1]]);"
            "bad = sorted({m.split('.')[0] for m in sys.modules} & {'cfnlint', 'sympy', 'aws_cdk', 'jsii'});"
            "print(bad, file=sys.stderr); sys.exit(rc if not bad else 99)")
    result = subprocess.run([sys.executable, "-c", code, str(template)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- hostile documents: refused in one TemplateSyntaxError, quickly ---------------------------------


def _laughs(levels: int = 9, width: int = 10) -> str:
    """A "billion laughs" template: each anchor lists the previous one ``width`` times."""
    lines = ["  l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "Metadata:\n" + "\n".join(lines) + f"\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties: {{Tags: *l{levels - 1}}}\n"


def test_an_alias_bomb_is_refused_in_a_moment_saying_what_cloudformation_does_with_aliases() -> None:
    import time

    text = _laughs()
    assert len(text) < 1024  # a 1 KB file that expands to a billion values
    started = time.process_time()  # CPU time: a loaded machine does not fail it, a real expansion does
    with pytest.raises(TemplateSyntaxError) as caught:
        load_template_text(text)
    assert time.process_time() - started < 1.0
    message = str(caught.value)
    assert "more than 524,288 values once its YAML aliases are expanded" in message
    assert "YAML aliases are not allowed in CloudFormation templates" in message
    assert "`aws cloudformation package` and SAM expand them first" in message
    assert "\n" not in message


def test_aliases_within_the_bound_are_expanded_as_package_and_sam_expand_them() -> None:
    template = load_template_text("Tags: &tags [{Key: a, Value: b}]\nResources:\n  Q:\n    Properties: {Tags: *tags}\n")
    assert template["Resources"]["Q"]["Properties"]["Tags"] == [{"Key": "a", "Value": "b"}]


def test_a_merge_key_bomb_is_refused_before_pyyaml_flattens_it() -> None:
    lines = ["a0: &a0 {k: v}"] + [f"a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}]}}" for i in range(1, 40)]
    with pytest.raises(TemplateSyntaxError, match="once its YAML aliases are expanded"):
        load_template_text("\n".join(lines) + "\nResources: {}\n")


@pytest.mark.parametrize("text", ["Resources: &r\n  Q: {Properties: {Loop: *r}}\n", "Resources: &s\n  - *s\n"],
                         ids=["mapping", "list"])
def test_an_anchor_aliased_inside_itself_is_refused(text: str) -> None:
    with pytest.raises(TemplateSyntaxError, match="the YAML anchor at line 1 is aliased inside the node it names"):
        load_template_text(text)


@pytest.mark.parametrize("text", [
    '{"Resources": ' + "[" * 5000 + "]" * 5000 + "}",
    '{"Resources": {"A": {"Properties": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}}}",
    "Resources: " + "[" * 5000 + "]" * 5000,
    "Resources:\n" + "".join("  " * i + "- \n" for i in range(1, 300)),
], ids=["json-5000", "json-900", "yaml-flow-5000", "yaml-block-300"])
def test_a_document_nested_past_the_bound_is_one_line(text: str) -> None:
    with pytest.raises(TemplateSyntaxError, match=r"nests more than 100 levels deep|maximum nesting depth"):
        load_template_text(text)


def test_the_depth_bound_is_exact() -> None:
    from smddp_infra.rules.loader import MAX_DEPTH

    def nested(levels: int) -> str:  # the document itself is level 1, the scalar at the bottom level ``levels``
        return "[" * (levels - 1) + "1" + "]" * (levels - 1)

    assert load_template_text(nested(MAX_DEPTH)) is not None
    with pytest.raises(TemplateSyntaxError, match="nests more than 100 levels"):
        load_template_text(nested(MAX_DEPTH + 1))
    assert load_template_text("a: " + nested(MAX_DEPTH - 1)) is not None
    with pytest.raises(TemplateSyntaxError, match="nests more than 100 levels"):
        load_template_text("a: " + nested(MAX_DEPTH))


def test_a_template_past_cloudformations_1_mb_is_refused_by_its_size() -> None:
    from smddp_infra.rules.loader import MAX_TEMPLATE_BYTES

    under = '{"Resources": {}, "Description": "' + "x" * (MAX_TEMPLATE_BYTES - 40) + '"}'
    assert load_template_text(under)["Resources"] == {}
    with pytest.raises(TemplateSyntaxError, match=r"the template is 1,048,612 bytes; CloudFormation reads a template body of at most 1 MB"):
        load_template_text('{"Resources": {}, "Description": "' + "é" * (MAX_TEMPLATE_BYTES // 2) + '"}')


@pytest.mark.parametrize(("text", "problem"), [
    ("a: " + "1" * 5000, "cannot be read as int"),
    ("[" + "1" * 5000 + "]", "a value cannot be read"),
    ("a: 0x" + "f" * 5000, "an integer of more than 4,000 digits"),
    ("a: 2001-13-45", "cannot be read as timestamp"),
    ("a: !!timestamp x", "cannot be read as timestamp"),
    ("a: !!float x", "cannot be read as float"),
    ("a: !!python/object:os.system x", "could not determine a constructor"),
])
def test_a_scalar_python_cannot_build_is_one_line_naming_it(text: str, problem: str) -> None:
    with pytest.raises(TemplateSyntaxError, match=problem):
        load_template_text(text)


def test_plain_yaml_readers_share_the_bounds_without_cloudformation_tags() -> None:
    from smddp_infra.rules.loader import compose_yaml_text, load_yaml_text

    assert load_yaml_text("a: [1, 2]") == {"a": [1, 2]}
    with pytest.raises(TemplateSyntaxError, match="could not determine a constructor for the tag '!Ref'"):
        load_yaml_text("a: !Ref b")
    with pytest.raises(TemplateSyntaxError) as caught:
        load_yaml_text(_laughs())
    assert "CloudFormation" not in str(caught.value)  # a job file is not a template
    with pytest.raises(TemplateSyntaxError, match="once its YAML aliases are expanded"):
        compose_yaml_text(_laughs())
    assert compose_yaml_text("") is None

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

"""Every fixture template against its pinned findings, through the engine (face-independent).

The same list (tests/_template_cases.py) drives `smddp-infra check`, the cfn-lint plugin and
SmddpChecks; a rule that stops firing, or fires where it should not, fails here first.
"""

from __future__ import annotations

import pytest

from _rules_helpers import FIXTURES, load
from _template_cases import CASES, INFOS, WHEN


def _found(name: str) -> list:
    from smddp_infra.rules import check_template

    return check_template(load(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_findings_are_exactly_the_expected_ones(name: str) -> None:
    found = {(f.rule_id, f.resource) for f in _found(name) if f.severity.value != "info"}
    assert found == set(CASES[name])


@pytest.mark.parametrize("name", sorted(INFOS))
def test_unresolved_values_give_info_notes_and_no_error(name: str) -> None:
    findings = _found(name)
    assert {(f.rule_id, f.resource) for f in findings if f.severity.value == "info"} == set(INFOS[name])
    assert not [f for f in findings if f.severity.value == "error"]


@pytest.mark.parametrize("key", sorted(WHEN))
def test_conditional_findings_name_the_assignment_that_triggers_them(key: tuple[str, str, str]) -> None:
    name, rule, resource = key
    (finding,) = [f for f in _found(name) if (f.rule_id, f.resource) == (rule, resource)]
    assert finding.message.startswith(WHEN[key])
    assert finding.when and all(isinstance(w, dict) for w in finding.when)


def test_every_fixture_file_is_in_the_case_list() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.suffix in (".yaml", ".json")}
    assert on_disk == set(CASES)


def test_every_rule_fires_somewhere_and_some_fixtures_are_silent() -> None:
    from smddp_infra.rules import RULES

    fired = {rule for found in CASES.values() for rule, _ in found} | {rule for found in INFOS.values() for rule, _ in found}
    assert fired == {rule.id for rule in RULES}
    assert sum(1 for found in CASES.values() if not found) >= 10


def test_yaml_and_json_forms_of_the_same_template_agree() -> None:
    yaml_template, json_template = load("compliant.yaml"), load("compliant.json")
    assert yaml_template["Resources"].keys() == json_template["Resources"].keys()
    assert not _found("compliant.yaml") and not _found("compliant.json")


def test_different_reasons_for_one_file_system_are_separate_findings() -> None:
    messages = [f.message for f in _found("fsx_invalid.yaml") if f.resource == "ParameterisedFileSystem"]
    assert len(messages) == len(set(messages)) >= 2
    assert not any("more parameter combinations" in m for m in messages)
    assert any(m.startswith("when Capacity=1000") and "got 1000" in m for m in messages)

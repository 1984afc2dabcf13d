"""The engine is pure (no aws_cdk, jsii or constructs) and fast enough to run on every synth."""

from __future__ import annotations

import subprocess
import sys

import pytest

from _rules_helpers import load, self_rule, sg
from smddp_infra.rules import RULES, check_template


def test_rule_ids_and_cfn_lint_ids_are_unique_and_severity_matches_the_letter() -> None:
    assert len({r.id for r in RULES}) == len({r.cfn_lint_id for r in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.id.startswith("SMDDP-")
        assert rule.cfn_lint_id[0] == {"error": "E", "warning": "W", "info": "I"}[rule.severity.value]
        assert rule.cfn_lint_id[1] == "9" and len(rule.cfn_lint_id) == 5
        assert rule.title and rule.explanation and rule.symptom


def test_every_rule_cites_a_source_and_an_unconfirmed_one_is_never_an_error() -> None:
    from smddp_infra.rules.findings import Rule, Severity

    for rule in RULES:
        assert rule.source.strip(), rule.id
        assert rule.confirmed or rule.severity is not Severity.ERROR, rule.id
    with pytest.raises(ValueError, match="is an error but its consequence is UNCONFIRMED"):
        Rule("SMDDP-X1", Severity.ERROR, "E9999", "t", "e", "s", lambda w: [], source="UNCONFIRMED: nobody measured it")
    with pytest.raises(ValueError, match="has no source"):
        Rule("SMDDP-X2", Severity.WARNING, "W9999", "t", "e", "s", lambda w: [])
    assert not Rule("SMDDP-X3", Severity.WARNING, "W9998", "t", "e", "s", lambda w: [], source="unconfirmed: maybe").confirmed


def test_docs_give_every_rules_source_word_for_word() -> None:
    from pathlib import Path

    docs = " ".join((Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text().split())
    for rule in RULES:
        assert " ".join(rule.source.split()) in docs, rule.id


def test_importing_the_rules_and_the_check_command_loads_no_cdk() -> None:
    code = (
        "import sys, smddp_infra.rules, smddp_infra.commands.check, smddp_infra.rules.cfnlint_plugin;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('aws_cdk','jsii','constructs','cdk_nag')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def big_template(groups: int) -> dict:
    template = load("compliant.yaml")
    for i in range(groups):
        template["Resources"][f"Sg{i}"] = sg(f"efa group {i}")
        template["Resources"][f"Sg{i}In"] = self_rule("ingress", f"Sg{i}")
        template["Resources"][f"Sg{i}Out"] = self_rule("egress", f"Sg{i}")
    return template


def _work(monkeypatch: pytest.MonkeyPatch, template: dict) -> dict[str, int]:
    """How many times the engine builds a world and reads resources (resolve, get, exists,
    of_type) to check ``template``: a count, not a clock, so it is the same on a busy machine.
    Wall time is benchmarks/bench_check.py's job (it prints the figure for a template like this)."""
    from smddp_infra.rules.model import World

    counts: dict[str, int] = {}

    def counted(owner: type, name: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            counts[name] = counts.get(name, 0) + 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    for name in ("__init__", "resolve", "get", "exists", "of_type"):
        counted(World, name)
    assert check_template(template) == []
    monkeypatch.undo()
    return counts


def test_the_engine_s_work_grows_linearly_with_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards what the old timed assertion did (a few hundred resources stay cheap) without a
    clock: one world per parameter assignment whatever the size, and reads per added group constant
    (a rule that rescans every group per group would double the increments below)."""
    small, medium, large = (_work(monkeypatch, big_template(n)) for n in (50, 100, 200))
    assert len(big_template(100)["Resources"]) > 300
    # one World per assignment of compliant.yaml's Throughput parameter: added groups add none
    assert small["__init__"] == medium["__init__"] == large["__init__"] == 3
    assert large["of_type"] == small["of_type"]  # per rule, not per resource
    for name in ("resolve", "get", "exists"):
        first, second = medium[name] - small[name], large[name] - medium[name]  # +50, then +100 groups
        assert second <= 2 * first * 1.05, f"{name}: {small[name]}, {medium[name]}, {large[name]} for 50/100/200 groups"

"""SmddpChecks: the SMDDP rules as a cdk-nag 3 NagPack on CDK's Validations API.

Three apps are synthesized ONCE for the module: one with a compliant and a non-compliant
training group, the same acknowledged two ways, and EVERY fixture of the shared case list
(tests/_template_cases.py) brought in with CfnInclude, one stack each, in one synth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

from _rules_helpers import FIXTURES
from _template_cases import CASES, NOT_INCLUDABLE
from conftest import cdk_context


@dataclass
class Outcome:
    error: Optional[str]
    report: dict[str, Any]


def _synth(app: Any, outdir: Path) -> Outcome:
    try:
        app.synth()
        error = None
    except Exception as exc:  # jsii surfaces ValidationFailed as RuntimeError
        error = str(exc)
    report_file = outdir / "validation-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return Outcome(error, report)


def _groups(stack: Any, *, acknowledge: Optional[str] = None, on_stack: bool = False) -> None:
    from aws_cdk import Acknowledgment, Validations
    from aws_cdk import aws_ec2 as ec2

    vpc = ec2.Vpc.from_vpc_attributes(stack, "Vpc", vpc_id="vpc-12345678", availability_zones=["us-east-1a"])
    from aws_cdk import Tags

    good = ec2.SecurityGroup(stack, "Good", vpc=vpc, description="EFA training instances", allow_all_outbound=False)
    good.add_ingress_rule(good, ec2.Port.all_traffic(), "all traffic from itself")
    good.add_egress_rule(good, ec2.Port.all_traffic(), "all traffic to itself")
    bad = ec2.SecurityGroup(stack, "Bad", vpc=vpc, description="EFA training instances, missing self egress")
    bad.add_ingress_rule(bad, ec2.Port.all_traffic(), "all traffic from itself")
    bad.add_egress_rule(bad, ec2.Port.all_traffic(), "dropped: allow_all_outbound=True ignores it")
    for group in (good, bad):  # the project's tag: strong evidence (a name alone is only a warning)
        Tags.of(group).add("smddp:role", "training")
    if acknowledge:
        Validations.of(stack if on_stack else bad).acknowledge(Acknowledgment(id=acknowledge, reason="test: on purpose"))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    from aws_cdk import App, Stack, Validations
    from aws_cdk.cloudformation_include import CfnInclude

    from smddp_infra.checks import SmddpChecks

    results: dict[str, Outcome] = {}

    out = tmp_path_factory.mktemp("mixed")
    app = App(context=cdk_context(), outdir=str(out))
    _groups(Stack(app, "Mixed"))
    Validations.of(app).add_plugins(SmddpChecks(app))
    results["mixed"] = _synth(app, out)

    out = tmp_path_factory.mktemp("acknowledged")
    app = App(context=cdk_context(), outdir=str(out))
    _groups(Stack(app, "OnResource"), acknowledge="SMDDP-SG2")
    _groups(Stack(app, "OnStackNamespaced"), acknowledge="SMDDP::SMDDP-SG2", on_stack=True)
    Validations.of(app).add_plugins(SmddpChecks(app))
    results["acknowledged"] = _synth(app, out)

    out = tmp_path_factory.mktemp("included")
    app = App(context=cdk_context(), outdir=str(out))
    for name in sorted(set(CASES) - set(NOT_INCLUDABLE)):
        CfnInclude(Stack(app, stack_name(name)), "Template", template_file=str(FIXTURES / name))
    Validations.of(app).add_plugins(SmddpChecks(app))
    results["included"] = _synth(app, out)
    return results


def stack_name(fixture: str) -> str:
    return "".join(part.capitalize() for part in fixture.replace(".", "_").split("_"))


def _violations(report: dict[str, Any]) -> dict[str, set[str]]:
    """rule name -> violating construct paths, for the SMDDP plugin's report."""
    out: dict[str, set[str]] = {}
    for plugin in report.get("pluginReports", []):
        if plugin.get("pluginName") != "SMDDP":
            continue
        for violation in plugin.get("violations", []):
            paths = {c.get("constructPath", "") for c in violation.get("violatingConstructs", [])}
            out.setdefault(violation["ruleName"], set()).update(paths)
    return out


def test_a_non_compliant_group_fails_synth_naming_the_rule(outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes["mixed"]
    assert outcome.error is not None and "ValidationFailed" in outcome.error
    assert "SMDDP-SG2" in outcome.error and "Mixed/Bad" in outcome.error
    assert _violations(outcome.report) == {"SMDDP-SG2": {"Mixed/Bad/Resource"}}


def test_the_compliant_group_is_not_reported(outcomes: dict[str, Outcome]) -> None:
    assert "Mixed/Good" not in (outcomes["mixed"].error or "")


def test_acknowledging_on_the_resource_or_its_stack_silences_the_finding(outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes["acknowledged"]
    assert outcome.error is None
    assert _violations(outcome.report) == {}
    (smddp,) = [p for p in outcome.report["pluginReports"] if p["pluginName"] == "SMDDP"]
    # the namespaced form goes through CDK's own acknowledgement and leaves an audit record
    audit = {(s["acknowledgedId"], s["acknowledgedAt"]) for s in smddp.get("suppressedViolations", [])}
    assert audit == {("SMDDP::SMDDP-SG2", "OnStackNamespaced")}


def test_every_included_fixture_gets_exactly_the_expected_findings(outcomes: dict[str, Outcome]) -> None:
    found: dict[str, set[tuple[str, str]]] = {stack_name(n): set() for n in CASES if n not in NOT_INCLUDABLE}
    for rule, paths in _violations(outcomes["included"].report).items():
        for path in paths:
            stack, _template, logical_id = path.split("/")[:3]
            found[stack].add((rule, logical_id))
    expected = {stack_name(n): set(e) for n, e in CASES.items() if n not in NOT_INCLUDABLE}
    assert found == expected


def test_included_errors_fail_the_synth_and_info_notes_are_not_violations(outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes["included"]
    assert outcome.error is not None and "ValidationFailed" in outcome.error
    assert "SMDDP-INFO1" not in json.dumps(outcome.report)


def test_warnings_are_reported_as_warnings(outcomes: dict[str, Outcome]) -> None:
    severities = {
        v["ruleName"]: v.get("severity")
        for plugin in outcomes["included"].report.get("pluginReports", [])
        for v in plugin.get("violations", [])
    }
    assert severities["SMDDP-FSX2"] == severities["SMDDP-NET3"] == severities["SMDDP-FSX4"] == "warning"
    assert "SMDDP-SG3" not in severities  # names alone give an info note, which the pack leaves out
    assert severities["SMDDP-SG1"] == severities["SMDDP-FSX1"] == "error"


def test_cfninclude_rejects_yes_booleans_so_the_check_command_does_not_use_it() -> None:
    from aws_cdk import App, Stack
    from aws_cdk.cloudformation_include import CfnInclude

    with pytest.raises(Exception, match="Expected 'true' or 'false' for boolean value, got: 'Yes'"):
        CfnInclude(Stack(App(), "Yes"), "Template", template_file=str(FIXTURES / "yes_booleans.yaml"))


def test_the_pack_matches_aws_solutions_checks_constructor() -> None:
    import inspect

    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import SmddpChecks

    ours = inspect.signature(SmddpChecks.__init__).parameters
    theirs = inspect.signature(AwsSolutionsChecks.__init__).parameters
    assert list(ours) == list(theirs)
    assert [p.kind for p in ours.values()] == [p.kind for p in theirs.values()]

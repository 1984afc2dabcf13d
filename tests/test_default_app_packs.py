"""The default app synthesizes with BOTH rule packs on (README: AwsSolutionsChecks + SmddpChecks).

A pack that passes leaves no trace in ``validation-report.json`` (aws-cdk-lib writes a plugin's
report only when it failed, found violations or suppressed some), so a clean default app cannot
show that the packs ran. This module builds the default app exactly as ``app.py`` does
(:func:`smddp_infra.app_builder.build_app`), adds ONE probe stack that each pack must refuse (a
bare bucket for cdk-nag's AwsSolutions, an EFA group without its self egress rule for SMDDP),
synthesizes once, and asserts that the synth fails naming both packs, and that every violation
is the probe's (the default stack itself stays clean under both). One synth (~20 s).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import cdk_context

PROBE = "PackProbe"


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App, Stack, Tags
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_s3 as s3

    from smddp_infra.app_builder import STACK_NAME, build_app

    out = tmp_path_factory.mktemp("packs")
    app = App(context=cdk_context(), outdir=str(out))
    build_app(app)
    probe = Stack(app, PROBE)
    s3.CfnBucket(probe, "BareBucket")  # no encryption, logging or TLS-only policy: AwsSolutions-S1/S10
    vpc = ec2.Vpc.from_vpc_attributes(probe, "Vpc", vpc_id="vpc-12345678", availability_zones=["us-east-1a"])
    group = ec2.SecurityGroup(probe, "EfaGroup", vpc=vpc, description="EFA training instances")
    group.add_ingress_rule(group, ec2.Port.all_traffic(), "all traffic from itself")  # no self egress: SMDDP-SG2
    Tags.of(group).add("smddp:role", "training")
    try:
        app.synth()
        error = ""
    except Exception as exc:  # jsii surfaces ValidationFailed as a RuntimeError
        error = str(exc)
    report_file = out / "validation-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return {"error": error, "report": report, "stack": STACK_NAME}


def _plugins(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {r.get("pluginName") or r.get("summary", {}).get("pluginName"): r.get("violations", [])
            for r in report.get("pluginReports", [])}


def _paths(violations: list[dict[str, Any]]) -> set[str]:
    return {c["constructPath"] for v in violations for c in v.get("violatingConstructs", [])}


def test_the_default_app_runs_both_packs(probed: dict[str, Any]) -> None:
    """Fails if build_app stops registering either pack (or both)."""
    assert probed["error"], "the probe's violations did not stop the synth: no rule pack ran"
    plugins = _plugins(probed["report"])
    assert plugins, "validation-report.json has no plugin reports"
    assert "AwsSolutions" in plugins, sorted(plugins)
    assert "SMDDP" in plugins, sorted(plugins)
    rules = {name: {v["ruleName"].split("::")[-1] for v in violations} for name, violations in plugins.items()}
    assert "SMDDP-SG2" in rules["SMDDP"], rules["SMDDP"]
    assert any(rule.startswith("AwsSolutions-S") for rule in rules["AwsSolutions"]), rules["AwsSolutions"]


def test_every_violation_is_the_probes_and_the_default_stack_is_clean(probed: dict[str, Any]) -> None:
    plugins = _plugins(probed["report"])
    for name in ("AwsSolutions", "SMDDP"):
        paths = _paths(plugins.get(name, []))
        assert paths, name
        assert all(p.startswith(f"{PROBE}/") for p in paths), (name, sorted(p for p in paths if not p.startswith(PROBE)))


def test_the_packs_in_the_report_are_the_pack_objects_names() -> None:
    """The names asserted above are the packs' own (so a rename fails here, not silently)."""
    from aws_cdk import App
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import PACK_NAME, SmddpChecks

    app = App()
    assert (AwsSolutionsChecks(app).name, SmddpChecks(app).name, PACK_NAME) == ("AwsSolutions", "SMDDP", "SMDDP")


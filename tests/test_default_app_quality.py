"""The default app passes every gate a reviewer runs: snapshot, cdk-nag, cfn-lint, timing."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from aws_cdk import Validations

from conftest import Synthesized

SNAPSHOT = Path(__file__).parent / "snapshots" / "TrainingNetworkStack.template.json"
UPDATE = os.environ.get("SMDDP_UPDATE_SNAPSHOTS") == "1"


def masked(template: dict[str, Any]) -> dict[str, Any]:
    """The template without what changes with every CDK release: asset hashes, CDK metadata,
    bootstrap-version plumbing."""
    text = json.dumps(template, sort_keys=True)
    text = re.sub(r"[0-9a-f]{64}", "<asset-hash>", text)
    data = json.loads(text)
    data["Resources"].pop("CDKMetadata", None)
    data.get("Conditions", {}).pop("CDKMetadataAvailable", None)
    data.pop("Rules", None)
    data.get("Parameters", {}).pop("BootstrapVersion", None)
    for resource in data["Resources"].values():
        resource.get("Metadata", {}).pop("aws:cdk:path", None)
        if not resource.get("Metadata"):
            resource.pop("Metadata", None)
    return data


def test_default_template_matches_the_reviewed_snapshot(default_app: Synthesized) -> None:
    current = masked(default_app.json)
    if UPDATE:
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert SNAPSHOT.exists(), f"{SNAPSHOT} is missing: review the template, then write it with SMDDP_UPDATE_SNAPSHOTS=1"
    expected = json.loads(SNAPSHOT.read_text())
    changed = sorted(
        k for k in set(expected["Resources"]) | set(current["Resources"])
        if expected["Resources"].get(k) != current["Resources"].get(k)
    )
    assert not changed, (
        f"resources changed against {SNAPSHOT.name}: {changed}. Review the diff; if deliberate, "
        "rerun with SMDDP_UPDATE_SNAPSHOTS=1 (a change to the file system or a bucket is a bug)."
    )
    assert current == expected


def test_default_app_has_no_unacknowledged_rule_findings(default_app: Synthesized) -> None:
    """app.synth() raises ValidationFailed on any unacknowledged finding; the fixture synthesized,
    so here we check the report the packs wrote and that they really ran."""
    report = json.loads((Path(default_app.assembly.directory) / "validation-report.json").read_text())
    assert report["pluginReports"] == [] or all(r.get("summary", {}).get("status") != "failure" for r in report["pluginReports"])


def _acknowledgements(default_app: Synthesized) -> list[tuple[str, str, str, bool]]:
    from aws_cdk import CfnResource

    key = Validations.ACKNOWLEDGED_RULES_METADATA_KEY
    found = []
    for construct in default_app.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == key:
                for rule_id, reason in entry.data.items():
                    found.append((construct.node.path, rule_id, reason, CfnResource.is_cfn_resource(construct)))
    return found


def test_every_acknowledgement_sits_on_a_resource_with_a_real_reason(default_app: Synthesized) -> None:
    acks = _acknowledgements(default_app)
    assert acks, "expected the IAM5 acknowledgements on the execution role's policy"
    for path, rule_id, reason, on_resource in acks:
        if rule_id.startswith("CloudFormation-Validate::"):
            continue  # aws-cdk-lib's own (see the next test)
        assert on_resource, f"{rule_id} acknowledged on {path}: acknowledge on the narrowest construct (the CfnResource)"
        assert len(reason) >= 40, f"{rule_id} on {path}: reason too thin: {reason!r}"


def test_only_aws_cdk_lib_acknowledges_its_own_validate_rules(default_app: Synthesized) -> None:
    """aws-cdk-lib acknowledges two CloudFormation-Validate findings itself (literal AZs from
    stack.availabilityZones; the FlowLog L2's property shape). We add none of our own."""
    own = sorted((path.rsplit("/", 1)[-1], rule_id) for path, rule_id, _, _ in _acknowledgements(default_app)
                 if rule_id.startswith("CloudFormation-Validate::"))
    assert own == [("FlowLog", "CloudFormation-Validate::F3002"), ("FlowLog", "CloudFormation-Validate::F3003"),
                   ("TrainingNetworkStack", "CloudFormation-Validate::W3010")]


def test_acknowledged_iam_wildcards_are_only_the_ones_iam_forces(default_app: Synthesized) -> None:
    role = sorted(rule_id for path, rule_id, _, _ in _acknowledgements(default_app) if "IAM5" in rule_id and "/ExecutionRole/" in path)
    launch = sorted(rule_id for path, rule_id, _, _ in _acknowledgements(default_app) if "IAM5" in rule_id and "/LaunchPolicy/" in path)
    assert len(role) + len(launch) == len([r for _, r, _, _ in _acknowledgements(default_app) if "IAM5" in r])
    # launch policy: training-job/*, the log group's streams, code/*, output/* and output/code/*
    assert len(launch) == len(set(launch)) == 5, launch
    assert any("training-job/*]" in i for i in launch) and any(":log-stream:*]" in i for i in launch)
    ids = role
    assert len(ids) == len(set(ids)) == 7, ids
    assert any(i.endswith("[Resource::*]") for i in ids)
    assert any("/checkpoints/*]" in i for i in ids)
    assert any("/output/*]" in i for i in ids) and any("/code/*]" in i for i in ids)


def test_default_template_is_clean_under_cfn_lint(default_app: Synthesized) -> None:
    from cfnlint.api import ManualArgs, lint

    matches = lint(json.dumps(default_app.json), config=ManualArgs(regions=["us-east-1"]))
    assert [str(m) for m in matches] == []

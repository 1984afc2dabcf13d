"""The same security posture whatever the app's feature flags (issue 9, section 4).

A platform app is rarely started from ``cdk init``: its cdk.json may carry none of the
recommended flags, and without two of them aws-cdk-lib switches a log bucket to ACLs and
leaves the flow-log delivery grant to the service. The same user app (a network that creates
its VPC, and one embedded in the platform's VPC) is synthesized twice, with NO context and
with cdk.json's flags, and the security-relevant properties are compared. Then the whole
templates: after folding the two known cosmetic flags (partition literals, policy
minimisation) they must be identical, so a new flag that changes our output fails here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import cdk_context

STACK = "PlatformTraining"


def _build(context: dict[str, Any]) -> dict[str, Any]:
    from aws_cdk import App, Environment, Stack, aws_ec2 as ec2

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=context)
    stack = Stack(app, STACK, env=Environment(account="111122223333", region="us-east-1"))
    SmddpTrainingNetwork(stack, "Created", read_mbps_per_gpu=50, availability_zone="us-east-1a")
    vpc = ec2.Vpc.from_vpc_attributes(stack, "PlatformVpc", vpc_id="vpc-0a1b2c3d4e5f67890", availability_zones=["us-east-1b"],
                                      private_subnet_ids=["subnet-0aa11bb22cc33dd44"],
                                      private_subnet_route_table_ids=["rtb-0aa11bb22cc33dd44"])
    subnet = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                               availability_zone="us-east-1b", route_table_id="rtb-0aa11bb22cc33dd44")
    SmddpTrainingNetwork(stack, "Embedded", vpc=vpc, training_subnet=subnet, read_mbps_per_gpu=50, allow_https_egress=True)
    return app.synth().get_stack_by_name(STACK).template


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, Any]]:
    smddp_only = {k: v for k, v in cdk_context().items() if k.startswith("smddp:")}
    return {"no flags": _build(smddp_only), "cdk.json flags": _build(cdk_context())}


def _of_type(template: dict, type_name: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_name}


def _statements(template: dict, bucket: str) -> list[dict]:
    return [s for p in _of_type(template, "AWS::S3::BucketPolicy").values() if p["Properties"]["Bucket"] == {"Ref": bucket}
            for s in p["Properties"]["PolicyDocument"]["Statement"]]


def _log_buckets(template: dict) -> list[str]:
    return sorted(k for k, v in _of_type(template, "AWS::S3::Bucket").items()
                  if any(r.get("Id") == "ExpireLogs" for r in v["Properties"].get("LifecycleConfiguration", {}).get("Rules", [])))


FLAVOURS = ("no flags", "cdk.json flags")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_log_buckets_are_bucket_owner_enforced_without_acls(templates, flavour):
    template = templates[flavour]
    buckets = _log_buckets(template)
    assert len(buckets) == 2  # one per network
    for name in buckets:
        props = template["Resources"][name]["Properties"]
        assert props["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}, name
        assert "AccessControl" not in props, name
    assert not [k for k, v in _of_type(template, "AWS::S3::Bucket").items() if "AccessControl" in v["Properties"]]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_server_access_logs_are_granted_by_bucket_policy(templates, flavour):
    template = templates[flavour]
    for name in _log_buckets(template):
        grants = [s for s in _statements(template, name) if s.get("Principal") == {"Service": "logging.s3.amazonaws.com"}]
        assert len(grants) == 1, (name, grants)
        (grant,) = grants
        assert grant["Effect"] == "Allow" and grant["Action"] == "s3:PutObject"
        assert set(grant["Condition"]) == {"ArnLike", "StringEquals"}  # scoped to the source bucket and account
        assert grant["Condition"]["StringEquals"] == {"aws:SourceAccount": "111122223333"}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_flow_log_delivery_is_granted_explicitly(templates, flavour):
    template = templates[flavour]
    (created_vpc_log_bucket,) = [b for b in _log_buckets(template) if b.startswith("Created")]
    grants = [s for s in _statements(template, created_vpc_log_bucket) if s.get("Principal") == {"Service": "delivery.logs.amazonaws.com"}]
    actions = sorted(a for s in grants for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))
    assert actions == ["s3:GetBucketAcl", "s3:ListBucket", "s3:PutObject"], grants
    assert all(s["Condition"]["StringEquals"]["aws:SourceAccount"] == "111122223333" for s in grants)
    assert len(_of_type(template, "AWS::EC2::FlowLog")) == 1  # only the created VPC has one


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_no_lambda_backed_custom_resources(templates, flavour):
    types = {v["Type"] for v in templates[flavour]["Resources"].values()}
    assert not {t for t in types if t.startswith("Custom::") or t in ("AWS::Lambda::Function", "AWS::CloudFormation::CustomResource")}


def _fold(node: Any) -> Any:
    """Undo the two flags that only change spelling: ``enablePartitionLiterals`` (``arn:aws:``
    instead of ``arn:${AWS::Partition}:``) and ``aws-iam:minimizePolicies`` (sorted actions)."""
    if isinstance(node, dict):
        join = node.get("Fn::Join")
        if join and join[0] == "" and isinstance(join[1], list):
            parts = ["aws" if p == {"Ref": "AWS::Partition"} else _fold(p) for p in join[1]]
            merged: list[Any] = []
            for part in parts:
                if isinstance(part, str) and merged and isinstance(merged[-1], str):
                    merged[-1] += part
                else:
                    merged.append(part)
            return merged[0] if len(merged) == 1 and isinstance(merged[0], str) else {"Fn::Join": ["", merged]}
        folded = {k: _fold(v) for k, v in node.items()}
        for key in ("Action", "Resource", "rules_to_suppress"):  # the last: cdk-nag 2's metadata, one per finding
            if isinstance(folded.get(key), list):
                folded[key] = sorted(folded[key], key=lambda x: json.dumps(x, sort_keys=True))
        return folded
    if isinstance(node, list):
        return [_fold(x) for x in node]
    if isinstance(node, str) and node.startswith("arn:") and "${AWS::Partition}" in node:
        return node.replace("${AWS::Partition}", "aws")
    if isinstance(node, str) and "arn:<AWS::Partition>:" in node:  # a cdk-nag finding id (cdk_nag metadata)
        return node.replace("arn:<AWS::Partition>:", "arn:aws:")
    return node


def test_no_other_flag_changes_the_template(templates):
    plain, flagged = (_fold(templates[f]) for f in FLAVOURS)
    assert plain.keys() == flagged.keys()
    differing = sorted(k for k in plain["Resources"] if plain["Resources"][k] != flagged["Resources"].get(k))
    assert set(plain["Resources"]) == set(flagged["Resources"])
    assert differing == [], differing

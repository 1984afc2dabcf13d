"""What the platform owns stays untouched (issue 27 item 2): an immutable execution role.

A role imported with ``mutable=False`` (or from another account, or ``without_policy_updates()``)
is left alone: no policy is attached to it, and one synth warning names the ``role`` prop and
lists exactly the statements it must hold. A mutable import still gets the policy. One App,
synthesized once for the module.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import cdk_context

ROLE_ARN = "arn:aws:iam::123456789012:role/platform/TrainingRole"
OTHER_ACCOUNT_ROLE = "arn:aws:iam::999999999999:role/TrainingRole"


@pytest.fixture(scope="module")
def synthesized() -> dict[str, Any]:
    from aws_cdk import App, Environment, Stack, aws_iam as iam

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    app = App(context=cdk_context())
    env = Environment(region="us-east-1", account="123456789012")
    roles = {
        "immutable": lambda s: iam.Role.from_role_arn(s, "Platform", ROLE_ARN, mutable=False),
        "other_account": lambda s: iam.Role.from_role_arn(s, "Platform", OTHER_ACCOUNT_ROLE),
        "without_updates": lambda s: iam.Role(s, "Own", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        .without_policy_updates(),
        "mutable": lambda s: iam.Role.from_role_arn(s, "Platform", ROLE_ARN),
    }
    networks, stacks = {}, {}
    for name, make in roles.items():
        stack = Stack(app, name.replace("_", "-"), env=env)
        networks[name] = SmddpTrainingNetwork(stack, "Net", availability_zone="us-east-1a", read_mbps_per_gpu=50,
                                              role=make(stack))
        stacks[name] = stack
    assembly = app.synth()
    out: dict[str, Any] = {}
    for name, stack in stacks.items():
        artifact = assembly.get_stack_artifact(stack.artifact_id)
        out[name] = {"template": artifact.template, "network": networks[name],
                     "warnings": [str(m.entry.data) for m in artifact.messages if "smddp:roleImmutable" in str(m.entry.data)]}
    return out


def _policies_on_roles(template: dict[str, Any]) -> list[Any]:
    return [r["Properties"].get("Roles") for r in template["Resources"].values()
            if r["Type"] in ("AWS::IAM::ManagedPolicy", "AWS::IAM::Policy") and r["Properties"].get("Roles")]


@pytest.mark.parametrize("name", ["immutable", "other_account", "without_updates"])
def test_an_immutable_role_gets_nothing_attached(synthesized: dict[str, Any], name: str) -> None:
    assert _policies_on_roles(synthesized[name]["template"]) == []


@pytest.mark.parametrize("name", ["immutable", "other_account", "without_updates"])
def test_one_warning_lists_exactly_the_statements_it_needs(synthesized: dict[str, Any], name: str) -> None:
    (warning,) = synthesized[name]["warnings"]
    execution_role = synthesized[name]["network"].execution_role
    document = json.loads(warning[warning.index("{"):warning.rindex("}") + 1])
    assert [s["Sid"] for s in document["Statement"]] == [s.sid for s in execution_role.statements]
    assert len(document["Statement"]) == len(execution_role.statements) >= 10
    assert "was imported immutable (mutable=False): nothing is attached to it" in warning
    assert execution_role.policy is None


def test_a_mutable_import_still_gets_the_policy(synthesized: dict[str, Any]) -> None:
    assert synthesized["mutable"]["warnings"] == []
    assert _policies_on_roles(synthesized["mutable"]["template"]) == [["TrainingRole"]]

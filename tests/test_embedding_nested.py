"""A network in a NestedStack (issue 19, item 5), and the cdk-nag 2 habit with cdk-nag 3.

``cdk deploy --outputs-file`` writes the outputs of top-level stacks only: a network inside a
NestedStack gets a synth warning with the fix, and ``export_job_config()`` re-exports its
document from the parent (CDK wires the nested output through ``Fn::GetAtt``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from smddp_infra.errors import ConfigError


def _nested(export: bool) -> tuple[Any, Any, Any]:
    from aws_cdk import App, Environment, NestedStack, Stack

    from smddp_infra import SmddpTrainingNetwork

    app = App()
    parent = Stack(app, "Platform", env=Environment(account="111122223333", region="us-east-1"))
    nested = NestedStack(parent, "Training")
    network = SmddpTrainingNetwork(nested, "Network", availability_zone="us-east-1a", read_mbps_per_gpu=50)
    if export:
        network.export_job_config()
    return app.synth(), parent, network


@pytest.fixture(scope="module")
def not_exported() -> tuple[Any, Any, Any]:
    return _nested(export=False)


@pytest.fixture(scope="module")
def exported() -> tuple[Any, Any, Any]:
    return _nested(export=True)


def _warnings(assembly: Any) -> list[str]:
    return [str(m.entry.data) for m in assembly.get_stack_by_name("Platform").messages if m.entry.type == "aws:cdk:warning"]


def test_a_nested_network_warns_that_its_document_does_not_reach_the_outputs_file(not_exported):
    assembly, _, _ = not_exported
    (warning,) = [w for w in _warnings(assembly) if "nested stack" in w]
    assert "network.export_job_config()" in warning and "--outputs-file" in warning


def test_export_job_config_puts_the_document_in_the_parent_and_silences_the_warning(exported):
    assembly, _, network = exported
    assert not [w for w in _warnings(assembly) if "nested stack" in w]
    outputs = assembly.get_stack_by_name("Platform").template["Outputs"]
    document = outputs["NetworkTrainingJobConfig"]["Value"]
    text = json.dumps(document)
    assert "Fn::GetAtt" in text and "Outputs." in text  # wired through the nested stack's outputs
    assert network.exported_job_config is not None


def test_exporting_twice_is_one_line():
    from aws_cdk import App, Environment, NestedStack, Stack

    from smddp_infra import SmddpTrainingNetwork

    parent = Stack(App(), "Platform", env=Environment(region="us-east-1"))
    network = SmddpTrainingNetwork(NestedStack(parent, "Training"), "Network", availability_zone="us-east-1a",
                                   read_mbps_per_gpu=50)
    network.export_job_config()
    with pytest.raises(ConfigError, match="already called"):
        network.export_job_config()


def test_a_cdk_nag_3_pack_added_as_an_aspect_is_named_with_the_fix():
    from aws_cdk import App, Aspects, Environment, Stack
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra import SmddpTrainingNetwork

    app = App()
    Aspects.of(app).add(AwsSolutionsChecks(app))  # the cdk-nag 2 habit, with cdk-nag 3 installed
    stack = Stack(app, "Platform", env=Environment(region="us-east-1"))
    with pytest.raises(ConfigError) as caught:
        SmddpTrainingNetwork(stack, "Network", availability_zone="us-east-1a", read_mbps_per_gpu=50)
    message = str(caught.value)
    assert "AwsSolutionsChecks was added with Aspects.of(app).add(...)" in message
    assert "Validations.of(app).add_plugins(AwsSolutionsChecks(app))" in message and "aspect.visit" in message

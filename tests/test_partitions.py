"""Right in every partition (issue 27 item 1): China and GovCloud synthesize names that exist there.

One App holds a network in cn-north-1, cn-northwest-1, us-gov-west-1 and an environment-agnostic
stack, synthesized once for the module; the default app is built once more in cn-north-1 with
its rule packs on. Endpoint names are compared with what aws-cdk-lib's own
``InterfaceVpcEndpointAwsService`` writes in that region, never with strings of ours.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from smddp_infra.partitions import DLC_ACCOUNTS, absent_in, partition_of, url_suffix
from conftest import Synthesized, cdk_context

REGIONS = ("cn-north-1", "cn-northwest-1", "us-gov-west-1")
AGNOSTIC = "Agnostic"


def _network(stack: Any, **props: Any) -> Any:
    from smddp_infra.constructs.training_network import SmddpTrainingNetwork

    defaults: dict[str, Any] = {"read_mbps_per_gpu": 50, "dataset_gib": 1200, "s3_prefix_list_id": "pl-0123abcd",
                                "create_encryption_key": True}
    network = SmddpTrainingNetwork(stack, "Net", **{**defaults, **props})
    network.launch_policy()
    return network


@pytest.fixture(scope="module")
def synthesized() -> dict[str, dict[str, Any]]:
    from aws_cdk import App, Environment, Stack

    app = App(context=cdk_context())
    stacks = {}
    for region in REGIONS:
        stack = Stack(app, f"Net{region.replace('-', '')}", env=Environment(region=region))
        _network(stack, availability_zone=f"{region}a")
        stacks[region] = stack
    stacks[AGNOSTIC] = Stack(app, AGNOSTIC)
    _network(stacks[AGNOSTIC], availability_zone_id="use1-az4")
    assembly = app.synth()
    return {name: assembly.get_stack_artifact(stack.artifact_id).template for name, stack in stacks.items()}


@pytest.fixture(scope="module")
def china_app() -> Synthesized:
    """The default app, as app.py builds it (cdk-nag and our pack on), in cn-north-1."""
    from aws_cdk import App

    from smddp_infra.app_builder import build_app

    app = App(context=cdk_context(**{"smddp:region": "cn-north-1", "smddp:availabilityZone": "cn-north-1a",
                                     "smddp:s3PrefixListId": "pl-0123abcd"}))
    return Synthesized(app, build_app(app))


def _cdk_endpoint_name(region: str, service: str) -> str:
    """What aws-cdk-lib writes for ``service`` in a stack of ``region``."""
    from aws_cdk import App, Environment, Stack, aws_ec2 as ec2

    stack = Stack(App(), "Probe", env=Environment(region=region))
    return str(stack.resolve(ec2.InterfaceVpcEndpointAwsService(service).name))


def _endpoints(template: dict[str, Any]) -> list[Any]:
    return [r["Properties"]["ServiceName"] for r in template["Resources"].values() if r["Type"] == "AWS::EC2::VPCEndpoint"
            and r["Properties"].get("VpcEndpointType") == "Interface"]


@pytest.mark.parametrize("region", REGIONS)
def test_every_interface_endpoint_is_named_as_aws_cdk_lib_names_it_in_the_region(synthesized: dict[str, Any],
                                                                                    region: str) -> None:
    names = _endpoints(synthesized[region])
    assert len(names) == 7  # sagemaker.api, sts, logs, monitoring, ecr.api, ecr.dkr, kms
    for name in names:
        service = name.split(f".{region}.", 1)[1]
        assert name == _cdk_endpoint_name(region, service)


def test_china_names_five_services_cn_com_amazonaws(synthesized: dict[str, Any]) -> None:
    names = set(_endpoints(synthesized["cn-north-1"]))
    assert {n for n in names if n.startswith("cn.com.amazonaws.")} == {
        f"cn.com.amazonaws.cn-north-1.{s}" for s in ("sts", "sagemaker.api", "ecr.api", "ecr.dkr", "monitoring")}
    assert "com.amazonaws.cn-north-1.logs" in names


@pytest.mark.parametrize("region", (*REGIONS, AGNOSTIC))
def test_no_commercial_arn_literal_in_any_template(synthesized: dict[str, Any], region: str) -> None:
    assert "arn:aws:" not in json.dumps(synthesized[region])


def test_no_commercial_arn_literal_in_the_default_app_in_china(china_app: Synthesized) -> None:
    text = json.dumps(china_app.json)
    assert "arn:aws:" not in text
    assert "arn:aws-cn:ecr:cn-north-1:727897471807:repository/*" in text


@pytest.mark.parametrize("region", REGIONS)
def test_the_role_pulls_from_the_regions_deep_learning_containers_account(synthesized: dict[str, Any], region: str) -> None:
    (pull,) = [s for r in synthesized[region]["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"
               for s in r["Properties"]["PolicyDocument"]["Statement"] if s.get("Sid") == "EcrPull"]
    assert pull["Resource"] == f"arn:{partition_of(region)}:ecr:{region}:{DLC_ACCOUNTS[region]}:repository/*"


@pytest.mark.parametrize("region", REGIONS)
def test_kms_via_service_uses_the_partitions_url_suffix(synthesized: dict[str, Any], region: str) -> None:
    text = json.dumps(synthesized[region])
    assert re.findall(r'"kms:ViaService": "([^"]+)"', text) == [f"s3.{region}.{url_suffix(region)}"]


def test_an_agnostic_stack_reads_the_account_and_suffix_at_deploy_time(synthesized: dict[str, Any]) -> None:
    template = synthesized[AGNOSTIC]
    assert template["Mappings"]["SmddpDlcAccounts"]["cn-north-1"] == {"account": "727897471807"}
    text = json.dumps(template)
    assert '{"Fn::FindInMap": ["SmddpDlcAccounts", {"Ref": "AWS::Region"}, "account"]}' in text
    assert '"kms:ViaService": {"Fn::Join": ["", ["s3.", {"Ref": "AWS::Region"}, ".", {"Ref": "AWS::URLSuffix"}]]}' in text


def test_govcloud_plans_no_persistent_2(synthesized: dict[str, Any]) -> None:
    assert absent_in("us-gov-west-1", "PERSISTENT_2")
    (fs,) = [r for r in synthesized["us-gov-west-1"]["Resources"].values() if r["Type"] == "AWS::FSx::FileSystem"]
    assert fs["Properties"]["LustreConfiguration"]["DeploymentType"] != "PERSISTENT_2"


def _synth_error(region: str, **props: Any) -> str:
    from aws_cdk import App, Environment, Stack

    from smddp_infra.errors import ConfigError

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(region=region))
    with pytest.raises(ConfigError) as caught:
        _network(stack, availability_zone=f"{region}a", **props)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_efa_file_system_in_govcloud_is_one_line_naming_the_prop() -> None:
    message = _synth_error("us-gov-west-1", efa_file_system=True)
    assert message.startswith("efa_file_system=True asks for a PERSISTENT_2 file system")
    assert "aws-us-gov" in message


def test_a_region_without_a_known_image_account_is_one_line_naming_the_props() -> None:
    message = _synth_error("us-iso-west-1")
    assert "'us-iso-west-1'" in message and "image_account=" in message and "ecr_repository_arns" in message


def test_image_account_overrides_the_table() -> None:
    from aws_cdk import App, Environment, Stack, assertions

    stack = Stack(App(context=cdk_context()), "Own", env=Environment(region="us-iso-west-1"))
    _network(stack, availability_zone="us-iso-west-1a", image_account="111122223333", create_encryption_key=False)
    template = assertions.Template.from_stack(stack)
    template.has_resource_properties("AWS::IAM::ManagedPolicy", {"PolicyDocument": {"Statement": assertions.Match.array_with([
        assertions.Match.object_like({"Sid": "EcrPull", "Resource": "arn:aws-iso:ecr:us-iso-west-1:111122223333:repository/*"})])}})


def test_image_account_must_be_twelve_digits() -> None:
    message = _synth_error("cn-north-1", image_account="7278974718")
    assert message == ("image_account must be a 12-digit AWS account id (the ECR registry of the job's images), "
                       "got '7278974718'")


def test_the_dlc_table_is_the_sagemaker_sdks() -> None:
    """DLC_ACCOUNTS equals the newest PyTorch training registries of the SDK v2 installed here."""
    import sagemaker

    config = json.loads((Path(sagemaker.__file__).parent / "image_uri_config" / "pytorch.json").read_text())
    versions = config["training"]["versions"]
    newest = max(versions, key=lambda v: tuple(int(p) for p in v.split(".")))
    registries = {region: account for region, account in versions[newest]["registries"].items()
                  if partition_of(region) in ("aws", "aws-cn", "aws-us-gov")}
    assert dict(DLC_ACCOUNTS) == registries


def test_the_rules_read_chinas_endpoint_names() -> None:
    from smddp_infra.rules.vpc import short_service_name

    assert short_service_name("cn.com.amazonaws.cn-north-1.ecr.dkr") == "ecr.dkr"
    assert short_service_name("com.amazonaws.cn-north-1.logs") == "logs"


@pytest.mark.parametrize("region", ["cn-northwest-1", "us-gov-west-1"])
def test_a_hyperpod_cluster_where_the_partition_has_none_is_one_line(region: str) -> None:
    from aws_cdk import App, Environment, Stack

    from _hyperpod_apps import slurm_groups
    from smddp_infra import HyperPodCluster
    from smddp_infra.errors import ConfigError

    stack = Stack(App(context=cdk_context()), "Hp", env=Environment(region=region))
    network = _network(stack, availability_zone=f"{region}a", create_encryption_key=False)
    with pytest.raises(ConfigError) as caught:
        HyperPodCluster(stack, "HyperPod", network=network, instance_groups=slurm_groups(),
                        lifecycle_script="on_init_complete.sh")
    assert str(caught.value).startswith(f"HyperPodCluster cannot be created in the stack's region {region}")
    assert "AWS::SageMaker::Cluster" in str(caught.value) and "\n" not in str(caught.value)

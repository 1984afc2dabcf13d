"""SMDDP-NET1..4: one AZ for training (and its file system), a route to S3, endpoints without NAT."""

from __future__ import annotations

from typing import Any

import pytest

from _rules_helpers import hits, load
from smddp_infra.rules import check_template


def subnet(*, training: bool = True, **zone: Any) -> dict:
    props: dict[str, Any] = {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.0.0/24", **zone}
    if training:
        props["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    return {"Type": "AWS::EC2::Subnet", "Properties": props}


def lustre(subnet_name: str) -> dict:
    return {
        "Type": "AWS::FSx::FileSystem",
        "Properties": {"FileSystemType": "LUSTRE", "StorageCapacity": 1200, "SubnetIds": [{"Ref": subnet_name}], "LustreConfiguration": {"DeploymentType": "SCRATCH_2"}},
    }


@pytest.mark.parametrize(
    "storage,training,mismatch",
    [
        ({"AvailabilityZone": "us-east-1a"}, {"AvailabilityZone": "us-east-1b"}, True),
        ({"AvailabilityZone": "us-east-1a"}, {"AvailabilityZone": "us-east-1a"}, False),
        ({"AvailabilityZoneId": "use1-az4"}, {"AvailabilityZoneId": "use1-az6"}, True),
        ({"AvailabilityZone": "us-east-1a"}, {"AvailabilityZoneId": "use1-az6"}, False),  # not comparable offline
        ({"AvailabilityZone": {"Fn::Select": [0, {"Fn::GetAZs": ""}]}}, {"AvailabilityZone": {"Fn::Select": [0, {"Fn::GetAZs": ""}]}}, False),
        ({"AvailabilityZone": "us-east-1a"}, {"AvailabilityZone": {"Fn::ImportValue": "az"}}, False),
    ],
)
def test_file_system_and_training_subnets_share_an_az_when_both_are_known(storage: dict, training: dict, mismatch: bool) -> None:
    template = {"Resources": {"Storage": subnet(training=False, **storage), "Train": subnet(**training), "Fs": lustre("Storage")}}
    assert (("SMDDP-NET4", "Fs") in hits(template)) is mismatch


@pytest.mark.parametrize("efa", [False, True])
def test_a_file_system_in_another_az_is_a_warning_that_says_what_is_known(efa: bool) -> None:
    fs = lustre("Storage")
    if efa:
        fs["Properties"]["LustreConfiguration"] = {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 500,
                                                   "EfaEnabled": True, "MetadataConfiguration": {"Mode": "AUTOMATIC"}}
        fs["Properties"]["StorageCapacity"] = 9600
    template = {"Resources": {"Storage": subnet(training=False, AvailabilityZone="us-east-1a"),
                              "Train": subnet(AvailabilityZone="us-east-1b"), "Fs": fs}}
    (finding,) = [f for f in check_template(template) if f.resource == "Fs" and f.rule_id.startswith("SMDDP-NET")]
    assert (finding.rule_id, finding.severity.value) == ("SMDDP-NET4", "warning")
    assert ("over EFA" in finding.message) is efa
    assert ("data-transfer charges" in finding.message) is not efa
    assert "mount" not in finding.message


def test_the_guide_s3_failure_message_is_not_needed_with_a_nat_instance() -> None:
    template = load("no_s3_route.yaml")
    template["Resources"]["DefaultRoute"]["Properties"] = {"RouteTableId": {"Ref": "RouteTable"}, "DestinationCidrBlock": "0.0.0.0/0", "InstanceId": "i-123"}
    assert not {h for h in hits(template) if h[0] in ("SMDDP-NET2", "SMDDP-NET3")}


def test_an_s3_endpoint_on_another_route_table_does_not_count() -> None:
    template = load("compliant.yaml")
    template["Resources"]["S3Endpoint"]["Properties"]["RouteTableIds"] = ["rtb-elsewhere"]
    assert hits(template) == {("SMDDP-NET2", "TrainingSubnet")}


def test_interface_endpoints_need_private_dns() -> None:
    template = load("compliant.yaml")
    del template["Resources"]["StsEndpoint"]["Properties"]["PrivateDnsEnabled"]
    (finding,) = check_template(template)
    assert finding.rule_id == "SMDDP-NET3" and "PrivateDnsEnabled is not true on the endpoint for sts" in finding.message
    assert finding.severity.value == "warning"


@pytest.mark.parametrize("endpoint, service", [
    ("StsEndpoint", "sts"), ("LogsEndpoint", "logs"), ("SageMakerApiEndpoint", "sagemaker.api"),
    ("EcrApiEndpoint", "ecr.api"), ("EcrDkrEndpoint", "ecr.dkr"), ("MonitoringEndpoint", "monitoring"),
])
def test_each_caller_endpoint_is_a_warning_that_names_what_breaks(endpoint: str, service: str) -> None:
    template = load("compliant.yaml")
    del template["Resources"][endpoint]
    (finding,) = check_template(template)
    assert finding.rule_id == "SMDDP-NET3" and finding.severity.value == "warning"
    assert f"no interface endpoint for {service}:" in finding.message
    assert "training code or an SDK client running there cannot call these APIs" in finding.message
    assert "Starting" not in finding.message


def test_a_subnet_that_only_holds_the_file_system_is_not_a_training_subnet() -> None:
    template = load("compliant.yaml")
    template["Resources"]["TrainingSubnet"]["Properties"].pop("Tags")
    del template["Resources"]["Cluster"]
    del template["Resources"]["S3Endpoint"]
    assert not {h for h in hits(template) if h[0] in ("SMDDP-NET2", "SMDDP-NET3")}


def test_subnets_whose_route_table_is_not_in_the_template_are_not_judged() -> None:
    template = load("no_s3_route.yaml")
    del template["Resources"]["Association"]
    assert not {h for h in hits(template) if h[0] in ("SMDDP-NET2", "SMDDP-NET3")}


def test_training_subnets_of_another_vpc_are_another_network() -> None:
    """Two training networks in one template (different VPCs, different AZs) are not a mismatch;
    the same pair inside one VPC is."""
    other = subnet(AvailabilityZone="us-east-1b")
    other["Properties"]["VpcId"] = {"Ref": "OtherVpc"}
    vpc = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}}
    template = {"Resources": {"Storage": subnet(training=False, AvailabilityZone="us-east-1a"), "Train": other,
                              "Fs": lustre("Storage"), "Vpc": vpc, "OtherVpc": vpc}}
    assert ("SMDDP-NET4", "Fs") not in hits(template)
    template["Resources"]["Train"]["Properties"]["VpcId"] = {"Ref": "Vpc"}
    assert ("SMDDP-NET4", "Fs") in hits(template)

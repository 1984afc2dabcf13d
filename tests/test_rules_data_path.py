"""SMDDP-NET7 (what leaves a training subnet through its ACL) and SMDDP-NET8 (VPC DNS attributes)."""

from __future__ import annotations

import copy
from typing import Any

from _rules_helpers import acl_entry, found, load
from smddp_infra.rules import check_template

BLOCKED = load("i33_data_path_blocked.yaml")


def entry(number: int, egress: bool, action: str, cidr: str = "0.0.0.0/0", protocol: Any = -1, ports: Any = None) -> dict[str, Any]:
    """An entry of the fixture's network ACL ``Closed`` (all protocols to 0.0.0.0/0 unless told)."""
    return acl_entry("Closed", number, egress, action, cidr, protocol, ports)


def test_an_acl_denying_all_blocks_s3_and_names_the_acl_and_its_rule() -> None:
    (finding,) = found(BLOCKED, "SMDDP-NET7")
    assert finding.resource == "TrainSubnet" and "network ACL Closed rule 100" in finding.message
    assert "egress TCP 443" in finding.message and "1024-65535" in finding.message


def test_https_out_and_ephemeral_in_for_anywhere_pass() -> None:
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["HttpsOut"] = entry(90, True, "allow", protocol=6, ports=(443, 443))
    t["Resources"]["ReturnIn"] = entry(90, False, "allow", protocol=6, ports=(1024, 65535))
    assert not found(t, "SMDDP-NET7")


def test_an_allow_for_a_narrower_cidr_is_not_judged_never_guessed() -> None:
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["HttpsOut"] = entry(90, True, "allow", cidr="52.216.0.0/15", protocol=6, ports=(443, 443))
    assert found(t, "SMDDP-NET7"), "the return traffic is still denied for certain"
    t["Resources"]["ReturnIn"] = entry(90, False, "allow", protocol=6, ports=(1024, 65535))
    assert not found(t, "SMDDP-NET7")
    notes = [f for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and "SMDDP-NET7" in f.message]
    assert notes and "52.216.0.0/15" in notes[0].message and "prefix list" in notes[0].message


def test_the_same_subnet_is_not_filtered_net6_stays_silent() -> None:
    assert not found(BLOCKED, "SMDDP-NET6")


def test_dns_support_off_with_a_file_system_is_an_error_and_on_passes() -> None:
    (finding,) = found(BLOCKED, "SMDDP-NET8")
    assert finding.resource == "Vpc" and "FileSystem" in finding.message and "EnableDnsHostnames" not in finding.message
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["Vpc"]["Properties"]["EnableDnsSupport"] = True
    assert not found(t, "SMDDP-NET8")


def test_a_private_dns_endpoint_needs_dns_hostnames_stated_false_the_default_is_not_judged() -> None:
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["Vpc"]["Properties"] = {"CidrBlock": "10.0.0.0/16"}
    t["Resources"]["Sts"] = {"Type": "AWS::EC2::VPCEndpoint", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "ServiceName": "com.amazonaws.us-east-1.sts", "VpcEndpointType": "Interface",
        "SubnetIds": [{"Ref": "TrainSubnet"}], "PrivateDnsEnabled": True}}
    assert not found(t, "SMDDP-NET8")
    t["Resources"]["Vpc"]["Properties"]["EnableDnsHostnames"] = False
    t["Resources"]["Sts"] = {"Type": "AWS::EC2::VPCEndpoint", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "ServiceName": "com.amazonaws.us-east-1.sts", "VpcEndpointType": "Interface",
        "SubnetIds": [{"Ref": "TrainSubnet"}], "PrivateDnsEnabled": True}}
    (finding,) = found(t, "SMDDP-NET8")
    assert "EnableDnsHostnames false" in finding.message and "Sts (sts)" in finding.message
    t["Resources"]["Vpc"]["Properties"]["EnableDnsHostnames"] = True
    assert not found(t, "SMDDP-NET8")


# -- NET7 on entries the template does not decide (issue 41) --------------------------------------

UNSET = {"Parameters": {"Unset": {"Type": "String"}}}  # no Default: the value is not in the template


def _open_to_s3(**https_out: Any) -> dict[str, Any]:
    """BLOCKED with HTTPS out and its return allowed below the deny; ``https_out`` overrides the
    outbound entry's properties."""
    t = {**UNSET, **copy.deepcopy(BLOCKED)}
    t["Resources"]["HttpsOut"] = entry(90, True, "allow", protocol=6, ports=(443, 443))
    t["Resources"]["HttpsOut"]["Properties"].update(https_out)
    t["Resources"]["ReturnIn"] = entry(90, False, "allow", protocol=6, ports=(1024, 65535))
    return t


def _net7_notes(t: dict[str, Any]) -> list[Any]:
    return [f for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and f.message.startswith("SMDDP-NET7 not judged")]


def test_a_port_range_from_a_parameter_without_default_is_a_note_naming_the_entry_never_an_error() -> None:
    t = _open_to_s3(PortRange={"From": {"Ref": "Unset"}, "To": 443})
    assert not found(t, "SMDDP-NET7")
    (note,) = _net7_notes(t)
    assert note.resource == "TrainSubnet" and note.message == (
        "SMDDP-NET7 not judged for subnet TrainSubnet: egress TCP 443 to S3: network ACL Closed entry HttpsOut "
        "(its PortRange not decided by the template)")


def test_a_protocol_from_a_parameter_without_default_is_a_note_too() -> None:
    t = _open_to_s3(Protocol={"Ref": "Unset"})
    assert not found(t, "SMDDP-NET7")
    (note,) = _net7_notes(t)
    assert "entry HttpsOut (its Protocol not decided by the template)" in note.message and "'*'" not in note.message


def test_an_unread_entry_for_another_protocol_or_ports_leaves_the_verdict_to_the_entries_stated() -> None:
    t = _open_to_s3()
    t["Resources"]["Udp"] = entry(80, True, "deny", protocol=17, ports=({"Ref": "Unset"}, 53))
    t["Resources"]["OtherTcp"] = entry(81, False, "deny", protocol=6, ports=(22, 22), cidr={"Ref": "Unset"})
    assert not found(t, "SMDDP-NET7") and not _net7_notes(t)
    t["Resources"]["HttpsOut"]["Properties"]["RuleAction"] = "deny"
    (finding,) = found(t, "SMDDP-NET7")
    assert "egress TCP 443 to S3 is denied by network ACL Closed rule 90 (deny protocol 6 0.0.0.0/0)" in finding.message


def test_a_partial_port_range_for_anywhere_is_not_judged_and_says_so() -> None:
    t = _open_to_s3()
    t["Resources"]["ReturnIn"] = entry(90, False, "allow", protocol=6, ports=(1024, 32767))
    assert not found(t, "SMDDP-NET7")
    (note,) = _net7_notes(t)
    assert note.message.endswith("network ACL Closed rule 90 (allow protocol 6 0.0.0.0/0) decides only part of the ports")


def test_the_default_egress_false_makes_an_entry_inbound_for_s3() -> None:
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["HttpsOut"] = entry(90, True, "allow", protocol=6, ports=(443, 443))
    t["Resources"]["ReturnIn"] = entry(90, None, "allow", protocol="tcp", ports=(1024, 65535))
    assert not found(t, "SMDDP-NET7") and not _net7_notes(t)
    del t["Resources"]["HttpsOut"]
    t["Resources"]["ReturnIn"]["Properties"]["PortRange"] = {"From": 443, "To": 443}
    (finding,) = found(t, "SMDDP-NET7")
    assert "egress TCP 443 to S3 is denied by network ACL Closed rule 100" in finding.message


# -- whole messages: a wrong word fails (mutation testing, issue 41) ------------------------------


def test_net7_for_s3_word_for_word() -> None:
    (finding,) = found(BLOCKED, "SMDDP-NET7")
    assert finding.path == ("Properties",) and finding.severity.value == "error"
    denied = "is denied by network ACL Closed rule 100 (deny protocol -1 0.0.0.0/0)"
    assert finding.message == (
        "subnet TrainSubnet (used by training job in TrainingJob): the job's data comes from S3 over HTTPS, which leaves "
        "the subnet and crosses its network ACL (a gateway endpoint or NAT is outside it): egress TCP 443 to S3 "
        f"{denied}; ingress of the return traffic from S3 (TCP 1024-65535) {denied}: allow TCP 443 outbound and TCP "
        "1024-65535 inbound for 0.0.0.0/0 (or S3's ranges) in network ACL Closed, numbered below the deny")


def test_net8_names_each_attribute_and_what_does_not_resolve_word_for_word() -> None:
    (finding,) = found(BLOCKED, "SMDDP-NET8")
    assert finding.path == ("Properties",) and finding.severity.value == "error"
    fs = "file system FileSystem's DNS name (its clients mount by it)"
    assert finding.message == (f"VPC Vpc has EnableDnsSupport false, so the Amazon-provided DNS server cannot resolve "
                               f"{fs}: set EnableDnsSupport to true on the VPC")
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["Vpc"]["Properties"]["EnableDnsHostnames"] = False
    t["Resources"]["Sts"] = {"Type": "AWS::EC2::VPCEndpoint", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "ServiceName": "com.amazonaws.us-east-1.sts", "VpcEndpointType": "Interface",
        "SubnetIds": [{"Ref": "TrainSubnet"}], "PrivateDnsEnabled": True}}
    (finding,) = found(t, "SMDDP-NET8")
    assert finding.message == (
        f"VPC Vpc has EnableDnsSupport and EnableDnsHostnames false, so the Amazon-provided DNS server cannot resolve {fs}; "
        "interface endpoint Sts (sts) with private DNS: set EnableDnsSupport and EnableDnsHostnames to true on the VPC")
    t["Resources"]["Vpc"]["Properties"]["EnableDnsSupport"] = True
    (finding,) = found(t, "SMDDP-NET8")
    assert finding.message == ("VPC Vpc has EnableDnsHostnames false, so the Amazon-provided DNS server cannot resolve "
                               "interface endpoint Sts (sts) with private DNS: set EnableDnsHostnames to true on the VPC")


def test_an_entry_for_a_private_cidr_never_matches_s3_and_is_passed_over() -> None:
    t = _open_to_s3()
    t["Resources"]["NoPeers"] = entry(80, True, "deny", cidr="10.0.0.0/8")
    t["Resources"]["NoPeersBack"] = entry(80, False, "deny", cidr="172.16.0.0/12")
    assert not found(t, "SMDDP-NET7") and not _net7_notes(t)


def test_a_return_range_that_starts_above_1024_decides_only_part_of_the_ports() -> None:
    t = _open_to_s3()
    t["Resources"]["ReturnIn"] = entry(90, False, "allow", protocol=6, ports=(2000, 65535))
    assert not found(t, "SMDDP-NET7")
    (note,) = _net7_notes(t)
    assert note.message == ("SMDDP-NET7 not judged for subnet TrainSubnet: ingress of the return traffic from S3 (TCP "
                            "1024-65535): network ACL Closed rule 90 (allow protocol 6 0.0.0.0/0) decides only part of "
                            "the ports")


# -- NET8: which VPC, which resource needs which attribute (mutation testing, issue 41) -----------


def _dns(**vpc: Any) -> dict[str, Any]:
    """BLOCKED with the VPC's DNS attributes replaced by ``vpc``."""
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["Vpc"]["Properties"] = {"CidrBlock": "10.0.0.0/16", **vpc}
    return t


def _endpoint(**props: Any) -> dict[str, Any]:
    return {"Type": "AWS::EC2::VPCEndpoint", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "ServiceName": "com.amazonaws.us-east-1.sts", "VpcEndpointType": "Interface",
        "SubnetIds": [{"Ref": "TrainSubnet"}], "PrivateDnsEnabled": True, **props}}


def test_a_file_system_needs_dns_support_only() -> None:
    assert not found(_dns(EnableDnsSupport=True, EnableDnsHostnames=False), "SMDDP-NET8")


def test_only_an_existing_interface_endpoint_with_private_dns_needs_hostnames() -> None:
    t = _dns(EnableDnsHostnames=False)
    t["Conditions"] = {"Never": {"Fn::Equals": ["a", "b"]}}
    t["Resources"]["NoPrivateDns"] = _endpoint(PrivateDnsEnabled=False)
    t["Resources"]["Gateway"] = _endpoint(VpcEndpointType="Gateway", ServiceName="com.amazonaws.us-east-1.s3")
    t["Resources"]["Gone"] = {**_endpoint(), "Condition": "Never"}
    assert not found(t, "SMDDP-NET8")


def test_a_file_system_that_may_not_exist_or_has_no_subnets_needs_nothing() -> None:
    t = _dns(EnableDnsSupport=False)
    t["Conditions"] = {"Never": {"Fn::Equals": ["a", "b"]}}
    t["Resources"]["FileSystem"]["Condition"] = "Never"
    assert not found(t, "SMDDP-NET8")
    del t["Resources"]["FileSystem"]["Condition"]
    t["Resources"]["FileSystem"]["Properties"].pop("SubnetIds")
    assert not found(t, "SMDDP-NET8")
    t["Resources"]["FileSystem"]["Properties"]["SubnetIds"] = []
    assert not found(t, "SMDDP-NET8")


def test_only_a_subnet_and_a_vpc_are_followed_to_the_attributes() -> None:
    t = _dns(EnableDnsSupport=False)
    r = t["Resources"]
    r["NotASubnet"] = {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "x", "VpcId": {"Ref": "Vpc"}}}
    r["FileSystem"]["Properties"]["SubnetIds"] = [{"Ref": "NotASubnet"}]
    assert not found(t, "SMDDP-NET8")
    r["NotAVpc"] = {"Type": "Custom::Network", "Properties": {"EnableDnsSupport": False, "EnableDnsHostnames": False}}
    r["FileSystem"]["Properties"]["SubnetIds"] = [{"Ref": "TrainSubnet"}]
    r["TrainSubnet"]["Properties"]["VpcId"] = {"Ref": "NotAVpc"}
    r["Sts"] = _endpoint(VpcId={"Ref": "NotAVpc"})
    assert not found(t, "SMDDP-NET8")


def test_each_vpc_is_judged_on_its_own() -> None:
    t = _dns(EnableDnsSupport=True)
    t["Resources"]["Other"] = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.9.0.0/16",
                                                                         "EnableDnsHostnames": False}}
    t["Resources"]["Sts"] = _endpoint(VpcId={"Ref": "Other"}, ServiceName={"Ref": "AWS::NoValue"})
    (finding,) = found(t, "SMDDP-NET8")
    assert finding.resource == "Other"
    assert finding.message == ("VPC Other has EnableDnsHostnames false, so the Amazon-provided DNS server cannot resolve "
                               "interface endpoint Sts (?) with private DNS: set EnableDnsHostnames to true on the VPC")


def test_only_subnets_where_sagemaker_trains_are_judged_for_s3_and_each_of_them_is() -> None:
    """An EC2 instance's subnet reaches S3 through its own setup (not judged here), and a subnet
    passed over does not end the walk (subnets are walked by name: Aaa comes first)."""
    t = copy.deepcopy(BLOCKED)
    r = t["Resources"]
    r["Aaa"] = {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.200.0/24"}}
    r["AaaAcl"] = {"Type": "AWS::EC2::SubnetNetworkAclAssociation",
                   "Properties": {"SubnetId": {"Ref": "Aaa"}, "NetworkAclId": {"Ref": "Closed"}}}
    r["Box"] = {"Type": "AWS::EC2::Instance", "Properties": {"InstanceType": "p4d.24xlarge", "SubnetId": {"Ref": "Aaa"}}}
    assert [f.resource for f in found(t, "SMDDP-NET7")] == ["TrainSubnet"]


def test_two_narrower_cidrs_for_s3_are_one_note_naming_both_word_for_word() -> None:
    t = copy.deepcopy(BLOCKED)
    t["Resources"]["HttpsOut"] = entry(90, True, "allow", cidr="52.216.0.0/15", protocol=6, ports=(443, 443))
    t["Resources"]["ReturnIn"] = entry(90, False, "allow", cidr="52.216.0.0/15", protocol=6, ports=(1024, 65535))
    assert not found(t, "SMDDP-NET7")
    (note,) = _net7_notes(t)
    assert note.path == ("Properties",)
    s3 = "names 52.216.0.0/15, which cannot be checked against S3's prefix list (its public ranges)"
    assert note.message == (
        f"SMDDP-NET7 not judged for subnet TrainSubnet: egress TCP 443 to S3: network ACL Closed rule 90 (allow protocol 6 "
        f"52.216.0.0/15) {s3}; ingress of the return traffic from S3 (TCP 1024-65535): network ACL Closed rule 90 (allow "
        f"protocol 6 52.216.0.0/15) {s3}")

"""SMDDP-FSX7/FSX8: a job or HyperPod group reaches the Lustre file system it mounts."""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.rules import check_template

LUSTRE = {"IpProtocol": "tcp", "FromPort": 988, "ToPort": 988}
EXTRA = {"IpProtocol": "tcp", "FromPort": 1018, "ToPort": 1023}


def _self(group: str, ports: dict[str, Any], direction: str = "Ingress") -> dict[str, Any]:
    peer = "SourceSecurityGroupId" if direction == "Ingress" else "DestinationSecurityGroupId"
    return {"Type": f"AWS::EC2::SecurityGroup{direction}",
            "Properties": {"GroupId": {"Ref": group}, peer: {"Ref": group}, **ports}}


def template(*, admit: Optional[str] = None, client: str = "job", client_egress: Optional[list] = None,
             fs_ports: tuple[dict[str, Any], ...] = (LUSTRE, EXTRA)) -> dict[str, Any]:
    """A VPC, a file system with its OWN group (self rules on both Lustre ranges), a training group,
    and a client that mounts the file system. ``admit``: a source the file system's group admits on
    ``fs_ports`` ("group": the training group, or a CIDR)."""
    fs_ingress = []
    for ports in fs_ports if admit else ():
        fs_ingress.append({**ports, "SourceSecurityGroupId": {"Ref": "TrainSg"}} if admit == "group" else {**ports, "CidrIp": admit})
    train_props: dict[str, Any] = {"GroupDescription": "training", "VpcId": {"Ref": "Vpc"}}
    if client_egress is not None:
        train_props["SecurityGroupEgress"] = client_egress
    body: dict[str, Any] = {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.0.0/20",
                                                              "AvailabilityZone": "us-east-1a"}},
        "FsSg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "file system", "VpcId": {"Ref": "Vpc"},
                                                                   "SecurityGroupIngress": fs_ingress}},
        "FsSelf988": _self("FsSg", LUSTRE), "FsSelfExtra": _self("FsSg", EXTRA),
        "TrainSg": {"Type": "AWS::EC2::SecurityGroup", "Properties": train_props},
        "TrainSelfIn": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {"GroupId": {"Ref": "TrainSg"}, "IpProtocol": "-1",
                                                                                 "SourceSecurityGroupId": {"Ref": "TrainSg"}}},
        "TrainSelfOut": {"Type": "AWS::EC2::SecurityGroupEgress", "Properties": {"GroupId": {"Ref": "TrainSg"}, "IpProtocol": "-1",
                                                                                 "DestinationSecurityGroupId": {"Ref": "TrainSg"}}},
        "Fs": {"Type": "AWS::FSx::FileSystem", "Properties": {
            "FileSystemType": "LUSTRE", "StorageCapacity": 1200, "SubnetIds": [{"Ref": "Subnet"}],
            "SecurityGroupIds": [{"Ref": "FsSg"}], "LustreConfiguration": {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125}}},
    }
    vpc = {"SecurityGroupIds": [{"Ref": "TrainSg"}], "Subnets": [{"Ref": "Subnet"}]}
    if client == "job":
        body["Job"] = {"Type": "Custom::TrainingJob", "Properties": {"TrainingJob": {
            "AlgorithmSpecification": {"TrainingImage": "x", "TrainingInputMode": "File"},
            "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2}, "VpcConfig": vpc,
            "InputDataConfig": [{"ChannelName": "train", "DataSource": {"FileSystemDataSource": {
                "FileSystemId": {"Ref": "Fs"}, "FileSystemType": "FSxLustre", "FileSystemAccessMode": "ro", "DirectoryPath": "/x"}}}]}}}
    elif client in ("hyperpod", "hyperpod-unnamed"):
        group: dict[str, Any] = {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2,
                                 "ExecutionRole": "arn:aws:iam::1:role/r",
                                 "LifeCycleConfig": {"SourceS3Uri": "s3://b/lc/", "OnCreate": "on_create.sh"}}
        if client == "hyperpod":
            group["InstanceStorageConfigs"] = [{"FsxLustreConfig": {"DnsName": {"Fn::GetAtt": ["Fs", "DNSName"]},
                                                                    "MountName": {"Fn::GetAtt": ["Fs", "LustreMountName"]}}}]
        body["Cluster"] = {"Type": "AWS::SageMaker::Cluster", "Properties": {"InstanceGroups": [group], "VpcConfig": vpc}}
    return {"Resources": body}


def found(t: dict[str, Any], rule: str) -> list[Any]:
    return [f for f in check_template(t) if f.rule_id == rule]


def test_a_job_whose_file_system_admits_only_itself_is_an_error_naming_both_groups() -> None:
    (finding,) = found(template(), "SMDDP-FSX7")
    assert finding.severity.value == "error" and finding.resource == "Fs"
    assert "FsSg" in finding.message and "TrainSg" in finding.message and "TCP 988" in finding.message
    (extra,) = found(template(), "SMDDP-FSX8")
    assert extra.severity.value == "warning" and "TCP 1018-1023" in extra.message


def test_admitting_the_training_group_or_its_subnet_or_the_vpc_cidr_passes() -> None:
    for source in ("group", "10.0.0.0/20", "10.0.0.0/16", "0.0.0.0/0"):
        t = template(admit=source)
        assert not found(t, "SMDDP-FSX7") and not found(t, "SMDDP-FSX8"), source


def test_a_cidr_that_misses_the_clients_subnet_is_an_error() -> None:
    assert found(template(admit="10.1.0.0/16"), "SMDDP-FSX7")


def test_only_988_admitted_leaves_the_extra_ports_as_a_warning() -> None:
    t = template(admit="group", fs_ports=(LUSTRE,))
    assert not found(t, "SMDDP-FSX7")
    (extra,) = found(t, "SMDDP-FSX8")
    assert "1018-1023" in extra.message


def test_restricted_client_egress_without_lustre_is_an_error_and_with_it_passes() -> None:
    https = [{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "CidrIp": "0.0.0.0/0"}]
    (finding,) = found(template(admit="group", client_egress=https), "SMDDP-FSX7")
    assert "restrict egress" in finding.message
    lustre = https + [{**LUSTRE, "DestinationSecurityGroupId": {"Ref": "FsSg"}}, {**EXTRA, "DestinationSecurityGroupId": {"Ref": "FsSg"}}]
    assert not found(template(admit="group", client_egress=lustre), "SMDDP-FSX7")


def test_a_hyperpod_group_that_names_the_file_system_is_judged_like_a_job() -> None:
    (finding,) = found(template(client="hyperpod"), "SMDDP-FSX7")
    assert "HyperPod instance group workers of Cluster" in finding.message
    assert not found(template(client="hyperpod", admit="group"), "SMDDP-FSX7")


def test_a_cluster_that_names_no_file_system_is_a_warning_that_says_what_it_depends_on() -> None:
    t = template(client="hyperpod-unnamed")
    assert not found(t, "SMDDP-FSX7")
    (warning,) = found(t, "SMDDP-FSX8")
    assert "if it mounts it" in warning.message and "TCP 988 and TCP 1018-1023" in warning.message


def test_a_shared_group_is_left_to_the_file_systems_own_rules() -> None:
    t = template()
    t["Resources"]["Job"]["Properties"]["TrainingJob"]["VpcConfig"]["SecurityGroupIds"] = [{"Ref": "FsSg"}]
    assert not found(t, "SMDDP-FSX7") and not found(t, "SMDDP-FSX8")


def test_another_stacks_client_group_is_not_admitted_by_self_rules_alone() -> None:
    t = template()
    t["Resources"]["Job"]["Properties"]["TrainingJob"]["VpcConfig"]["SecurityGroupIds"] = ["sg-0123456789abcdef0"]
    (finding,) = found(t, "SMDDP-FSX7")
    assert "sg-0123456789abcdef0" in finding.message and "restrict egress" not in finding.message


def test_a_client_group_list_the_template_does_not_decide_is_not_evaluated() -> None:
    t = template()
    t["Resources"]["Job"]["Properties"]["TrainingJob"]["VpcConfig"]["SecurityGroupIds"] = {
        "Fn::Split": [",", {"Fn::ImportValue": "training-groups"}]}
    assert not found(t, "SMDDP-FSX7")
    notes = [f for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and "SMDDP-FSX7" in f.message]
    assert notes and "not decided by the template" in notes[0].message


# -- a client subnet in a secondary VPC block (issue 41) ------------------------------------------


def _in_secondary_block(t: dict[str, Any], cidr: Any = "10.1.0.0/20") -> dict[str, Any]:
    """The subnet moved into the VPC's secondary block 10.1.0.0/16 (AWS::EC2::VPCCidrBlock)."""
    t["Resources"]["Secondary"] = {"Type": "AWS::EC2::VPCCidrBlock",
                                   "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.1.0.0/16"}}
    t["Resources"]["Subnet"]["Properties"]["CidrBlock"] = cidr
    return t


def test_a_client_in_a_secondary_block_is_not_admitted_by_the_primary_blocks_cidr() -> None:
    (finding,) = found(_in_secondary_block(template(admit="10.0.0.0/16")), "SMDDP-FSX7")
    assert "TrainSg or its subnets' CIDRs" in finding.message
    assert not found(_in_secondary_block(template(admit="10.1.0.0/16")), "SMDDP-FSX7")
    assert not found(_in_secondary_block(template(admit="10.1.0.0/20")), "SMDDP-FSX8")


def test_an_unstated_subnet_cidr_is_judged_by_the_vpc_block_only_without_a_secondary_one() -> None:
    unstated = {"Fn::Select": [0, {"Fn::Cidr": [{"Fn::GetAtt": ["Vpc", "CidrBlock"]}, 4, 12]}]}
    t = template(admit="10.0.0.0/16")
    t["Resources"]["Subnet"]["Properties"]["CidrBlock"] = unstated
    assert not found(t, "SMDDP-FSX7"), "the VPC has one block: it holds the subnet"
    t = _in_secondary_block(template(admit="10.0.0.0/16"), unstated)
    assert not found(t, "SMDDP-FSX7")
    notes = [f for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and "SMDDP-FSX7" in f.message]
    assert notes and "SMDDP-FSX7 not judged for training job in Job" in notes[0].message, \
        "the subnet may sit in either block: not evaluated"


# -- what mutation testing showed unguarded (issue 41) --------------------------------------------


def test_a_shared_group_without_lustre_self_rules_is_fsx3s_finding_not_fsx7s() -> None:
    t = template()
    del t["Resources"]["FsSelf988"], t["Resources"]["FsSelfExtra"]
    t["Resources"]["Job"]["Properties"]["TrainingJob"]["VpcConfig"]["SecurityGroupIds"] = [{"Ref": "FsSg"}]
    assert not found(t, "SMDDP-FSX7") and not found(t, "SMDDP-FSX8"), "one finding per problem: the group's self rules"
    assert [f.resource for f in found(t, "SMDDP-FSX3")] == ["Fs"]


def test_a_tagged_training_group_is_paired_only_with_a_file_system_of_its_own_vpc() -> None:
    t = template(client="none")
    t["Resources"]["TrainSg"]["Properties"]["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    (warning,) = found(t, "SMDDP-FSX8")
    assert "training group TrainSg (tagged smddp:role=training)" in warning.message and "if it mounts it" in warning.message
    t["Resources"]["Elsewhere"] = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.9.0.0/16"}}
    t["Resources"]["TrainSg"]["Properties"]["VpcId"] = {"Ref": "Elsewhere"}
    assert not found(t, "SMDDP-FSX8"), "a group of another VPC cannot reach the file system: nothing to pair"


# -- whole messages: a wrong word fails (mutation testing, issue 41) ------------------------------

_FIX = ": add an inbound rule on FsSg for {ports} from TrainSg (and, when the client's egress is restricted, an outbound " \
       "rule for the same ports to the file system's group)"


def _admits_none(ports: str) -> str:
    return f"the file system's group(s) FsSg admit no inbound {ports} from TrainSg or its subnets' CIDRs"


def test_fsx7_and_fsx8_of_a_named_mount_word_for_word() -> None:
    (error,) = found(template(), "SMDDP-FSX7")
    (warning,) = found(template(), "SMDDP-FSX8")
    assert error.path == warning.path == ("Properties", "SecurityGroupIds") and warning.resource == "Fs"
    assert error.message == ("training job in Job cannot reach file system Fs on TCP 988: " + _admits_none("TCP 988")
                             + _FIX.format(ports="TCP 988"))
    assert warning.message == ("training job in Job cannot reach file system Fs on TCP 1018-1023: "
                               + _admits_none("TCP 1018-1023") + _FIX.format(ports="TCP 1018-1023"))


def test_restricted_client_egress_word_for_word() -> None:
    https = [{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "CidrIp": "0.0.0.0/0"}]
    (finding,) = found(template(admit="group", client_egress=https), "SMDDP-FSX7")
    assert finding.message == (
        "training job in Job cannot reach file system Fs on TCP 988: the client's group(s) TrainSg restrict egress and "
        "allow no TCP 988 to FsSg or the file system's subnet" + _FIX.format(ports="TCP 988"))


def test_an_unnamed_mount_is_one_warning_for_both_ranges_saying_what_it_depends_on_word_for_word() -> None:
    (warning,) = found(template(client="hyperpod-unnamed"), "SMDDP-FSX8")
    what = "HyperPod instance group workers of Cluster"
    assert warning.message == (
        f"{what} cannot reach file system Fs on TCP 988 and TCP 1018-1023 if it mounts it (the template holds both and "
        f"names no file system for {what}: its lifecycle scripts or jobs decide): " + _admits_none("TCP 988") + "; "
        + _admits_none("TCP 1018-1023") + _FIX.format(ports="TCP 988 and TCP 1018-1023"))


def test_an_undecided_client_group_list_is_one_note_word_for_word() -> None:
    t = template()
    t["Resources"]["Job"]["Properties"]["TrainingJob"]["VpcConfig"]["SecurityGroupIds"] = {
        "Fn::Split": [",", {"Fn::ImportValue": "training-groups"}]}
    notes = [f for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and "FSX" in f.message]
    assert [(n.resource, n.path, n.message) for n in notes] == [(
        "Fs", ("Properties", "SecurityGroupIds"),
        "SMDDP-FSX7 not judged for training job in Job mounting file system Fs: the client's security groups are not "
        "decided by the template")]
    assert not found(t, "SMDDP-FSX8"), "an undecided named mount is noted once, under FSX7"

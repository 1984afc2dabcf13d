"""SMDDP-FSX7/FSX8: a job or HyperPod group reaches the Lustre file system it mounts."""

from __future__ import annotations

import copy
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


# -- who mounts what, by evidence (mutation testing, issue 41) ------------------------------------


def test_a_hyperpod_group_naming_a_live_file_system_by_its_dns_name_in_any_case_is_a_named_mount() -> None:
    """A live file system carries its DNS name (``DNSName``); HyperPod names it by that string,
    which is no reference: only the name joins them, whatever its case."""
    t = template(client="hyperpod")
    t["Resources"]["Fs"]["Properties"]["DNSName"] = "FS-0ABC.fsx.us-east-1.amazonaws.com"
    t["Resources"]["Cluster"]["Properties"]["InstanceGroups"][0]["InstanceStorageConfigs"] = [
        "not a mapping", {"EbsVolumeConfig": {"VolumeSizeInGB": 500}},
        {"FsxLustreConfig": {"DnsName": "fs-0abc.FSX.us-east-1.amazonaws.com", "MountName": "abcd"}},
        {"FsxLustreConfig": {"DnsName": "fs-0abc.fsx.us-east-1.amazonaws.com", "MountName": "abcd"}}]
    (error,) = found(t, "SMDDP-FSX7")
    assert error.message.startswith("HyperPod instance group workers of Cluster cannot reach file system Fs on TCP 988: ")
    assert [w.message.split(":")[0] for w in found(t, "SMDDP-FSX8")] == [
        "HyperPod instance group workers of Cluster cannot reach file system Fs on TCP 1018-1023"], "named: no guess beside it"


def test_a_dns_name_of_a_file_system_not_in_the_template_names_none_of_its_own() -> None:
    t = template(client="hyperpod")
    t["Resources"]["Cluster"]["Properties"]["InstanceGroups"][0]["InstanceStorageConfigs"] = [
        {"FsxLustreConfig": {"DnsName": "fs-0other.fsx.us-east-1.amazonaws.com", "MountName": "abcd"}}]
    assert not found(t, "SMDDP-FSX7")
    (warning,) = found(t, "SMDDP-FSX8")
    assert "if it mounts it" in warning.message, "nothing names Fs: handed out together, a warning"


def test_a_cluster_naming_the_file_system_anywhere_in_its_properties_mounts_it() -> None:
    t = template(client="hyperpod-unnamed")
    t["Resources"]["Cluster"]["Properties"]["Tags"] = [{"Key": "fs", "Value": {"Fn::GetAtt": ["Fs", "DNSName"]}}]
    (error,) = found(t, "SMDDP-FSX7")
    assert "HyperPod instance group workers of Cluster cannot reach file system Fs on TCP 988" in error.message


def test_a_group_that_names_one_of_two_file_systems_mounts_only_that_one() -> None:
    t = template(client="hyperpod")
    r = t["Resources"]
    r["Fs2"] = copy.deepcopy(r["Fs"])
    r["Cluster"]["Properties"]["Tags"] = [{"Key": "scratch", "Value": {"Fn::GetAtt": ["Fs2", "DNSName"]}}]
    assert [f.resource for f in found(t, "SMDDP-FSX7")] == ["Fs"]
    del r["Cluster"]["Properties"]["InstanceGroups"][0]["InstanceStorageConfigs"]
    assert [f.resource for f in found(t, "SMDDP-FSX7")] == ["Fs2"], "without storage configs, what the cluster names"


def test_a_channel_names_its_file_system_by_reference_or_by_id_and_other_channels_are_passed_over() -> None:
    t = template()
    job = t["Resources"]["Job"]["Properties"]["TrainingJob"]
    channel = job["InputDataConfig"][0]
    job["InputDataConfig"] = [
        "not a mapping", {"ChannelName": "odd", "DataSource": "not a mapping"},
        {"ChannelName": "s3", "DataSource": {"S3DataSource": {"S3Uri": "s3://b/x", "S3DataType": "S3Prefix"}}},
        {"ChannelName": "efs", "DataSource": {"FileSystemDataSource": {"FileSystemId": {"Ref": "Fs"}, "FileSystemType": "EFS"}}},
        {"ChannelName": "gone", "DataSource": {"FileSystemDataSource": {"FileSystemId": "fs-0elsewhere",
                                                                        "FileSystemType": "FSxLustre"}}},
        {"ChannelName": "box", "DataSource": {"FileSystemDataSource": {"FileSystemId": {"Ref": "Box"},
                                                                       "FileSystemType": "FSxLustre"}}},
        {"ChannelName": "box-id", "DataSource": {"FileSystemDataSource": {"FileSystemId": "Box",
                                                                          "FileSystemType": "FSxLustre"}}}]
    t["Resources"]["Box"] = {"Type": "AWS::EC2::Instance", "Properties": {"SecurityGroupIds": [{"Ref": "FsSg"}]}}
    assert not found(t, "SMDDP-FSX7"), "no channel names a Lustre file system of the template"
    by_id = copy.deepcopy(channel)
    by_id["DataSource"]["FileSystemDataSource"]["FileSystemId"] = "Fs"  # a live world's id
    job["InputDataConfig"].append(by_id)
    (error,) = found(t, "SMDDP-FSX7")
    assert error.message.startswith("training job in Job cannot reach file system Fs on TCP 988: ")
    job["InputDataConfig"].append(channel)  # the same file system twice: one mount
    assert len(found(t, "SMDDP-FSX7")) == 1


def test_a_hyperpod_group_named_mount_word_for_word() -> None:
    (error,) = found(template(client="hyperpod"), "SMDDP-FSX7")
    assert error.message == ("HyperPod instance group workers of Cluster cannot reach file system Fs on TCP 988: "
                             + _admits_none("TCP 988") + _FIX.format(ports="TCP 988"))


def test_a_hyperpod_group_whose_groups_are_not_decided_is_a_note() -> None:
    t = template(client="hyperpod")
    t["Resources"]["Cluster"]["Properties"]["VpcConfig"]["SecurityGroupIds"] = {
        "Fn::Split": [",", {"Fn::ImportValue": "training-groups"}]}
    assert not found(t, "SMDDP-FSX7")
    notes = [f.message for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and "FSX" in f.message]
    assert notes == ["SMDDP-FSX7 not judged for HyperPod instance group workers of Cluster mounting file system Fs: "
                     "the client's security groups are not decided by the template"]


def test_a_cluster_or_group_that_may_not_exist_mounts_nothing_and_the_next_one_is_still_judged() -> None:
    t = template(client="hyperpod")
    r = t["Resources"]
    t["Parameters"] = {"Unset": {"Type": "String"}}
    t["Conditions"] = {"Maybe": {"Fn::Equals": [{"Ref": "Unset"}, "yes"]}}  # not decided by the template
    ghost = {**copy.deepcopy(r["Cluster"]), "Condition": "Maybe"}
    gone = {**copy.deepcopy(r["TrainSg"]), "Condition": "Maybe"}
    gone["Properties"]["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    t["Resources"] = {"Ghost": ghost, "Gone": gone, **r}
    r = t["Resources"]
    r["TrainSg"]["Properties"]["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    assert [f.message.split(" cannot")[0] for f in found(t, "SMDDP-FSX7")] == ["HyperPod instance group workers of Cluster"]
    assert [f.message.split(" cannot")[0] for f in found(t, "SMDDP-FSX8")] == [
        "HyperPod instance group workers of Cluster", "training group TrainSg (tagged smddp:role=training)"]


def test_a_group_handed_out_for_training_is_paired_with_the_file_system_word_for_word() -> None:
    t = template(client="none")
    t["Outputs"] = {"TrainingSecurityGroup": {"Value": {"Ref": "TrainSg"}}}
    (warning,) = found(t, "SMDDP-FSX8")
    what = "training group TrainSg (handed out as output TrainingSecurityGroup, whose name names 'training')"
    assert warning.message == (
        f"{what} cannot reach file system Fs on TCP 988 and TCP 1018-1023 if it mounts it (the template holds both and "
        f"names no file system for {what}: its lifecycle scripts or jobs decide): "
        "the file system's group(s) FsSg admit no inbound TCP 988 from TrainSg; the file system's group(s) FsSg admit no "
        "inbound TCP 1018-1023 from TrainSg" + _FIX.format(ports="TCP 988 and TCP 1018-1023"))


def test_a_tagged_group_is_named_in_the_whole_message() -> None:
    t = template(client="none")
    t["Resources"]["TrainSg"]["Properties"]["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    (warning,) = found(t, "SMDDP-FSX8")
    what = "training group TrainSg (tagged smddp:role=training)"
    assert warning.message.startswith(f"{what} cannot reach file system Fs on TCP 988 and TCP 1018-1023 if it mounts it "
                                      f"(the template holds both and names no file system for {what}: ")
    assert "admit no inbound TCP 988 from TrainSg;" in warning.message


def test_the_vpc_is_compared_as_resolved_whatever_form_names_it() -> None:
    """A group's VpcId and the file system subnet's VpcId written differently (a parameter's
    default, a literal id) still pair when they resolve to the same VPC, and never when two
    unresolved values differ."""
    t = template(client="none")
    r = t["Resources"]
    r["TrainSg"]["Properties"]["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    t["Parameters"] = {"VpcParam": {"Type": "String", "Default": "vpc-0abc"}}
    r["TrainSg"]["Properties"]["VpcId"] = {"Ref": "VpcParam"}
    r["Subnet"]["Properties"]["VpcId"] = "vpc-0abc"
    assert len(found(t, "SMDDP-FSX8")) == 1, "the same VPC, as resolved"
    r["TrainSg"]["Properties"]["VpcId"] = {"Fn::ImportValue": "vpc-a"}
    r["Subnet"]["Properties"]["VpcId"] = {"Fn::ImportValue": "vpc-b"}
    assert not found(t, "SMDDP-FSX8"), "two VPCs the template does not decide: not the same one"
    r["Subnet"]["Properties"]["VpcId"] = {"Fn::ImportValue": "vpc-a"}
    assert len(found(t, "SMDDP-FSX8")) == 1, "the same import, as written"
    r["TrainSg"]["Properties"]["VpcId"] = {"Ref": "Vpc"}
    r["Subnet"]["Properties"]["VpcId"] = {"Fn::GetAtt": ["Vpc", "VpcId"]}
    assert len(found(t, "SMDDP-FSX8")) == 1, "a Ref and a GetAtt of the same VPC"


def test_a_cluster_whose_subnets_are_not_decided_or_not_in_the_template_is_paired_with_nothing() -> None:
    for subnets in ({"Fn::Split": [",", {"Fn::ImportValue": "subnets"}]}, ["subnet-0abc"], [{"Ref": "TrainSg"}],
                    {"Not": "a list"}):
        t = template(client="hyperpod-unnamed")
        t["Resources"]["Cluster"]["Properties"]["VpcConfig"]["Subnets"] = subnets
        assert not found(t, "SMDDP-FSX8"), subnets


# -- the verdict on each side (mutation testing, issue 41) ----------------------------------------


def _fsx_notes(t: dict[str, Any]) -> list[str]:
    return [f.message for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and "SMDDP-FSX" in f.message]


def _job_vpc(t: dict[str, Any]) -> dict[str, Any]:
    vpc: dict[str, Any] = t["Resources"]["Job"]["Properties"]["TrainingJob"]["VpcConfig"]
    return vpc


def test_an_empty_client_group_list_is_refused_by_the_api_and_not_judged_here() -> None:
    """VpcConfig.SecurityGroupIds takes 1-5 groups: the request fails before anything mounts."""
    t = template()
    _job_vpc(t)["SecurityGroupIds"] = []
    assert not found(t, "SMDDP-FSX7") and not found(t, "SMDDP-FSX8") and not _fsx_notes(t)


def test_a_job_whose_subnets_are_not_stated_is_not_judged_against_a_cidr_rule() -> None:
    t = template(admit="10.0.0.0/16")
    del _job_vpc(t)["Subnets"]
    assert not found(t, "SMDDP-FSX7")
    assert _fsx_notes(t) == ["SMDDP-FSX7 not judged for training job in Job mounting file system Fs: ingress: it depends "
                             "on FsSg"]
    t["Resources"]["TrainSg"]["Properties"]["SecurityGroupEgress"] = [
        {"IpProtocol": "tcp", "FromPort": 988, "ToPort": 1023, "CidrIp": {"Fn::ImportValue": "storage-cidr"}}]
    assert _fsx_notes(t) == ["SMDDP-FSX7 not judged for training job in Job mounting file system Fs: ingress: it depends "
                             "on FsSg; egress: it depends on TrainSg"]


def test_client_egress_is_judged_against_the_file_systems_subnet() -> None:
    t = template(admit="group")
    assert not found(t, "SMDDP-FSX7") and not found(t, "SMDDP-FSX8") and not _fsx_notes(t)
    t["Resources"]["TrainSg"]["Properties"]["SecurityGroupEgress"] = [
        {"IpProtocol": "tcp", "FromPort": 988, "ToPort": 1023, "CidrIp": "10.0.0.0/20"}]
    assert not found(t, "SMDDP-FSX7") and not found(t, "SMDDP-FSX8") and not _fsx_notes(t)
    t["Resources"]["TrainSg"]["Properties"]["SecurityGroupEgress"][0]["CidrIp"] = "10.9.0.0/16"
    (error,) = found(t, "SMDDP-FSX7")
    assert "restrict egress and allow no TCP 988 to FsSg or the file system's subnet" in error.message
    assert not _fsx_notes(t), "the file system's subnet is stated: a certain failure"
    t["Resources"]["TrainSg"]["Properties"]["SecurityGroupEgress"][0]["CidrIp"] = {"Fn::ImportValue": "storage-cidr"}
    assert not found(t, "SMDDP-FSX7")
    assert _fsx_notes(t) == ["SMDDP-FSX7 not judged for training job in Job mounting file system Fs: egress: it depends "
                             "on TrainSg"]


def test_every_group_of_either_side_is_named() -> None:
    t = template()
    r = t["Resources"]
    r["FsSg2"] = copy.deepcopy(r["FsSg"])
    r["TrainSg2"] = copy.deepcopy(r["TrainSg"])
    r["Fs"]["Properties"]["SecurityGroupIds"].append({"Ref": "FsSg2"})
    _job_vpc(t)["SecurityGroupIds"].append({"Ref": "TrainSg2"})
    (error,) = found(t, "SMDDP-FSX7")
    assert error.message == (
        "training job in Job cannot reach file system Fs on TCP 988: the file system's group(s) FsSg, FsSg2 admit no "
        "inbound TCP 988 from TrainSg, TrainSg2 or its subnets' CIDRs" + _FIX.format(ports="TCP 988"))


def test_a_named_and_an_unnamed_mount_are_both_judged() -> None:
    t = template()
    t["Resources"]["TrainSg"]["Properties"]["Tags"] = [{"Key": "smddp:role", "Value": "training"}]
    assert [f.message.split(" cannot")[0] for f in found(t, "SMDDP-FSX8")] == [
        "training job in Job", "training group TrainSg (tagged smddp:role=training)"]


def test_a_mount_that_passes_does_not_hide_the_next_one() -> None:
    t = template()
    r = t["Resources"]
    shared = copy.deepcopy(r["Job"])
    shared["Properties"]["TrainingJob"]["VpcConfig"]["SecurityGroupIds"] = [{"Ref": "FsSg"}]
    t["Resources"] = {"SharedJob": shared, **r}
    assert [f.message.split(" cannot")[0] for f in found(t, "SMDDP-FSX7")] == ["training job in Job"]


def test_an_unnamed_mount_admitted_on_988_only_is_a_warning_for_1018_1023() -> None:
    (warning,) = found(template(client="hyperpod-unnamed", admit="group", fs_ports=(LUSTRE,)), "SMDDP-FSX8")
    assert warning.message.startswith("HyperPod instance group workers of Cluster cannot reach file system Fs on TCP "
                                      "1018-1023 if it mounts it")

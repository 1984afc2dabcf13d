"""Network ACLs on what leaves a training subnet besides S3: interface endpoints in other subnets
(SMDDP-NET7 error when every subnet of the endpoint is denied, SMDDP-NET10 warning when some are)
and Lustre's TCP 1018-1023 and replies across subnets (SMDDP-NET9, a warning: UNCONFIRMED)."""

from __future__ import annotations

import copy

from _rules_helpers import acl_entry, found, load
from smddp_infra.rules import check_template

ENDPOINTS = load("net7_endpoint_other_subnet.yaml")
LUSTRE = load("net9_lustre_return_ports.yaml")


# -- interface endpoints --------------------------------------------------------------------------


def test_an_endpoint_only_in_a_denied_subnet_is_an_error_naming_service_acl_rule_and_fix() -> None:
    (finding,) = found(ENDPOINTS, "SMDDP-NET7")
    assert finding.resource == "Train" and finding.severity.value == "error"
    assert "Sts (com.amazonaws.us-west-2.sts)" in finding.message and "network ACL Guarded rule 50" in finding.message
    assert "TCP 443 ingress of Endpoints" in finding.message and "add Train to the endpoint's SubnetIds" in finding.message
    assert "Logs" not in finding.message and "Ecr" not in finding.message


def test_an_endpoint_with_one_denied_and_one_open_subnet_is_a_warning_naming_the_denied_one() -> None:
    (finding,) = found(ENDPOINTS, "SMDDP-NET10")
    assert finding.resource == "Train" and finding.severity.value == "warning"
    assert "Logs (com.amazonaws.us-west-2.logs)" in finding.message and "interface in Endpoints" in finding.message
    assert "Sts" not in finding.message


def test_an_endpoint_with_an_interface_in_the_training_subnet_is_not_judged() -> None:
    assert not [f for f in check_template(ENDPOINTS) if "Ecr" in f.message]


def test_the_return_traffic_on_ephemeral_ports_is_judged_too() -> None:
    t = copy.deepcopy(ENDPOINTS)
    guarded = t["Resources"]
    del guarded["NotFromTraining"]
    assert not found(t, "SMDDP-NET7") and not found(t, "SMDDP-NET10")
    guarded["NoReturn"] = acl_entry("Guarded", 50, True, "deny", "10.60.0.0/20", ports=(1024, 65535))
    (finding,) = found(t, "SMDDP-NET7")
    assert "the return (TCP 1024-65535) egress of Endpoints to 10.60.0.0/20 (Train)" in finding.message
    assert "rule 50" in finding.message


def test_an_allow_for_https_below_the_deny_clears_it() -> None:
    t = copy.deepcopy(ENDPOINTS)
    t["Resources"]["HttpsFromTraining"] = acl_entry("Guarded", 40, False, "allow", "10.60.0.0/20", ports=(443, 443))
    assert not found(t, "SMDDP-NET7") and not found(t, "SMDDP-NET10")


def test_an_entry_for_part_of_the_training_cidr_in_front_of_the_deny_is_undecided_never_an_error() -> None:
    t = copy.deepcopy(ENDPOINTS)
    t["Resources"]["SomeHttps"] = acl_entry("Guarded", 40, False, "allow", "10.60.0.0/24", ports=(443, 443))
    assert not found(t, "SMDDP-NET7") and not found(t, "SMDDP-NET10")
    t["Resources"]["SomeHttps"] = acl_entry("Guarded", 40, False, "allow", "10.60.0.0/20", ports=(8443, 8443))
    assert found(t, "SMDDP-NET7"), "an entry for other ports is passed over: the deny still decides"


def test_an_endpoint_subnet_without_a_stated_acl_is_not_judged() -> None:
    t = copy.deepcopy(ENDPOINTS)
    del t["Resources"]["EndpointsAcl"]
    assert not found(t, "SMDDP-NET7") and not found(t, "SMDDP-NET10")


def test_a_subnet_only_ec2_compute_uses_is_not_judged() -> None:
    t = copy.deepcopy(ENDPOINTS)
    del t["Resources"]["Job"]
    assert not found(t, "SMDDP-NET7") and not found(t, "SMDDP-NET10")


# -- Lustre's other ports and its replies ---------------------------------------------------------


def test_returns_allowed_only_on_ephemeral_ports_are_a_warning_that_says_what_it_depends_on() -> None:
    (finding,) = found(LUSTRE, "SMDDP-NET9")
    assert finding.resource == "Lustre" and finding.severity.value == "warning"
    assert "depending on the Lustre client's source ports" in finding.message
    assert "an ACL that allows only 1024-65535 back drops replies to 1018-1023" in finding.message
    assert "to ports 1018-1023: egress of Storage to 172.20.0.0/19 (Compute)" in finding.message
    assert "to ports 1024-65535" not in finding.message and "TCP 1018-1023 (which FSx lists" not in finding.message
    assert not found(LUSTRE, "SMDDP-NET6") and not found(LUSTRE, "SMDDP-NET7")


def test_lustre_client_ports_denied_towards_the_file_system_are_named_and_988_stays_net6() -> None:
    t = copy.deepcopy(LUSTRE)
    del t["Resources"]["StorageInClientPorts"]
    (finding,) = found(t, "SMDDP-NET9")
    assert "TCP 1018-1023 (which FSx lists beside 988 for Lustre clients) is blocked: ingress of Storage from " \
           "172.20.0.0/19 (Compute) is denied by network ACL StorageAcl's default '*' rule" in finding.message
    assert not found(t, "SMDDP-NET6")
    del t["Resources"]["StorageInLnet"]
    (error,) = found(t, "SMDDP-NET6")
    assert "TCP 988" in error.message


def test_returns_open_to_988_1018_1023_and_ephemeral_pass() -> None:
    t = copy.deepcopy(LUSTRE)
    t["Resources"]["StorageOutLustre"] = acl_entry("StorageAcl", 90, True, "allow", "172.20.0.0/19", ports=(988, 1023))
    t["Resources"]["ComputeInLustre"] = acl_entry("ComputeAcl", 90, False, "allow", "172.20.64.0/24", ports=(988, 1023))
    assert not found(t, "SMDDP-NET9")


def test_a_file_system_in_the_training_subnet_is_not_judged() -> None:
    t = copy.deepcopy(LUSTRE)
    t["Resources"]["Lustre"]["Properties"]["SubnetIds"] = [{"Ref": "Compute"}]
    assert not found(t, "SMDDP-NET9")


# -- NET6: entries as real templates write them (issue 41) ----------------------------------------

EFA_TWO_SUBNETS = load("i41_efa_acl_inbound_default_egress.yaml")
NO_DEFAULT = {"Parameters": {"Unset": {"Type": "String"}}}  # a parameter without Default: its value is unknown


def _notes(t: dict, rule: str) -> list:
    return [f for f in check_template(t) if f.rule_id == "SMDDP-INFO1" and f.message.startswith(f"{rule} not judged")]


def test_entries_without_egress_are_ingress_entries_and_their_deny_is_an_error() -> None:
    (finding,) = found(EFA_TWO_SUBNETS, "SMDDP-NET6")
    assert finding.resource == "Pretrain" and finding.severity.value == "error"
    assert "ingress of Right from 172.31.32.0/20 (Left) is denied by network ACL RightAcl rule 20 " \
           "(deny protocol -1 172.31.32.0/20)" in finding.message
    assert "egress of" not in finding.message, "an entry without Egress never filters egress"
    assert not found(EFA_TWO_SUBNETS, "SMDDP-NET7") and not _notes(EFA_TWO_SUBNETS, "SMDDP-NET6")


def test_without_the_deny_the_inbound_defaults_allow_efa() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    del t["Resources"]["RightRefusesLeft"]
    assert not found(t, "SMDDP-NET6") and not _notes(t, "SMDDP-NET6")


def test_an_outbound_deny_below_an_inbound_one_decides_egress_only() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    del t["Resources"]["RightRefusesLeft"]
    t["Resources"]["LeftRefusesRight"] = acl_entry("LeftAcl", 5, True, "deny", "172.31.48.0/20", protocol=-1)
    (finding,) = found(t, "SMDDP-NET6")
    assert "egress of Left to 172.31.48.0/20 (Right) is denied by network ACL LeftAcl rule 5" in finding.message
    assert "ingress of" not in finding.message


def test_a_tcp_and_udp_only_acl_denies_efa_for_certain() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    r = t["Resources"]
    del r["RightRefusesLeft"]
    r["RightIn"] = acl_entry("RightAcl", 30, None, "allow", "0.0.0.0/0", protocol=6, ports=(0, 65535))
    r["RightInUdp"] = acl_entry("RightAcl", 31, None, "allow", "0.0.0.0/0", protocol="udp", ports=(0, 65535))
    (finding,) = found(t, "SMDDP-NET6")
    assert "ingress of Right from 172.31.32.0/20 (Left) is denied by network ACL RightAcl's default '*' rule" \
           in finding.message and "SRD, neither TCP nor UDP" in finding.message
    r["RightIcmp"] = acl_entry("RightAcl", 32, False, "allow", "0.0.0.0/0", protocol=58)
    assert found(t, "SMDDP-NET6"), "an ICMPv6 entry does not carry SRD either"


def test_an_entry_for_another_protocol_number_may_carry_srd_a_note_naming_it() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    r = t["Resources"]
    del r["RightRefusesLeft"]
    r["RightIn"] = acl_entry("RightAcl", 30, None, "allow", "0.0.0.0/0", protocol=47)
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert note.resource == "Pretrain" and note.severity.value == "info"
    assert "ingress of Right from 172.31.32.0/20 (Left): network ACL RightAcl rule 30 (allow protocol 47 0.0.0.0/0) " \
           "may decide it" in note.message


def test_an_entry_the_template_does_not_decide_is_a_note_naming_it_never_the_star_rule() -> None:
    t = {**NO_DEFAULT, **copy.deepcopy(EFA_TWO_SUBNETS)}
    t["Resources"]["RightRefusesLeft"]["Properties"]["CidrBlock"] = {"Ref": "Unset"}
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert "network ACL RightAcl entry RightRefusesLeft (its CidrBlock not decided by the template) may decide it" \
           in note.message and "'*'" not in note.message


def test_an_undecided_entry_that_agrees_with_the_deciding_one_changes_nothing() -> None:
    t = {**NO_DEFAULT, **copy.deepcopy(EFA_TWO_SUBNETS)}
    t["Resources"]["AlsoRefuses"] = acl_entry("RightAcl", {"Ref": "Unset"}, None, "deny", "172.31.32.0/24", protocol=-1)
    (finding,) = found(t, "SMDDP-NET6")
    assert "RightAcl rule 20" in finding.message, "deny or deny: the verdict does not depend on the unread entry"
    t["Resources"]["AlsoRefuses"]["Properties"]["RuleAction"] = "allow"
    assert not found(t, "SMDDP-NET6"), "its RuleNumber is unread: it may stand in front of rule 20"
    (note,) = _notes(t, "SMDDP-NET6")
    assert "entry AlsoRefuses (its RuleNumber not decided by the template)" in note.message


def test_an_entry_that_may_not_exist_is_not_evaluated() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    t["Parameters"] = {"Strict": {"Type": "String"}}
    t["Conditions"] = {"IsStrict": {"Fn::Equals": [{"Ref": "Strict"}, "yes"]}}
    t["Resources"]["RightRefusesLeft"]["Condition"] = "IsStrict"
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert "entry RightRefusesLeft (its Condition not decided by the template)" in note.message


def test_an_egress_the_template_does_not_decide_is_judged_both_ways() -> None:
    t = {**NO_DEFAULT, **copy.deepcopy(EFA_TWO_SUBNETS)}
    t["Resources"]["RightRefusesLeft"]["Properties"]["Egress"] = {"Ref": "Unset"}
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert "ingress of Right" in note.message and "egress of Right to 172.31.32.0/20 (Left)" in note.message
    assert "(its Egress not decided by the template)" in note.message


def test_lustre_988_left_open_by_an_unread_port_range_is_a_note_not_an_error() -> None:
    t = {**NO_DEFAULT, **copy.deepcopy(LUSTRE)}
    del t["Resources"]["StorageInLnet"]
    assert found(t, "SMDDP-NET6")
    t["Resources"]["StorageInLnet"] = acl_entry("StorageAcl", 10, False, "allow", "172.20.0.0/19",
                                                ports=({"Ref": "Unset"}, 988))
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert note.resource == "Lustre" and "Lustre's TCP 988 to file system Lustre: ingress of Storage" in note.message
    assert "entry StorageInLnet (its PortRange not decided by the template)" in note.message


# -- whole messages: a wrong word fails (mutation testing, issue 41) ------------------------------

_STAR = "is denied by network ACL {acl}'s default '*' rule (no numbered entry allows it)"
_REPLIES = ("the file system's replies may be dropped, depending on the Lustre client's source ports (privileged ports "
            "1018-1023, or ephemeral ones; an ACL that allows only 1024-65535 back drops replies to 1018-1023): "
            "to port 988: egress of Storage to 172.20.0.0/19 (Compute) " + _STAR.format(acl="StorageAcl")
            + "; to port 988: ingress of Compute from 172.20.64.0/24 (Storage) " + _STAR.format(acl="ComputeAcl")
            + "; to ports 1018-1023: egress of Storage to 172.20.0.0/19 (Compute) " + _STAR.format(acl="StorageAcl")
            + "; to ports 1018-1023: ingress of Compute from 172.20.64.0/24 (Storage) " + _STAR.format(acl="ComputeAcl"))
_NET9_FIX = (": allow TCP 988, 1018-1023 and 1024-65535 both ways between the training and file-system subnets' CIDRs in "
             "both network ACLs, numbered below the deny (or put the file system in the training subnet)")
_REACH = ("subnet Train (used by training job in Job): interface endpoint(s) {endpoint} have their network interfaces in "
          "subnet(s) {subnets}, not in Train, so HTTPS to them leaves Train and crosses both subnets' network ACLs "
          "(stateless: the reply comes back on an ephemeral port): TCP 443 ingress of Endpoints from 10.60.0.0/20 (Train) "
          "is denied by network ACL Guarded rule 50 (deny protocol -1 10.60.0.0/20)")
_REACH_FIX = (": allow TCP 443 from Train's CIDR into Endpoints and TCP 1024-65535 back, in both subnets' network ACLs, "
              "numbered below the deny (or add Train to the endpoint's SubnetIds)")


def test_net7_for_an_endpoint_says_where_its_interfaces_are_what_denies_and_the_fix_word_for_word() -> None:
    (finding,) = found(ENDPOINTS, "SMDDP-NET7")
    assert finding.path == ("Properties",)
    assert finding.message == _REACH.format(endpoint="Sts (com.amazonaws.us-west-2.sts)", subnets="Endpoints") + _REACH_FIX


def test_net10_says_which_interface_dns_may_hand_out_word_for_word() -> None:
    (finding,) = found(ENDPOINTS, "SMDDP-NET10")
    assert finding.path == ("Properties",)
    assert finding.message == (
        _REACH.format(endpoint="Logs (com.amazonaws.us-west-2.logs)", subnets="Endpoints, Spare")
        + ". The other subnet(s) of the endpoint are not denied, but its DNS name may hand out the address of the "
          "interface in Endpoints, and a call to that address times out" + _REACH_FIX)


def test_net9_replies_alone_word_for_word() -> None:
    (finding,) = found(LUSTRE, "SMDDP-NET9")
    assert finding.path == ("Properties", "SubnetIds")
    assert finding.message == ("file system Lustre is in subnet Storage, another subnet than its training clients: "
                               + _REPLIES + _NET9_FIX)


def test_net9_client_ports_and_replies_and_net6_on_988_word_for_word() -> None:
    t = copy.deepcopy(LUSTRE)
    del t["Resources"]["StorageInClientPorts"], t["Resources"]["StorageInLnet"]
    (warning,) = found(t, "SMDDP-NET9")
    assert warning.message == (
        "file system Lustre is in subnet Storage, another subnet than its training clients: TCP 1018-1023 (which FSx lists "
        "beside 988 for Lustre clients) is blocked: ingress of Storage from 172.20.0.0/19 (Compute) "
        + _STAR.format(acl="StorageAcl") + "; and " + _REPLIES + _NET9_FIX)
    (error,) = found(t, "SMDDP-NET6")
    assert error.resource == "Lustre" and error.path == ("Properties", "SubnetIds") and error.severity.value == "error"
    assert error.message == (
        "file system Lustre is in subnet Storage, another subnet than its training clients, and Lustre's TCP 988 is "
        "blocked at the subnet boundary: ingress of Storage from 172.20.0.0/19 (Compute) " + _STAR.format(acl="StorageAcl")
        + ": allow TCP 988 (and the return traffic) between the two subnets' CIDRs in both ACLs")


def test_net6_for_efa_between_subnets_word_for_word() -> None:
    (finding,) = found(EFA_TWO_SUBNETS, "SMDDP-NET6")
    assert finding.path == ("Properties", "Job", "VpcConfig", "Subnets")
    assert finding.message == (
        "training job in Pretrain runs in 2 subnets and its EFA traffic between them (SRD, neither TCP nor UDP: only an "
        "all-protocol entry matches it) crosses network ACLs: ingress of Right from 172.31.32.0/20 (Left) is denied by "
        "network ACL RightAcl rule 20 (deny protocol -1 172.31.32.0/20): add an all-protocol (-1) allow entry for the "
        "other training subnet's CIDR, numbered below the deny, in both directions (or place the job in one subnet)")


# -- what an entry is, as the template writes it (mutation testing, issue 41) ---------------------


def _efa(**extra: dict) -> dict:
    """EFA_TWO_SUBNETS without Right's deny, with ``extra`` resources."""
    t = {**NO_DEFAULT, **copy.deepcopy(EFA_TWO_SUBNETS)}
    del t["Resources"]["RightRefusesLeft"]
    t["Resources"].update(extra)
    return t


def test_an_entry_for_another_cidr_or_address_family_is_passed_over_without_a_note() -> None:
    t = _efa(Elsewhere=acl_entry("RightAcl", 5, None, "deny", "192.168.0.0/16", protocol=-1),
             V6=acl_entry("RightAcl", 6, None, "deny", None, protocol=-1))
    del t["Resources"]["V6"]["Properties"]["CidrBlock"]
    t["Resources"]["V6"]["Properties"]["Ipv6CidrBlock"] = "::/0"
    assert not found(t, "SMDDP-NET6") and not _notes(t, "SMDDP-NET6")


def test_protocol_names_are_the_ec2_apis_all_and_icmp() -> None:
    t = _efa(Icmp=acl_entry("RightAcl", 5, None, "allow", "0.0.0.0/0", protocol="ICMP"))
    assert not found(t, "SMDDP-NET6") and not _notes(t, "SMDDP-NET6"), "ICMP never carries SRD: passed over"
    t["Resources"]["All"] = acl_entry("RightAcl", 6, None, "deny", "172.31.32.0/20", protocol="All")
    (finding,) = found(t, "SMDDP-NET6")
    assert "is denied by network ACL RightAcl rule 6 (deny protocol -1 172.31.32.0/20)" in finding.message


def test_an_undecided_action_may_disagree_with_the_deny_a_note_naming_what_is_not_decided() -> None:
    t = _efa(Maybe=acl_entry("RightAcl", 5, None, {"Ref": "Unset"}, {"Ref": "Unset"}, protocol=-1),
             Refuses=acl_entry("RightAcl", 7, None, "deny", "172.31.32.0/20", protocol=-1))
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert note.path == ("Properties", "Job", "VpcConfig", "Subnets")
    assert note.message == (
        "SMDDP-NET6 not judged for training job in Pretrain's EFA traffic between its subnets: ingress of Right from "
        "172.31.32.0/20 (Left): network ACL RightAcl entry Maybe (its RuleAction, CidrBlock not decided by the template) "
        "may decide it")


def test_an_entry_of_undecided_number_may_come_before_rule_1() -> None:
    t = _efa(First=acl_entry("RightAcl", 1, None, "deny", "172.31.32.0/20", protocol=-1),
             Maybe=acl_entry("RightAcl", {"Ref": "Unset"}, None, "allow", "172.31.32.0/20", protocol=-1))
    assert not found(t, "SMDDP-NET6")
    assert [n.message.split(": ", 2)[2] for n in _notes(t, "SMDDP-NET6")] == [
        "network ACL RightAcl entry Maybe (its RuleNumber not decided by the template) may decide it"]


def test_an_undecided_egress_notes_both_directions_word_for_word() -> None:
    t = {**NO_DEFAULT, **copy.deepcopy(EFA_TWO_SUBNETS)}
    t["Resources"]["RightRefusesLeft"]["Properties"]["Egress"] = {"Ref": "Unset"}
    (note,) = _notes(t, "SMDDP-NET6")
    entry = "network ACL RightAcl entry RightRefusesLeft (its Egress not decided by the template) may decide it"
    assert note.message == ("SMDDP-NET6 not judged for training job in Pretrain's EFA traffic between its subnets: "
                            f"ingress of Right from 172.31.32.0/20 (Left): {entry}; egress of Right to 172.31.32.0/20 "
                            f"(Left): {entry}")


def test_an_acl_without_entries_denies_everything_by_its_star_rule() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    for name in ("RightRefusesLeft", "RightIn", "RightOut"):
        del t["Resources"][name]
    (finding,) = found(t, "SMDDP-NET6")
    assert "egress of Right to 172.31.32.0/20 (Left) is denied by network ACL RightAcl's default '*' rule" in finding.message
    assert "ingress of Right from 172.31.32.0/20 (Left) is denied by network ACL RightAcl's default '*' rule" \
           in finding.message


def test_an_association_that_may_not_exist_or_names_no_subnet_of_the_template_is_not_read() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    t["Conditions"] = {"Never": {"Fn::Equals": ["a", "b"]}}
    t["Resources"]["RightAssociation"]["Condition"] = "Never"
    assert not found(t, "SMDDP-NET6") and not _notes(t, "SMDDP-NET6"), "Right keeps the VPC's default ACL: not shown"
    del t["Resources"]["RightAssociation"]["Condition"]
    t["Resources"]["RightAssociation"]["Properties"]["SubnetId"] = "subnet-0abc"
    assert not found(t, "SMDDP-NET6") and not _notes(t, "SMDDP-NET6")


def test_only_efa_placements_with_stated_cidrs_are_judged_and_each_is() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    cpu = copy.deepcopy(t["Resources"]["Pretrain"])
    cpu["Properties"]["Job"]["ResourceConfig"]["InstanceType"] = "ml.m5.xlarge"
    t["Resources"] = {"Cpu": cpu, **t["Resources"]}
    assert [f.resource for f in found(t, "SMDDP-NET6")] == ["Pretrain"], "a CPU job sends no EFA traffic"
    t["Resources"]["Left"]["Properties"]["CidrBlock"] = {"Fn::Select": [0, {"Fn::Cidr": [{"Fn::ImportValue": "b"}, 2, 12]}]}
    assert not found(t, "SMDDP-NET6"), "the other subnet's CIDR is not stated: nothing to compare"


# -- Lustre's path: which file systems, which clients (mutation testing, issue 41) ----------------


def _two_clients() -> dict:
    """LUSTRE with a second training subnet Compute2 (its own job), the file system's 988 open to neither."""
    t = {**NO_DEFAULT, **copy.deepcopy(LUSTRE)}
    r = t["Resources"]
    del r["StorageInLnet"]
    r["Compute2"] = {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "172.20.32.0/19",
                                                                 "AvailabilityZone": "eu-west-1a"}}
    job2 = copy.deepcopy(r["Job"])
    job2["Properties"]["Job"]["VpcConfig"]["Subnets"] = [{"Ref": "Compute2"}]
    r["Job2"] = job2
    return t


def test_every_client_subnet_is_named_once() -> None:
    (error,) = found(_two_clients(), "SMDDP-NET6")
    assert error.message.split(": ", 1)[1].split(": allow")[0] == (
        "ingress of Storage from 172.20.0.0/19 (Compute) is denied by network ACL StorageAcl's default '*' rule (no "
        "numbered entry allows it); ingress of Storage from 172.20.32.0/19 (Compute2) is denied by network ACL "
        "StorageAcl's default '*' rule (no numbered entry allows it)")


def test_an_undecided_entry_for_one_client_of_two_is_a_note_with_its_path() -> None:
    t = _two_clients()
    t["Resources"]["Open"] = acl_entry("StorageAcl", 10, False, "allow", "172.20.0.0/18", ports=({"Ref": "Unset"}, 988))
    assert not found(t, "SMDDP-NET6")
    (note,) = _notes(t, "SMDDP-NET6")
    assert note.resource == "Lustre" and note.path == ("Properties", "SubnetIds")
    assert note.message.count("entry Open (its PortRange not decided by the template)") == 2


def test_file_systems_without_a_stated_subnet_cidr_or_existence_are_passed_over_and_the_next_is_judged() -> None:
    t = _two_clients()
    r = t["Resources"]
    t["Conditions"] = {"Never": {"Fn::Equals": ["a", "b"]}}
    gone = {**copy.deepcopy(r["Lustre"]), "Condition": "Never"}
    nowhere = copy.deepcopy(r["Lustre"])
    nowhere["Properties"]["SubnetIds"] = {"Ref": "Unset"}
    elsewhere = copy.deepcopy(r["Lustre"])
    elsewhere["Properties"]["SubnetIds"] = ["subnet-0abc"]
    unsized = copy.deepcopy(r["Lustre"])
    unsized["Properties"]["SubnetIds"] = [{"Ref": "Unsized"}]
    r["Unsized"] = {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": {"Ref": "Unset"}}}
    t["Resources"] = {"Gone": gone, "Nowhere": nowhere, "Elsewhere": elsewhere, "UnsizedFs": unsized, **r}
    assert [f.resource for f in found(t, "SMDDP-NET6")] == ["Lustre"]
    assert [f.resource for f in found(t, "SMDDP-NET9")] == ["Lustre"]


# -- interface endpoints: several endpoints, several subnets denied (mutation testing, issue 41) --


def test_every_endpoint_and_every_denied_subnet_is_named() -> None:
    t = copy.deepcopy(ENDPOINTS)
    r = t["Resources"]
    r["Logs"]["Properties"]["SubnetIds"] = [{"Ref": "Endpoints"}]
    r["SpareAcl"]["Properties"]["NetworkAclId"] = {"Ref": "Guarded"}
    r["Sts"]["Properties"]["SubnetIds"] = [{"Ref": "Endpoints"}, {"Ref": "Spare"}]
    r["Logs"]["Properties"]["SubnetIds"] = [{"Ref": "Spare"}, {"Ref": "Endpoints"}]
    (finding,) = found(t, "SMDDP-NET7")
    assert finding.message.startswith(
        "subnet Train (used by training job in Job): interface endpoint(s) Sts (com.amazonaws.us-west-2.sts), Logs "
        "(com.amazonaws.us-west-2.logs) have their network interfaces in subnet(s) Endpoints, Spare, not in Train")
    assert ("TCP 443 ingress of Endpoints from 10.60.0.0/20 (Train) is denied by network ACL Guarded rule 50 (deny "
            "protocol -1 10.60.0.0/20); TCP 443 ingress of Spare from 10.60.0.0/20 (Train)") in finding.message
    assert finding.message.endswith(": allow TCP 443 from Train's CIDR into Endpoints, Spare and TCP 1024-65535 back, in "
                                    "both subnets' network ACLs, numbered below the deny (or add Train to the endpoint's "
                                    "SubnetIds)")
    assert not found(t, "SMDDP-NET10")


# -- which endpoints, from which subnets (mutation testing, issue 41) -----------------------------


def _subnet(cidr: object) -> dict:
    return {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": cidr}}


def _acl_of(subnet: str, acl: str) -> dict:
    return {"Type": "AWS::EC2::SubnetNetworkAclAssociation",
            "Properties": {"SubnetId": {"Ref": subnet}, "NetworkAclId": {"Ref": acl}}}


def _endpoint(ids: list, kind: str = "Interface", service: object = "com.amazonaws.us-west-2.ssm", **extra: object) -> dict:
    return {"Type": "AWS::EC2::VPCEndpoint", **extra, "Properties": {
        "VpcId": {"Ref": "Vpc"}, "VpcEndpointType": kind, "ServiceName": service, "SubnetIds": ids}}


def test_only_interface_endpoints_that_exist_in_template_subnets_from_subnets_where_sagemaker_trains() -> None:
    t = {**NO_DEFAULT, **copy.deepcopy(ENDPOINTS)}
    t["Conditions"] = {"Maybe": {"Fn::Equals": [{"Ref": "Unset"}, "yes"]}}
    r = t["Resources"]
    # an EC2 instance's subnet (walked first, by name) whose ACL shuts everything: not a SageMaker subnet
    r["Aaa"], r["AaaAcl"] = _subnet("10.60.64.0/20"), _acl_of("Aaa", "Shut")
    r["Shut"] = {"Type": "AWS::EC2::NetworkAcl", "Properties": {"VpcId": {"Ref": "Vpc"}}}
    r["Box"] = {"Type": "AWS::EC2::Instance", "Properties": {"InstanceType": "p4d.24xlarge", "SubnetId": {"Ref": "Aaa"}}}
    r["Aside"], r["AsideAcl"] = _subnet("10.60.34.0/24"), _acl_of("Aside", "Everything")
    r["Blank"], r["BlankAcl"] = _subnet({"Ref": "Unset"}), _acl_of("Blank", "Everything")
    t["Resources"] = {"Outside": _endpoint(["subnet-0abc", {"Ref": "Endpoints"}]), **r}  # a subnet not in the template
    r = t["Resources"]
    r["Early"] = _endpoint([{"Ref": "Aside"}, {"Ref": "Train"}])  # an interface in Train: reached there
    r["Blanky"] = _endpoint([{"Ref": "Blank"}, {"Ref": "Endpoints"}], service={"Ref": "Unset"})  # Blank's CIDR unstated
    r["Empty"] = _endpoint([])
    r["Maybe"] = _endpoint([{"Ref": "Endpoints"}], Condition="Maybe")
    r["Glb"] = _endpoint([{"Ref": "Endpoints"}], kind="GatewayLoadBalancer", service="com.amazonaws.vpce.us-west-2.vpce-svc-0abc")
    shown = [(f.rule_id, f.resource, f.message.split(" have their")[0].split("): ", 1)[1])
             for f in check_template(t) if f.rule_id in ("SMDDP-NET7", "SMDDP-NET10")]
    assert shown == [("SMDDP-NET7", "Train", "interface endpoint(s) Sts (com.amazonaws.us-west-2.sts)"),
                     ("SMDDP-NET10", "Train", "interface endpoint(s) Blanky (?)"),
                     ("SMDDP-NET10", "Train", "interface endpoint(s) Logs (com.amazonaws.us-west-2.logs)")]


def test_a_return_deny_on_other_ports_than_the_ephemeral_ones_is_passed_over() -> None:
    t = copy.deepcopy(ENDPOINTS)
    del t["Resources"]["NotFromTraining"]
    t["Resources"]["NoLowReturn"] = acl_entry("Guarded", 50, True, "deny", "10.60.0.0/20", ports=(0, 1023))
    assert not found(t, "SMDDP-NET7") and not found(t, "SMDDP-NET10")


def test_net10_names_every_denied_subnet_of_the_endpoint() -> None:
    t = copy.deepcopy(ENDPOINTS)
    r = t["Resources"]
    r["Third"], r["ThirdAcl"] = _subnet("10.60.35.0/24"), _acl_of("Third", "Everything")
    r["SpareAcl"]["Properties"]["NetworkAclId"] = {"Ref": "Guarded"}
    r["Logs"]["Properties"]["SubnetIds"] = [{"Ref": "Endpoints"}, {"Ref": "Spare"}, {"Ref": "Third"}]
    (finding,) = found(t, "SMDDP-NET10")
    assert "may hand out the address of the interface in Endpoints, Spare, and a call to that address times out" \
           in finding.message
    assert "is denied by network ACL Guarded rule 50 (deny protocol -1 10.60.0.0/20); TCP 443 ingress of Spare" \
           in finding.message


def test_net6_names_both_directions_denied_between_two_subnets() -> None:
    t = copy.deepcopy(EFA_TWO_SUBNETS)
    t["Resources"]["LeftRefusesRight"] = acl_entry("LeftAcl", 5, True, "deny", "172.31.48.0/20", protocol=-1)
    (finding,) = found(t, "SMDDP-NET6")
    assert ("crosses network ACLs: egress of Left to 172.31.48.0/20 (Right) is denied by network ACL LeftAcl rule 5 (deny "
            "protocol -1 172.31.48.0/20); ingress of Right from 172.31.32.0/20 (Left) is denied by network ACL RightAcl "
            "rule 20 (deny protocol -1 172.31.32.0/20): add") in finding.message


def test_net9_names_every_client_denied_towards_the_file_system() -> None:
    t = _two_clients()
    del t["Resources"]["StorageInClientPorts"]
    (warning,) = found(t, "SMDDP-NET9")
    assert ("is blocked: ingress of Storage from 172.20.0.0/19 (Compute) is denied by network ACL StorageAcl's default '*' "
            "rule (no numbered entry allows it); ingress of Storage from 172.20.32.0/19 (Compute2) is denied by network ACL "
            "StorageAcl's default '*' rule (no numbered entry allows it); and the file system's replies") in warning.message


def test_an_endpoint_in_another_vpc_is_not_paired_with_the_training_subnet() -> None:
    t = copy.deepcopy(ENDPOINTS)
    r = t["Resources"]
    r["Other"] = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.61.0.0/16"}}
    r["Far"] = {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Other"}, "CidrBlock": "10.61.0.0/24"}}
    r["Shut"] = {"Type": "AWS::EC2::NetworkAcl", "Properties": {"VpcId": {"Ref": "Other"}}}
    r["FarAcl"] = _acl_of("Far", "Shut")
    r["Elsewhere"] = _endpoint([{"Ref": "Far"}])
    r["Elsewhere"]["Properties"]["VpcId"] = {"Ref": "Other"}
    assert [f.message.split(" have their")[0].split("): ", 1)[1] for f in found(t, "SMDDP-NET7")] == [
        "interface endpoint(s) Sts (com.amazonaws.us-west-2.sts)"]

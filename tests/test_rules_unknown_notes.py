"""NET9 and NET10 never pass silently on a value they cannot read (issue 41).

Network ACLs decide by the first matching entry (Amazon VPC User Guide, "Control subnet traffic
with network access control lists"): an entry the template does not decide (a ``RuleAction`` or
``RuleNumber`` from a parameter without a default), or a subnet CIDR it does not state, may
decide the traffic either way. NET6 and NET7 already write an SMDDP-INFO1 note naming what they
could not read; NET9 (Lustre's other ports and replies) and NET10 (an interface endpoint's
subnets) do the same, and never a warning resting on it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from smddp_infra.rules import Severity, check_template
from _rules_helpers import load

UNDECIDED = {"Undecided": {"Type": "String"}}


def _with(name: str, changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The fixture with some resources' properties replaced and a parameter without a default."""
    template = copy.deepcopy(load(name))
    template["Parameters"] = dict(UNDECIDED)
    for logical_id, props in changes.items():
        template["Resources"][logical_id]["Properties"].update(props)
    return template


def _notes(findings: list, rule_id: str) -> list:
    """The notes that name ``rule_id`` among the rules they could not judge ("SMDDP-NET7 and SMDDP-NET10 not judged")."""
    return [f for f in findings if f.rule_id == "SMDDP-INFO1" and rule_id in f.message.split(" not judged", 1)[0].split(" and ")]


def _rules(findings: list) -> set[tuple[str, str]]:
    return {(f.rule_id, f.resource) for f in findings if f.severity is not Severity.INFO}


# ------------------------------------------------------------------ NET9

#: The return entry of the clients' ACL opened to every TCP port: the fixture's only certain
#: deny left is the file system's egress (StorageOutReturn allows 1024-65535 only).
_CLIENT_RETURN_ALL = {"ComputeInReturn": {"PortRange": {"From": 0, "To": 65535}}}


def test_net9_warns_when_every_entry_is_read():
    findings = check_template(_with("net9_lustre_return_ports.yaml", _CLIENT_RETURN_ALL))
    assert ("SMDDP-NET9", "Lustre") in _rules(findings)
    assert _notes(findings, "SMDDP-NET9") == []


def test_net9_notes_an_entry_whose_action_it_cannot_read_and_does_not_warn():
    changes = {**_CLIENT_RETURN_ALL,
               "StorageOutReturn": {"RuleAction": {"Ref": "Undecided"}, "PortRange": {"From": 988, "To": 65535}}}
    findings = check_template(_with("net9_lustre_return_ports.yaml", changes))
    assert ("SMDDP-NET9", "Lustre") not in _rules(findings)
    notes = _notes(findings, "SMDDP-NET9")
    assert [n.resource for n in notes] == ["Lustre"]
    assert "entry StorageOutReturn (its RuleAction not decided by the template)" in notes[0].message
    assert notes[0].path == ("Properties", "SubnetIds")  # where cfn-lint puts the note: the subnet the path crosses
    decide = ("egress of Storage to 172.20.0.0/19 (Compute): network ACL StorageAcl entry StorageOutReturn "
              "(its RuleAction not decided by the template) may decide it")
    assert notes[0].message == (  # whole: what was not judged, then each reply the entry may decide
        "SMDDP-NET9 not judged for Lustre's TCP 1018-1023 and the replies between file system Lustre and its training "
        f"clients: the reply to port 988: {decide}; the reply to ports 1018-1023: {decide}; "
        f"the reply to ports 1024-65535: {decide}")


def test_net9_notes_a_file_system_subnet_whose_cidr_it_cannot_read():
    findings = check_template(_with("net9_lustre_return_ports.yaml", {"Storage": {"CidrBlock": {"Ref": "Undecided"}}}))
    assert ("SMDDP-NET9", "Lustre") not in _rules(findings)
    for rule in ("SMDDP-NET9", "SMDDP-NET6"):
        notes = _notes(findings, rule)
        assert [n.resource for n in notes] == ["Lustre"], rule
        assert "subnet Storage's CidrBlock is not decided by the template" in notes[0].message
        assert notes[0].path == ("Properties", "SubnetIds"), rule


def test_a_subnet_cidr_unread_where_no_acl_is_stated_stays_unjudged_without_a_note():
    template = _with("net9_lustre_return_ports.yaml", {"Storage": {"CidrBlock": {"Ref": "Undecided"}}})
    for association in ("ComputeAclAssoc", "StorageAclAssoc"):
        del template["Resources"][association]
    findings = check_template(template)
    assert _notes(findings, "SMDDP-NET9") == [] and _notes(findings, "SMDDP-NET6") == []


# ------------------------------------------------------------------ NET10


def test_net10_notes_an_endpoint_subnet_an_undecided_entry_leaves_open():
    template = _with("net7_endpoint_other_subnet.yaml", {"NotFromTraining": {"RuleAction": {"Ref": "Undecided"}}})
    findings = check_template(template)
    assert {r for r in _rules(findings) if r[0] in ("SMDDP-NET7", "SMDDP-NET10")} == set()
    notes = _notes(findings, "SMDDP-NET10") + _notes(findings, "SMDDP-NET7")
    assert {n.resource for n in notes} == {"Train"}
    text = " | ".join(n.message for n in notes)
    assert "Sts (com.amazonaws.us-west-2.sts)" in text and "Logs (com.amazonaws.us-west-2.logs)" in text
    assert "entry NotFromTraining (its RuleAction not decided by the template)" in text
    assert {n.path for n in notes} == {("Properties",)}
    entry = ("TCP 443 ingress of Endpoints from 10.60.0.0/20 (Train): network ACL Guarded entry NotFromTraining "
             "(its RuleAction not decided by the template) may decide it")
    assert sorted(n.message for n in notes) == [  # whole: the lists of subnets joined as written
        # Logs: Spare is open for certain, so the entry can make it partly denied (NET10) at most
        "SMDDP-NET10 not judged for HTTPS from subnet Train to interface endpoint(s) Logs (com.amazonaws.us-west-2.logs) "
        f"in subnet(s) Endpoints, Spare: {entry}",
        # Sts: its one subnet is the one the entry decides: unreachable (the NET7 error) or fine; NET10 needs two
        "SMDDP-NET7 not judged for HTTPS from subnet Train to interface endpoint(s) Sts (com.amazonaws.us-west-2.sts) "
        f"in subnet(s) Endpoints: {entry}"]


@pytest.mark.parametrize("subnet", ["Spare", "Train"])
def test_net10_notes_a_subnet_cidr_it_cannot_read(subnet):
    template = _with("net7_endpoint_other_subnet.yaml", {"NotFromTraining": {"RuleAction": "allow"},
                                                         subnet: {"CidrBlock": {"Ref": "Undecided"}}})
    findings = check_template(template)
    notes = _notes(findings, "SMDDP-NET10")
    assert notes and all(n.resource == "Train" for n in notes)
    assert all(f"subnet {subnet}'s CidrBlock is not decided by the template" in n.message for n in notes)
    # Train's CIDR unread leaves every subnet of Logs open: unreachable (NET7) is possible too
    rules = {n.message.split(" not judged", 1)[0] for n in notes}
    assert rules == ({"SMDDP-NET7 and SMDDP-NET10"} if subnet == "Train" else {"SMDDP-NET10"})


def test_net10_warning_says_which_other_subnet_it_could_not_decide():
    findings = check_template(_with("net7_endpoint_other_subnet.yaml", {"Spare": {"CidrBlock": {"Ref": "Undecided"}}}))
    warnings = [f for f in findings if f.rule_id == "SMDDP-NET10"]
    assert [f.resource for f in warnings] == ["Train"]
    assert "not denied for certain (subnet Spare's CidrBlock is not decided by the template)" in warnings[0].message
    assert ("SMDDP-NET7", "Train") in _rules(findings)  # Sts: its only subnet is denied for certain


def test_the_fixture_as_written_has_no_net10_note():
    findings = check_template(load("net7_endpoint_other_subnet.yaml"))
    assert _notes(findings, "SMDDP-NET10") == []
    assert "not denied for certain" not in " ".join(f.message for f in findings)


# ------------------------------------------------------------------ several values in one note
# (the data-path room's last three gaps: each joins several undecided values or endpoints)


def test_net9_note_names_an_unread_client_subnet_and_an_undecided_entry_together():
    template = _with("net9_lustre_return_ports.yaml", {
        **_CLIENT_RETURN_ALL, "StorageOutReturn": {"RuleAction": {"Ref": "Undecided"}, "PortRange": {"From": 988, "To": 65535}}})
    resources = template["Resources"]
    resources["Compute2"] = {"Type": "AWS::EC2::Subnet", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "CidrBlock": {"Ref": "Undecided"}, "AvailabilityZone": "eu-west-1a"}}
    resources["Job"]["Properties"]["Job"]["VpcConfig"]["Subnets"].append({"Ref": "Compute2"})
    notes = _notes(check_template(template), "SMDDP-NET9")
    assert [n.resource for n in notes] == ["Lustre"]
    decide = ("egress of Storage to 172.20.0.0/19 (Compute): network ACL StorageAcl entry StorageOutReturn "
              "(its RuleAction not decided by the template) may decide it")
    assert notes[0].message == (  # the unread client subnet first, then what the undecided entry leaves open
        "SMDDP-NET9 not judged for Lustre's TCP 1018-1023 and the replies between file system Lustre and its training "
        f"clients: subnet Compute2's CidrBlock is not decided by the template; the reply to port 988: {decide}; "
        f"the reply to ports 1018-1023: {decide}; the reply to ports 1024-65535: {decide}")


def _endpoint_in(template: dict[str, Any], name: str, service: str, subnets: list[str]) -> None:
    template["Resources"][name] = {"Type": "AWS::EC2::VPCEndpoint", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "VpcEndpointType": "Interface", "ServiceName": f"com.amazonaws.us-west-2.{service}",
        "SubnetIds": [{"Ref": s} for s in subnets], "PrivateDnsEnabled": True}}


def test_net10_note_names_every_endpoint_that_shares_the_subnets():
    template = _with("net7_endpoint_other_subnet.yaml", {"NotFromTraining": {"RuleAction": {"Ref": "Undecided"}}})
    _endpoint_in(template, "Ssm", "ssm", ["Endpoints", "Spare"])  # the same subnets as Logs: one note for both
    notes = [n for n in _notes(check_template(template), "SMDDP-NET10") if "Spare" in n.message]
    entry = ("TCP 443 ingress of Endpoints from 10.60.0.0/20 (Train): network ACL Guarded entry NotFromTraining "
             "(its RuleAction not decided by the template) may decide it")
    assert [n.message for n in notes] == [
        "SMDDP-NET10 not judged for HTTPS from subnet Train to interface endpoint(s) Logs (com.amazonaws.us-west-2.logs), "
        f"Ssm (com.amazonaws.us-west-2.ssm) in subnet(s) Endpoints, Spare: {entry}"]


def test_net10_warning_names_each_other_subnet_it_could_not_decide():
    template = _with("net7_endpoint_other_subnet.yaml", {"Spare": {"CidrBlock": {"Ref": "Undecided"}}})
    template["Resources"]["Reserve"] = {"Type": "AWS::EC2::Subnet", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "CidrBlock": {"Ref": "Undecided"}, "AvailabilityZone": "us-west-2c"}}
    template["Resources"]["ReserveAcl"] = {"Type": "AWS::EC2::SubnetNetworkAclAssociation", "Properties": {
        "SubnetId": {"Ref": "Reserve"}, "NetworkAclId": {"Ref": "Everything"}}}
    template["Resources"]["Logs"]["Properties"]["SubnetIds"].append({"Ref": "Reserve"})
    warnings = [f for f in check_template(template) if f.rule_id == "SMDDP-NET10"]
    assert [f.resource for f in warnings] == ["Train"]
    assert ("The other subnet(s) of the endpoint are not denied for certain (subnet Reserve's CidrBlock is not decided by "
            "the template; subnet Spare's CidrBlock is not decided by the template), but") in warnings[0].message


def test_an_unread_client_subnet_where_no_acl_is_stated_gets_no_note():
    # a subnet with no ACL association keeps the VPC's default ACL, which the template does not
    # restrict: an unread CIDR there decides nothing, for the file system (NET6/NET9) or an endpoint
    template = _with("net9_lustre_return_ports.yaml", {})
    resources = template["Resources"]
    for association in ("ComputeAclAssoc", "StorageAclAssoc"):
        del resources[association]
    resources["Compute2"] = {"Type": "AWS::EC2::Subnet", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "CidrBlock": {"Ref": "Undecided"}, "AvailabilityZone": "eu-west-1a"}}
    resources["Job"]["Properties"]["Job"]["VpcConfig"]["Subnets"].append({"Ref": "Compute2"})
    findings = check_template(template)
    assert _notes(findings, "SMDDP-NET9") == [] and _notes(findings, "SMDDP-NET6") == []

    template = _with("net7_endpoint_other_subnet.yaml", {"Spare": {"CidrBlock": {"Ref": "Undecided"}}})
    for association in ("TrainAcl", "EndpointsAcl", "SpareAcl"):
        del template["Resources"][association]
    findings = check_template(template)
    assert _notes(findings, "SMDDP-NET10") == [] and _notes(findings, "SMDDP-NET7") == []


def test_net10_note_names_an_unread_subnet_and_an_undecided_entry_of_the_same_endpoint():
    template = _with("net7_endpoint_other_subnet.yaml", {"NotFromTraining": {"RuleAction": {"Ref": "Undecided"}}})
    resources = template["Resources"]
    resources["Aux"] = {"Type": "AWS::EC2::Subnet", "Properties": {  # sorts before Endpoints
        "VpcId": {"Ref": "Vpc"}, "CidrBlock": {"Ref": "Undecided"}, "AvailabilityZone": "us-west-2c"}}
    resources["AuxAcl"] = {"Type": "AWS::EC2::SubnetNetworkAclAssociation", "Properties": {
        "SubnetId": {"Ref": "Aux"}, "NetworkAclId": {"Ref": "Everything"}}}
    resources["Logs"]["Properties"]["SubnetIds"].append({"Ref": "Aux"})
    notes = [n for n in _notes(check_template(template), "SMDDP-NET10") if "Logs" in n.message]
    entry = ("TCP 443 ingress of Endpoints from 10.60.0.0/20 (Train): network ACL Guarded entry NotFromTraining "
             "(its RuleAction not decided by the template) may decide it")
    assert [n.message for n in notes] == [  # both, in the endpoint's subnet order; Spare is open for certain
        "SMDDP-NET10 not judged for HTTPS from subnet Train to interface endpoint(s) Logs (com.amazonaws.us-west-2.logs) "
        f"in subnet(s) Aux, Endpoints, Spare: subnet Aux's CidrBlock is not decided by the template; {entry}"]

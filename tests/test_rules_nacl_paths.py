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

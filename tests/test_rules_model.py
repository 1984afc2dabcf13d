"""The template model resolves what a template decides offline, and nothing more."""

from __future__ import annotations

from typing import Any, Optional

from smddp_infra.rules.model import NO_VALUE, UNKNOWN, AzIndex, ResourceRef, TemplateModel, to_bool, to_int

TEMPLATE = {
    "Parameters": {
        "Capacity": {"Type": "Number", "Default": "2400", "AllowedValues": ["1200", "2400"]},
        "Name": {"Type": "String", "Default": "efa"},
        "NoDefault": {"Type": "String"},
        "Subnets": {"Type": "List<AWS::EC2::Subnet::Id>", "Default": "subnet-1,subnet-2"},
        "Ami": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/aws/service/ami"},
    },
    "Mappings": {"Tiers": {"fast": {"Throughput": 1000}}},
    "Resources": {"Sg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "x"}}},
}
MODEL = TemplateModel(TEMPLATE)


def r(value: Any, assignment: Optional[dict[str, Any]] = None, *, partial: bool = False) -> Any:
    """Resolve ``value`` in MODEL under ``assignment`` (the defaults when None)."""
    return MODEL.world(assignment).resolve(value, partial=partial)


def test_parameters_resolve_to_their_typed_default() -> None:
    assert r({"Ref": "Capacity"}) == 2400
    assert r({"Ref": "Name"}) == "efa"
    assert r({"Ref": "Subnets"}) == ["subnet-1", "subnet-2"]


def test_parameters_without_a_knowable_value_are_unknown() -> None:
    assert r({"Ref": "NoDefault"}) is UNKNOWN
    assert r({"Ref": "Ami"}) is UNKNOWN  # the Default names an SSM parameter, not a value


def test_assignments_enumerate_every_allowed_value() -> None:
    assert list(MODEL.assignments({"Capacity", "Name"})) == [
        {"Capacity": 1200, "Name": "efa"},
        {"Capacity": 2400, "Name": "efa"},
    ]
    assert r({"Ref": "Capacity"}, {"Capacity": 1200}) == 1200
    assert list(MODEL.assignments(set())) == [{}]


def test_ref_and_getatt_in_both_forms_name_the_resource() -> None:
    assert r({"Ref": "Sg"}) == ResourceRef("Sg")
    assert r({"Fn::GetAtt": ["Sg", "GroupId"]}) == ResourceRef("Sg", "GroupId")
    assert r({"Fn::GetAtt": "Sg.GroupId"}) == ResourceRef("Sg", "GroupId")
    assert r({"Fn::GetAtt": ["Missing", "GroupId"]}) is UNKNOWN


def test_strings_built_with_sub_and_join() -> None:
    assert r({"Fn::Sub": "${Name}-group"}) == "efa-group"
    assert r({"Fn::Sub": ["${A}-${Name}", {"A": "x"}]}) == "x-efa"
    assert r({"Fn::Sub": "com.amazonaws.${AWS::Region}.sts"}) is UNKNOWN
    assert r({"Fn::Sub": "com.amazonaws.${AWS::Region}.sts"}, partial=True) == "com.amazonaws.*.sts"
    join = {"Fn::Join": ["", ["com.amazonaws.", {"Ref": "AWS::Region"}, ".s3"]]}
    assert r(join, partial=True) == "com.amazonaws.*.s3"
    assert TemplateModel(TEMPLATE, region="eu-west-1").world().resolve(join) == "com.amazonaws.eu-west-1.s3"
    assert r({"Fn::Sub": "${!Literal}"}) == "${Literal}"


def test_select_over_getazs_is_an_az_index() -> None:
    assert r({"Fn::Select": [1, {"Fn::GetAZs": ""}]}) == AzIndex(1)
    assert r({"Fn::Select": [0, {"Ref": "Subnets"}]}) == "subnet-1"


def test_imports_conditions_and_novalue() -> None:
    assert r({"Fn::ImportValue": "shared-sg"}) is UNKNOWN
    assert r({"Fn::If": ["C", 1, 2]}) is UNKNOWN
    assert r({"Ref": "AWS::NoValue"}) is NO_VALUE
    assert r([1, {"Ref": "AWS::NoValue"}, 2]) == [1, 2]
    assert r({"Fn::FindInMap": ["Tiers", "fast", "Throughput"]}) == 1000


def test_booleans_and_numbers_as_cloudformation_reads_them() -> None:
    assert [to_bool(v) for v in (True, "true", "Yes", "no", "False")] == [True, True, True, False, False]
    assert to_bool("maybe") is UNKNOWN
    assert [to_int(v) for v in (1200, "1200", 1200.0)] == [1200, 1200, 1200]
    assert to_int("12.5") is UNKNOWN and to_int(True) is UNKNOWN


def test_parameters_in_finds_refs_and_sub_variables() -> None:
    value = {"A": {"Ref": "Capacity"}, "B": {"Fn::Sub": "${Name}-${AWS::Region}"}, "C": {"Ref": "Sg"}}
    assert MODEL.parameters_in(value) == {"Capacity", "Name"}


def test_rules_section_list_tests_decide_only_decided_lists() -> None:
    """Fn::Contains / EachMemberEquals / EachMemberIn (a template's ``Rules`` assertions): a
    verdict when both operands are decided (lists where the function takes lists), else UNKNOWN."""
    world = MODEL.world()
    subnets = {"Ref": "Subnets"}  # subnet-1, subnet-2
    assert world.evaluate({"Fn::Contains": [subnets, "subnet-2"]}) is True
    assert world.evaluate({"Fn::Contains": [subnets, "subnet-3"]}) is False
    assert world.evaluate({"Fn::Contains": [subnets, {"Ref": "NoDefault"}]}) is UNKNOWN
    assert world.evaluate({"Fn::Contains": ["subnet-1", "subnet-1"]}) is UNKNOWN  # not a list
    assert world.evaluate({"Fn::EachMemberEquals": [["efa", {"Ref": "Name"}], "efa"]}) is True
    assert world.evaluate({"Fn::EachMemberEquals": [subnets, "subnet-1"]}) is False
    assert world.evaluate({"Fn::EachMemberIn": [subnets, ["subnet-2", "subnet-1"]]}) is True
    assert world.evaluate({"Fn::EachMemberIn": [subnets, ["subnet-1"]]}) is False
    assert world.evaluate({"Fn::EachMemberIn": [subnets, "subnet-1"]}) is UNKNOWN  # allowed must be a list
    assert world.evaluate({"Fn::Equals": [{"Ref": "Capacity"}, "2400"]}) is True
    assert world.evaluate({"Fn::Equals": [{"Ref": "NoDefault"}, "x"]}) is UNKNOWN

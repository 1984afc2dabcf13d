"""The guard refuses changes to what FSx fixes at creation, which neither replacement source marks
(issue 24): StorageType, LustreConfiguration.EfaEnabled, the metadata configuration's mode, and an
Intelligent-Tiering ThroughputCapacity decrease. The facts live in sizing/lustre_rules.py."""

from __future__ import annotations

import copy

import pytest

from smddp_infra.review.replacement import ReplacementData, find_replacements, guard
from smddp_infra.sizing.lustre_rules import CREATE_TIME_PROPERTIES


@pytest.fixture(scope="module")
def data() -> ReplacementData:
    return ReplacementData(require_service_spec=True)


def _template(**lustre) -> dict:
    config = {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 500, "MetadataConfiguration": {"Mode": "AUTOMATIC"}}
    config.update(lustre)
    return {"Resources": {"FileSystem": {
        "Type": "AWS::FSx::FileSystem", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
        "Properties": {"FileSystemType": "LUSTRE", "StorageCapacity": 9600, "SubnetIds": ["subnet-1"],
                       "SecurityGroupIds": ["sg-1"], "FileSystemTypeVersion": "2.15", "LustreConfiguration": config}}}}


def _set(template: dict, path: tuple[str, ...], value) -> dict:
    out = copy.deepcopy(template)
    node = out["Resources"]["FileSystem"]["Properties"]
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return out


def test_the_replacement_sources_do_not_mark_these_properties(data):
    """Why the facts exist: if a source starts marking one, the fact is still right, but say so."""
    marked = {rule.path for rule in data.rules("AWS::FSx::FileSystem")}
    assert all(fact.path not in marked for fact in CREATE_TIME_PROPERTIES)


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        (("LustreConfiguration", "EfaEnabled"), None, True),
        (("LustreConfiguration", "EfaEnabled"), True, False),
        (("StorageType",), None, "INTELLIGENT_TIERING"),
        (("LustreConfiguration", "MetadataConfiguration", "Mode"), "AUTOMATIC", "USER_PROVISIONED"),
    ],
)
def test_a_create_time_change_is_refused_with_its_source(data, path, before, after):
    old = _template() if before is None else _set(_template(), path, before)
    new = _set(_template(), path, after)
    report = guard(old, new, data=data)
    assert report.blocked and report.exit_code == 1
    (finding,) = report.findings
    assert finding.verb == "CANNOT CHANGE"
    text = "\n".join(finding.lines())
    assert ".".join(path) in text and "FSx" in text and "UNCONFIRMED" in text
    assert guard(old, new, data=data, accepted=True).exit_code == 0  # allowReplacement lets it through


@pytest.mark.parametrize(("before", "after"), [(None, False), ("false", False), ("SSD", None)])
def test_spelling_a_default_is_not_a_change(data, before, after):
    path = ("LustreConfiguration", "EfaEnabled") if before != "SSD" else ("StorageType",)
    old = _template() if before is None else _set(_template(), path, before)
    new = _template() if after is None else _set(_template(), path, after)
    assert guard(old, new, data=data).findings == ()


def _tiering(throughput: int) -> dict:
    template = _template(ThroughputCapacity=throughput, DataReadCacheConfiguration={"SizingMode": "NO_CACHE"})
    props = template["Resources"]["FileSystem"]["Properties"]
    props["StorageType"] = "INTELLIGENT_TIERING"
    del props["StorageCapacity"]
    del props["LustreConfiguration"]["PerUnitStorageThroughput"]
    return template


def test_intelligent_tiering_throughput_only_grows(data):
    shrink = guard(_tiering(8000), _tiering(4000), data=data)
    assert shrink.blocked
    assert shrink.findings[0].verb == "FAILS" and "can only grow" in "\n".join(shrink.findings[0].lines())
    assert guard(_tiering(4000), _tiering(8000), data=data).findings == ()


def test_replacement_listing_is_unchanged_by_the_facts(data):
    """The facts add guard findings; find_replacements (review's Replacements) keeps the sources' view."""
    old, new = _template(), _set(_template(), ("LustreConfiguration", "EfaEnabled"), True)
    assert find_replacements(old, new, data=data) == []

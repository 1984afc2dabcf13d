"""A nested template deployed by several parents is judged once per parent (issue 41).

Each ``AWS::CloudFormation::Stack`` resource creates its own stack from the template it names,
with the parameters that resource passes (CloudFormation User Guide, "Nested stacks";
``AWS::CloudFormation::Stack`` ``Parameters``). Joined only to the first parent, a child that is
fine there passed silently where a second parent hands it a group without Lustre's ports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from smddp_infra.commands.check import judge
from smddp_infra.rules import Severity
from smddp_infra.rules.loader import load_template_text
from smddp_infra.rules.system import link_templates

CHILD = """
Parameters:
  SubnetId: {Type: AWS::EC2::Subnet::Id}
  SecurityGroupId: {Type: AWS::EC2::SecurityGroup::Id}
Resources:
  FileSystem:
    Type: AWS::FSx::FileSystem
    Properties:
      FileSystemType: LUSTRE
      StorageCapacity: 2400
      SubnetIds: [!Ref SubnetId]
      SecurityGroupIds: [!Ref SecurityGroupId]
      FileSystemTypeVersion: "2.15"
      LustreConfiguration: {DeploymentType: PERSISTENT_2, PerUnitStorageThroughput: 250, MetadataConfiguration: {Mode: AUTOMATIC}}
Outputs:
  FileSystemId: {Value: !Ref FileSystem}
"""

#: A parent whose group admits the Lustre ports from itself (TCP 988 and 1018-1023).
GOOD = """
Resources:
  Vpc: {Type: AWS::EC2::VPC, Properties: {CidrBlock: 10.60.0.0/16}}
  DataSubnet:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.60.4.0/22, AvailabilityZone: us-east-1c}
  StorageGroup:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: lustre, VpcId: !Ref Vpc}
  Self988:
    Type: AWS::EC2::SecurityGroupIngress
    Properties: {GroupId: !Ref StorageGroup, IpProtocol: tcp, FromPort: 988, ToPort: 988, SourceSecurityGroupId: !Ref StorageGroup}
  Self1018:
    Type: AWS::EC2::SecurityGroupIngress
    Properties: {GroupId: !Ref StorageGroup, IpProtocol: tcp, FromPort: 1018, ToPort: 1023, SourceSecurityGroupId: !Ref StorageGroup}
  Storage:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: ./fsx.yaml
      Parameters: {SubnetId: !Ref DataSubnet, SecurityGroupId: !Ref StorageGroup}
"""

#: A parent whose group admits HTTPS only.
BAD = """
Resources:
  Vpc: {Type: AWS::EC2::VPC, Properties: {CidrBlock: 10.61.0.0/16}}
  DataSubnet:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.61.4.0/22, AvailabilityZone: us-east-1c}
  HttpsGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: https only
      VpcId: !Ref Vpc
      SecurityGroupIngress: [{IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.61.0.0/16}]
  Shared:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: ./fsx.yaml
      Parameters: {SubnetId: !Ref DataSubnet, SecurityGroupId: !GetAtt HttpsGroup.GroupId}
"""


def _judge(files: dict[str, str]) -> tuple[dict[str, list], list]:
    templates = {f"/stacks/{name}": load_template_text(text) for name, text in files.items()}
    found, systems = judge(templates)
    return {Path(p).name: fs for p, fs in found.items()}, systems


def _errors(findings: list) -> list[tuple[str, str]]:
    return [(f.rule_id, f.resource) for f in findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize("order", [("good.yaml", "bad.yaml"), ("bad.yaml", "good.yaml")])
def test_a_child_broken_under_one_parent_is_an_error_naming_that_parent(order):
    texts = {"good.yaml": GOOD, "bad.yaml": BAD}
    found, _ = _judge({"fsx.yaml": CHILD, **{name: texts[name] for name in order}})
    errors = [f for f in found["fsx.yaml"] if f.severity is Severity.ERROR]
    assert _errors(errors) == [("SMDDP-FSX3", "FileSystem")]
    assert "[as nested stack Shared of bad.yaml]" in errors[0].message
    assert "HttpsGroup from bad.yaml" in errors[0].message
    assert "good.yaml" not in errors[0].message
    assert _errors(found["good.yaml"]) == [] and _errors(found["bad.yaml"]) == []


def test_the_child_alone_with_the_good_parent_passes_and_names_no_parent():
    found, _ = _judge({"fsx.yaml": CHILD, "good.yaml": GOOD})
    assert _errors(found["fsx.yaml"]) == []
    assert not any("[as nested stack" in f.message for fs in found.values() for f in fs)


def test_each_parent_is_its_own_system_listing_real_files_only():
    templates = {f"/stacks/{n}": load_template_text(t) for n, t in (("fsx.yaml", CHILD), ("good.yaml", GOOD), ("bad.yaml", BAD))}
    systems, alone = link_templates(templates)
    assert alone == []
    assert sorted(sorted(Path(p).name for p in s.paths) for s in systems) == [["bad.yaml", "fsx.yaml"], ["fsx.yaml", "good.yaml"]]
    described = sorted(link.describe() for s in systems for link in s.links)
    assert described == ["bad.yaml nests stack Shared from fsx.yaml", "good.yaml nests stack Storage from fsx.yaml"]


def test_one_parent_nesting_the_child_twice_judges_each_stack():
    twice = BAD.replace("  Shared:\n", "  Again:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n"
                                         "      TemplateURL: ./fsx.yaml\n"
                                         "      Parameters: {SubnetId: !Ref DataSubnet, SecurityGroupId: !Ref HttpsGroup}\n"
                                         "  Shared:\n")
    found, _ = _judge({"fsx.yaml": CHILD, "bad.yaml": twice})
    errors = [f for f in found["fsx.yaml"] if f.severity is Severity.ERROR]
    assert sorted(f.message.rsplit("[as ", 1)[1] for f in errors) == ["nested stack Again of bad.yaml]",
                                                                       "nested stack Shared of bad.yaml]"]


def test_a_grandchild_is_deployed_again_under_each_copy_of_its_parent():
    middle = """
Parameters:
  SubnetId: {Type: AWS::EC2::Subnet::Id}
  SecurityGroupId: {Type: AWS::EC2::SecurityGroup::Id}
Resources:
  Inner:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: ./fsx.yaml
      Parameters: {SubnetId: !Ref SubnetId, SecurityGroupId: !Ref SecurityGroupId}
"""
    found, _ = _judge({"fsx.yaml": CHILD, "middle.yaml": middle,
                       "good.yaml": GOOD.replace("./fsx.yaml", "./middle.yaml"),
                       "bad.yaml": BAD.replace("./fsx.yaml", "./middle.yaml")})
    assert _errors(found["fsx.yaml"]) == [("SMDDP-FSX3", "FileSystem")]
    assert "HttpsGroup from bad.yaml" in next(f for f in found["fsx.yaml"] if f.severity is Severity.ERROR).message


def test_a_loop_of_nested_stacks_ends():
    loop_a = "Resources:\n  B: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: ./b.yaml}}\n"
    loop_b = "Resources:\n  A: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: ./a.yaml}}\n"
    outer = "Resources:\n  B: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: ./b.yaml}}\n"
    systems, _ = link_templates({f"/s/{n}": load_template_text(t) for n, t in (("a.yaml", loop_a), ("b.yaml", loop_b), ("c.yaml", outer))})
    assert {Path(p).name for s in systems for p in s.paths} == {"a.yaml", "b.yaml", "c.yaml"}

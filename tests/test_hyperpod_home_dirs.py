"""Home directories on FSx for OpenZFS (issue 42 item 4): ``HyperPodCluster(nodes=Nodes(home_directories=...))``.

ONE app for the module, checked by AwsSolutions and SmddpChecks (a synth that finishes is a clean
synth: an unacknowledged finding raises ValidationFailed), with two stacks:

- ``HomeCreated``: docs/hyperpod.md's example, run from the markdown: a Slurm cluster on a network
  with a KMS key and a file system created for it;
- ``HomeImported``: an EKS cluster on a NAT network mounting an imported file system.

Each must write ``FsxOpenZfsConfig`` on every group, NFS rules on the exact ports from each node
group, pass botocore's CreateCluster shape and cfn-lint, and be guarded as stateful.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _hyperpod_apps import EKS_ARN
from conftest import cdk_context

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[1] / "docs" / "hyperpod.md"
CLUSTER, FILE_SYSTEM = "AWS::SageMaker::Cluster", "AWS::FSx::FileSystem"
#: The created file system's logical id: construct ids are the contract, a new id is an empty file system.
PINNED_ID = "HyperPodHomeDirectoriesFileSystemBEE238F5"
HOME_GROUP = "HyperPodHomeDirectoriesSecurityGroup666EAD15"
IMPORTED_GROUP = "sg-0123456789abcdef1"
IMPORTED = {"file_system_id": "fs-0abc1234def567890", "dns_name": "fs-0abc1234def567890.fsx.us-east-1.amazonaws.com",
            "security_group_id": IMPORTED_GROUP}
#: FSx for OpenZFS User Guide, "File system access control with Amazon VPC": TCP and UDP each.
NFS = {(protocol, low, high) for protocol in ("tcp", "udp") for low, high in ((111, 111), (2049, 2049), (20001, 20003))}


def _doc_example() -> str:
    marker = "<!-- doc-test: run-by tests/test_hyperpod_home_dirs.py::test_the_docs_example_builds_the_created_stack -->"
    found = re.search(re.escape(marker) + r"\n```python\n(.*?)^```", DOC.read_text(), re.S | re.M)
    assert found, f"docs/hyperpod.md has no block marked {marker}"
    return found.group(1)


def _network(stack: Any, *, key: bool = False, nat: bool = False) -> Any:
    from smddp_infra import Placement, Security, TrainingNetwork, Workload

    return TrainingNetwork(stack, "Network", workload=Workload(instance_type="ml.p5.48xlarge", instance_count=4,
                                                               read_mbps_per_gpu=50),
                           placement=Placement(availability_zone_id="use1-az4", nat_gateway=nat),
                           security=Security(create_encryption_key=key))


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from aws_cdk import App, Environment, Stack, Validations
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.checks import SmddpChecks
    from smddp_infra.constructs.hyperpod import HomeDirectories, Nodes, Orchestration

    app = App(context=cdk_context(), outdir=str(tmp_path_factory.mktemp("home")))
    created = Stack(app, "HomeCreated", env=Environment(region="us-east-1"))
    exec(_doc_example(), {"stack": created, "network": _network(created, key=True)})  # noqa: S102
    imported = Stack(app, "HomeImported", env=Environment(region="us-east-1"))
    HyperPodCluster(imported, "HyperPod", network=_network(imported, nat=True),
                    orchestration=Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN),
                    instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=2)],
                    nodes=Nodes(home_directories=HomeDirectories(mount_path="/shared/home", **IMPORTED)))
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    assembly = app.synth()
    return {name: assembly.get_stack_artifact(stack.artifact_id).template
            for name, stack in (("created", created), ("imported", imported))}


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _cluster(template: dict[str, Any]) -> dict[str, Any]:
    [found] = _of_type(template, CLUSTER).values()
    return found


def _node_groups(template: dict[str, Any]) -> list[Any]:
    return _cluster(template)["Properties"]["VpcConfig"]["SecurityGroupIds"]  # type: ignore[no-any-return]


# --- the created file system -----------------------------------------------------------------------


def test_the_docs_example_builds_the_created_stack(synth: dict[str, Any]) -> None:
    """docs/hyperpod.md's block is what built ``HomeCreated`` (executed from the markdown above)."""
    assert "nodes=Nodes(home_directories=HomeDirectories(storage_capacity_gib=2048, throughput_mbps=256))" in _doc_example()
    assert _of_type(synth["created"], FILE_SYSTEM)[PINNED_ID]["Properties"]["StorageCapacity"] == 2048


def test_every_group_mounts_the_home_directories_through_fsx_open_zfs_config(synth: dict[str, Any]) -> None:
    mount = {"FsxOpenZfsConfig": {"DnsName": {"Fn::GetAtt": [PINNED_ID, "DNSName"]}, "MountPath": "/home"}}
    groups = _cluster(synth["created"])["Properties"]["InstanceGroups"]
    assert [g["InstanceGroupName"] for g in groups] == ["controller", "login", "train"]
    for group in groups:
        configs = group["InstanceStorageConfigs"]
        assert configs.count(mount) == 1 and "FsxLustreConfig" in configs[0], group["InstanceGroupName"]


def test_the_file_system_is_openzfs_in_the_training_subnet_and_retained_under_its_pinned_id(synth: dict[str, Any]) -> None:
    template = synth["created"]
    systems = _of_type(template, FILE_SYSTEM)
    assert PINNED_ID in systems, sorted(systems)
    home = systems[PINNED_ID]
    assert home["DeletionPolicy"] == home["UpdateReplacePolicy"] == "Retain"
    props = home["Properties"]
    [subnet] = [k for k, v in template["Resources"].items() if v["Type"] == "AWS::EC2::Subnet"
                and {"Key": "smddp:role", "Value": "training"} in v["Properties"].get("Tags", [])]
    [key] = _of_type(template, "AWS::KMS::Key")
    assert props["FileSystemType"] == "OPENZFS" and props["SubnetIds"] == [{"Ref": subnet}]
    assert props["SecurityGroupIds"] == [{"Fn::GetAtt": [HOME_GROUP, "GroupId"]}]
    assert props["KmsKeyId"] == {"Fn::GetAtt": [key, "Arn"]}
    zfs = props["OpenZFSConfiguration"]
    assert (zfs["DeploymentType"], zfs["ThroughputCapacity"], zfs["AutomaticBackupRetentionDays"]) == ("SINGLE_AZ_1", 256, 7)
    assert zfs["RootVolumeConfiguration"]["NfsExports"] == [
        {"ClientConfigurations": [{"Clients": "*", "Options": ["rw", "crossmnt", "no_root_squash"]}]}]
    assert {"Key": "smddp:role", "Value": "home-directories"} in props["Tags"]


def _rules(template: dict[str, Any], kind: str, on: Any, peer_key: str) -> set[tuple[str, int, int, str]]:
    return {(r["Properties"]["IpProtocol"], r["Properties"].get("FromPort"), r["Properties"].get("ToPort"),
             json.dumps(r["Properties"].get(peer_key), sort_keys=True))
            for r in _of_type(template, kind).values() if r["Properties"]["GroupId"] == on}


def test_its_group_admits_nfs_on_the_exact_ports_from_each_node_group_and_nothing_else(synth: dict[str, Any]) -> None:
    template = synth["created"]
    home = {"Fn::GetAtt": [HOME_GROUP, "GroupId"]}
    nodes = _node_groups(template)
    expected = {(*port, json.dumps(node, sort_keys=True)) for port in NFS for node in nodes}
    assert _rules(template, "AWS::EC2::SecurityGroupIngress", home, "SourceSecurityGroupId") == expected
    assert "SecurityGroupIngress" not in template["Resources"][HOME_GROUP]["Properties"]  # no inline (open) rule
    for node in nodes:  # the nodes' groups allow only what they name outbound: NFS to the home group is named
        sent = _rules(template, "AWS::EC2::SecurityGroupEgress", node, "DestinationSecurityGroupId")
        assert {r for r in sent if r[3] == json.dumps(home, sort_keys=True)} == {(*p, json.dumps(home, sort_keys=True)) for p in NFS}


def test_the_cluster_waits_for_the_file_system_and_every_nfs_rule(synth: dict[str, Any]) -> None:
    template = synth["created"]
    waits = set(_cluster(template).get("DependsOn", []))
    rules = {k for k, v in template["Resources"].items() if v["Type"] in ("AWS::EC2::SecurityGroupIngress",
                                                                          "AWS::EC2::SecurityGroupEgress")
             and HOME_GROUP in json.dumps(v["Properties"])}
    assert len(rules) == 2 * len(NFS) * len(_node_groups(template)) and rules <= waits  # in from, out of each group
    # the file system and the groups by reference (DnsName, VpcConfig): a DependsOn too is cfn-lint's W3005
    assert PINNED_ID not in waits and not {g["Fn::GetAtt"][0] for g in _node_groups(template)} & waits


# --- the imported file system -----------------------------------------------------------------------


def test_an_imported_file_system_is_mounted_by_its_dns_name_and_admits_the_nodes(synth: dict[str, Any]) -> None:
    template = synth["imported"]
    assert not _of_type(template, FILE_SYSTEM) or all(
        v["Properties"]["FileSystemType"] == "LUSTRE" for v in _of_type(template, FILE_SYSTEM).values())
    [group] = _cluster(template)["Properties"]["InstanceGroups"]
    assert {"FsxOpenZfsConfig": {"DnsName": IMPORTED["dns_name"], "MountPath": "/shared/home"}} in group["InstanceStorageConfigs"]
    assert "Eks" in _cluster(template)["Properties"]["Orchestrator"]  # the schema and API do not limit it to Slurm
    nodes = _node_groups(template)
    expected = {(*port, json.dumps(node, sort_keys=True)) for port in NFS for node in nodes}
    assert _rules(template, "AWS::EC2::SecurityGroupIngress", IMPORTED_GROUP, "SourceSecurityGroupId") == expected


# --- the request and the template, as AWS reads them ----------------------------------------------------


@pytest.mark.parametrize("name", ["created", "imported"])
def test_the_request_passes_botocores_create_cluster_shape(synth: dict[str, Any], name: str) -> None:
    from _sagemaker_shape_walker import all_problems
    from smddp_infra.hyperpod.request import create_cluster_request, placeholder_resolver

    template = synth[name]
    request = create_cluster_request(_cluster(template)["Properties"], placeholder_resolver(template))
    assert all_problems(request, "CreateCluster") == []
    broken = copy.deepcopy(request)  # not a rubber stamp: a relative mount path and a DNS name of no file system
    broken["InstanceGroups"][0]["InstanceStorageConfigs"] = [{"FsxOpenZfsConfig": {"DnsName": "home.example.com",
                                                                                   "MountPath": "home"}}]
    found = " ".join(all_problems(broken, "CreateCluster"))
    assert "DnsName" in found and "MountPath" in found


@pytest.mark.parametrize("name", ["created", "imported"])
def test_the_template_is_clean_under_cfn_lint(synth: dict[str, Any], name: str) -> None:
    from cfnlint.api import ManualArgs, lint

    matches = lint(json.dumps(synth[name]), config=ManualArgs(regions=["us-east-1"]))
    assert [str(m) for m in matches] == []


# --- the guard treats it as stateful -------------------------------------------------------------------


def _edited(template: dict[str, Any], edit: Any) -> dict[str, Any]:
    new = copy.deepcopy(template)
    edit(new["Resources"])
    return new


def test_the_guard_refuses_what_replaces_or_unretains_the_home_directories(synth: dict[str, Any]) -> None:
    from smddp_infra.review.replacement import guard

    old = synth["created"]
    edits = {
        "OpenZFSConfiguration.DeploymentType": lambda r: r[PINNED_ID]["Properties"]["OpenZFSConfiguration"].update(
            DeploymentType="SINGLE_AZ_2"),
        "KmsKeyId": lambda r: r[PINNED_ID]["Properties"].update(KmsKeyId="arn:aws:kms:us-east-1:123456789012:key/other"),
        "DeletionPolicy": lambda r: r[PINNED_ID].update(DeletionPolicy="Delete"),
        "GroupDescription": lambda r: r[HOME_GROUP]["Properties"].update(GroupDescription="renamed"),
    }
    for prop, edit in edits.items():
        report = guard(old, _edited(old, edit))
        found = {f.first.logical_id: f for f in report.findings}
        assert report.blocked and PINNED_ID in found, prop
        if prop == "GroupDescription":  # the group the file system carries: replacing it replaces the file system
            assert found[PINNED_ID].first.caused_by == (HOME_GROUP,) and found[HOME_GROUP].first.property == prop
            continue
        assert set(found) == {PINNED_ID} and found[PINNED_ID].first.property == prop, found[PINNED_ID].lines()
        if prop != "DeletionPolicy":
            assert "every node mounts empty home directories" in found[PINNED_ID].meaning


@pytest.mark.parametrize(("new_gib", "refused"), [(1024, True), (2200, True), (2253, False), (4096, False)])
def test_the_guard_refuses_a_capacity_fsx_cannot_reach_in_place(synth: dict[str, Any], new_gib: int, refused: bool) -> None:
    """2048 GiB deployed: OpenZFS grows by at least 10% per update (2253 GiB) and never shrinks."""
    from smddp_infra.review.replacement import guard

    old = synth["created"]
    report = guard(old, _edited(old, lambda r: r[PINNED_ID]["Properties"].update(StorageCapacity=new_gib)))
    assert report.blocked is refused
    if refused:
        [finding] = report.findings
        assert finding.verb == "FAILS" and "at least 2,253 GiB" in finding.first.reason
        assert finding.avoid == ("keep home_directories.storage_capacity_gib at 2,048 GiB, or grow it to 2,253 GiB or more",)


# --- one line for each bad value ------------------------------------------------------------------------


BAD = [
    ({"deployment_type": "MULTI_AZ_2"}, "home_directories.deployment_type must be one of 'SINGLE_AZ_1', 'SINGLE_AZ_2'"),
    ({"deployment_type": "MULTI_AZ_1"}, "home_directories.deployment_type 'MULTI_AZ_1' needs a standby subnet"),
    ({"storage_capacity_gib": 32}, "home_directories.storage_capacity_gib must be a whole number of GiB from 64 to 524,288"),
    ({"storage_capacity_gib": 600_000}, "storage_capacity_gib must be a whole number of GiB from 64 to 524,288"),
    ({"storage_capacity_gib": 1024.0}, "home_directories.storage_capacity_gib must be a whole number"),
    ({"throughput_mbps": 160}, "home_directories.throughput_mbps must be one the deployment type takes: SINGLE_AZ_1 takes 64"),
    ({"deployment_type": "SINGLE_AZ_HA_2", "throughput_mbps": 64}, "SINGLE_AZ_HA_2 takes 160, 320"),
    ({"throughput_mbps": "fast"}, "home_directories.throughput_mbps must be one the deployment type takes: a whole number"),
    ({"backup_retention_days": 91}, "home_directories.backup_retention_days must be a whole number of days from 0 (off) to 90"),
    ({"mount_path": "home"}, "home_directories.mount_path must be an absolute path like /home"),
    ({"mount_path": "/home/"}, "home_directories.mount_path must be an absolute path"),
    ({"mount_path": "//home"}, "home_directories.mount_path must be an absolute path"),
    ({"file_system_id": IMPORTED["file_system_id"]}, "home_directories: an imported file system needs file_system_id, "
     "dns_name and security_group_id together, got only file_system_id"),
    ({**IMPORTED, "file_system_id": "fs-12"}, "home_directories.file_system_id must be an FSx file system id"),
    ({**IMPORTED, "dns_name": "home.example.com"}, "home_directories.dns_name must be the file system's DNS name"),
    ({**IMPORTED, "security_group_id": "default"}, "home_directories.security_group_id must be the file system's security group id"),
    ({**IMPORTED, "storage_capacity_gib": 2048},
     "home_directories: storage_capacity_gib size a file system the cluster creates; an imported one"),
    ({"throughput": 64}, "throughput"),
]


@pytest.mark.parametrize(("fields", "message"), BAD, ids=[m[:60] for _, m in BAD])
def test_a_bad_value_is_one_line_naming_the_field(fields: dict[str, Any], message: str) -> None:
    from smddp_infra.constructs.hyperpod import HomeDirectories
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        HomeDirectories(**fields)
    text = str(caught.value)
    assert message in text and "\n" not in text, text


@pytest.fixture(scope="module")
def scope() -> Any:
    from aws_cdk import App, Environment, Stack, aws_ec2 as ec2

    stack = Stack(App(context=cdk_context()), "Bad", env=Environment(region="us-east-1", account="123456789012"))
    return {"network": _network(stack), "group": ec2.SecurityGroup.from_security_group_id(stack, "G", IMPORTED_GROUP)}


def _slurm(scope: dict[str, Any], name: str, **kw: Any) -> Any:
    from smddp_infra import HyperPodCluster, InstanceGroup

    network = kw.pop("network", scope["network"])
    return HyperPodCluster(network.node.scope, name, network=network, instance_groups=[
        InstanceGroup(name="controller", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller")], **kw)


def test_the_cluster_refuses_a_wrong_shape_a_clash_with_lustre_and_a_network_without_its_vpc(scope: dict[str, Any]) -> None:
    from aws_cdk import aws_ec2 as ec2, aws_s3 as s3

    from smddp_infra import TrainingNetwork
    from smddp_infra.constructs.hyperpod import HomeDirectories, Nodes
    from smddp_infra.errors import ConfigError, PropTypeError

    with pytest.raises(PropTypeError, match=r"^nodes.home_directories must be a HomeDirectories\(\.\.\.\), got dict$"):
        Nodes(home_directories={"mount_path": "/home"})
    with pytest.raises(PropTypeError, match=r"^HyperPodCluster has no 'home_directories': it moved to "
                                            r"nodes=Nodes\(home_directories=\.\.\.\)$"):  # never a flat keyword
        _slurm(scope, "Flat", home_directories=HomeDirectories())
    with pytest.raises(ConfigError, match=r"^home_directories.mount_path '/fsx' is where the network's FSx for Lustre"):
        _slurm(scope, "Clash", nodes=Nodes(home_directories=HomeDirectories(mount_path="/fsx")))
    with pytest.raises(ConfigError, match=r"^home_directories.mount_path '/data' is where"):
        _slurm(scope, "Clash2", nodes=Nodes(mount_path="/data/", home_directories=HomeDirectories(mount_path="/data")))
    stack = scope["network"].node.scope
    parts = TrainingNetwork.from_attributes(
        stack, "Parts", training_subnet=ec2.Subnet.from_subnet_attributes(stack, "S", subnet_id="subnet-0abc",
                                                                            availability_zone="us-east-1a"),
        security_groups=[scope["group"]], job_bucket=s3.Bucket.from_bucket_name(stack, "B", "jobs-bucket"))
    with pytest.raises(ConfigError, match=r"^home_directories: the network was imported by its parts, without its VPC"):
        _slurm(scope, "NoVpc", network=parts, nodes=Nodes(home_directories=HomeDirectories()))


# --- read back after synth ---------------------------------------------------------------------------


def test_review_and_the_cluster_reader_show_the_home_directories_on_every_group(synth: dict[str, Any]) -> None:
    from smddp_infra.hyperpod.template import hyperpod_clusters
    from smddp_infra.review.summary import _hyperpod_section
    from smddp_infra.review.template import TemplateView

    [created] = hyperpod_clusters(synth["created"])
    for group in created.groups:
        assert [(m.kind, m.mount_path) for m in group.file_systems] == [("FsxLustreConfig", "/fsx"), ("FsxOpenZfsConfig", "/home")]
    view = TemplateView(synth["created"])
    text = "\n".join(_hyperpod_section(view, "##"))
    home = f"home directories: FSx for OpenZFS {view.label(PINNED_ID)} at /home |"
    assert sum(line.endswith(home) and "FSx for Lustre " in line for line in text.splitlines()) == len(created.groups) == 3
    imported = "\n".join(_hyperpod_section(TemplateView(synth["imported"]), "##"))
    assert f"home directories: FSx for OpenZFS {IMPORTED['dns_name']} at /shared/home |" in imported

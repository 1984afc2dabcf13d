"""HyperPodCluster's grouped options: the same clusters as the old flat keywords, at most ten props,
a short constructor, and one line for every wrong shape (a group's field, a group, the network)."""

from __future__ import annotations

import ast
import inspect
import io
import json
import textwrap
import tokenize
import warnings
from typing import Any, Callable

import pytest

from _hyperpod_apps import EKS_ARN, platform_eks_groups, slurm_groups
from conftest import cdk_context

pytestmark = pytest.mark.slow

FLAT = "HyperPodCluster's flat keywords are deprecated"


def _code_lines(function: Callable[..., Any]) -> int:
    """Lines of the function's body that hold code: no signature, docstring, comment or blank line."""
    source = textwrap.dedent(inspect.getsource(function))
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    first = node.body[0]
    docstring = (set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
                 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) else set())
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skipped and token.start[0] >= first.lineno:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstring)


def test_the_line_count_skips_the_docstring_comments_and_blank_lines() -> None:
    def sample(a: int) -> int:
        """Docstring,
        two lines."""
        # a comment

        b = (a +
             1)  # trailing
        return b

    assert _code_lines(sample) == 3


def test_hyperpod_cluster_takes_at_most_ten_props_and_a_short_constructor() -> None:
    from smddp_infra.constructs.hyperpod import HyperPodCluster

    params = inspect.signature(HyperPodCluster.__init__).parameters
    props = [p for p in params.values() if p.name not in ("self", "scope", "id")]
    assert len(props) <= 10, [p.name for p in props]
    assert all(p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD) for p in props)
    assert _code_lines(HyperPodCluster.__init__) <= 60


# --- both forms, one template ------------------------------------------------------------------------


def _network(stack: Any, *, nat: bool, count: int = 6) -> Any:
    from smddp_infra import Placement, TrainingNetwork, Workload

    return TrainingNetwork(stack, "Network", workload=Workload(instance_type="ml.p5.48xlarge", instance_count=count,
                                                               read_mbps_per_gpu=50),
                           placement=Placement(availability_zone_id="use1-az4", nat_gateway=nat))


def _slurm(stack: Any, new: bool) -> dict[str, Any]:
    from smddp_infra.constructs.hyperpod import Lifecycle, Nodes

    common = {"network": _network(stack, nat=False), "instance_groups": slurm_groups(), "cluster_name": "research"}
    if new:
        return {**common, "lifecycle": Lifecycle(lifecycle_script="on_init.sh", lifecycle_prefix="boot/"),
                "nodes": Nodes(mount_path="/shared", ips_per_node=4)}
    return {**common, "lifecycle_script": "on_init.sh", "lifecycle_prefix": "boot/", "mount_path": "/shared", "ips_per_node": 4}


def _eks_platform(stack: Any, new: bool) -> dict[str, Any]:
    from aws_cdk import aws_cloudwatch as cloudwatch

    from smddp_infra.constructs.hyperpod import Orchestration, Provisioning, Updates

    alarms = [cloudwatch.Alarm.from_alarm_arn(stack, "Health", "arn:aws:cloudwatch:us-east-1:123456789012:alarm:node-health"),
              "gpu-errors"]
    common = {"network": _network(stack, nat=True, count=8), "instance_groups": platform_eks_groups()}
    if new:
        return {**common, "orchestration": Orchestration(orchestrator="eks", eks_cluster_arn=EKS_ARN),
                "provisioning": Provisioning(continuous_provisioning=True, autoscaling=True,
                                             tiered_checkpointing_memory_percent=20),
                "updates": Updates(update_rollback_alarms=alarms)}
    return {**common, "orchestrator": "eks", "eks_cluster_arn": EKS_ARN, "continuous_provisioning": True, "autoscaling": True,
            "tiered_checkpointing_memory_percent": 20, "update_rollback_alarms": alarms}


def _eks_imported(stack: Any, new: bool) -> dict[str, Any]:
    from aws_cdk import aws_eks_v2 as eks, aws_iam as iam

    from smddp_infra import HyperPodEks, InstanceGroup
    from smddp_infra.constructs.hyperpod import Nodes, Orchestration, Roles

    network = _network(stack, nat=True)
    platform = eks.Cluster.from_cluster_attributes(stack, "Platform", cluster_name="ml-platform", vpc=network.vpc)
    role = iam.Role.from_role_arn(stack, "Nodes", "arn:aws:iam::123456789012:role/hyperpod-nodes", mutable=False)
    settings = HyperPodEks(authentication_mode="API_AND_CONFIG_MAP", observability=True)
    common = {"network": network, "instance_groups": [InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=4)]}
    if new:
        return {**common, "orchestration": Orchestration(orchestrator="eks", eks_cluster=platform, eks_settings=settings),
                "roles": Roles(role=role), "nodes": Nodes(interface_endpoints=["ssm"])}
    return {**common, "orchestrator": "eks", "eks_cluster": platform, "eks_settings": settings, "role": role,
            "interface_endpoints": ["ssm"]}


def _parts(stack: Any, new: bool) -> dict[str, Any]:
    from aws_cdk import aws_ec2 as ec2, aws_s3 as s3

    from smddp_infra import TrainingNetwork
    from smddp_infra.constructs.hyperpod import Lifecycle

    subnet = ec2.Subnet.from_subnet_attributes(stack, "Subnet", subnet_id="subnet-0aa11bb22cc33dd44",
                                               availability_zone="us-east-1a", ipv4_cidr_block="10.0.0.0/22")
    parts = {"training_subnet": subnet, "security_groups": [ec2.SecurityGroup.from_security_group_id(stack, "Efa", "sg-0123456789abcdef0")],
             "job_bucket": s3.Bucket.from_bucket_name(stack, "Jobs", "acme-jobs"), "checkpoint_prefix": "checkpoints"}
    script = {"lifecycle_script": "on_init.sh", "lifecycle_bucket": s3.Bucket.from_bucket_name(stack, "Boot", "sagemaker-boot")}
    if new:
        return {"network": TrainingNetwork.from_attributes(stack, "Network", **parts), "instance_groups": slurm_groups()[:3],
                "lifecycle": Lifecycle(**script)}
    return {**parts, **script, "instance_groups": slurm_groups()[:3]}


CONFIGURATIONS = {"Slurm": _slurm, "EksPlatform": _eks_platform, "EksImported": _eks_imported, "Parts": _parts}


def _synth(new: bool) -> tuple[dict[str, str], list[str]]:
    from aws_cdk import App, Environment, Stack

    from smddp_infra import HyperPodCluster

    app = App(context=cdk_context())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, props in CONFIGURATIONS.items():
            stack = Stack(app, name, env=Environment(region="us-east-1"))
            HyperPodCluster(stack, "HyperPod", **props(stack, new))
    assembly = app.synth()
    templates = {name: json.dumps(assembly.get_stack_by_name(name).template) for name in CONFIGURATIONS}
    return templates, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning) and FLAT in str(w.message)]


@pytest.fixture(scope="module")
def both() -> dict[bool, tuple[dict[str, str], list[str]]]:
    return {new: _synth(new) for new in (False, True)}


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_the_old_keywords_and_the_groups_build_the_same_template(both: Any, name: str) -> None:
    old, new = both[False][0][name], both[True][0][name]
    assert "AWS::SageMaker::Cluster" in new and old == new


def test_each_old_call_warns_once_and_the_new_form_never(both: Any) -> None:
    old, new = both[False][1], both[True][1]
    assert len(old) == len(CONFIGURATIONS) and new == []
    assert any("provisioning=Provisioning(continuous_provisioning=..., autoscaling=..., "
               "tiered_checkpointing_memory_percent=...)" in w and "updates=Updates(update_rollback_alarms=...)" in w
               for w in old)
    assert any("network=TrainingNetwork.from_attributes(scope, id, training_subnet=..." in w for w in old)


def test_the_warning_points_at_the_callers_line(eks_network: Any) -> None:
    from smddp_infra import HyperPodCluster, InstanceGroup

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        HyperPodCluster(eks_network.node.scope, "Warned", network=eks_network, orchestrator="eks", eks_cluster_arn=EKS_ARN,
                        instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=2)])
    [warning] = [w for w in caught if FLAT in str(w.message)]
    assert warning.filename == __file__
    assert str(warning.message).endswith("pass orchestration=Orchestration(orchestrator=..., eks_cluster_arn=...)")


# --- one line for each wrong shape ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def eks_network() -> Any:
    from aws_cdk import App, Environment, Stack

    stack = Stack(App(context=cdk_context()), "Shapes", env=Environment(region="us-east-1"))
    return _network(stack, nat=True, count=2)


def _one_line(error: pytest.ExceptionInfo[BaseException], message: str) -> None:
    text = str(error.value)
    assert message in text and "\n" not in text, text


def test_a_non_network_is_one_line_naming_network(eks_network: Any) -> None:
    from aws_cdk import aws_s3 as s3

    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.errors import PropTypeError

    scope = eks_network.node.scope
    groups = [InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=2)]
    for index, wrong in enumerate((s3.Bucket.from_bucket_name(scope, "NotANetwork", "acme-jobs"), "training-network")):
        with pytest.raises(PropTypeError) as caught:
            HyperPodCluster(scope, f"Wrong{index}", network=wrong, instance_groups=groups)  # type: ignore[arg-type]
        _one_line(caught, "network must be an ITrainingNetwork (a TrainingNetwork, or TrainingNetwork.from_attributes(...)), got")
    with pytest.raises(PropTypeError) as caught:
        HyperPodCluster(scope, "NoNetwork", instance_groups=groups)
    _one_line(caught, "network is required: pass a TrainingNetwork, or TrainingNetwork.from_attributes(")


def _build(kind: str, **fields: Any) -> Any:
    from smddp_infra.constructs import hyperpod

    return getattr(hyperpod, kind)(**fields)


BAD_FIELDS = [
    ("Provisioning", {"autoscale": True}, "Provisioning has no field 'autoscale': did you mean 'autoscaling'?"),
    ("Orchestration", {"orchestrater": "eks"}, "Orchestration has no field 'orchestrater': did you mean 'orchestrator'?"),
    ("Nodes", {"mountpath": "/fsx"}, "Nodes has no field 'mountpath': did you mean 'mount_path'?"),
    ("Lifecycle", {"script": "a.sh"}, "Lifecycle has no field 'script': it takes lifecycle_script, lifecycle_prefix, lifecycle_bucket"),
    ("Updates", {"alarms": ["a"]}, "Updates has no field 'alarms': it takes update_rollback_alarms"),
    ("Roles", {"execution_role": None}, "Roles has no field 'execution_role': did you mean"),
]


@pytest.mark.parametrize(("kind", "fields", "message"), BAD_FIELDS, ids=[k for k, _, _ in BAD_FIELDS])
def test_an_unknown_field_is_one_line_naming_the_group_and_the_nearest_field(kind: str, fields: dict[str, Any],
                                                                            message: str) -> None:
    from smddp_infra.errors import PropTypeError

    with pytest.raises(PropTypeError) as caught:
        _build(kind, **fields)
    _one_line(caught, message)


BAD_VALUES = [
    ("Provisioning", {"tiered_checkpointing_memory_percent": 150},
     "tiered_checkpointing_memory_percent must be a whole percentage of instance memory from 0 to 100"),
    ("Provisioning", {"node_recovery": "yes"}, "node_recovery must be True or False, got str 'yes'"),
    ("Nodes", {"mount_path": "fsx"}, "mount_path must be an absolute path like /fsx"),
    ("Nodes", {"ips_per_node": 0}, "ips_per_node must be a whole number >= 1"),
    ("Nodes", {"interface_endpoints": "ssm"}, "interface_endpoints must be a list of endpoint service names (str)"),
    ("Orchestration", {"orchestrator": "k8s"}, "orchestrator must be 'slurm' or 'eks', got 'k8s'"),
    ("Orchestration", {"eks_cluster_arn": EKS_ARN}, "eks_cluster_arn is for orchestrator='eks' only"),
    ("Lifecycle", {"lifecycle_script": "scripts/on_init.sh"}, "lifecycle_script must be a file name of 1 to 128 characters"),
    ("Lifecycle", {"lifecycle_prefix": "/"}, "lifecycle_prefix must name a prefix in the job bucket"),
    ("Updates", {"update_rollback_alarms": [42]}, "update_rollback_alarms[0] must be a CloudWatch alarm"),
    ("Roles", {"role": "arn:aws:iam::123456789012:role/nodes"}, "role must be an"),
]


@pytest.mark.parametrize(("kind", "fields", "message"), BAD_VALUES, ids=[m[:30] for _, _, m in BAD_VALUES])
def test_a_group_refuses_a_bad_value_when_built(kind: str, fields: dict[str, Any], message: str) -> None:
    from smddp_infra.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        _build(kind, **fields)
    _one_line(caught, message)


def test_the_default_groups_build() -> None:
    from smddp_infra import HyperPodEks
    from smddp_infra.constructs.hyperpod import Lifecycle, Nodes, Orchestration, Provisioning, Roles, Updates

    assert Nodes().endpoints == ("ssm", "ssmmessages", "ec2messages") and Nodes(interface_endpoints=[]).endpoints == ()
    assert Provisioning().node_recovery and not Orchestration().eks_wanted
    assert not Orchestration("eks", eks_cluster_arn=EKS_ARN).eks_wanted  # the platform's EKS, left as it is
    assert Orchestration("eks", eks_settings=HyperPodEks(control_plane_availability_zone="use1-az6")).eks_wanted
    assert Lifecycle(lifecycle_prefix="/boot/").prefix == "boot" and Updates().alarm_names == [] and Roles().role is None


WRONG_CALLS = [
    ({"provisioning": {"autoscaling": True}}, "provisioning must be a Provisioning(...), got dict"),
    ({"provisioning": "Provisioning()"}, "provisioning must be a Provisioning(...), got str"),
    ({"autoscale": True}, "HyperPodCluster has no keyword 'autoscale': did you mean 'autoscaling'?"),
    ({"provisionning": None}, "HyperPodCluster has no keyword 'provisionning': did you mean 'provisioning'?"),
    ({"provisioning": "GROUP", "autoscaling": True},
     "pass autoscaling inside provisioning=Provisioning(...), not beside provisioning="),
]


@pytest.mark.parametrize(("props", "message"), WRONG_CALLS, ids=[m[:30] for _, m in WRONG_CALLS])
def test_a_wrong_group_or_keyword_is_one_line(eks_network: Any, props: dict[str, Any], message: str) -> None:
    from smddp_infra import HyperPodCluster, InstanceGroup
    from smddp_infra.constructs.hyperpod import Provisioning
    from smddp_infra.errors import ConfigError

    props = {k: Provisioning() if v == "GROUP" else v for k, v in props.items()}
    with pytest.raises(ConfigError) as caught:
        HyperPodCluster(eks_network.node.scope, "Wrong", network=eks_network, **props,
                        instance_groups=[InstanceGroup(name="gpu", instance_type="ml.p5.48xlarge", count=2)])
    _one_line(caught, message)

"""The pure HyperPod validators (no synth): the rules read botocore, and say when they cannot."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from smddp_infra.errors import ConfigError
from smddp_infra.hyperpod import InstanceGroup, api
from smddp_infra.hyperpod import validation as v
from smddp_infra.hyperpod.values import default_hyperpod_groups


@pytest.fixture
def no_botocore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if botocore were not installed (it is not a core dependency)."""
    api._sagemaker_model.cache_clear()
    monkeypatch.setattr(api, "_sagemaker_model", lambda: None)
    yield
    monkeypatch.undo()
    api._sagemaker_model.cache_clear()


def test_the_instance_types_are_botocores_enum_not_a_copy() -> None:
    import botocore.session

    enum = botocore.session.get_session().get_service_model("sagemaker").shape_for("ClusterInstanceType").enum
    assert api.cluster_instance_types() == tuple(enum)
    assert v.check_instance_type("t", enum[-1]) is None


def test_without_botocore_the_type_and_plan_checks_are_not_evaluated_and_say_so(no_botocore: Any) -> None:
    groups = [InstanceGroup(name="c", instance_type="ml.m5.2xlarge", count=1, slurm_node_type="Controller"),
              InstanceGroup(name="g", instance_type="ml.future.48xlarge", count=1, slurm_node_type="Compute",
                            training_plan_arn="arn:aws:sagemaker:us-east-1:123456789012:training-plan/x")]
    notes = v.check_groups("instance_groups", "slurm", groups)
    assert any(n.startswith("instance_groups[1].instance_type 'ml.future.48xlarge' not evaluated: botocore") for n in notes)
    assert any(n.startswith("instance_groups[1].training_plan_arn not evaluated") for n in notes)
    # rules that need no botocore still hold
    with pytest.raises(ConfigError, match="exactly one group with slurm_node_type='Controller'"):
        v.check_groups("instance_groups", "slurm", groups[1:])


def test_an_eks_arn_is_checked_even_without_botocore(no_botocore: Any) -> None:
    with pytest.raises(ConfigError, match="must be an EKS cluster ARN"):
        v.check_eks_cluster_arn("eks_cluster_arn", "eks", "arn:aws:ecs:us-east-1:123456789012:cluster/x")


def test_the_subnet_check_is_an_error_only_when_the_addresses_certainly_run_out() -> None:
    groups = [InstanceGroup(name="g", instance_type="ml.p5.48xlarge", count=48)]  # 48 x 5 = 240 IPs
    v.check_fits_subnet("instance_groups", groups, ips_override=None, subnet_mask=24, other_ips=11)  # 251 usable
    with pytest.raises(ConfigError, match=r"48 nodes need 240 private IPs .* \+ 12 for the file system"):
        v.check_fits_subnet("instance_groups", groups, ips_override=None, subnet_mask=24, other_ips=12)
    with pytest.raises(ConfigError, match="ips_per_node 32"):
        v.check_fits_subnet("instance_groups", groups, ips_override=32, subnet_mask=22, other_ips=0)


def test_deep_health_checks_default_on_accelerator_efa_types_only() -> None:
    assert v.default_health_checks("ml.p5.48xlarge") == ("InstanceStress", "InstanceConnectivity")
    assert v.default_health_checks("ml.trn1.32xlarge") == ("InstanceStress", "InstanceConnectivity")
    assert v.default_health_checks("ml.m5.2xlarge") == ()
    explicit = InstanceGroup(name="g", instance_type="ml.p5.48xlarge", count=1, deep_health_checks=())
    assert v.health_checks(explicit) == ()


def test_the_default_apps_groups_pass_every_rule() -> None:
    groups = default_hyperpod_groups("ml.p5.48xlarge", 16)
    assert v.check_groups("instance_groups", "slurm", groups) == []
    assert [g.slurm_node_type for g in groups] == ["Controller", "Compute"]

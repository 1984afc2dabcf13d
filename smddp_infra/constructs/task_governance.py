"""TaskGovernance: teams, quotas and priorities on an EKS-orchestrated HyperPodCluster.

HyperPod task governance is CloudFormation-native (REFERENCE section 12): one
``AWS::SageMaker::ClusterSchedulerConfig`` per cluster (aws-cdk-lib's L1 ``CfnClusterSchedulerConfig``)
and one ``AWS::SageMaker::ComputeQuota`` per team (aws-cdk-lib 2.275 has no L1 for it: a
``CfnResource`` with the schema's property names), on the add-on that turns them into Kueue queues
(``amazon-sagemaker-hyperpod-taskgovernance``, an ``AWS::EKS::Addon`` kept on delete). The Terraform
modules platforms use instead set governance with a CLI call; here CloudFormation owns it, so drift
detection, ``cdk diff`` and the guard see it.

Values and their rules: :mod:`smddp_infra.hyperpod.governance`. Construct ids are part of the
contract: a team's quota sits under ``Team-<team_name>``, so a renamed team is a new logical id (delete
+ create); ``TeamName`` is create-only besides, and ``smddp-infra guard`` refuses both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from aws_cdk import Annotations, CfnResource, aws_eks as eks_l1, aws_sagemaker as sagemaker
from constructs import Construct

from smddp_infra.constructs.acknowledgements import acknowledge
from smddp_infra.constructs.hyperpod import _default_name
from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.facts.arns import eks_cluster_name
from smddp_infra.hyperpod import governance as gov

if TYPE_CHECKING:
    from smddp_infra.constructs.hyperpod import HyperPodCluster

#: Synth-warning ids: quotas of a type that add up past the cluster's instances; a borrow limit
#: outside the documented range.
WARN_QUOTA_OVERCOMMIT = "smddp:governanceQuotaOvercommit"
WARN_BORROW_LIMIT = "smddp:governanceBorrowLimit"


class TaskGovernance(Construct):
    """Task governance on a HyperPod cluster: the cluster policy, a quota per team, the add-on.

    Attributes: ``scheduler_config`` (the ``CfnClusterSchedulerConfig``), ``quotas`` (team name ->
    ``CfnResource`` of ``AWS::SageMaker::ComputeQuota``), ``addon`` (the ``CfnAddon``, or None),
    ``teams``, ``policy``.
    """

    def __init__(self, scope: Construct, id: str, *, cluster: "HyperPodCluster", teams: Sequence[gov.TeamQuota],
                 policy: Optional[gov.SchedulerPolicy] = None, addon: bool = True,
                 addon_version: Optional[str] = None) -> None:
        """
        :param cluster: the EKS-orchestrated :class:`~smddp_infra.constructs.hyperpod.HyperPodCluster`
            (a Slurm one is refused: the service rejects it).
        :param teams: :class:`~smddp_infra.hyperpod.governance.TeamQuota` values, one ``ComputeQuota`` each;
            each instance type must be one of the cluster's groups.
        :param policy: :class:`~smddp_infra.hyperpod.governance.SchedulerPolicy`: priority classes, fair
            share. Default: fair share on, no priority classes.
        :param addon: install the task-governance add-on on the cluster's EKS cluster. Default: True (set
            False where the platform installs it, e.g. from the console).
        :param addon_version: the add-on's pinned ``AddonVersion`` (``v1.6.0-eksbuild.1``). Default: none,
            EKS's default for the cluster's Kubernetes version at create time.
        """
        from smddp_infra.constructs.hyperpod import HyperPodCluster

        if not isinstance(cluster, HyperPodCluster):
            raise PropTypeError(f"cluster must be a HyperPodCluster, got {type(cluster).__name__}")
        gov.check_orchestrator("cluster", cluster.orchestrator)
        teams = gov.check_teams("teams", teams)
        policy = policy if policy is not None else gov.SchedulerPolicy()
        if not isinstance(policy, gov.SchedulerPolicy):
            raise PropTypeError(f"policy must be a SchedulerPolicy(...), got {type(policy).__name__}")
        if addon_version is not None and (not isinstance(addon_version, str) or not addon_version.startswith("v")):
            raise ConfigError(f"addon_version must be an EKS add-on version like 'v1.6.0-eksbuild.1', got {addon_version!r}")
        counts = cluster_counts(cluster)
        for index, team in enumerate(teams):
            gov.check_quota_types(f"teams[{index}].instances", team.instances, counts)
        settings = getattr(cluster.eks, "settings", None)
        if addon and settings is not None and getattr(cluster.eks, "built", False):
            gov.check_kubernetes_version("cluster's eks_settings.kubernetes_version", settings.kubernetes_version)
        super().__init__(scope, id)
        self.teams, self.policy = teams, policy
        self._annotate(teams, counts)
        self.addon: Optional[eks_l1.CfnAddon] = self._addon(cluster, addon_version) if addon else None
        self.scheduler_config = sagemaker.CfnClusterSchedulerConfig(
            self, "SchedulerConfig", cluster_arn=cluster.cluster_arn,
            name=policy.name or _default_name(self), scheduler_config=_scheduler_config(policy))
        self.quotas: dict[str, CfnResource] = {}
        for team in teams:
            holder = Construct(self, f"Team-{team.team_name}")
            self.quotas[team.team_name] = CfnResource(holder, "Quota", type=gov.QUOTA_TYPE, properties={
                "Name": team.name or _default_name(holder),
                "ClusterArn": cluster.cluster_arn,
                "ComputeQuotaConfig": team.quota_config(),
                "ComputeQuotaTarget": team.target(),
            })
            acknowledge(self.quotas[team.team_name], "compute-quota-type")
        for resource in (self.scheduler_config, *self.quotas.values()):
            if self.addon is not None:  # the add-on's Kueue turns the policy and quotas into queues
                resource.node.add_dependency(self.addon)

    def _annotate(self, teams: Sequence[gov.TeamQuota], counts: dict[str, int]) -> None:
        note = gov.not_evaluated()
        if note:
            Annotations.of(self).add_info(note)
        for warning in gov.quota_overcommit_warnings(((t.team_name, t.instances) for t in teams), counts):
            Annotations.of(self).add_warning_v2(WARN_QUOTA_OVERCOMMIT, warning)
        for index, team in enumerate(teams):
            outside = gov.borrow_limit_warning(f"teams[{index}]", team.borrow_limit)
            if outside:
                Annotations.of(self).add_warning_v2(WARN_BORROW_LIMIT, outside)

    def _addon(self, cluster: "HyperPodCluster", version: Optional[str]) -> Optional[eks_l1.CfnAddon]:
        """The add-on on the EKS cluster the HyperPod cluster names: the one it built or imported, or
        the one its ``eks_cluster_arn`` names. Kept on delete (the queues keep running with the stack gone)."""
        name = getattr(cluster.eks, "cluster_name", None) if cluster.eks is not None else None
        if name is None:
            name = eks_cluster_name(cluster.eks_cluster_arn)
        if name is None:
            Annotations.of(self).add_info("task governance: the EKS cluster's name is not known here, so the "
                                          f"{gov.TASK_GOVERNANCE_ADDON} add-on is not installed: install it first")
            return None
        return eks_l1.CfnAddon(self, "Addon", cluster_name=name, addon_name=gov.TASK_GOVERNANCE_ADDON,
                               addon_version=version, preserve_on_delete=True)


def _scheduler_config(policy: gov.SchedulerPolicy) -> sagemaker.CfnClusterSchedulerConfig.SchedulerConfigProperty:
    """``SchedulerConfig``: fair share always written (the API's default, said out loud), the rest when given."""
    sharing = policy.idle_resource_sharing
    return sagemaker.CfnClusterSchedulerConfig.SchedulerConfigProperty(
        fair_share="Enabled" if policy.fair_share else "Disabled",
        priority_classes=[sagemaker.CfnClusterSchedulerConfig.PriorityClassProperty(name=c.name, weight=c.weight)
                          for c in policy.priority_classes] or None,
        idle_resource_sharing=None if sharing is None else ("Enabled" if sharing else "Disabled"),
    )


def cluster_counts(cluster: "HyperPodCluster") -> dict[str, int]:
    """Instances per type across the cluster's groups (:func:`~smddp_infra.hyperpod.governance.instance_counts`)."""
    return gov.instance_counts((group.types, group.count) for group in cluster.instance_groups)


__all__ = ["TaskGovernance"]

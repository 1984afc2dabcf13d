"""TrainingNetworkStack: the deployable app's stack, built from :class:`NetworkSettings`.

Adds the individual stack outputs and the SSM parameter that carry the training-job settings
(the network itself publishes the whole document as ``TrainingJobConfig``); output keys are
fixed (:mod:`smddp_infra.contract`, not derived from construct paths) because
``cdk-outputs.json`` consumers, ``smddp-infra job-config`` among them, read them by name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from aws_cdk import CfnOutput, Environment, Fn, Stack, aws_kms as kms, aws_s3 as s3, aws_sns as sns, aws_ssm as ssm
from constructs import Construct

from smddp_infra.constructs.training_network import Existing, TrainingNetwork
from smddp_infra.contract import (
    DOCUMENT_OUTPUT,
    OUTPUT_CHECKPOINT,
    OUTPUT_CODE,
    OUTPUT_DIRECTORY_PATH,
    OUTPUT_FILE_SYSTEM_ID,
    OUTPUT_LAUNCH_POLICY,
    OUTPUT_MOUNT_NAME,
    OUTPUT_OUTPUT,
    OUTPUT_PARAMETER_NAME,
    OUTPUT_ROLE,
    OUTPUT_SECURITY_GROUPS,
    OUTPUT_SUBNETS,
)
from smddp_infra.settings import AppOptions, NetworkSettings

class TrainingNetworkStack(Stack):
    """One SMDDP training network with its job settings as outputs and an SSM parameter.

    Attributes: ``network`` (:class:`TrainingNetwork`), ``settings``,
    ``job_config_parameter``.
    """

    def __init__(self, scope: Construct, id: str, *, settings: NetworkSettings, **kwargs: Any) -> None:
        """
        :param settings: the parsed ``smddp:*`` context (see :class:`NetworkSettings`).
        :param kwargs: passed to ``Stack`` (``env`` defaults to the settings' region, with no
            account, so synth needs no credentials and makes no lookups).
        """
        kwargs.setdefault("env", Environment(region=settings.region))
        kwargs.setdefault("description", "SageMaker SMDDP training network (smddp_infra)")
        super().__init__(scope, id, **kwargs)
        self.settings = settings

        app = settings.app
        dataset_bucket: Optional[s3.IBucket] = None
        if settings.dataset_bucket_name:
            dataset_bucket = s3.Bucket.from_bucket_name(self, "DatasetBucket", settings.dataset_bucket_name)
        key: Optional[kms.IKey] = None
        if app.kms_key and app.kms_key != "create":
            key = kms.Key.from_key_arn(self, "ImportedKey", app.kms_key)

        # The settings' spec as it is (validated once, when it was read): errors name the keys.
        # The default stack's document output keeps its first name (cdk-outputs.json readers).
        spec = settings.spec
        self.network = TrainingNetwork(
            self,
            "TrainingNetwork",
            spec=replace(spec, jobs=replace(spec.jobs, job_config_output_id=DOCUMENT_OUTPUT)),
            monitoring=self._monitoring(app),
            existing=Existing(dataset_bucket=dataset_bucket, encryption_key=key),
        )

        #: The launch guardrail: attach it (by the LaunchPolicyArn output) to whoever starts jobs.
        self.launch_policy = self.network.launch_policy()
        job = self.network.job_settings()
        document = self.network.job_config_json()
        self.job_config_parameter = ssm.StringParameter(
            self,
            "TrainingJobConfigParameter",
            description="SMDDP training-job settings (smddp-infra job-config reads the same JSON)",
            string_value=document,
        )
        outputs = {
            OUTPUT_SUBNETS: Fn.join(",", list(job.subnets)),
            OUTPUT_SECURITY_GROUPS: Fn.join(",", list(job.security_group_ids)),
            OUTPUT_ROLE: job.role_arn,
            OUTPUT_CHECKPOINT: job.checkpoint_s3_uri,
            OUTPUT_OUTPUT: job.output_s3_uri,
            OUTPUT_CODE: job.code_s3_uri,
            OUTPUT_FILE_SYSTEM_ID: job.file_system.id,
            OUTPUT_MOUNT_NAME: job.file_system.mount_name,
            OUTPUT_DIRECTORY_PATH: job.file_system.directory_path,
            OUTPUT_PARAMETER_NAME: self.job_config_parameter.parameter_name,
            OUTPUT_LAUNCH_POLICY: self.launch_policy.managed_policy_arn,
        }
        for key_name, value in outputs.items():
            assert value is not None, key_name  # the network always has output and code prefixes
            CfnOutput(self, key_name, value=value)
        self.hyperpod = self._hyperpod(settings) if app.hyperpod else None

    def _hyperpod(self, settings: NetworkSettings) -> Any:
        """``smddp:hyperpod=true``: a Slurm cluster on the network (:func:`default_hyperpod_groups`)."""
        from smddp_infra.constructs.hyperpod import HyperPodCluster
        from smddp_infra.contract import OUTPUT_HYPERPOD_CLUSTER
        from smddp_infra.hyperpod.values import default_hyperpod_groups

        cluster = HyperPodCluster(self, "HyperPod", network=self.network,
                                  instance_groups=default_hyperpod_groups(settings.instance_type, settings.instance_count))
        CfnOutput(self, OUTPUT_HYPERPOD_CLUSTER, value=cluster.cluster_arn)
        return cluster

    def _monitoring(self, settings: AppOptions) -> Any:
        """``smddp:monitoring`` and its three companions as the network's ``monitoring`` prop."""
        from smddp_infra.constructs.monitoring import MonitoringOptions

        if not settings.monitoring:
            return False
        topic = (sns.Topic.from_topic_arn(self, "AlarmTopic", settings.alarm_topic_arn)
                 if settings.alarm_topic_arn else None)
        return MonitoringOptions(checkpoint_gib=settings.checkpoint_gib, alarm_topic=topic,
                                 training_job_name_prefix=settings.training_job_name_prefix)

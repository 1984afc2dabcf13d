"""Job settings for SageMaker from a deployed network: read, validate, render.

Three rooms, as the work splits: :mod:`smddp_infra.contract` reads cdk-outputs.json into a
typed :class:`~smddp_infra.contract.JobDocument`; :mod:`.validation` checks it against the
CreateTrainingJob limits; :mod:`.render` writes SDK v2, SDK v3 or boto3 settings. Pure
Python: ``pip install smddp-infra`` on a laptop without Node is enough to use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from smddp_infra.contract import (
    CHECKPOINT_LOCAL_PATH,
    DOCUMENT_OUTPUT,
    FILE_SYSTEM_TYPE,
    DeployedNetwork,
    FileSystemRef,
    JobDocument,
    checkpoint_s3_uri,
    read_outputs_file,
    select_network,
)
from smddp_infra.jobconfig.launcher import SMDDP_DISTRIBUTION, TORCHRUN_DISTRIBUTION, Launcher, launcher_for
from smddp_infra.jobconfig.render import (
    DEFAULT_CHANNEL,
    FORMATS,
    create_training_job_fragment,
    missing_locations_warning,
    render,
    sdk_v2_kwargs,
    sdk_v3_pieces,
    v2_distribution,
)
from smddp_infra.jobconfig.validation import (
    check_max_runtime,
    check_plan_zone,
    check_training_plan_arn,
    max_runtime_problem,
    validate_document,
)

__all__ = [
    "CHECKPOINT_LOCAL_PATH", "DEFAULT_CHANNEL", "DOCUMENT_OUTPUT", "FILE_SYSTEM_TYPE", "FORMATS",
    "SMDDP_DISTRIBUTION", "TORCHRUN_DISTRIBUTION", "DeployedNetwork", "FileSystemRef", "JobDocument",
    "Launcher", "checkpoint_s3_uri", "create_training_job_fragment", "job_document_from_outputs_file",
    "launcher_for", "missing_locations_warning", "render", "sdk_v2_kwargs", "sdk_v3_pieces",
    "check_max_runtime", "check_plan_zone", "check_training_plan_arn", "max_runtime_problem", "v2_distribution", "validate_document", "validated",
]


def validated(network: DeployedNetwork, *, instance_type: Optional[str] = None,
              instance_count: Optional[int] = None, max_runtime_seconds: Optional[int] = None,
              training_plan_arn: Optional[str] = None,
              training_plan_availability_zone_id: Optional[str] = None) -> JobDocument:
    """The network's document with the cluster shape, runtime and plan overrides applied, validated."""
    return validate_document(network.job_document(instance_type=instance_type, instance_count=instance_count,
                                                  max_runtime_seconds=max_runtime_seconds,
                                                  training_plan_arn=training_plan_arn,
                                                  training_plan_availability_zone_id=training_plan_availability_zone_id),
                             where=network.where)


def job_document_from_outputs_file(path: "str | Path", *, network: Optional[str] = None,
                                   stack: Optional[str] = None, instance_type: Optional[str] = None,
                                   instance_count: Optional[int] = None,
                                   max_runtime_seconds: Optional[int] = None) -> JobDocument:
    """Read cdk-outputs.json, pick the network and return its validated document."""
    chosen = select_network(read_outputs_file(path), network=network, stack=stack)
    return validated(chosen, instance_type=instance_type, instance_count=instance_count,
                     max_runtime_seconds=max_runtime_seconds)

"""``smddp-infra job-config``: cdk-outputs.json -> ready-to-use training-job settings.

The stack publishes everything a SageMaker training job needs from the network (subnet,
EFA security group, role, checkpoint prefix, FSx for Lustre file system) as outputs.
This command turns the file ``cdk deploy --outputs-file`` writes into SDK v2 Estimator
and ``fit`` arguments, SDK v3 ModelTrainer pieces or a CreateTrainingJob fragment, so nobody
copies ids by hand. A stack deployed before the output/code prefixes existed still renders,
with a one-line warning on stderr: the SDK would otherwise fall back to a bucket the
execution role cannot use, and the job would fail only after it started. Pure: it never
imports aws_cdk (``pip install smddp-infra`` on a laptop without Node is enough to run it).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional

from smddp_infra.commands import instance_flags

HELP = "Turn cdk-outputs.json into SageMaker training-job settings (SDK v2, SDK v3 or boto3)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from smddp_infra.contract import DEFAULT_MAX_RUNTIME_SECONDS, MAX_RUNTIME_LIMIT_SECONDS
    from smddp_infra.jobconfig import DEFAULT_CHANNEL, FORMATS

    parser.add_argument("--outputs", default="cdk-outputs.json", metavar="FILE",
                        help="the file written by `cdk deploy --outputs-file` (default: cdk-outputs.json)")
    parser.add_argument("--format", required=True, choices=list(FORMATS), dest="fmt",
                        help="; ".join(f"{k}: {v}" for k, v in FORMATS.items()))
    parser.add_argument("--network", default=None, metavar="NAME",
                        help="the network to read when the file holds several (its name or Stack/Name, "
                             "as listed when several are found)")
    parser.add_argument("--stack", default=None, metavar="NAME",
                        help="the stack to read when the file holds several")
    parser.add_argument("--channel", default=DEFAULT_CHANNEL, metavar="NAME",
                        help=f"input channel name for the FSx data (default: {DEFAULT_CHANNEL})")
    parser.add_argument("--instance-type", default=None, metavar="TYPE",
                        help="override the stack's instance type (required without a TrainingJobConfig output)")
    parser.add_argument("--instance-count", default=None, metavar="N",
                        help="override the stack's instance count (required without a TrainingJobConfig output)")
    parser.add_argument("--max-runtime-seconds", default=None, metavar="SECONDS",
                        help="StoppingCondition.MaxRuntimeInSeconds for every format (v2 max_run, v3 "
                             "stopping_condition, boto3 StoppingCondition); default: the network's "
                             f"max_runtime_seconds, else {DEFAULT_MAX_RUNTIME_SECONDS} (24 h); at most "
                             f"{MAX_RUNTIME_LIMIT_SECONDS} (28 days)")
    parser.add_argument("--training-plan-arn", default=None, metavar="ARN",
                        help="run on a SageMaker training plan's reserved capacity: v2 training_plan, v3 "
                             "Compute(training_plan_arn=...), boto3 ResourceConfig.TrainingPlanArn (default: the "
                             "network's training_plan_arn, else none)")
    parser.add_argument("--cluster-template", default=None, metavar="TEMPLATE",
                        help="with --format hyperpod: the HyperPod cluster's synthesized template (a file, or a cdk.out "
                             "directory with --stack): adds where the job lands (partitions, or nodeSelector and "
                             "tolerations on EKS), capacity, Spot and tiered checkpointing")
    parser.add_argument("--plan-az-id", default=None, metavar="AZ_ID",
                        help="the AZ ID of the plan's reserved capacity (DescribeTrainingPlan -> "
                             "ReservedCapacitySummaries[].AvailabilityZoneId): refused when the network's subnet "
                             "is placed by AZ ID in another one; 'not evaluated' when its AZ ID is unknown")


def _runtime(text: str) -> int:
    """--max-runtime-seconds parsed here, like --instance-count: one line naming the flag."""
    from smddp_infra.jobconfig import check_max_runtime

    try:
        value: object = int(text)
    except ValueError:
        value = text
    return check_max_runtime(value, setting="--max-runtime-seconds")


def _cluster(path: str, stack: Optional[str]) -> Any:
    """The one HyperPod cluster of the template at ``path`` (one line when there is none, or several)."""
    from smddp_infra.errors import ConfigError
    from smddp_infra.hyperpod.template import hyperpod_clusters
    from smddp_infra.review.replacement import load_template

    template, _ = load_template(path, stack=stack, what="--cluster-template")
    try:
        clusters = hyperpod_clusters(template)
    except ConfigError as exc:  # a property of the wrong shape, named by its path in the template
        raise ConfigError(f"--cluster-template {path!r}: {exc}") from None
    if len(clusters) != 1:
        raise ConfigError(f"--cluster-template {path!r} must hold one AWS::SageMaker::Cluster, got {len(clusters)}"
                          + (f" ({', '.join(c.logical_id for c in clusters)})" if clusters else ""))
    return clusters[0]


def run(args: argparse.Namespace) -> int:
    from smddp_infra.contract import read_outputs_file, select_network
    from dataclasses import replace

    from smddp_infra.errors import ConfigError
    from smddp_infra.jobconfig import check_plan_zone, check_training_plan_arn, missing_locations_warning, render, validated
    from smddp_infra.jobconfig.validation import check_az_id

    count = instance_flags(args)
    runtime = _runtime(args.max_runtime_seconds) if args.max_runtime_seconds is not None else None
    plan = (check_training_plan_arn(args.training_plan_arn, setting="--training-plan-arn")
            if args.training_plan_arn is not None else None)
    plan_zone = check_az_id(args.plan_az_id, setting="--plan-az-id") if args.plan_az_id is not None else None
    network = select_network(read_outputs_file(args.outputs), network=args.network, stack=args.stack)
    document = validated(network, instance_type=args.instance_type, instance_count=count,
                         max_runtime_seconds=runtime, training_plan_arn=plan)
    if plan_zone is not None:
        if document.training_plan_arn is None:
            raise ConfigError(f"--plan-az-id {plan_zone} was given without a training plan: pass --training-plan-arn "
                              f"(or set the network's training_plan_arn), got none in {network.where}")
        document = replace(document, training_plan_availability_zone_id=plan_zone)
    # Refused (one line naming the flag or the document key) or "not evaluated" (stderr).
    zone_note = check_plan_zone(document, setting="--plan-az-id" if plan_zone else
                                f"{network.where}: trainingPlanAvailabilityZoneId")
    cluster = _cluster(args.cluster_template, args.stack) if args.cluster_template is not None else None
    text = json.dumps(render(document, args.fmt, channel=args.channel, cluster=cluster), indent=2) + "\n"
    # An older stack still renders, but the job would fail late in S3: say so on stderr
    # (stdout stays pure JSON for `> job.json`).
    warning = missing_locations_warning(document, args.fmt, where=network.where)
    if warning:
        sys.stderr.write(f"smddp-infra job-config: warning: {warning}\n")
    if zone_note:
        sys.stderr.write(f"smddp-infra job-config: training plan AZ {zone_note}\n")
    # One write of the finished text: nothing half-printed if rendering fails.
    sys.stdout.write(text)
    return 0

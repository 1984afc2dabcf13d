"""The file system watches itself: read throughput against the baseline it was sized for, and free capacity.

The calculator sizes FSx for Lustre on a PLANNED read rate; nothing else tells a user when the
plan was wrong. The guide's "scaling collapses because the file system is too slow" looks like
low GPU utilisation and a slow job. This construct adds, per file system:

* ``ThroughputAlarm``: read MB/s (metric math ``Sum(DataReadBytes) / PERIOD / 1e6`` on
  ``AWS/FSx``, dimension ``FileSystemId``) at or above ``throughput_fraction`` of the plan's
  baseline MB/s for N of M periods: jobs read at the baseline, the file system is the
  bottleneck (re-plan with ``smddp-infra observe``);
* ``CapacityAlarm``: ``FreeDataStorageCapacity`` (in GiB) below the headroom: the next
  checkpoint may not fit;
* ``Dashboard``: read/write MB/s with the baseline and the planned requirement as horizontal
  lines, free capacity, metadata operations, and the training jobs' GPU utilisation when a
  job name prefix is known;
* ``AlarmTopic`` (unless ``alarm_topic`` is given): SNS, encrypted with a customer managed key
  (the network's own ``kms.Key`` when it has one, else ``AlarmKey``: alarm notifications to an
  encrypted topic need a key whose policy admits ``cloudwatch.amazonaws.com``, which the AWS
  managed ``alias/aws/sns`` key's policy cannot; AWS guidance, UNCONFIRMED offline), TLS-only policy. No subscription is created: who is told is the platform's choice.

The baseline is read from the calculator's record (:class:`~smddp_infra.contract.SizingRecord`,
the same one the job document publishes and ``observe`` reads), never computed again.
The arithmetic and defaults live in :mod:`smddp_infra.observe.metrics`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Optional

from aws_cdk import ArnFormat, Duration, RemovalPolicy, Stack, Token, aws_cloudwatch as cw, aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms, aws_sns as sns
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.contract import FSX_DIMENSION, FSX_NAMESPACE, MonitoringSettings, SizingRecord
from smddp_infra.errors import ConfigError, PropTypeError
from smddp_infra.facts.arns import alarm_topic_problem
from smddp_infra.observe import metrics as m
from smddp_infra.facts.names import is_sagemaker_name
from smddp_infra.schema.fields import Rule, number, rule_of, text, value, whole

#: SageMaker training job metrics (SageMaker "Monitor with CloudWatch": namespace, GPUUtilization,
#: dimension Host = "<job name>/algo-<n>").
TRAINING_JOBS_NAMESPACE = "/aws/sagemaker/TrainingJobs"
GPU_METRIC = "GPUUtilization"
_METRIC_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,255}$")
_METRIC = text("a CloudWatch metric name (letters, digits, _ . -)", lambda name: bool(_METRIC_NAME.match(name)))


def _fraction(upper: str, accepts: Callable[[float], bool]) -> Rule:
    return Rule(f"a number > 0 and {upper}", (int, float), accepts, synth_only=True)


@dataclass(frozen=True, kw_only=True)
class MonitoringOptions:
    """How a file system is watched. Every field has a default (see docs/observe.md for why).

    :param throughput_fraction: the throughput alarm fires at this fraction of the baseline MB/s. Default: 0.8.
    :param period_seconds: the alarms' and dashboard's period (a multiple of 60). Default: 300.
    :param datapoints_to_alarm: N of the N-of-M rule. Default: 3.
    :param evaluation_periods: M of the N-of-M rule. Default: 4.
    :param checkpoint_gib: the size of one checkpoint; the capacity alarm then fires below twice
        it. Default: none (10 % of the capacity).
    :param free_capacity_fraction: the capacity alarm's threshold without ``checkpoint_gib``. Default: 0.1.
    :param alarm_topic: the platform's SNS topic for alarm actions. Default: a new encrypted topic.
    :param training_job_name_prefix: training jobs on this file system start with this; adds their
        GPU utilisation to the dashboard. Default: none (no GPU widget).
    :param dashboard_name: Default: CloudFormation's generated name (dashboard names are global to the account).
    :param read_metric, write_metric, free_capacity_metric, metadata_metric: the ``AWS/FSx``
        metric names, overridable because the FSx metric set varies by deployment type (the four
        defaults are the documented Lustre ones; see docs/observe.md).
    """

    throughput_fraction: float = value(m.DEFAULT_THROUGHPUT_FRACTION, _fraction("<= 1 (a fraction of the baseline)",
                                                                               lambda f: 0 < f <= 1))
    period_seconds: int = value(m.DEFAULT_PERIOD_SECONDS, Rule(
        "a multiple of 60 (CloudWatch alarm periods on standard metrics) from 60 up", int,
        lambda seconds: seconds >= 60 and not seconds % 60, synth_only=True))
    datapoints_to_alarm: int = value(m.DEFAULT_DATAPOINTS_TO_ALARM, whole(1))
    evaluation_periods: int = value(m.DEFAULT_EVALUATION_PERIODS, whole(1))
    checkpoint_gib: Optional[float] = value(None, number(0, exclusive=True, unit="GiB", optional=True))
    free_capacity_fraction: float = value(m.DEFAULT_FREE_CAPACITY_FRACTION, _fraction("< 1", lambda f: 0 < f < 1))
    alarm_topic: Optional[sns.ITopic] = field(default=None, compare=False)
    training_job_name_prefix: Optional[str] = value(None, text(
        "the start of a SageMaker training job name (letters, digits and hyphens, at most 63)", is_sagemaker_name,
        optional=True))
    dashboard_name: Optional[str] = None
    read_metric: str = value("DataReadBytes", _METRIC)
    write_metric: str = value("DataWriteBytes", _METRIC)
    free_capacity_metric: str = value("FreeDataStorageCapacity", _METRIC)
    metadata_metric: str = value("MetadataOperations", _METRIC)


def monitoring_options(value: Any, *, prop: str = "monitoring") -> Optional[MonitoringOptions]:
    """``True`` (defaults), ``False`` (none) or a :class:`MonitoringOptions`; anything else is one line."""
    if value is True:
        return MonitoringOptions()
    if value is False or value is None:
        return None
    if not isinstance(value, MonitoringOptions):
        raise PropTypeError(f"{prop} must be True, False or MonitoringOptions(...), got {type(value).__name__} {value!r}")
    return value


def validate_options(o: MonitoringOptions, *, capacity_gib: int, prop: str = "monitoring") -> None:
    """Each field's rule, then the rules across fields; messages name ``monitoring.<field>`` and the value given."""
    for f in fields(o):
        if (rule := rule_of(f)) is not None:
            rule.check(f"{prop}.{f.name}", getattr(o, f.name))
    if o.datapoints_to_alarm > o.evaluation_periods:
        raise ConfigError(f"{prop}.datapoints_to_alarm must be <= evaluation_periods ({o.evaluation_periods}), "
                          f"got {o.datapoints_to_alarm!r}")
    if o.checkpoint_gib is not None and o.checkpoint_gib * m.CHECKPOINT_MULTIPLE >= capacity_gib:
        raise ConfigError(f"{prop}.checkpoint_gib={o.checkpoint_gib:g} needs {o.checkpoint_gib * m.CHECKPOINT_MULTIPLE:g} GiB "
                          f"free (twice the checkpoint), more than the file system's {capacity_gib:,} GiB: the capacity "
                          "alarm would never clear; plan a larger file system (dataset_gib)")
    topic = o.alarm_topic
    if topic is not None and (isinstance(topic, (str, bytes, dict, list)) or not hasattr(topic, "topic_arn")):
        raise PropTypeError(f"{prop}.alarm_topic must be an aws_sns.ITopic, e.g. sns.Topic.from_topic_arn(...), "
                            f"got {type(topic).__name__} {topic!r}")
    v.text(f"{prop}.dashboard_name", o.dashboard_name)


def check_topic_region(scope: Construct, topic: sns.ITopic, *, prop: str = "monitoring") -> None:
    """The alarm topic must be in the stack's Region and partition: CloudWatch alarm actions must
    be in the alarm's Region (CloudWatch User Guide, alarm actions; PutMetricAlarm refuses an SNS
    topic of another Region). Known when the stack's Region and the topic's ARN are literals."""
    region, arn = v.concrete_region(scope), topic.topic_arn
    problem = None if region is None or Token.is_unresolved(arn) else alarm_topic_problem(arn, region)
    if problem is not None:
        raise ConfigError(f"{prop}.alarm_topic {arn} {problem}")


class FileSystemMonitoring(Construct):
    """Two alarms, a dashboard and (unless given) an encrypted SNS topic for one FSx for Lustre file system.

    Attributes: ``throughput_alarm``, ``capacity_alarm``, ``dashboard``, ``topic`` (ITopic),
    ``topic_key`` (None with a given topic; the network's key when it has one of its own), ``options``, ``sizing``,
    ``throughput_threshold_mbps``, ``free_capacity_threshold_gib``; :meth:`settings`.
    """

    def __init__(self, scope: Construct, id: str, *, file_system_id: str, sizing: SizingRecord,
                 options: Optional[MonitoringOptions] = None, encryption_key: Optional[kms.IKey] = None) -> None:
        """
        :param file_system_id: the FSx file system id (a token in a template).
        :param encryption_key: the network's key: when it is a key of this app (``kms.Key``, whose
            policy can be extended) the topic uses it, else the construct creates ``AlarmKey``.
            Default: none (``AlarmKey``).
        :param sizing: the calculator's record of that file system (``LustrePlan.sizing_record()``):
            its baseline MB/s, planned requirement and capacity.
        :param options: Default: ``MonitoringOptions()``.
        """
        options = options or MonitoringOptions()
        validate_options(options, capacity_gib=sizing.storage_capacity_gib)
        super().__init__(scope, id)
        self.options = options
        self.sizing = sizing
        self.throughput_threshold_mbps = m.throughput_threshold_mbps(sizing.baseline_throughput_mbps,
                                                                     options.throughput_fraction)
        self.free_capacity_threshold_gib = m.free_capacity_threshold_gib(
            sizing.storage_capacity_gib, checkpoint_gib=options.checkpoint_gib, fraction=options.free_capacity_fraction)
        period = Duration.seconds(options.period_seconds)

        def fsx(name: str, expression: str, metric: str, statistic: str, label: str) -> cw.MathExpression:
            """One ``AWS/FSx`` metric of this file system (``name`` in ``expression``) in the unit shown."""
            return cw.MathExpression(expression=expression, label=label, period=period, using_metrics={name: cw.Metric(
                namespace=FSX_NAMESPACE, metric_name=metric, dimensions_map={FSX_DIMENSION: file_system_id},
                statistic=statistic, period=period)})

        self.read_mbps = fsx("read", m.mbps_expression("read"), options.read_metric, "Sum", "read MB/s")
        self.write_mbps = fsx("write", m.mbps_expression("write"), options.write_metric, "Sum", "write MB/s")
        self.free_gib = fsx("free", m.gib_expression("free"), options.free_capacity_metric, "Minimum", "free GiB")
        self.metadata_ops = fsx("metadata", m.per_second_expression("metadata"), options.metadata_metric, "Sum",
                                "metadata operations/s")

        baseline = sizing.baseline_throughput_mbps
        self.throughput_alarm = cw.Alarm(
            self, "ThroughputAlarm",
            metric=self.read_mbps,
            threshold=self.throughput_threshold_mbps,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=options.evaluation_periods,
            datapoints_to_alarm=options.datapoints_to_alarm,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            alarm_description=(
                f"Jobs are reading at the file system's baseline: read MB/s >= {self.throughput_threshold_mbps:,.1f} "
                f"({options.throughput_fraction:.0%} of the {baseline:,.1f} MB/s baseline) in {options.datapoints_to_alarm} "
                f"of {options.evaluation_periods} periods of {options.period_seconds} s. The file system is the "
                "bottleneck; re-plan with `smddp-infra observe`."),
        )
        self.capacity_alarm = cw.Alarm(
            self, "CapacityAlarm",
            metric=self.free_gib,
            threshold=self.free_capacity_threshold_gib,
            comparison_operator=cw.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluation_periods=1,
            alarm_description=(
                f"Free capacity below {self.free_capacity_threshold_gib:,.0f} GiB of {sizing.storage_capacity_gib:,} GiB "
                f"({'twice the ' + format(options.checkpoint_gib, 'g') + ' GiB checkpoint' if options.checkpoint_gib else format(options.free_capacity_fraction, '.0%') + ' of the capacity'}): "
                "the next checkpoint may not fit."),
        )

        self.topic_key: Optional[kms.Key] = None
        if options.alarm_topic is None:
            self.topic_key, topic = self._topic(encryption_key if isinstance(encryption_key, kms.Key) else None)
            self.topic: sns.ITopic = topic
        else:
            check_topic_region(self, options.alarm_topic)
            self.topic = options.alarm_topic
        for alarm in (self.throughput_alarm, self.capacity_alarm):
            alarm.add_alarm_action(cw_actions.SnsAction(self.topic))

        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=options.dashboard_name,
                                      default_interval=Duration.days(1))
        self.dashboard.add_widgets(*self._widgets())

    def _topic(self, key: Optional[kms.Key]) -> tuple[kms.Key, sns.Topic]:
        stack = Stack.of(self)
        if key is None:
            # Only in-flight notifications are encrypted with it: nothing to keep when it goes.
            key = kms.Key(self, "AlarmKey", description="SMDDP training network: alarm notifications (SNS)",
                          enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY,
                          pending_window=Duration.days(7))
        # CloudWatch encrypts the alarm notification with the topic's key as itself.
        key.add_to_resource_policy(iam.PolicyStatement(
            sid="CloudWatchAlarmsPublish",
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"],
            conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
        ))
        topic = sns.Topic(self, "AlarmTopic", display_name="SMDDP file system alarms", master_key=key, enforce_ssl=True)
        topic.add_to_resource_policy(iam.PolicyStatement(
            sid="CloudWatchAlarmsPublish",
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["sns:Publish"],
            resources=[topic.topic_arn],
            conditions={"StringEquals": {"aws:SourceAccount": stack.account},
                        "ArnLike": {"aws:SourceArn": stack.format_arn(service="cloudwatch", resource="alarm", resource_name="*",
                                                                      arn_format=ArnFormat.COLON_RESOURCE_NAME)}},
        ))
        return key, topic

    def _widgets(self) -> list[cw.IWidget]:
        sizing, options = self.sizing, self.options
        throughput = cw.GraphWidget(
            title="FSx read and write MB/s",
            left=[self.read_mbps, self.write_mbps],
            left_annotations=[
                cw.HorizontalAnnotation(value=sizing.baseline_throughput_mbps,
                                        label=f"baseline {sizing.baseline_throughput_mbps:,.1f} MB/s", color=cw.Color.RED),
                cw.HorizontalAnnotation(value=sizing.required_throughput_mbps,
                                        label=f"planned requirement {sizing.required_throughput_mbps:,g} MB/s",
                                        color=cw.Color.GREEN),
                cw.HorizontalAnnotation(value=self.throughput_threshold_mbps,
                                        label=f"alarm {options.throughput_fraction:.0%} of baseline", color=cw.Color.ORANGE),
            ],
            left_y_axis=cw.YAxisProps(label="MB/s", min=0, show_units=False),
            width=12,
        )
        capacity = cw.GraphWidget(
            title="FSx free capacity (GiB)",
            left=[self.free_gib],
            left_annotations=[cw.HorizontalAnnotation(value=self.free_capacity_threshold_gib,
                                                      label=f"alarm below {self.free_capacity_threshold_gib:,.0f} GiB",
                                                      color=cw.Color.RED)],
            left_y_axis=cw.YAxisProps(label="GiB", min=0, show_units=False),
            width=12,
        )
        metadata = cw.GraphWidget(title="FSx metadata operations/s", left=[self.metadata_ops],
                                  left_y_axis=cw.YAxisProps(min=0, show_units=False), width=12)
        widgets: list[cw.IWidget] = [throughput, capacity, metadata]
        if options.training_job_name_prefix:
            gpu = cw.MathExpression(
                expression=(f"SEARCH('{{{TRAINING_JOBS_NAMESPACE},Host}} MetricName=\"{GPU_METRIC}\" "
                            f"{options.training_job_name_prefix}', 'Average', {options.period_seconds})"),
                using_metrics={}, label="GPU utilisation", period=Duration.seconds(options.period_seconds))
            widgets.append(cw.GraphWidget(title=f"GPU utilisation of training jobs {options.training_job_name_prefix}*",
                                          left=[gpu], left_y_axis=cw.YAxisProps(label="%", min=0, show_units=False),
                                          width=12))
        widgets.append(cw.AlarmStatusWidget(alarms=[self.throughput_alarm, self.capacity_alarm], title="File system alarms",
                                            width=24 if len(widgets) % 2 == 0 else 12))
        return widgets

    def settings(self) -> MonitoringSettings:
        """What ``smddp-infra observe`` needs to read the same metrics the same way (job document)."""
        shared = {f.name: getattr(self.options, f.name) for f in fields(MonitoringSettings) if hasattr(self.options, f.name)}
        return MonitoringSettings(**shared, free_capacity_threshold_gib=self.free_capacity_threshold_gib,
                                  throughput_alarm=self.throughput_alarm.alarm_name,
                                  capacity_alarm=self.capacity_alarm.alarm_name, dashboard=self.dashboard.dashboard_name,
                                  alarm_topic_arn=self.topic.topic_arn)

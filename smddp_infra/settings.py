"""The app's settings: the ``smddp:*`` context keys, read by walking the schema's fields.

A reader, nothing more: each schema field that has a context key (its :class:`~smddp_infra.schema.fields.Rule`)
is read from cdk.json / ``-c`` through that rule (key -> field -> parse; a bad value is one line
naming the KEY), and the groups are built from what was read. The groups refuse bad values
themselves and :class:`~smddp_infra.schema.network.NetworkSpec` runs the cross-field rules when
it is built, with :attr:`NetworkSpec.names` set to the keys, so the app and the library give the
same answer in the words each user wrote. The keys only the app has (its region, a key ARN, a
dataset bucket name, the HyperPod switch, the monitoring options) are one more group here,
:class:`AppOptions`, read the same way. Pure Python (no aws_cdk): a bad value is reported
before jsii starts.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from smddp_infra.errors import ConfigError, unknown_field
from smddp_infra.facts.arns import alarm_topic_problem, is_kms_key_arn, is_sns_topic_arn
from smddp_infra.facts.names import is_sagemaker_name
from smddp_infra.facts.regions import REGION
from smddp_infra.facts.s3 import bucket_name_problem
from smddp_infra.partitions import absent_in, partition_of
from smddp_infra.schema.fields import FieldValueError, flag, group, number, rule_for, rule_of, text, value
from smddp_infra.schema.network import Jobs, NetworkSpec, Placement, Security, Storage, Workload


@group
@dataclass(frozen=True)
class AppOptions:
    """What only the app's context says: a construct user passes these as CDK objects or props."""

    #: The stack's region (``Environment(region=...)``). Default: us-east-1.
    region: str = value("us-east-1", text("an AWS region name like us-east-1", lambda v: bool(REGION.match(v)),
                                          key="smddp:region"))
    #: ``create`` (``Security.create_encryption_key``) or a key ARN (``Existing.encryption_key``).
    kms_key: Optional[str] = value(None, text("'create' or a KMS key ARN", lambda v: v == "create" or is_kms_key_arn(v),
                                              key="smddp:kmsKey", optional=True))
    #: ``bucket`` or ``s3://bucket/prefix``: ``Existing.dataset_bucket`` and ``Storage.dataset_prefix``.
    dataset_bucket: Optional[str] = value(None, text(
        "an S3 bucket name or s3://bucket/prefix", lambda v: _bucket_problem(v) is None, key="smddp:datasetBucket",
        optional=True, hint=lambda v: f" ({_bucket_problem(v)})" if isinstance(v, str) and _bucket_problem(v) else ""))
    #: ``smddp-infra guard`` lets a replacing update through (recorded in the cloud assembly).
    allow_replacement: bool = value(False, flag(key="smddp:allowReplacement"))
    #: The file system's alarms, dashboard and topic (docs/observe.md).
    monitoring: bool = value(True, flag(key="smddp:monitoring"))
    #: ``MonitoringOptions.checkpoint_gib``.
    checkpoint_gib: Optional[float] = value(None, number(0, exclusive=True, unit="GiB", key="smddp:checkpointGiB",
                                                         optional=True))
    #: ``MonitoringOptions.training_job_name_prefix``.
    training_job_name_prefix: Optional[str] = value(None, text(
        "the start of a SageMaker training job name (letters, digits and hyphens, at most 63)", is_sagemaker_name,
        key="smddp:trainingJobNamePrefix", optional=True))
    #: ``MonitoringOptions.alarm_topic`` by ARN.
    alarm_topic_arn: Optional[str] = value(None, text(
        "an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)", is_sns_topic_arn, key="smddp:alarmTopicArn",
        optional=True))
    #: A SageMaker HyperPod Slurm cluster on the same network (docs/hyperpod.md): one controller
    #: and ``instance_count`` compute nodes of ``instance_type``.
    hyperpod: bool = value(False, flag(key="smddp:hyperpod"))


#: The groups the keys fill, in the order a user reads them (the app's own options first: its region).
_GROUPS: tuple[type, ...] = (AppOptions, Workload, Placement, Storage, Security, Jobs)
#: context key -> (group, field). ONE table, derived from the fields' own rules.
KEYS: Mapping[str, tuple[type, str]] = {
    rule.key: (cls, f.name) for cls in _GROUPS for f in dataclasses.fields(cls)
    if (rule := rule_of(f)) is not None and rule.key
}
#: Each schema field as the app's user writes it (:attr:`NetworkSpec.names`): its key, and the
#: fields a key stands for under another name; "" where no key sets the field.
_SPEC_NAMES: Mapping[str, str] = {
    **{field_name: key for key, (cls, field_name) in KEYS.items() if cls is not AppOptions},
    "encryption_key": "smddp:kmsKey", "create_encryption_key": "smddp:kmsKey=create",
    "dataset_bucket": "smddp:datasetBucket", "lustre_plan": "", "region": "smddp:region",
}


#: The deprecated flat fields of NetworkSettings -> the context key each stands for.
_FLAT_KEYS: Mapping[str, str] = {**{field_name: key for key, (_, field_name) in KEYS.items()},
                                 "deployment_type": "smddp:deploymentType"}


@dataclass(frozen=True, init=False)
class NetworkSettings:
    """What ``app.py`` builds: the network's schema (:attr:`spec`) and the app's own options.

    A field of either reads as an attribute (``settings.instance_count``, ``settings.region``)."""

    app: AppOptions
    spec: NetworkSpec

    def __init__(self, app: Optional[AppOptions] = None, spec: Optional[NetworkSpec] = None, **flat: Any) -> None:
        """:param flat: deprecated (one minor release): the flat fields ``NetworkSettings`` had
            (``region=``, ``instance_count=``, ...), read as the context keys they stand for."""
        if flat:
            if app is not None or spec is not None:
                raise ConfigError("NetworkSettings takes app= and spec=, or (deprecated) its old flat fields, not both")
            unknown = [name for name in flat if name not in _FLAT_KEYS]
            if unknown:
                raise unknown_field("NetworkSettings", unknown[0], sorted(_FLAT_KEYS))
            warnings.warn("NetworkSettings(<flat fields>) is deprecated: use NetworkSettings.from_context({'smddp:...': ...})"
                          f" ({', '.join(f'{name} -> {_FLAT_KEYS[name]}' for name in flat)})", DeprecationWarning, stacklevel=2)
            built = NetworkSettings.from_context({_FLAT_KEYS[name]: value for name, value in flat.items()})
            app, spec = built.app, built.spec
        if app is None or spec is None:
            raise ConfigError("NetworkSettings needs app= and spec= (NetworkSettings.from_context builds both)")
        object.__setattr__(self, "app", app)
        object.__setattr__(self, "spec", spec)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "spec" not in self.__dict__:  # copy/pickle probing, or not built yet
            raise AttributeError(name)
        for part in (self.app, *self.spec.groups()):
            if name in part.__dataclass_fields__:
                return getattr(part, name)
        raise AttributeError(f"NetworkSettings has no setting {name!r}")

    @property
    def dataset_bucket_name(self) -> Optional[str]:
        return _bucket_and_prefix(self.app.dataset_bucket)[0] if self.app.dataset_bucket else None

    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> "NetworkSettings":
        """Read every ``smddp:*`` key through its field's rule, then build the groups and the spec."""
        unknown = sorted(k for k in context if k.startswith("smddp:") and k not in KEYS)
        if unknown:
            raise ConfigError(f"unknown context key {unknown[0]}; known keys: {', '.join(sorted(KEYS))}")
        read: dict[type, dict[str, Any]] = {g: {} for g in _GROUPS}
        for key, (group_cls, field_name) in KEYS.items():
            raw = context.get(key)
            if raw is not None and raw != "":
                read[group_cls][field_name] = rule_for(group_cls, field_name).read(key, raw)
        app = AppOptions(**read[AppOptions])
        placement = read[Placement]
        if "availability_zone_id" in placement:  # an AZ ID places the subnet: cdk.json's AZ name steps aside
            placement.pop("availability_zone", None)
        else:  # the region's first AZ unless one is named
            placement.setdefault("availability_zone", f"{app.region}a")
        workload = read[Workload]
        if "required_throughput_mbps" in workload:  # cdk.json may name one rate, -c the other: the total wins
            workload.pop("read_mbps_per_gpu", None)
        storage = read[Storage]
        if "deployment_types" in storage:
            storage["deployment_types"] = tuple(_one_or_more(storage["deployment_types"]))
        if app.dataset_bucket:
            storage["dataset_prefix"] = _bucket_and_prefix(app.dataset_bucket)[1]
        given = frozenset(name for name, present in (("encryption_key", app.kms_key not in (None, "create")),
                                                     ("dataset_bucket", app.dataset_bucket)) if present)
        try:
            spec = NetworkSpec(Workload(**workload), Placement(**placement), Storage(**storage),
                               Security(create_encryption_key=app.kms_key == "create"), Jobs(**read[Jobs]),
                               given=given, names=_SPEC_NAMES, region=app.region)
        except FieldValueError as exc:  # a value the key's own rule let through that its group refuses
            raise ConfigError(exc.named(_SPEC_NAMES.get(exc.field_name, exc.field_name))) from None
        _check_app(app, spec)
        return cls(app=app, spec=spec)


def _bucket_and_prefix(value: str) -> tuple[str, str]:
    """``bucket`` or ``s3://bucket/prefix`` -> (bucket, prefix)."""
    bucket, _, prefix = value.removeprefix("s3://").partition("/")
    return bucket, prefix


def _bucket_problem(value: str) -> Optional[str]:
    """What S3 refuses in ``bucket`` or ``s3://bucket/prefix`` (None: nothing)."""
    return bucket_name_problem(_bucket_and_prefix(value)[0])


def _one_or_more(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _check_app(app: AppOptions, spec: NetworkSpec) -> None:
    """The app's own rules between its keys: the alarm topic's Region, HyperPod's instance types, and
    whether the region's partition has HyperPod at all."""
    problem = alarm_topic_problem(app.alarm_topic_arn, app.region) if app.alarm_topic_arn else None
    if problem is not None:
        raise ConfigError(f"smddp:alarmTopicArn {app.alarm_topic_arn} {problem}")
    if app.hyperpod:
        from smddp_infra.hyperpod.validation import check_instance_type

        check_instance_type("smddp:instanceType (with smddp:hyperpod=true)", spec.workload.instance_type)
        why = absent_in(app.region, "AWS::SageMaker::Cluster")
        if why is not None:
            raise ConfigError(f"smddp:hyperpod=true cannot be deployed in smddp:region {app.region} (partition "
                              f"{partition_of(app.region)}): {why}; set smddp:hyperpod=false there")


__all__ = ["KEYS", "AppOptions", "NetworkSettings"]

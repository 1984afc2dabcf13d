"""CloudFormation handlers moto 5.2.5 lacks (five) or fails on (two); all use moto's backends.

One more repair is not a handler: UpdateStack's ``UsePreviousValue`` for a defaulted
parameter (:func:`_previous_values_from_defaults`), which every ``cdk deploy`` update sends.

Handlers follow moto's ``CloudFormationModel`` protocol: ``create_from_cloudformation_json``
receives the resource with every intrinsic already resolved (Ref, Fn::GetAtt, Fn::Join),
``physical_resource_id`` is what ``Ref`` returns, ``get_cfn_attribute`` answers
``Fn::GetAtt``, and ``delete`` runs when the stack is deleted.
"""

from __future__ import annotations

import json
import secrets
import string
from typing import Any

from moto.cloudformation import parsing
from moto.core.common_models import CloudFormationModel
from moto.cloudwatch.models import Dimension, Metric, MetricDataQuery, MetricStat, cloudwatch_backends
from moto.ec2.models import ec2_backends
from moto.ec2.models.flow_logs import FlowLogs
from moto.fsx.models import fsx_backends
from moto.s3.models import s3_backends
from moto.sns.models import sns_backends
from moto.ssm.models import Parameter as SsmParameter

# moto builds its type map ONCE, lazily, from CloudFormationModel.__subclasses__(). Build it
# now, before the classes below exist, so that importing this module changes nothing: only
# register() adds the doubles, at a moment the caller chooses.
parsing.get_model_map()
parsing.get_name_type_map()


class FSxFileSystem(CloudFormationModel):
    """``AWS::FSx::FileSystem`` -> moto's ``FSxBackend.create_file_system``.

    The service generates a Lustre file system's MountName ("fsx" for SCRATCH_1, eight
    lowercase alphanumerics otherwise); moto's backend does not, so the double generates it
    and hands it to the backend inside LustreConfiguration, where DescribeFileSystems
    returns it. ``LustreMountName`` (GetAtt) and the API then agree, as on AWS.
    moto's backend does not keep FileSystemTypeVersion, so it cannot be read back.
    """

    #: What CloudFormation updates in place (FSx UpdateFileSystem): StorageCapacity, Tags and
    #: these LustreConfiguration keys. Any other change is CloudFormation's replacement: a new
    #: file system (new id) is created and, the resource being RETAINed, the old one stays.
    #: PerUnitStorageThroughput is left out: CloudFormation's spec marks it as replacing.
    IN_PLACE_LUSTRE_KEYS = frozenset({
        "WeeklyMaintenanceStartTime", "DailyAutomaticBackupStartTime", "AutomaticBackupRetentionDays",
        "AutoImportPolicy", "DataCompressionType", "LogConfiguration", "RootSquashConfiguration",
        "MetadataConfiguration", "ThroughputCapacity", "DataReadCacheConfiguration",
    })

    def __init__(self, file_system: Any, account_id: str, region_name: str, props: dict[str, Any] | None = None) -> None:
        self.file_system = file_system
        self.account_id = account_id
        self.region_name = region_name
        self.props = props or {}

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::FSx::FileSystem"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in {"DNSName", "LustreMountName", "ResourceARN"}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> "FSxFileSystem":
        props = cloudformation_json["Properties"]
        lustre = props.get("LustreConfiguration")
        if props["FileSystemType"] == "LUSTRE":
            lustre = dict(lustre or {})
            scratch_1 = lustre.get("DeploymentType", "SCRATCH_1") == "SCRATCH_1"
            alphabet = string.ascii_lowercase + string.digits
            lustre["MountName"] = "fsx" if scratch_1 else "".join(secrets.choice(alphabet) for _ in range(8))
        file_system = fsx_backends[account_id][region_name].create_file_system(
            client_request_token=None,
            file_system_type=props["FileSystemType"],
            storage_capacity=int(props["StorageCapacity"]) if "StorageCapacity" in props else None,
            storage_type=props.get("StorageType", "SSD"),
            subnet_ids=props["SubnetIds"],
            security_group_ids=props.get("SecurityGroupIds", []),
            tags=props.get("Tags"),
            kms_key_id=props.get("KmsKeyId"),
            windows_configuration=props.get("WindowsConfiguration"),
            lustre_configuration=lustre,
            ontap_configuration=props.get("OntapConfiguration"),
            file_system_type_version=props.get("FileSystemTypeVersion"),
            open_zfs_configuration=props.get("OpenZFSConfiguration"),
        )
        return cls(file_system, account_id, region_name, props)

    @classmethod
    def update_from_cloudformation_json(  # type: ignore[override]
        cls, original_resource: "FSxFileSystem", new_resource_name: str, cloudformation_json: dict[str, Any],
        account_id: str, region_name: str,
    ) -> "FSxFileSystem":
        """In place for StorageCapacity (larger only, as UpdateFileSystem), Tags and the updatable
        Lustre settings; otherwise a replacement: a new file system, the old one kept (RETAIN)."""
        props = cloudformation_json["Properties"]
        before = original_resource.props
        changed = {k for k in set(props) | set(before) if props.get(k) != before.get(k)}
        lustre_before, lustre_after = before.get("LustreConfiguration") or {}, props.get("LustreConfiguration") or {}
        lustre_changed = {k for k in set(lustre_before) | set(lustre_after) if lustre_before.get(k) != lustre_after.get(k)}
        if changed - {"StorageCapacity", "Tags", "LustreConfiguration"} or lustre_changed - cls.IN_PLACE_LUSTRE_KEYS:
            return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)
        file_system = original_resource.file_system
        capacity = int(props["StorageCapacity"])
        if capacity < file_system.storage_capacity:
            raise ValueError(f"BadRequest: StorageCapacity {capacity} is less than the current {file_system.storage_capacity}")
        file_system.storage_capacity = capacity
        if file_system.lustre_configuration is not None:
            file_system.lustre_configuration.update({k: lustre_after[k] for k in lustre_changed if k in lustre_after})
        if props.get("Tags"):
            file_system.backend.tagger.tag_resource(file_system.resource_arn, props["Tags"])
        original_resource.props = props
        return original_resource

    @property
    def physical_resource_id(self) -> str:
        return self.file_system.file_system_id

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "LustreMountName":
            return (self.file_system.lustre_configuration or {}).get("MountName")
        if attribute_name == "DNSName":
            return self.file_system.dns_name
        if attribute_name == "ResourceARN":
            return self.file_system.resource_arn
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        raise UnformattedGetAttTemplateException()

    def delete(self, account_id: str, region_name: str) -> None:
        fsx_backends[account_id][region_name].delete_file_system(
            self.physical_resource_id, None, None, None, None
        )

    def is_created(self) -> bool:
        return True


class SecurityGroupEgress(CloudFormationModel):
    """``AWS::EC2::SecurityGroupEgress`` -> moto's ``authorize_security_group_egress``.

    One CloudFormation behaviour is reproduced on purpose: a VPC security group is created
    with a default allow-all egress rule (0.0.0.0/0, all protocols), and CloudFormation
    removes it when a standalone egress rule is added to the group. aws-cdk-lib relies on
    that: with ``allow_all_outbound=False`` it drops its "Disallow all traffic" placeholder
    as soon as an egress rule is added, even a standalone one (SecurityGroup's
    ``removeNoTrafficRule``; aws-cdk issue #987 / PR #998 describe CloudFormation stripping
    the default rule). Without this step the read-back would show an allow-all rule that a
    real deployment does not have. The default rule is revoked once per group, before the
    group's first standalone rule, so a template that declares allow-all itself keeps it.
    """

    _stripped_default: set[str] = set()

    def __init__(self, group_id: str, rule_id: str, request: dict[str, Any], account_id: str, region_name: str) -> None:
        self.group_id = group_id
        self.rule_id = rule_id
        self.request = request
        self.account_id = account_id
        self.region_name = region_name

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::EC2::SecurityGroupEgress"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Id"

    @staticmethod
    def _request(props: dict[str, Any]) -> dict[str, Any]:
        description = props.get("Description")
        ip_ranges: list[dict[str, Any]] = []
        source_groups: list[dict[str, Any]] = []
        prefix_lists: list[dict[str, Any]] = []
        if "CidrIp" in props:
            ip_ranges.append({"CidrIp": props["CidrIp"], "Description": description})
        if "CidrIpv6" in props:
            ip_ranges.append({"CidrIpv6": props["CidrIpv6"], "Description": description})
        if "DestinationSecurityGroupId" in props:
            source_groups.append({"GroupId": props["DestinationSecurityGroupId"], "Description": description})
        if "DestinationPrefixListId" in props:
            prefix_lists.append({"PrefixListId": props["DestinationPrefixListId"], "Description": description})
        return {
            "group_name_or_id": props["GroupId"],
            "ip_protocol": str(props["IpProtocol"]),
            "from_port": props.get("FromPort"),
            "to_port": props.get("ToPort"),
            "ip_ranges": ip_ranges,
            "source_groups": source_groups,
            "prefix_list_ids": prefix_lists,
        }

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> "SecurityGroupEgress":
        backend = ec2_backends[account_id][region_name]
        request = cls._request(cloudformation_json["Properties"])
        group = backend.get_security_group_by_name_or_id(request["group_name_or_id"])
        if group is not None and group.id not in cls._stripped_default:
            cls._stripped_default.add(group.id)
            for rule in list(group.egress_rules):
                if rule.ip_protocol == "-1" and rule.ip_range == {"CidrIp": "0.0.0.0/0"}:
                    backend.revoke_security_group_egress(group.id, "-1", None, None, [], security_rule_ids=[rule.id])
        rules, group = backend.authorize_security_group_egress(**request)
        return cls(group.id, rules[0].id, request, account_id, region_name)

    @property
    def physical_resource_id(self) -> str:
        return self.rule_id

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "Id":
            return self.rule_id
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        raise UnformattedGetAttTemplateException()

    def delete(self, account_id: str, region_name: str) -> None:
        ec2_backends[account_id][region_name].revoke_security_group_egress(
            self.group_id, self.request["ip_protocol"], None, None, [], security_rule_ids=[self.rule_id]
        )

    def is_created(self) -> bool:
        return True


class S3BucketPolicy(CloudFormationModel):
    """``AWS::S3::BucketPolicy`` -> moto's ``S3Backend.put_bucket_policy`` (the JSON document)."""

    def __init__(self, bucket_name: str, account_id: str, region_name: str) -> None:
        self.bucket_name = bucket_name
        self.account_id = account_id
        self.region_name = region_name

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::S3::BucketPolicy"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return False

    @staticmethod
    def _backend(account_id: str, region_name: str) -> Any:
        return s3_backends[account_id][parsing.get_partition(region_name)]

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> "S3BucketPolicy":
        props = cloudformation_json["Properties"]
        document = props["PolicyDocument"]
        body = document if isinstance(document, str) else json.dumps(document)
        cls._backend(account_id, region_name).put_bucket_policy(props["Bucket"], body.encode())
        return cls(props["Bucket"], account_id, region_name)

    @property
    def physical_resource_id(self) -> str:
        return self.bucket_name

    def delete(self, account_id: str, region_name: str) -> None:
        self._backend(account_id, region_name).delete_bucket_policy(self.bucket_name)

    def is_created(self) -> bool:
        return True


class FlowLogToS3Prefix(FlowLogs):
    """``AWS::EC2::FlowLog`` delivering to ``arn:aws:s3:::bucket/prefix/``: moto's own handler,
    with a work-around for one moto bug.

    AWS accepts a key prefix after the bucket in an S3 LogDestination. moto 5.2.5 looks the
    whole ``bucket/prefix/`` up as a bucket name, reports the flow log as unsuccessful, and
    its CloudFormation handler then fails with IndexError (HTTP 500 on CreateStack; the CLI's
    retry then meets AlreadyExistsException). The double hands moto's handler the bucket ARN,
    so moto still checks that the bucket exists, then records the full destination on the
    flow log, so DescribeFlowLogs returns what the template asked for, as on AWS.
    Other destinations go to moto's handler unchanged. Like moto's handler it has no delete.
    """

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> FlowLogs:
        props = cloudformation_json["Properties"]
        destination = props.get("LogDestination")
        if props.get("LogDestinationType") != "s3" or not isinstance(destination, str) or "/" not in destination:
            return super().create_from_cloudformation_json(resource_name, cloudformation_json, account_id, region_name, **kwargs)
        bucket_arn = destination.split("/", 1)[0]
        patched = {**cloudformation_json, "Properties": {**props, "LogDestination": bucket_arn}}
        flow_log = super().create_from_cloudformation_json(resource_name, patched, account_id, region_name, **kwargs)
        flow_log.log_destination = destination
        return flow_log


class SsmParameterWithoutName(SsmParameter):
    """``AWS::SSM::Parameter`` without a ``Name``: moto's own handler, given the name.

    Name is optional in CloudFormation (the service generates one). moto 5.2.5 generates a
    physical name too, but its handler reads ``Properties.Name`` only and fails with
    AttributeError (HTTP 500 on CreateStack). The double passes moto's generated name as
    ``Name``; a template that names its parameter goes to moto's handler unchanged.
    """

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> SsmParameter:
        props = cloudformation_json["Properties"]
        if not props.get("Name"):
            cloudformation_json = {**cloudformation_json, "Properties": {**props, "Name": resource_name}}
        return super().create_from_cloudformation_json(resource_name, cloudformation_json, account_id, region_name, **kwargs)


class CloudWatchAlarm(CloudFormationModel):
    """``AWS::CloudWatch::Alarm`` -> moto's ``CloudWatchBackend.put_metric_alarm`` (what PutMetricAlarm calls).

    moto 5.2.5 has the API (and keeps ``Metrics`` metric math queries) but no CloudFormation
    handler. ``Ref`` is the alarm name, generated like CloudFormation's (stack-logicalid-suffix)
    when the template gives none; ``Fn::GetAtt Arn`` is the alarm's ARN.
    """

    def __init__(self, name: str, arn: str, account_id: str, region_name: str) -> None:
        self.name = name
        self.arn = arn
        self.account_id = account_id
        self.region_name = region_name

    @staticmethod
    def cloudformation_name_type() -> str:
        return "AlarmName"

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::CloudWatch::Alarm"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    @staticmethod
    def _queries(metrics: list[dict[str, Any]] | None) -> list[MetricDataQuery] | None:
        if not metrics:
            return None
        queries = []
        for query in metrics:
            stat = query.get("MetricStat")
            metric_stat = None
            if stat:
                metric = stat["Metric"]
                metric_stat = MetricStat(
                    metric=Metric(metric_name=metric["MetricName"], namespace=metric.get("Namespace"),
                                  dimensions=[Dimension(d["Name"], d["Value"]) for d in metric.get("Dimensions", [])]),
                    period=str(stat["Period"]), stat=stat["Stat"], unit=stat.get("Unit"))
            return_data = query.get("ReturnData")
            queries.append(MetricDataQuery(query_id=query["Id"], label=query.get("Label"), period=query.get("Period"),
                                           return_data=None if return_data is None else str(return_data).lower(),
                                           expression=query.get("Expression"), metric_stat=metric_stat))
        return queries

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> "CloudWatchAlarm":
        props = cloudformation_json["Properties"]
        alarm = cloudwatch_backends[account_id][region_name].put_metric_alarm(
            name=resource_name,
            namespace=props.get("Namespace"),
            metric_name=props.get("MetricName"),
            metric_data_queries=cls._queries(props.get("Metrics")),
            comparison_operator=props["ComparisonOperator"],
            evaluation_periods=int(props["EvaluationPeriods"]),
            datapoints_to_alarm=int(props["DatapointsToAlarm"]) if "DatapointsToAlarm" in props else None,
            period=int(props["Period"]) if "Period" in props else None,  # type: ignore[arg-type]
            threshold=float(props["Threshold"]),
            statistic=props.get("Statistic"),
            description=props.get("AlarmDescription"),
            dimensions=[{"name": d["Name"], "value": d["Value"]} for d in props.get("Dimensions", [])],
            alarm_actions=props.get("AlarmActions", []),
            ok_actions=props.get("OKActions", []),
            insufficient_data_actions=props.get("InsufficientDataActions", []),
            unit=props.get("Unit"),
            actions_enabled=str(props.get("ActionsEnabled", True)).lower() == "true",
            treat_missing_data=props.get("TreatMissingData"),
        )
        return cls(alarm.name, alarm.alarm_arn, account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(  # type: ignore[override]
        cls, original_resource: "CloudWatchAlarm", new_resource_name: str, cloudformation_json: dict[str, Any],
        account_id: str, region_name: str,
    ) -> "CloudWatchAlarm":
        """In place under the same name (PutMetricAlarm overwrites), as CloudFormation updates an
        alarm whose AlarmName does not change; a new AlarmName is a new alarm."""
        name = cloudformation_json["Properties"].get("AlarmName") or original_resource.name
        if name != original_resource.name:
            original_resource.delete(account_id, region_name)
        return cls.create_from_cloudformation_json(name, cloudformation_json, account_id, region_name)

    @property
    def physical_resource_id(self) -> str:
        return self.name

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "Arn":
            return self.arn
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        raise UnformattedGetAttTemplateException()

    def delete(self, account_id: str, region_name: str) -> None:
        cloudwatch_backends[account_id][region_name].delete_alarms([self.name])

    def is_created(self) -> bool:
        return True


class SnsTopicPolicy(CloudFormationModel):
    """``AWS::SNS::TopicPolicy`` -> moto's ``SNSBackend.set_topic_attribute(arn, "Policy", ...)``
    (what SetTopicAttributes calls, with its attribute name in moto's spelling), on every topic of ``Topics``."""

    def __init__(self, topics: list[str], account_id: str, region_name: str) -> None:
        self.topics = topics
        self.account_id = account_id
        self.region_name = region_name

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SNS::TopicPolicy"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return False

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[override]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> "SnsTopicPolicy":
        props = cloudformation_json["Properties"]
        document = props["PolicyDocument"]
        body = document if isinstance(document, str) else json.dumps(document)
        for topic_arn in props["Topics"]:
            sns_backends[account_id][region_name].set_topic_attribute(topic_arn, "policy", body)
        return cls(list(props["Topics"]), account_id, region_name)

    @classmethod
    def update_from_cloudformation_json(  # type: ignore[override]
        cls, original_resource: "SnsTopicPolicy", new_resource_name: str, cloudformation_json: dict[str, Any],
        account_id: str, region_name: str,
    ) -> "SnsTopicPolicy":
        return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)

    @property
    def physical_resource_id(self) -> str:
        return ",".join(self.topics)

    def delete(self, account_id: str, region_name: str) -> None:
        return None  # the topic keeps its last policy until it is deleted, as SNS does

    def is_created(self) -> bool:
        return True


#: Types moto has no CloudFormation handler for: type -> double.
DOUBLES: dict[str, type[CloudFormationModel]] = {
    cls.cloudformation_type(): cls for cls in (FSxFileSystem, SecurityGroupEgress, S3BucketPolicy, CloudWatchAlarm,
                                               SnsTopicPolicy)
}

#: Types whose moto handler fails on this project's template: type -> (moto's class, double).
#: The double replaces moto's handler only while it is the very class it was written against.
REPAIRS: dict[str, tuple[type[CloudFormationModel], type[CloudFormationModel]]] = {
    "AWS::EC2::FlowLog": (FlowLogs, FlowLogToS3Prefix),
    "AWS::SSM::Parameter": (SsmParameter, SsmParameterWithoutName),
}


_displaced: dict[str, type[CloudFormationModel] | None] = {}


def _previous_values_from_defaults(original: Any) -> Any:
    """UpdateStack's ``UsePreviousValue`` for a parameter that took its template default.

    The cdk CLI updates a stack with ``BootstrapVersion: UsePreviousValue=true``; CloudFormation
    reuses the previous value, which for a defaulted parameter is the default. moto 5.2.5 looks
    the key up among the parameters passed at create time only and fails with KeyError (HTTP
    500 on UpdateStack). The repair leaves such a parameter out, so moto resolves the template
    default again: the value CloudFormation would reuse. Other parameters go to moto unchanged.
    """

    def resolve(self: Any, instance: Any, incoming_params: list[dict[str, Any]]) -> dict[str, str]:
        known = [p for p in incoming_params
                 if not p.get("UsePreviousValue", False) or p.get("ParameterKey") in instance.parameters]
        return original(self, instance, known)

    resolve.__wrapped__ = original  # type: ignore[attr-defined]
    return resolve


def _patch_update_parameters(on: bool) -> None:
    from moto.cloudformation.models import CloudFormationBackend

    current = CloudFormationBackend._resolve_update_parameters
    wrapped = getattr(current, "__wrapped__", None)
    if on and wrapped is None:
        CloudFormationBackend._resolve_update_parameters = _previous_values_from_defaults(current)  # type: ignore[method-assign]
    elif not on and wrapped is not None:
        CloudFormationBackend._resolve_update_parameters = wrapped  # type: ignore[method-assign]


def register() -> dict[str, type[CloudFormationModel]]:
    """Put the doubles in moto's CloudFormation type map (idempotent); returns what was put.

    moto builds its map once (``functools.lru_cache``) from ``CloudFormationModel``
    subclasses, so the cached dict is updated in place. A type missing from moto gets its
    double only while moto still has no handler of its own, and a repair replaces only the
    moto class it was written against: after a moto upgrade the doubles step aside.
    """
    model_map = parsing.get_model_map()
    name_types = parsing.get_name_type_map()
    wanted = {t: (None, d) for t, d in DOUBLES.items()} | dict(REPAIRS)
    added: dict[str, type[CloudFormationModel]] = {}
    for type_name, (expected, double) in wanted.items():
        current = model_map.get(type_name)
        if current is double:
            added[type_name] = double
        elif current is expected:
            _displaced[type_name] = current
            model_map[type_name] = double
            name_types[type_name] = double.cloudformation_name_type()
            added[type_name] = double
    _patch_update_parameters(True)
    return added


def unregister() -> None:
    """Give moto back its own type map (what :func:`register` displaced)."""
    model_map = parsing.get_model_map()
    name_types = parsing.get_name_type_map()
    for type_name, original in list(_displaced.items()):
        if original is None:
            model_map.pop(type_name, None)
            name_types.pop(type_name, None)
        else:
            model_map[type_name] = original
            name_types[type_name] = original.cloudformation_name_type()
        del _displaced[type_name]
    SecurityGroupEgress._stripped_default.clear()
    _patch_update_parameters(False)

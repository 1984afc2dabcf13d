"""What the installed botocore says HyperPod accepts: read from its service model, never copied.

botocore is not a dependency of the core install (``pip install 'smddp-infra[api]'`` adds it):
without it every function here returns None and the caller reports the check as not evaluated.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Optional

from smddp_infra.facts.service_models import service_model


def _shape(name: str) -> Any:
    model = service_model("sagemaker")
    return None if model is None else model.shape_for(name)


def botocore_version() -> Optional[str]:
    try:
        import botocore
    except ImportError:
        return None
    return str(botocore.__version__)


def enum(shape: str) -> Optional[tuple[str, ...]]:
    """The enum values of a sagemaker shape (``ClusterInstanceType``), or None without botocore."""
    found = _shape(shape)
    return None if found is None else tuple(found.enum)


def pattern(shape: str) -> Optional[re.Pattern[str]]:
    """A string shape's pattern (callers use ``fullmatch``: botocore's patterns are unanchored), or None."""
    found = _shape(shape)
    if found is None or "pattern" not in found.metadata:
        return None
    return re.compile(str(found.metadata["pattern"]))


def length(shape: str) -> Optional[tuple[int, int]]:
    found = _shape(shape)
    if found is None:
        return None
    return int(found.metadata.get("min", 0)), int(found.metadata.get("max", 2**31))


def doc(shape: str, member: str) -> Optional[str]:
    """The documentation of a structure's member, tags stripped (the text a rule cites), or None."""
    found = _shape(shape)
    if found is None or member not in found.members:
        return None
    return re.sub(r"<[^>]+>", "", str(found.members[member].documentation or ""))


@lru_cache(maxsize=4)
def resource_schema(resource_type: str) -> Any:
    """cfn-lint's bundled resource schema of ``resource_type`` (the CloudFormation registry's), or None
    without cfn-lint or when the installed one does not have the type."""
    try:
        from cfnlint.schema import PROVIDER_SCHEMA_MANAGER
    except ImportError:
        return None
    try:
        return PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", resource_type).schema
    except Exception:  # an older cfn-lint without the type
        return None


def schedule_expression_pattern() -> Optional[re.Pattern[str]]:
    """``ScheduledUpdateConfig.ScheduleExpression``'s pattern in the CloudFormation schema (botocore's
    ``CronScheduleExpression`` has only a length): the form CloudFormation accepts, or None without cfn-lint."""
    text = cluster_schema_at("ScheduledUpdateConfig", "properties", "ScheduleExpression", "pattern")
    return None if text is None else re.compile(str(text))


def cluster_schema_at(*path: str) -> Any:
    """What the installed cfn-lint's ``AWS::SageMaker::Cluster`` schema holds at ``definitions/<path>``
    (``("ClusterNetworkInterface", "properties", "InterfaceType")``), or None without cfn-lint or the key."""
    found = resource_schema("AWS::SageMaker::Cluster")
    try:
        found = found["definitions"]
        for key in path:
            found = found[key]
    except (TypeError, KeyError):
        return None
    return found


def image_id_format() -> Optional[str]:
    """The ``format`` the CloudFormation schema gives an instance group's ``ImageId``
    (``AWS::EC2::Image.Id`` in cfn-lint 1.58), or None without cfn-lint."""
    found = cluster_schema_at("ImageId", "format")
    return None if found is None else str(found)


def cluster_instance_types() -> Optional[tuple[str, ...]]:
    """HyperPod's instance types (CreateCluster ``InstanceGroups[].InstanceType``)."""
    return enum("ClusterInstanceType")


def validate_create_cluster(request: dict[str, Any]) -> Optional[str]:
    """botocore's validator over a CreateCluster request: its report, '' when valid, None without botocore."""
    return validate_request(service_model("sagemaker"), "CreateCluster", request)


def validate_request(model: Any, operation: str, request: dict[str, Any]) -> Optional[str]:
    """botocore's validator over a request to ``operation`` of a service ``model``: its report, '' when
    valid, None when ``model`` is None (no botocore)."""
    if model is None:
        return None
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(request, model.operation_model(operation).input_shape)
    return str(report.generate_report()) if report.has_errors() else ""

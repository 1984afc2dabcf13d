"""What the installed botocore says HyperPod accepts: read from its service model, never copied.

botocore is not a dependency of the core install (``pip install 'smddp-infra[api]'`` adds it):
without it every function here returns None and the caller reports the check as not evaluated.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Optional


@lru_cache(maxsize=1)
def _sagemaker_model() -> Any:
    try:
        import botocore.session
    except ImportError:
        return None
    return botocore.session.get_session().get_service_model("sagemaker")


def _shape(name: str) -> Any:
    model = _sagemaker_model()
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


def cluster_instance_types() -> Optional[tuple[str, ...]]:
    """HyperPod's instance types (CreateCluster ``InstanceGroups[].InstanceType``)."""
    return enum("ClusterInstanceType")


def validate_create_cluster(request: dict[str, Any]) -> Optional[str]:
    """botocore's validator over a CreateCluster request: its report, '' when valid, None without botocore."""
    model = _sagemaker_model()
    if model is None:
        return None
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(request, model.operation_model("CreateCluster").input_shape)
    return report.generate_report() if report.has_errors() else ""

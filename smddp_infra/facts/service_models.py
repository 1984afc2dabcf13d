"""botocore's service models, parsed once per process.

What CreateTrainingJob, CreateCluster and the EKS calls accept is read from the model botocore
ships (``<service>/<date>/service-2.json``), never copied. A fresh botocore session parses that
JSON again (SageMaker's is megabytes, about 0.3 s), so a caller that judged one document per
session paid it per document: ``preflight DIR`` over many files, ``smddp-infra mcp`` per tool
call. botocore is optional (the ``[api]`` extra): without it a caller reports its check as not
evaluated.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional


@lru_cache(maxsize=None)
def service_model(service: str) -> Optional[Any]:
    """botocore's ``ServiceModel`` of ``service`` ("sagemaker", "eks"), or None without botocore."""
    try:
        import botocore.session
    except ImportError:
        return None
    return botocore.session.get_session().get_service_model(service)

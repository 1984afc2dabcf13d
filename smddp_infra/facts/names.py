"""SageMaker resource names: one check for the pattern AND the length (PURE).

botocore's SageMaker model gives ``ClusterName``, ``ClusterInstanceGroupName`` and
``TrainingJobName`` the pattern ``[a-zA-Z0-9](-*[a-zA-Z0-9])*`` (``{0,62}`` for jobs) with
``max: 63`` as a separate constraint: the pattern alone lets hyphens make a name of any length
(``a-b-...``), which the API (and CloudFormation's schema, at deploy or in jsii) then refuses.
"""

from __future__ import annotations

import re
from typing import Any

#: The ``max`` of botocore's ClusterName, ClusterInstanceGroupName and TrainingJobName shapes.
MAX_NAME_LENGTH = 63
#: botocore's pattern of those shapes (and of ``ClusterPartitionName``), without the length.
NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*")


def is_sagemaker_name(value: Any) -> bool:
    """1 to 63 letters, digits and hyphens, starting and ending with a letter or digit."""
    return isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and bool(NAME.fullmatch(value))


__all__ = ["MAX_NAME_LENGTH", "NAME", "is_sagemaker_name"]

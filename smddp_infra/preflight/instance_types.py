"""Which instance types SageMaker trains on: botocore's ``TrainingInstanceType`` enum.

The enum is the type of ``ResourceConfig.InstanceType`` in the SageMaker service model that
botocore ships (``sagemaker/<date>/service-2.json``); CreateTrainingJob rejects a value outside
it with a ValidationException before any instance starts. botocore is optional for preflight
(``pip install 'smddp-infra[api]'``): without it the rule is not evaluated, never guessed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional


@lru_cache(maxsize=1)
def training_instance_types() -> Optional[tuple[str, frozenset[str]]]:
    """(botocore version, the enum), or None when botocore is not installed. Loaded once (~0.2 s)."""
    try:
        import botocore
        import botocore.loaders
    except ImportError:
        return None
    model = botocore.loaders.Loader().load_service_model("sagemaker", "service-2")
    return str(botocore.__version__), frozenset(model["shapes"]["TrainingInstanceType"]["enum"])

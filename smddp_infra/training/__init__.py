"""Runtime helpers for training containers: standard library only.

This package is what a training script imports inside the SageMaker container, so it
must not pull in aws_cdk, jsii, PyYAML or rich (``pip install --no-deps smddp-infra`` is
enough there). Both helpers answer a failure from SageMaker's SMDDP troubleshooting guide:

* :func:`strip_ddp_prefix` -- "unexpected prefix (``model.`` for example) attached to
  ``state_dict`` keys": DDP wrapping renames parameters; the guide's one-liner
  ``k.partition('model.')[2]`` silently drops every key without the prefix.
* :func:`even_shards` -- "job stalling at the end of training": ranks that run different
  numbers of batches wait forever for each other's gradients in the last all-reduce.
"""

from __future__ import annotations

from smddp_infra.training.sharding import Shards, even_batch_count, even_shards, split_batch_counts
from smddp_infra.training.state_dict import PrefixCollisionError, strip_ddp_prefix

__all__ = ["PrefixCollisionError", "Shards", "even_batch_count", "even_shards", "split_batch_counts", "strip_ddp_prefix"]

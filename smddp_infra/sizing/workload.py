"""How much read throughput a training workload needs from its file system, in MB/s.

Two ways to state the need, both ending in the aggregate MB/s the planner sizes for:

* from the cluster: every accelerator reads its share of the data at some rate (measure
  it, or take it from the data loader's samples/s x bytes/sample);
* from the epoch: the whole dataset must be read once per epoch, in a target time.

Units: MB/s means 10**6 bytes per second (FSx states throughput in MB/s); a GiB is 2**30
bytes, so 1 GiB = 1,073.741824 MB. Using decimal MB makes the epoch figure about 7 % larger
than a MiB/s reading would: the conservative direction for sizing.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from smddp_infra.errors import ConfigError, SizingError
from smddp_infra.sizing.catalog import efa_instance

#: Decimal megabytes in one GiB (2**30 / 10**6).
MB_PER_GIB = 2**30 / 10**6


def _positive(name: str, value: Any, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
        raise SizingError(f"{name} must be a number > 0 {unit}, got {value!r}")
    return float(value)


def throughput_from_cluster(instance_type: str, instance_count: int, read_mbps_per_accelerator: float) -> float:
    """Aggregate MB/s when every accelerator of every instance reads at the given rate.

    ``instance_type`` must be a SageMaker EFA training type (SMDDP targets those): an unknown
    one raises :class:`ConfigError` listing the known types.
    """
    instance = efa_instance(instance_type, setting="instance_type")
    if isinstance(instance_count, bool) or not isinstance(instance_count, int) or instance_count < 1:
        raise ConfigError(f"instance_count must be a whole number >= 1, got {instance_count!r}")
    rate = _positive("read_mbps_per_accelerator", read_mbps_per_accelerator, "MB/s")
    return instance_count * instance.accelerators * rate


def throughput_from_epoch(dataset_gib: float, epoch_seconds: float) -> float:
    """MB/s needed to read ``dataset_gib`` GiB once in ``epoch_seconds`` (GiB x 1,073.741824 MB)."""
    size = _positive("dataset_gib", dataset_gib, "GiB")
    seconds = _positive("epoch_seconds", epoch_seconds, "seconds")
    return size * MB_PER_GIB / seconds

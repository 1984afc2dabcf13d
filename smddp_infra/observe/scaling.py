"""The guide's scaling symptom, measured: did the file system limit a larger job?

SageMaker's SMDDP troubleshooting guide: a sudden drop in scaling efficiency when moving to a
larger cluster can be the FSx for Lustre throughput limit. With two jobs of different sizes on
one file system that is checkable: each job's read rate per instance (the median MB/s of its
run, divided by its instance count), and whether the file system sat at its baseline during
the larger one (:attr:`~smddp_infra.observe.during.Throughput.at_baseline`, the alarm's rule).

* the rate per instance fell and the file system sat at its baseline: the guide's case, the
  file system limits scaling; the plan that lifts it is sized for what the larger job would
  read had it scaled (the smaller job's rate per instance x the larger job's instances);
* it fell while the file system had headroom: not the file system (look at the network, the
  input pipeline, the collective);
* it held: scaling holds.

Pure: the :class:`JobReads` come from :mod:`.during`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from smddp_infra.observe.during import Throughput

#: The larger job keeps at least this share of the smaller one's rate per instance: scaling held.
#: Below it the rate "fell" (a tenth lost per instance is well beyond run-to-run noise of a
#: data loader, and small enough to catch the guide's "sudden drop").
SCALING_KEPT_FRACTION = 0.9

LIMITS, NOT_FS, HOLDS, NOT_EVALUATED = ("file system limits scaling", "not the file system", "scaling holds",
                                        "not evaluated")


@dataclass(frozen=True)
class JobReads:
    name: str
    instances: int
    window: tuple[Any, Any]
    throughput: Throughput

    @property
    def per_instance_mbps(self) -> Optional[float]:
        return self.throughput.per_instance_mbps(self.instances)

    def to_json(self) -> dict[str, Any]:
        t = self.throughput
        return {"job": self.name, "instances": self.instances,
                "window": {"start": self.window[0].isoformat(), "end": self.window[1].isoformat()},
                "read": t.read.to_json() if t.read else None, "baselineUtilisation": t.utilisation,
                "atBaseline": t.at_baseline, "perInstanceMBps": self.per_instance_mbps}


@dataclass(frozen=True)
class Scaling:
    smaller: JobReads
    larger: JobReads
    verdict: str
    #: The larger job's rate per instance as a share of the smaller's (None: not evaluated).
    kept: Optional[float]

    @property
    def demand_mbps(self) -> Optional[float]:
        """What the larger job would read had it scaled: the smaller's rate per instance x its instances."""
        rate = self.smaller.per_instance_mbps
        return rate * self.larger.instances if rate is not None else None

    def to_json(self) -> dict[str, Any]:
        return {"smaller": self.smaller.name, "larger": self.larger.name, "verdict": self.verdict,
                "perInstanceKept": self.kept, "demandMBps": self.demand_mbps}


def compare(jobs: Sequence[JobReads]) -> Scaling:
    """The smallest job against the largest (instance counts must differ)."""
    ordered = sorted(jobs, key=lambda j: j.instances)
    smaller, larger = ordered[0], ordered[-1]
    small_rate, large_rate = smaller.per_instance_mbps, larger.per_instance_mbps
    if small_rate is None or large_rate is None or small_rate <= 0:
        return Scaling(smaller, larger, NOT_EVALUATED, None)
    kept = large_rate / small_rate
    if kept >= SCALING_KEPT_FRACTION:
        return Scaling(smaller, larger, HOLDS, kept)
    return Scaling(smaller, larger, LIMITS if larger.throughput.at_baseline else NOT_FS, kept)

"""Give every rank the same number of batches, so the last all-reduce does not hang.

SMDDP (like any data-parallel all-reduce) synchronises gradients after every batch on
every rank. If one rank has one batch more than another, it waits in the all-reduce for a
partner that has already left the training loop: the job stalls at the end of training
(SageMaker's SMDDP troubleshooting guide, "stalling at the end of training").

:func:`even_shards` computes each rank's sample indices exactly as PyTorch's
``DistributedSampler(shuffle=False)`` followed by a ``DataLoader`` with the same
``drop_last`` would, but without torch, so it works with any data loader.
:func:`split_batch_counts` computes what happens WITHOUT such a sampler, when the dataset
is simply split across ranks; :mod:`smddp_infra.preflight` uses it to predict the stall.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Optional

from smddp_infra.errors import ConfigError


@dataclass(frozen=True)
class Shards:
    """Per-rank sample indices with one batch count shared by every rank.

    ``indices[rank]`` lists that rank's dataset indices in the order to use them;
    ``num_batches`` is the number of batches every rank runs. ``padded`` counts samples
    that appear twice (``drop_last=False`` wraps around to the start of the dataset to
    fill the last ranks, like ``DistributedSampler``); ``dropped`` counts samples no rank
    sees (``drop_last=True`` keeps only full batches on every rank).
    """

    num_samples: int
    world_size: int
    batch_size: int
    drop_last: bool
    indices: tuple[tuple[int, ...], ...]
    num_batches: int
    padded: int
    dropped: int

    @property
    def samples_per_rank(self) -> int:
        return len(self.indices[0])

    def batches(self, rank: int) -> list[list[int]]:
        """``rank``'s indices cut into batches: pass as ``DataLoader(ds, batch_sampler=...)``.

        With ``drop_last=False`` the last batch may be short, and equally short on
        every rank.
        """
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < self.world_size:
            raise ConfigError(f"rank must be a whole number from 0 to {self.world_size - 1}, got {rank!r}")
        mine = self.indices[rank]
        return [list(mine[start:start + self.batch_size]) for start in range(0, len(mine), self.batch_size)]


def even_shards(
    num_samples: int,
    world_size: int,
    batch_size: int,
    *,
    drop_last: bool,
    seed: Optional[int] = None,
) -> Shards:
    """Split ``range(num_samples)`` over ``world_size`` ranks so all run the same batch count.

    ``drop_last=False``: every sample is used; the index list is padded by wrapping around
    to its start until it divides evenly over the ranks (exactly ``DistributedSampler``'s
    padding), so each rank gets ``ceil(num_samples / world_size)`` samples and
    ``ceil(that / batch_size)`` batches, the last one possibly short on every rank.

    ``drop_last=True``: only full batches, the same number on every rank:
    ``num_samples // (world_size * batch_size)``; the remaining samples are dropped.

    Rank ``r`` gets indices ``r, r + world_size, r + 2 * world_size, ...`` of the (optionally
    shuffled) order, like ``DistributedSampler``. ``seed`` shuffles with Python's
    ``random.Random(seed)`` (pass ``base_seed + epoch`` for a new order each epoch; the
    permutation differs from torch's ``randperm``). Every rank must pass the same seed.

    The index lists are built eagerly (about 8 bytes per sample per rank list entry).
    """
    _check_sizes(num_samples, world_size, batch_size)
    if not isinstance(drop_last, bool):
        raise ConfigError(f"drop_last must be True or False, got {drop_last!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(f"seed must be a whole number or None, got {seed!r}")

    order = list(range(num_samples))
    if seed is not None:
        random.Random(seed).shuffle(order)

    num_batches = even_batch_count(num_samples, world_size, batch_size, drop_last=drop_last)
    # drop_last: the samples of full batches on every rank; otherwise every sample, padded to divide evenly.
    total = num_batches * batch_size * world_size if drop_last else math.ceil(num_samples / world_size) * world_size
    padding, dropped = max(total - num_samples, 0), max(num_samples - total, 0)
    if padding:
        # DistributedSampler repeats the whole list as often as needed (world_size may
        # exceed num_samples), then takes the first `padding` entries.
        order += (order * math.ceil(padding / num_samples))[:padding]
    indices = tuple(tuple(order[rank:total:world_size]) for rank in range(world_size))
    return Shards(num_samples, world_size, batch_size, drop_last, indices, num_batches, padded=padding, dropped=dropped)


def even_batch_count(num_samples: int, world_size: int, batch_size: int, *, drop_last: bool) -> int:
    """The batch count every rank runs under :func:`even_shards` (or ``DistributedSampler``),
    without building the index lists."""
    _check_sizes(num_samples, world_size, batch_size)
    if drop_last:
        return num_samples // (world_size * batch_size)
    return math.ceil(math.ceil(num_samples / world_size) / batch_size)


def split_batch_counts(num_samples: int, world_size: int, batch_size: int, *, drop_last: bool) -> tuple[int, ...]:
    """Each rank's batch count when the dataset is split over ranks WITHOUT padding.

    This is what a script gets when it shards by hand (``dataset[rank::world_size]``, a
    contiguous split, or pre-split files) and feeds each shard to a plain ``DataLoader``:
    the first ``num_samples % world_size`` ranks get one sample more, which can mean one
    batch more, and the job hangs at the end of training.
    """
    _check_sizes(num_samples, world_size, batch_size)
    base, extra = divmod(num_samples, world_size)
    counts = []
    for rank in range(world_size):
        samples = base + (1 if rank < extra else 0)
        counts.append(samples // batch_size if drop_last else math.ceil(samples / batch_size))
    return tuple(counts)


def _check_sizes(num_samples: object, world_size: object, batch_size: object) -> None:
    """The three sizes every function here takes, checked in one order with one message each."""
    _whole("num_samples", num_samples, minimum=0)
    _whole("world_size", world_size, minimum=1)
    _whole("batch_size", batch_size, minimum=1)


def _whole(setting: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{setting} must be a whole number >= {minimum}, got {value!r}")

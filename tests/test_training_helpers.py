"""Runtime helpers: strip_ddp_prefix and even_shards (smddp_infra.training)."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from collections import Counter, OrderedDict
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smddp_infra.errors import ConfigError, SmddpError
from smddp_infra.training import (
    PrefixCollisionError,
    Shards,
    even_shards,
    split_batch_counts,
    strip_ddp_prefix,
)


# ---------------------------------------------------------------- strip_ddp_prefix


def guide_one_liner(state_dict):
    """The troubleshooting guide's suggestion, verbatim apart from the dict name."""
    return {k.partition('model.')[2]: state_dict[k] for k in state_dict.keys()}


def test_guide_example_fully_prefixed_dict_gives_the_same_result_as_the_guide():
    saved = {"model.conv1.weight": 1, "model.conv1.bias": 2, "model.fc.weight": 3}
    assert strip_ddp_prefix(saved) == guide_one_liner(saved) == {"conv1.weight": 1, "conv1.bias": 2, "fc.weight": 3}


def test_guide_one_liner_loses_weights_on_unprefixed_keys():
    # A checkpoint where only some keys carry the prefix (or none do: a model saved
    # without the wrapper) -- the guide's one-liner maps every unprefixed key to ''.
    saved = {"model.fc.weight": 1, "bn.running_mean": 2, "bn.running_var": 3, "head.bias": 4}
    guide = guide_one_liner(saved)
    assert guide == {"fc.weight": 1, "": 4}  # three weights collapsed into '' and two lost
    assert len(guide) < len(saved)

    ours = strip_ddp_prefix(saved)
    assert ours == {"fc.weight": 1, "bn.running_mean": 2, "bn.running_var": 3, "head.bias": 4}


def test_guide_one_liner_cuts_at_model_in_the_middle_but_ours_only_strips_a_leading_prefix():
    saved = {"encoder.model.weight": 1}
    assert guide_one_liner(saved) == {"weight": 1}
    assert strip_ddp_prefix(saved) == {"encoder.model.weight": 1}


def test_ddp_module_prefix_is_stripped_by_default():
    saved = {"module.fc.weight": 1, "module.fc.bias": 2}
    assert strip_ddp_prefix(saved) == {"fc.weight": 1, "fc.bias": 2}


def test_only_one_prefix_is_removed_per_key_and_the_first_matching_wins():
    saved = {"module.model.fc.weight": 1}
    assert strip_ddp_prefix(saved) == {"model.fc.weight": 1}
    assert strip_ddp_prefix(saved, ("module.model.", "module.")) == {"fc.weight": 1}


def test_a_single_string_is_one_prefix_not_a_set_of_characters():
    assert strip_ddp_prefix({"module.a": 1, "m": 2}, "module.") == {"a": 1, "m": 2}


def test_order_is_kept_and_ordered_dict_stays_ordered_dict():
    saved = OrderedDict([("module.z", 1), ("a", 2), ("module.b", 3)])
    out = strip_ddp_prefix(saved)
    assert type(out) is OrderedDict
    assert list(out.items()) == [("z", 1), ("a", 2), ("b", 3)]
    assert saved["module.z"] == 1  # the input is not modified


def test_torch_metadata_is_carried_over_with_prefixes_stripped():
    saved = OrderedDict([("module.bn.weight", 1)])
    saved._metadata = OrderedDict([("", {"version": 1}), ("module", {"version": 1}), ("module.bn", {"version": 2})])
    out = strip_ddp_prefix(saved)
    assert out._metadata == OrderedDict([("", {"version": 1}), ("bn", {"version": 2})])


def test_mapping_types_that_cannot_be_rebuilt_come_back_as_dict():
    out = strip_ddp_prefix(MappingProxyType({"module.a": 1}))
    assert type(out) is dict and out == {"a": 1}


def test_mapping_subclasses_are_rebuilt():
    class StateDict(OrderedDict):
        pass

    out = strip_ddp_prefix(StateDict([("module.a", 3)]))
    assert type(out) is StateDict and out == {"a": 3}


def test_a_type_whose_constructor_means_something_else_is_not_trusted():
    # Counter(pairs) would count the pairs; the result must still map names to values.
    out = strip_ddp_prefix(Counter({"module.a": 3}))
    assert out == {"a": 3}


def test_non_string_keys_are_left_alone():
    assert strip_ddp_prefix({1: "x", "module.a": "y"}) == {1: "x", "a": "y"}


def test_colliding_keys_raise_and_name_both_keys():
    saved = {"module.fc.weight": 1, "fc.weight": 2, "other": 3}
    with pytest.raises(PrefixCollisionError) as caught:
        strip_ddp_prefix(saved)
    message = str(caught.value)
    assert "'module.fc.weight'" in message and "'fc.weight'" in message
    assert caught.value.collisions == {"fc.weight": ("module.fc.weight", "fc.weight")}
    assert isinstance(caught.value, SmddpError) and isinstance(caught.value, ValueError)


def test_two_different_prefixes_landing_on_one_key_also_collide():
    with pytest.raises(PrefixCollisionError, match="'module.a' and 'model.a' -> 'a'"):
        strip_ddp_prefix({"module.a": 1, "model.a": 2})


@pytest.mark.parametrize("bad", ["", ("module.", ""), (), (3,)])
def test_bad_prefixes_are_rejected_with_the_value(bad):
    with pytest.raises(ConfigError, match="prefixes"):
        strip_ddp_prefix({"a": 1}, bad)


def test_non_mapping_is_rejected():
    with pytest.raises(ConfigError, match="state_dict must be a mapping"):
        strip_ddp_prefix([("module.a", 1)])  # type: ignore[arg-type]


names = st.text(alphabet="abc.", min_size=0, max_size=6)


@given(st.dictionaries(st.sampled_from(["", "module.", "model."]).flatmap(lambda p: names.map(lambda n: p + n)), st.integers()))
def test_stripping_never_loses_a_weight(saved):
    try:
        out = strip_ddp_prefix(saved)
    except PrefixCollisionError as exc:
        # Only raised when two originals really land on one key.
        for originals in exc.collisions.values():
            assert len(originals) >= 2
        return
    assert len(out) == len(saved)
    assert sorted(out.values()) == sorted(saved.values())
    for new, old in zip(out, saved):
        assert new in (old, old.removeprefix("module."), old.removeprefix("model."))


# ---------------------------------------------------------------- even_shards


def test_guide_example_uneven_split_is_made_even():
    # 10 samples, 4 ranks, batch 2: a plain split gives ranks 0-1 three samples (2 batches)
    # and ranks 2-3 two samples (1 batch) -- the end-of-training hang.
    assert split_batch_counts(10, 4, 2, drop_last=False) == (2, 2, 1, 1)
    padded = even_shards(10, 4, 2, drop_last=False)
    assert padded.num_batches == 2
    assert [len(b) for b in padded.batches(3)] == [2, 1]
    assert padded.indices == ((0, 4, 8), (1, 5, 9), (2, 6, 0), (3, 7, 1))
    assert padded.padded == 2 and padded.dropped == 0

    dropped = even_shards(10, 4, 2, drop_last=True)
    assert dropped.num_batches == 1
    assert dropped.indices == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert dropped.dropped == 2 and dropped.padded == 0


def torch_distributed_sampler_then_loader(n, world, batch, drop_last):
    """DistributedSampler(shuffle=False) + DataLoader, as torch/utils/data/distributed.py does it."""
    indices = list(range(n))
    if drop_last and n % world != 0:
        per = math.ceil((n - world) / world)
    else:
        per = math.ceil(n / world)
    total = per * world
    if not drop_last:
        padding = total - n
        if padding <= len(indices):
            indices += indices[:padding]
        else:
            indices += (indices * math.ceil(padding / len(indices)))[:padding]
    else:
        indices = indices[:total]
    ranks = []
    for rank in range(world):
        mine = indices[rank:total:world]
        if drop_last:
            mine = mine[: (len(mine) // batch) * batch]
        ranks.append(tuple(mine))
    return tuple(ranks)


@settings(max_examples=300)
@given(st.integers(1, 400), st.integers(1, 17), st.integers(1, 33), st.booleans())
def test_indices_match_torch_distributed_sampler_and_dataloader(n, world, batch, drop_last):
    assert even_shards(n, world, batch, drop_last=drop_last).indices == torch_distributed_sampler_then_loader(n, world, batch, drop_last)


@settings(max_examples=300)
@given(st.integers(0, 500), st.integers(1, 20), st.integers(1, 40), st.booleans(), st.none() | st.integers(0, 2**32))
def test_every_rank_runs_the_same_number_of_batches(n, world, batch, drop_last, seed):
    shards = even_shards(n, world, batch, drop_last=drop_last, seed=seed)
    counts = {len(shards.batches(rank)) for rank in range(world)}
    assert counts == {shards.num_batches} or (n == 0 and counts == {0})
    assert len({len(mine) for mine in shards.indices}) == 1
    if drop_last:
        assert all(len(b) == batch for rank in range(world) for b in shards.batches(rank))


@settings(max_examples=300)
@given(st.integers(0, 500), st.integers(1, 20), st.integers(1, 40), st.booleans(), st.none() | st.integers(0, 2**32))
def test_no_sample_lost_or_duplicated_beyond_drop_or_pad(n, world, batch, drop_last, seed):
    shards = even_shards(n, world, batch, drop_last=drop_last, seed=seed)
    seen = Counter(i for mine in shards.indices for i in mine)
    assert all(0 <= i < n for i in seen)
    if drop_last:
        assert shards.padded == 0
        assert max(seen.values(), default=1) == 1  # nothing twice
        assert len(seen) == n - shards.dropped
        assert shards.dropped < world * batch  # fewer than one global batch is dropped
    else:
        assert shards.dropped == 0
        assert set(seen) == set(range(n))  # nothing lost
        assert sum(seen.values()) == n + shards.padded
        assert shards.padded < world  # padding only fills the last row of ranks...
        if n >= world:
            assert max(seen.values(), default=1) <= 2  # ...so nothing appears more than twice


def test_world_larger_than_dataset_pads_by_repeating_like_torch():
    shards = even_shards(2, 5, 4, drop_last=False)
    assert shards.indices == ((0,), (1,), (0,), (1,), (0,))
    assert shards.num_batches == 1 and shards.padded == 3


def test_seed_shuffles_the_same_way_for_every_caller():
    a = even_shards(100, 4, 8, drop_last=False, seed=7)
    b = even_shards(100, 4, 8, drop_last=False, seed=7)
    assert a == b
    assert a.indices != even_shards(100, 4, 8, drop_last=False).indices


def test_shards_is_a_frozen_value():
    shards = even_shards(4, 2, 1, drop_last=False)
    assert isinstance(shards, Shards)
    with pytest.raises(AttributeError):
        shards.num_batches = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "args, message",
    [
        ((-1, 2, 3, False), "num_samples must be a whole number >= 0, got -1"),
        ((10, 0, 3, False), "world_size must be a whole number >= 1, got 0"),
        ((10, 2, 0, False), "batch_size must be a whole number >= 1, got 0"),
        ((10, 2.0, 3, False), "world_size must be a whole number >= 1, got 2.0"),
        ((10, True, 3, False), "world_size must be a whole number >= 1, got True"),
        ((10, 2, 3, "no"), "drop_last must be True or False, got 'no'"),
    ],
)
def test_bad_arguments_name_the_setting_and_value(args, message):
    n, world, batch, drop_last = args
    with pytest.raises(ConfigError) as caught:
        even_shards(n, world, batch, drop_last=drop_last)
    assert str(caught.value) == message


def test_batches_rejects_a_rank_outside_the_world():
    with pytest.raises(ConfigError, match="rank must be a whole number from 0 to 1, got 2"):
        even_shards(4, 2, 1, drop_last=False).batches(2)


@settings(max_examples=200)
@given(st.integers(0, 500), st.integers(1, 20), st.integers(1, 40), st.booleans())
def test_split_batch_counts_differ_by_at_most_one_and_match_a_literal_split(n, world, batch, drop_last):
    counts = split_batch_counts(n, world, batch, drop_last=drop_last)
    assert max(counts) - min(counts) <= 1
    shards = [list(range(n))[rank::world] for rank in range(world)]
    expected = tuple(len(s) // batch if drop_last else math.ceil(len(s) / batch) for s in shards)
    assert counts == expected


# ---------------------------------------------------------------- importable in a training image


def test_training_package_imports_with_the_standard_library_only():
    code = textwrap.dedent(
        """
        import sys
        import smddp_infra.training as t
        t.strip_ddp_prefix({"module.a": 1})
        t.even_shards(10, 2, 3, drop_last=False)
        heavy = sorted(m for m in sys.modules
                       if m.split(".")[0] in {"aws_cdk", "jsii", "constructs", "yaml", "rich", "torch", "cdk_nag"})
        print(heavy)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout

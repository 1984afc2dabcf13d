"""Strip the ``module.`` / ``model.`` prefix that distributed wrappers put on ``state_dict`` keys.

PyTorch's ``DistributedDataParallel`` keeps the wrapped network as its ``module``
attribute, so a checkpoint saved from the wrapper names every parameter
``module.<name>`` (and a wrapper that stores the network as ``self.model`` gives
``model.<name>``). Loading such a checkpoint into the bare network fails with missing and
unexpected keys. SageMaker's SMDDP troubleshooting guide suggests::

    state_dict = {k.partition('model.')[2]: state_dict[k] for k in state_dict.keys()}

``str.partition`` returns ``''`` as its third element when the separator is absent, so
every key WITHOUT the prefix becomes ``''``: all of them collide on one key and all but
the last weight are lost without an error. It also cuts at the first ``model.`` anywhere in
the key (``encoder.model.weight`` becomes ``weight``). :func:`strip_ddp_prefix` removes a
prefix only at the start, leaves other keys alone, and refuses to lose a weight.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, Union

from smddp_infra.errors import ConfigError, SmddpError

#: The prefixes DDP (``module.``) and common wrapper modules (``model.``) add.
DEFAULT_PREFIXES: tuple[str, ...] = ("module.", "model.")

M = TypeVar("M", bound=Mapping[Any, Any])


class PrefixCollisionError(SmddpError):
    """Stripping would map two keys onto one, so a weight would be silently dropped.

    ``collisions`` maps each new key to the original keys that would land on it.
    """

    def __init__(self, collisions: Mapping[str, tuple[Any, ...]], prefixes: tuple[str, ...]) -> None:
        self.collisions = dict(collisions)
        self.prefixes = prefixes
        shown = "; ".join(
            " and ".join(repr(k) for k in originals) + f" -> {new!r}"
            for new, originals in list(self.collisions.items())[:5]
        )
        more = f" (and {len(self.collisions) - 5} more)" if len(self.collisions) > 5 else ""
        super().__init__(
            f"stripping prefixes {prefixes!r} would map several state_dict keys onto one key and "
            f"lose weights: {shown}{more}; the checkpoint mixes prefixed and unprefixed names, "
            f"so load it into the model it was saved from or pass only the prefix it really has"
        )


def strip_ddp_prefix(state_dict: M, prefixes: Union[str, Iterable[str]] = DEFAULT_PREFIXES) -> M:
    """Return ``state_dict`` with a leading wrapper prefix removed from each key.

    For each key the FIRST prefix in ``prefixes`` it starts with is removed (once); keys
    that start with none of them, and non-string keys, are kept unchanged. Order is kept.
    To undo nested wrappers list the longer prefix first, e.g.
    ``("module.model.", "module.", "model.")``.

    The result has the input's mapping type when that type can be built from ``(key,
    value)`` pairs (a torch ``state_dict`` is an ``OrderedDict`` and stays one), otherwise
    it is a ``dict``. A torch ``state_dict``'s ``_metadata`` (per-module version numbers
    that ``load_state_dict`` uses to upgrade old formats) is carried over with the same
    prefixes stripped, as ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``
    does.

    Raises :class:`PrefixCollisionError` (a ``ValueError``) naming the keys when two keys
    would end up the same, instead of silently keeping only one of the weights.
    """
    if not isinstance(state_dict, Mapping):
        raise ConfigError(f"state_dict must be a mapping of parameter names to tensors, got {type(state_dict).__name__}")
    chosen = _check_prefixes(prefixes)

    renamed: list[tuple[Any, Any, Any]] = []  # (old key, new key, value)
    landed: dict[Any, list[Any]] = {}
    for key, value in state_dict.items():
        new = _strip(key, chosen)
        renamed.append((key, new, value))
        landed.setdefault(new, []).append(key)
    collisions = {new: tuple(olds) for new, olds in landed.items() if len(olds) > 1}
    if collisions:
        raise PrefixCollisionError(collisions, chosen)

    result: M = _same_mapping_type(state_dict, [(new, value) for _, new, value in renamed])
    _carry_metadata(state_dict, result, chosen)
    return result


def _check_prefixes(prefixes: Union[str, Iterable[str]]) -> tuple[str, ...]:
    # A bare string is one prefix, not an iterable of one-character prefixes.
    items = (prefixes,) if isinstance(prefixes, str) else tuple(prefixes)
    if not items:
        raise ConfigError("prefixes must name at least one prefix, e.g. ('module.',), got none")
    for prefix in items:
        if not isinstance(prefix, str) or not prefix:
            raise ConfigError(f"prefixes must be non-empty strings such as 'module.', got {prefix!r}")
    return items


def _strip(key: Any, prefixes: tuple[str, ...]) -> Any:
    if isinstance(key, str):
        for prefix in prefixes:
            if key.startswith(prefix):
                return key[len(prefix):]
    return key


def _same_mapping_type(original: Mapping[Any, Any], pairs: list[tuple[Any, Any]]) -> Any:
    kind = type(original)
    if kind is not dict:
        try:
            rebuilt = kind(pairs)  # type: ignore[call-arg]
        except (TypeError, ValueError):
            rebuilt = None
        # Only accept a rebuild that holds exactly our pairs (Counter(pairs), for one,
        # would count the pairs instead of mapping them).
        if (
            isinstance(rebuilt, Mapping)
            and list(rebuilt.keys()) == [key for key, _ in pairs]
            and all(rebuilt[key] is value for key, value in pairs)
        ):
            return rebuilt
    return dict(pairs)


def _carry_metadata(original: Mapping[Any, Any], result: Any, prefixes: tuple[str, ...]) -> None:
    metadata = getattr(original, "_metadata", None)
    if not isinstance(metadata, Mapping):
        return
    stripped: dict[Any, Any] = {}
    for key, value in metadata.items():
        new = key
        if isinstance(key, str) and key:
            for prefix in prefixes:
                # "module" is the wrapper itself; "module.fc" one of its children.
                if key == prefix.rstrip(".") or key.startswith(prefix):
                    new = key[len(prefix):]
                    break
        stripped[new] = value
    try:
        result._metadata = _same_mapping_type(metadata, list(stripped.items()))
    except AttributeError:  # a plain dict cannot carry attributes
        pass

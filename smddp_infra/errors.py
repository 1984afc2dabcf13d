"""The one error type for bad user input.

Everything a user can get wrong (a context key, a construct prop, a CLI flag, a job
file) raises a subclass of :class:`SmddpError`. The CLI and ``app.py`` turn it into a
single line and a non-zero exit; any other exception is a bug in this project.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar


class SmddpError(ValueError):
    """Bad input: the message names the setting, the value and what is allowed."""


class SizingError(SmddpError):
    """A file-system sizing request that no valid FSx for Lustre configuration meets."""


class ConfigError(SmddpError):
    """A context key, construct prop or job setting with a value that is not allowed."""


class PropTypeError(ConfigError, TypeError):
    """A construct prop of the wrong type (a str where an ``IVpc`` belongs): a ``TypeError``
    for Python callers, and a :class:`SmddpError` so the CLI and ``app.py`` print one line."""


def unknown_field(owner: str, name: str, known: Sequence[str], *, what: str = "field",
                  moved: Optional[Mapping[str, str]] = None) -> PropTypeError:
    """One line for a keyword ``owner`` does not take: where an old keyword ``moved``, else the
    nearest it does take (``difflib``)."""
    import difflib

    if moved and name in moved:
        return PropTypeError(f"{owner} has no {name!r}: it moved to {moved[name]}")
    near = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {near[0]!r}?" if near else f"it takes {', '.join(known)}"
    return PropTypeError(f"{owner} has no {what} {name!r}: {hint}")


_Group = TypeVar("_Group", bound=type)


def known_fields(cls: _Group, *, check: Optional[Callable[[Any], None]] = None) -> _Group:
    """A frozen option group (a dataclass) whose unknown keyword is one :func:`unknown_field` line
    instead of the dataclass's ``__init__() got an unexpected keyword argument``; ``check`` runs
    on each instance once it is built (the schema's field rules)."""
    import dataclasses
    import functools

    init = cls.__init__  # type: ignore[misc]
    names = tuple(f.name for f in dataclasses.fields(cls))

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        for name in kwargs:
            if name not in names:
                raise unknown_field(cls.__name__, name, names)
        if len(args) > len(names):
            raise PropTypeError(f"{cls.__name__} takes at most {len(names)} values, got {len(args)}: name them")
        init(self, *args, **kwargs)
        if check is not None:
            check(self)

    cls.__init__ = __init__  # type: ignore[misc]
    return cls

"""The one error type for bad user input.

Everything a user can get wrong (a context key, a construct prop, a CLI flag, a job
file) raises a subclass of :class:`SmddpError`. The CLI and ``app.py`` turn it into a
single line and a non-zero exit; any other exception is a bug in this project.
"""

from __future__ import annotations


class SmddpError(ValueError):
    """Bad input: the message names the setting, the value and what is allowed."""


class SizingError(SmddpError):
    """A file-system sizing request that no valid FSx for Lustre configuration meets."""


class ConfigError(SmddpError):
    """A context key, construct prop or job setting with a value that is not allowed."""


class PropTypeError(ConfigError, TypeError):
    """A construct prop of the wrong type (a str where an ``IVpc`` belongs): a ``TypeError``
    for Python callers, and a :class:`SmddpError` so the CLI and ``app.py`` print one line."""

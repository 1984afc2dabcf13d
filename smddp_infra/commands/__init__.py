"""One module per ``smddp-infra`` subcommand (see :mod:`smddp_infra.cli`)."""

from __future__ import annotations

from typing import Optional


def count_flag(flag: str, text: Optional[str]) -> Optional[int]:
    """An instance-count flag parsed by the command, not by argparse, so a bad value is one line
    naming the flag (argparse adds a usage block); None when the flag is not given."""
    from smddp_infra.errors import ConfigError

    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(f"{flag} must be a whole number >= 1, got {text!r}")
    return value

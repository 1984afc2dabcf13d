"""One module per ``smddp-infra`` subcommand (see :mod:`smddp_infra.cli`)."""

from __future__ import annotations

import argparse
from typing import Optional


def instance_flags(args: argparse.Namespace) -> Optional[int]:
    """``--instance-type`` checked against the EFA catalog, then ``--instance-count`` parsed by the
    command, not by argparse, so a bad value is one line naming the flag (argparse adds a usage
    block); the count, or None when the flag is not given. size and job-config take both."""
    from smddp_infra.errors import ConfigError
    from smddp_infra.sizing.catalog import efa_instance

    if args.instance_type is not None:
        efa_instance(args.instance_type, setting="--instance-type")
    text = args.instance_count
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(f"--instance-count must be a whole number >= 1, got {text!r}")
    return value

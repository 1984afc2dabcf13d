"""The one preflight error: input it cannot read (the CLI turns it into exit code 2)."""

from __future__ import annotations

from smddp_infra.errors import ConfigError


class PreflightInputError(ConfigError):
    """A job file, script or cdk-outputs.json that is missing, unparsable or malformed."""

"""One module per ``smddp-infra`` subcommand (see :mod:`smddp_infra.cli`)."""

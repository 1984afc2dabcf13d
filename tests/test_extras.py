"""The ``[cli]`` extra: without it, a CLI command that needs PyYAML, rich or cfn-lint says which
extra to install in one line (the core install is what the constructs need; tests/test_floors.py
proves the constructs synthesize without those packages)."""

from __future__ import annotations

import argparse

import pytest

from smddp_infra import cli


@pytest.mark.parametrize("module, package", [("yaml", "PyYAML"), ("rich", "rich"), ("cfnlint", "cfn-lint")])
def test_a_missing_cli_extra_is_one_line_naming_it(monkeypatch, capsys, module, package):
    def run(_args):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    parser = argparse.ArgumentParser()
    parser.set_defaults(_run=run, command="review")
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err == (f"smddp-infra: error: the command needs {package}, which is not installed "
                   "(`pip install --no-deps` leaves it out): pip install 'smddp-infra[cli]'\n")


def test_a_missing_module_of_our_own_is_not_disguised(monkeypatch):
    def run(_args):
        raise ModuleNotFoundError("No module named 'smddp_infra.nothing'", name="smddp_infra.nothing")

    parser = argparse.ArgumentParser()
    parser.set_defaults(_run=run, command="review")
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    with pytest.raises(ModuleNotFoundError):
        cli.main([])

"""Every `rw` command and subcommand answers `--help` (README: the commands a new user reads), and
a subcommand lives in the module of its group, so the lazy command table loads it with the group
(`rw resolver revert` was defined elsewhere and was "No such command")."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
from click.testing import CliRunner

from verifier.cli.app import cli
from verifier.cli.main import _PACKAGE, COMMAND_MODULES


def _load_all() -> None:
    for module in COMMAND_MODULES:
        importlib.import_module(_PACKAGE + module)


def _walk(command: click.Command, path: list[str]) -> list[list[str]]:
    found = [path]
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            found.extend(_walk(sub, [*path, name]))
    return found


def test_every_subcommand_lives_in_the_module_of_its_group() -> None:
    _load_all()
    for name, group in cli.commands.items():
        if not isinstance(group, click.Group) or group.callback is None:
            continue
        for sub_path in _walk(group, [name])[1:]:
            sub: click.Command = group
            for part in sub_path[1:]:
                assert isinstance(sub, click.Group)
                sub = sub.commands[part]
            assert sub.callback is not None
            assert sub.callback.__module__ == group.callback.__module__, " ".join(sub_path)


def test_every_command_and_subcommand_answers_help() -> None:
    _load_all()
    runner = CliRunner()
    for path in _walk(cli, []):
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage: " in result.output, path


def test_rw_resolver_revert_help_in_a_fresh_process() -> None:
    code = "import sys\nfrom verifier.cli.main import main\nsys.argv = ['rw', 'resolver', 'revert', '--help']\nmain()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--reason" in done.stdout


def test_a_client_command_without_a_server_names_rw_server() -> None:
    _load_all()
    result = CliRunner().invoke(cli, ["board", "world-model-eval"], env={"RW_SERVER": None})
    assert result.exit_code == 2
    assert "RW_SERVER" in result.output

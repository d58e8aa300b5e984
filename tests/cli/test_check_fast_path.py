"""`rw check` as typed runs without click (verifier.cli.main, issue 26): what it takes that way is
exactly what the click command takes, and it says the same as click in every case the command
has: a folder that passes, one the verifier rejects (in JSON too), a line that is not ASCII
(written by click.echo itself), and a folder that cannot be checked or is refused as untrusted
(click's own `Error:`)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from tests.support.light import Ran, checked_folder, misquote, run_rw
from tests.support.world import World
from verifier.cli.app import cli
from verifier.cli.main import CHECK_WITHOUT_CLICK
from verifier.errors import UntrustedReply

pytestmark = pytest.mark.slow  # each test starts `rw` in fresh interpreters


def test_the_click_command_takes_exactly_the_arguments_rw_checks_without_click() -> None:
    # `check` is found by name alone: the group's one option (--version) is not in these lists.
    assert [param.name for param in cli.params] == ["version"]
    command = cli.get_command(click.Context(cli), "check")
    assert command is not None
    # One flag, --json, and no other way to set it (no short name, no environment variable).
    assert [(type(p).__name__, p.name, p.opts, p.secondary_opts, getattr(p, "is_flag", None), p.envvar)
            for p in command.params] == [("Option", "as_json", ["--json"], [], True, None)]
    for argv, as_json in CHECK_WITHOUT_CLICK.items():
        assert argv[0] == "check"
        assert command.make_context("check", list(argv[1:])).params == {"as_json": as_json}, argv
    # Every other spelling click would accept (or refuse) is left to click.
    assert set(CHECK_WITHOUT_CLICK) == {("check",), ("check", "--json")}


@pytest.fixture
def folder(world: World, tmp_path: Path) -> Path:
    return checked_folder(world, tmp_path)


def said(ran: Ran) -> tuple[int, str, str]:
    """(exit code, stdout, stderr)."""
    return ran.code, ran.out[: len(ran.out) - len(ran.stderr)], ran.stderr


def both_ways(argv: list[str], cwd: Path, cache: Path) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """What `rw ARGV` says without click, then through click."""
    env = {"XDG_CACHE_HOME": str(cache)}
    fast, slow = run_rw(argv, cwd, env), run_rw(argv, cwd, env, through_click=True)
    assert "click" in slow.modules
    return said(fast), said(slow)


def test_a_passing_folder_is_said_the_same_without_click_and_loads_no_click(folder: Path) -> None:
    cache = folder.parent / "cache"
    for argv in (["check"], ["check", "--json"]):
        fast, slow = both_ways(argv, folder, cache)
        assert fast == slow and fast[0] == 0, (fast, slow)
        assert not run_rw(argv, folder, {"XDG_CACHE_HOME": str(cache)}).loaded("click")
    assert json.loads(both_ways(["check", "--json"], folder, cache)[0][1])["ok"] is True


def test_a_rejected_folder_is_said_the_same_without_click(folder: Path) -> None:
    misquote(sorted((folder / "findings").rglob("*.yaml"))[0])
    for argv in (["check"], ["check", "--json"]):
        fast, slow = both_ways(argv, folder, folder.parent / "cache")
        assert fast == slow and fast[0] == 1 and "excerpt_not_found" in fast[1], (fast, slow)


def test_a_line_that_is_not_ascii_is_written_by_click_echo_itself(folder: Path) -> None:
    misquote(sorted((folder / "findings").rglob("*.yaml"))[0], "Zé Zé")  # the line quotes the excerpt
    fast, slow = both_ways(["check"], folder, folder.parent / "cache")
    assert fast == slow and fast[0] == 1 and "é Zé WORLD" in fast[1], (fast, slow)
    assert run_rw(["check"], folder, {"XDG_CACHE_HOME": str(folder.parent / "cache")}).loaded("click")


def test_a_folder_that_cannot_be_checked_gets_clicks_own_error(tmp_path: Path) -> None:
    fast, slow = both_ways(["check"], tmp_path, tmp_path / "cache")
    assert fast == slow and fast[0] == 2 and fast[2].startswith("Error: ") and "not inside a working folder" in fast[2]


def test_a_folder_whose_state_is_a_link_is_refused_the_same_without_click(folder: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".rw").symlink_to(folder / ".rw", target_is_directory=True)
    fast, slow = both_ways(["check"], linked, folder.parent / "cache")
    assert fast == slow and fast[0] == UntrustedReply.exit_code, (fast, slow)
    assert fast[2].startswith(f"Error: [{UntrustedReply.code}] ") and "is a link" in fast[2], fast

"""Helpers for the lifecycle tests (issue 23): a hypothesis sent back to loose, `rw` in-process
with a home, a person's push of one file, and the ledger's baseline rows."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tests.support.edits import edit
from tests.support.git import clone, commit_file, push_for_review
from tests.support.world import NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.formats.ledger import LedgerRow
from verifier.pipeline.ledger import read_chain

assert COMMAND_MODULES  # the commands register on import
RW_NOW = "2026-11-30T12:00:00Z"  # conftest.NOW


def person(world: World) -> str:
    return world.home.identities.add("ericxtang", "stew-op", "human", NOW)


def hypothesis_text(world: World, hypothesis_id: str) -> str:
    return (world.repo.view(world.tip()).read(f"hypotheses/{hypothesis_id}.md") or b"").decode()


def loosen(world: World, token: str, hypothesis_id: str = "H3") -> None:
    """A person sets the hypothesis back to loose, keeping its criterion, check date and measure
    (as an `unresolved` outcome with a new check date leaves it)."""
    text = hypothesis_text(world, hypothesis_id).replace("status: active", "status: loose")
    verdict = world.submit(edit(world, token, {f"hypotheses/{hypothesis_id}.md": text.encode()}))
    assert verdict.outcome == "accepted", verdict.line()


def rw(world: World, *args: str, token: str | None = None) -> Result:
    env = {"RW_HOME": str(world.home.root), "RW_NOW": RW_NOW, "RW_TOKEN": token or ""}
    return CliRunner().invoke(cli, list(args), env=env)


def push_activation(world: World, tmp_path: Path, token: str, hypothesis_id: str = "H3") -> str:
    """A person pushes one commit making the hypothesis active; returns what git printed."""
    work = clone(world.repo.path, tmp_path / f"work-{len(list(tmp_path.glob('work-*')))}")
    text = (work / "hypotheses" / f"{hypothesis_id}.md").read_text()
    commit_file(work, f"hypotheses/{hypothesis_id}.md", text.replace("status: loose", "status: active"),
                f"{hypothesis_id}: activate")
    result = push_for_review(work, token)
    assert result.returncode == 0, result.stderr
    return result.stderr


def rows(world: World) -> list[LedgerRow]:
    return [row for _, row in read_chain(world.repo.view(world.tip()))]


def baseline_rows(world: World) -> list[tuple[str, str | None, str]]:
    return [(row.outcome, row.reason_code, row.description) for row in rows(world)
            if row.action == "resolve" and row.kind == "baseline"]


def digest_json(world: World) -> dict[str, object]:
    result = rw(world, "digest", SLUG)
    assert result.exit_code == 0, result.output
    value: dict[str, object] = json.loads(result.stdout)
    return value

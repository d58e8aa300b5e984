"""The loop's commands: `rw maintainer run|due`, `rw loop skill`, `rw loop gate` with a real worker command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.loop import SEED_SKILL, with_extract
from tests.support.world import World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.roles.liveskill import install_skill, live_skill_version
from verifier.store.home import Settings

assert COMMAND_MODULES  # the commands register on import
WORKER = [sys.executable, str(Path(__file__).resolve().parents[1] / "support" / "worker.py")]


def rw(world: World, *args: str) -> tuple[int, str]:
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z"}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.slow  # a real worker process per validation leaf
def test_gate_by_hand_with_the_configured_worker_command(world: World, tmp_path: Path) -> None:
    install_skill(world.home, SEED_SKILL)
    code, out = rw(world, "loop", "gate", "--kind", "extract", "--candidate", str(tmp_path))
    assert code == 2
    code, out = rw(world, "loop", "skill", "--version")
    assert code == 0 and out.strip() == live_skill_version(world.home)
    candidate = tmp_path / "SKILL.md"
    candidate.write_text(with_extract(SEED_SKILL, "## Extract\n\nQuote verbatim.\n"))
    code, out = rw(world, "loop", "gate", "--kind", "extract", "--candidate", str(candidate))
    assert code == 2 and "no validation worker configured" in out
    world.home.save_settings(Settings(durable=False, fetch="offline", validation_worker=WORKER))
    code, out = rw(world, "loop", "gate", "--kind", "extract", "--candidate", str(candidate), "--json")
    decision = json.loads(out)
    assert code == 0 and decision["outcome"] == "kept", out
    code, out = rw(world, "loop", "skill")
    assert code == 0 and "Quote verbatim." in out and decision["skill_version"] == live_skill_version(world.home)


def test_maintainer_run_and_due(world: World) -> None:
    world.leaf("extract-bad")
    world.submit(world.extract("extract-bad", "extract-bad-excerpt.yaml"))
    code, out = rw(world, "maintainer", "due")
    assert code == 0 and out == ""
    code, out = rw(world, "maintainer", "run", "--json")
    report = json.loads(out)
    assert code == 0 and report["sampled"] == {"extract/rejected": 1} and report["model"] is None
    assert "patterns/extract/excerpt-not-found-after-rw-source-text.md" in report["written"]
    code, out = rw(world, "proposer", "run")
    assert code == 2 and "no model configured" in out

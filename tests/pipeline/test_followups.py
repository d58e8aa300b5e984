"""After a person's edit lands, baselines of active hypotheses are sealed outside the lock; when
no model or key is set up, the edit still lands and the note says how to seal later."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.support.patches import modify
from tests.support.resolution import configure
from tests.support.world import NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.state.layout import seal_path

assert COMMAND_MODULES  # the commands register on import


def submit_edit(world: World, tmp_path: Path, token: str) -> tuple[int, str, str]:
    old = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    new = old.replace("loop_cadence: 20m", "loop_cadence: 30m")
    (tmp_path / "edit.diff").write_bytes(modify("PROJECT.md", old, new))
    env = {"RW_HOME": str(world.home.root), "RW_TOKEN": token, "RW_NOW": "2026-11-30T12:00:00Z"}
    result = CliRunner().invoke(cli, ["submit", SLUG, "--patch", str(tmp_path / "edit.diff")], env=env)
    return result.exit_code, result.stdout, result.stderr


def test_edit_seals_active_baselines(world: World, tmp_path: Path) -> None:
    configure(world.home)
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    code, out, err = submit_edit(world, tmp_path, token)
    assert code == 0 and out.startswith("ACCEPTED"), out + err
    assert "sealed baseline for H1, H3" in err
    view = world.repo.view(world.tip())
    assert view.read(seal_path("H1")) is not None and view.read(seal_path("H3")) is not None


def test_edit_without_model_lands_and_says_how_to_seal(world: World, tmp_path: Path) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    code, out, err = submit_edit(world, tmp_path, token)
    assert code == 0 and out.startswith("ACCEPTED")
    assert "baseline not sealed for H1, H3" in err and "rw seal world-model-eval" in err

"""The controlled arm's default single agent: with no `single` command configured, the platform
worker (`rw worker plan`) runs the plan in the scratch copy, on the home's `worker` model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.eval_history import PLAN_ID, build_history
from tests.support.world import SLUG, World, make_world
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.evaluation.arm_run import default_commands
from verifier.model.adapter import ModelConfig
from verifier.store.home import Settings

assert COMMAND_MODULES  # the commands register on import


def test_the_single_arm_defaults_to_the_platform_worker_and_a_configured_one_wins() -> None:
    chosen = default_commands({"swarm": ["my-swarm"]})
    assert list(chosen["single"][-2:]) == ["worker", "plan"] and chosen["swarm"] == ["my-swarm"]
    assert default_commands({"single": ["my-agent"], "swarm": ["s"]})["single"] == ["my-agent"]


@pytest.mark.slow  # a real `rw worker plan` process in a scratch copy
def test_the_controlled_arm_runs_the_default_single_agent_end_to_end(tmp_path: Path) -> None:
    world: World = make_world(tmp_path / "world")
    build_history(world)
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps({"single": [], "swarm": []}))
    swarm = [sys.executable, str(Path(__file__).parents[1] / "support" / "arm_worker.py"), str(recorded)]
    settings = world.home.settings.model_dump()
    world.home.save_settings(Settings.model_validate({
        **settings, "eval_arm": {"swarm": swarm},
        "models": {"worker": ModelConfig(backend="recorded", recordings="worker-recordings").model_dump()}}))
    result = CliRunner().invoke(cli, ["eval-arm", SLUG, "--plan", PLAN_ID, "--json"],
                                env={"RW_HOME": str(world.home.root), "RW_NOW": "2027-07-02T00:00:00Z"},
                                catch_exceptions=False)
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["unfinished"] == [], result.output
    assert {run["arm"] for run in report["runs"]} == {"single", "swarm"}

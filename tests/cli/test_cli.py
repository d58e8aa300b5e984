"""The `rw` command line, as a user drives it: real files, real repositories, exit codes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.world import FIXTURES, NOTE_ID, SLUG, World
from verifier.agentkit.bundle import write_bundle
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES

assert COMMAND_MODULES  # the commands register on import


@pytest.fixture
def env(world: World) -> dict[str, str]:
    return {"RW_HOME": str(world.home.root), "RW_TOKEN": world.agent.token, "RW_NOW": "2026-11-30T12:00:00Z"}


def rw(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_init_agent_leaf_flow(tmp_path: Path) -> None:
    env = {"RW_HOME": str(tmp_path / "home"), "RW_NOW": "2026-11-30T12:00:00Z"}
    code, out = rw(env, "init", "fresh-project", "--steward", "alice")  # the admin names the first steward
    assert code == 0 and "created project fresh-project" in out
    code, out = rw(env, "init", "fresh-project")
    assert code == 2 and "already exists" in out
    code, out = rw(env, "init", "Bad_Slug")
    assert code == 2 and "slug" in out
    code, out = rw(env, "agent", "add", "scout-bot", "--operator", "alice")
    token = out.splitlines()[0]
    assert code == 0 and token.startswith("rwt_")
    stored = (tmp_path / "home" / "identities.json").read_text()
    assert token not in stored
    code, out = rw(env, "leaf", "add", "fresh-project", "--kind", "scout", "--gap", "pricing data")
    assert code == 3  # a person's tool: RW_TOKEN of a person
    code, out = rw(env, "agent", "add", "alice", "--operator", "alice", "--human")
    env = {**env, "RW_TOKEN": out.splitlines()[0]}
    code, out = rw(env, "leaf", "add", "fresh-project", "--kind", "scout", "--gap", "pricing data")
    assert code == 0 and out.strip().startswith("scout-")
    code, out = rw(env, "leaf", "list", "fresh-project", "--json")
    assert json.loads(out)[0]["state"] == "open"
    code, out = rw(env, "leaf", "add", "fresh-project", "--kind", "extract")
    assert code == 2 and "source_id" in out


def test_untouched_template_project_parses(tmp_path: Path) -> None:
    env = {"RW_HOME": str(tmp_path / "home")}
    assert rw(env, "init", "untouched")[0] == 0
    code, out = rw(env, "ledger", "untouched", "--verify")
    assert code == 0 and "ok" in out


def test_submit_via_files_text_and_json(world: World, env: dict[str, str], tmp_path: Path) -> None:
    world.leaf("extract-1")
    bad = world.extract("extract-1", "extract-bad-excerpt.yaml")
    (tmp_path / "bad.diff").write_bytes(bad.patch)
    write_bundle(bad.bundle, tmp_path / "bad-trace")
    code, out = rw(env, "submit", SLUG, "--leaf", "extract-1", "--patch", str(tmp_path / "bad.diff"),
                   "--trace", str(tmp_path / "bad-trace"))
    assert code == 1 and out.startswith("REJECTED") and "excerpt_not_found" in out
    good = world.extract("extract-1")
    (tmp_path / "good.diff").write_bytes(good.patch)
    write_bundle(good.bundle, tmp_path / "good-trace")
    code, out = rw(env, "submit", SLUG, "--leaf", "extract-1", "--patch", str(tmp_path / "good.diff"),
                   "--trace", str(tmp_path / "good-trace"), "--json")
    verdict = json.loads(out)
    assert code == 0 and verdict["outcome"] == "accepted" and verdict["commit"]
    code, out = rw(env, "ledger", SLUG, "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["outcome"] for r in rows[-2:]] == ["rejected", "accepted"]
    code, out = rw(env, "ledger", SLUG)
    assert "excerpt_not_found" in out and "agent-a (op-a)" in out


def test_submit_auth_and_usage_errors(world: World, env: dict[str, str], tmp_path: Path) -> None:
    world.leaf("extract-1")
    good = world.extract("extract-1")
    (tmp_path / "p.diff").write_bytes(good.patch)
    write_bundle(good.bundle, tmp_path / "trace")
    args = ["submit", SLUG, "--leaf", "extract-1", "--patch", str(tmp_path / "p.diff"),
            "--trace", str(tmp_path / "trace")]
    code, out = rw({**env, "RW_TOKEN": ""}, *args)
    assert code == 3 and "RW_TOKEN" in out
    code, out = rw({**env, "RW_TOKEN": "rwt_" + "x" * 43}, *args)
    assert code == 3
    code, out = rw(env, "submit", "no-such-project", *args[2:])
    assert code == 2 and "no project" in out
    code, out = rw(env, *args[:5], str(tmp_path / "missing.diff"), *args[6:])
    assert code == 2


def test_schema_and_source_text(world: World, env: dict[str, str]) -> None:
    code, out = rw(env, "schema", "finding")
    schema = json.loads(out)
    assert code == 0 and "excerpt" in schema["properties"] and schema["additionalProperties"] is False
    code, out = rw(env, "source", "text", SLUG, NOTE_ID)
    assert code == 0 and out.startswith("WORLD MODELS FOR ROBOTICS")
    code, out = rw(env, "source", "text", SLUG, "src_0000000000000000")
    assert code == 2


def test_leaf_show_reports_state(world: World, env: dict[str, str]) -> None:
    world.leaf("extract-1")
    _, out = rw(env, "leaf", "show", SLUG, "extract-1", "--json")
    assert json.loads(out)["state"] == "open"
    world.submit(world.extract("extract-1"))
    _, out = rw(env, "leaf", "show", SLUG, "extract-1", "--json")
    assert json.loads(out)["state"] == "accepted"


@pytest.mark.slow  # `rw demo` as a subprocess of the console script
def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    """The README's first command, as a subprocess of the installed console script."""
    rw_bin = Path(sys.executable).with_name("rw")
    result = subprocess.run([str(rw_bin), "demo", "--home", str(tmp_path / "demo")], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bad patch : REJECTED" in result.stdout and "excerpt_not_found" in result.stdout
    assert "good patch: ACCEPTED" in result.stdout and "ledger --verify: ok" in result.stdout
    assert "planner wake:" in result.stdout and "link" in result.stdout and "review" in result.stdout
    assert (tmp_path / "demo" / "site" / "index.html").is_file()


def test_fixture_sources_match_their_bytes() -> None:
    """fixtures/demo-project/sources/ is what scripts/build_fixture_project.py writes."""
    spec = importlib.util.spec_from_file_location("build_fixture_project",
                                                  FIXTURES.parent / "scripts" / "build_fixture_project.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.build()
    actual = {p.relative_to(FIXTURES / "demo-project").as_posix(): p.read_bytes()
              for p in (FIXTURES / "demo-project" / "sources").rglob("*") if p.is_file()}
    assert actual == expected

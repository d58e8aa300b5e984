"""Real agent CLIs as workers (issue 24 point 3): `rw runner --worker claude|codex` and `rw worker run
--agent`, end to end against a real `rw serve`, with a stand-in `claude` / `codex` on PATH
(tests/support/agent_cli.py) that checks how it was started and replays a recorded transcript."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.agent_cli import install
from tests.support.first_hour import Steward, agent_token, copied_initialised, serving
from verifier.formats.ledger import LedgerRow
from verifier.roles.liveskill import live_skill_version
from verifier.state.project import rows_from

pytestmark = pytest.mark.slow
SLUG = "world-model-eval"


def _env(tmp_path: Path, token: str, mode: str = "replay") -> dict[str, str]:
    bin_dir = install(tmp_path / "bin")
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RW_WORKER_TOKEN": token,
            "RW_STANDIN_LOG": str(tmp_path / "standin.json"), "RW_STANDIN_MODE": mode}


def _rows(steward: Steward) -> list[LedgerRow]:
    repo = steward.home.project(SLUG)
    tip = repo.tip()
    assert tip is not None
    return rows_from(repo.view(tip), 0)


def _open_leaves(steward: Steward, url: str) -> set[str]:
    done = steward.rw("board", SLUG, "--server", url)
    return {line.split("\t")[0] for line in done.stdout.splitlines()[1:] if "\topen" in line}


def _runner(steward: Steward, url: str, env: dict[str, str], worker: str = "claude",
            limit: str = "120s") -> dict[str, object]:
    done = steward.rw("runner", "--once", "--project", SLUG, "--worker", worker, "--server", url, "--limit", limit,
                      "--json", env=env, ok=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_runner_with_claude_reaches_an_accepted_extract_carrying_model_tokens_usd_and_the_live_skill(
        tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "claude-worker")
    with serving(steward.home) as server:
        _runner(steward, server.url, _env(tmp_path, token))
    seen = json.loads((tmp_path / "standin.json").read_text())
    row = _rows(steward)[-1]
    assert (row.outcome, row.kind, row.actor) == ("accepted", "extract", "claude-worker"), row
    assert row.model == "claude-sonnet-4-5-20250929"
    assert row.cost.tokens and row.cost.tokens > 0 and row.cost.usd == pytest.approx(0.0642)
    assert row.skill_version == live_skill_version(steward.home)
    # How the CLI was started: headless, stream-json, limited tools, a turn budget; the token only in its env.
    argv = seen["argv"]
    assert argv[0] == "-p" and argv[argv.index("--output-format") + 1] == "stream-json" and "--verbose" in argv
    assert argv[argv.index("--allowedTools") + 1] == "Read,Glob,Grep,Edit,Write,Skill,Bash(rw:*)"
    assert "--max-turns" in argv and argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert token not in " ".join(argv) and seen["env"]["RW_TOKEN"] == token
    assert seen["env"]["RW_HOME"] is None and seen["env"]["RW_WORKER_TOKEN"] is None
    assert seen["skill"] == (steward.home.root / "skill" / "SKILL.md").read_text(encoding="utf-8")
    # The transcript is kept in the folder, and the token is in none of the folder's trace files.
    folder = Path(seen["cwd"])
    assert (folder / ".rw" / "transcript.jsonl").read_text().count('"type":"result"') == 1
    for path in (folder / ".rw").rglob("*"):
        assert not path.is_file() or token.encode() not in path.read_bytes(), path
    # A warm leaf asks for L3: the context the agent started with (payload, skill, prompt) is recorded.
    assert json.loads((folder / ".rw" / "work.json").read_text())["level"] == "L3"
    context = (folder / ".rw" / "trace" / "context.md").read_text(encoding="utf-8")
    assert '"contract"' in context and "# The prompt" in context and argv[1] in context


def test_a_claude_that_exits_1_is_a_crash_row_with_its_exit_code_and_the_leaf_is_claimable_again(
        tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "claude-worker")
    with serving(steward.home) as server:
        before = _open_leaves(steward, server.url)
        _runner(steward, server.url, _env(tmp_path, token, "exit1"))
        row = _rows(steward)[-1]
        assert (row.outcome, row.reason_code, row.actor) == ("crash", "agent_crash", "claude-worker")
        assert "agent claude exited with code 1" in row.description
        assert row.leaf_id in before and _open_leaves(steward, server.url) == before  # back in the pool


def test_a_hanging_claude_is_killed_at_the_limit_and_is_a_crash_row(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "claude-worker")
    with serving(steward.home) as server:
        before = _open_leaves(steward, server.url)
        _runner(steward, server.url, _env(tmp_path, token, "hang"), limit="3s")
        row = _rows(steward)[-1]
        assert (row.outcome, row.reason_code) == ("crash", "agent_crash")
        assert "stopped at the wall-clock limit of 3s" in row.description and "SIGTERM" in row.description
        assert _open_leaves(steward, server.url) == before


def test_a_claude_that_says_nothing_is_a_crash_row(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "claude-worker")
    with serving(steward.home) as server:
        _runner(steward, server.url, _env(tmp_path, token, "silent"))
    row = _rows(steward)[-1]
    assert row.outcome == "crash" and "produced nothing" in row.description


def test_a_token_the_agent_printed_is_redacted_from_the_transcript_before_import(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "claude-worker")
    with serving(steward.home) as server:
        _runner(steward, server.url, _env(tmp_path, token, "leak"))
    folder = Path(json.loads((tmp_path / "standin.json").read_text())["cwd"])
    transcript = (folder / ".rw" / "transcript.jsonl").read_bytes()
    assert token.encode() not in transcript and b"[redacted: RW_TOKEN]" in transcript
    assert _rows(steward)[-1].outcome == "accepted"


def test_worker_run_with_codex_installs_agents_md_and_submits_through_the_codex_transcript(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "codex-worker")
    with serving(steward.home) as server:
        leaf_id = sorted(_open_leaves(steward, server.url))[0]
        env = {**_env(tmp_path, token), "RW_TOKEN": token}
        done = steward.rw("worker", "run", SLUG, leaf_id, "--agent", "codex", "--server", server.url, "--json",
                          env=env, ok=False)
    result = json.loads(done.stdout)
    seen = json.loads((tmp_path / "standin.json").read_text())
    assert seen["argv"][:2] == ["exec", "--json"] and "workspace-write" in seen["argv"]
    assert seen["skill"] == (steward.home.root / "skill" / "SKILL.md").read_text(encoding="utf-8")
    row = _rows(steward)[-1]
    assert result["outcome"] == row.outcome and row.actor == "codex-worker" and row.leaf_id == leaf_id
    assert row.outcome == "accepted" and row.cost.tokens and row.cost.tokens > 0  # codex discloses usage, not cost
    assert row.skill_version == live_skill_version(steward.home)
    assert "/AGENTS.md" in (Path(seen["cwd"]) / ".git" / "info" / "exclude").read_text()

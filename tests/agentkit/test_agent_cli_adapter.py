"""Each agent CLI's adapter (verifier.agentkit.agentcli): headless arguments with the tool
allow-list and budget, a prompt from the payload that never holds the token, and the skill written
where the CLI reads it and kept out of the patch."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from verifier.agentkit.agentcli import SkillPlacementError, argv_for, install_skill, prompt_for, spec_for
from verifier.agentkit.workdir import STATE_DIR, Work, WorkState, make_patch

PAYLOAD = {"contract": {"leaf_id": "extract-0123456789ab", "kind": "extract",
                        "may_write": [{"op": "create", "path": "findings/*/fnd_*.yaml"}]}}


def _work(tmp_path: Path, tracked: dict[str, str] | None = None) -> Work:
    root = tmp_path / "clone"
    root.mkdir()
    def run(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    run("init", "-q")
    for name, text in {"README.md": "project\n", **(tracked or {})}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "base")
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()
    (root / STATE_DIR).mkdir()
    (root / ".git" / "info" / "exclude").write_text(f"/{STATE_DIR}/\n")
    return Work(root, WorkState("http://127.0.0.1:1", "p", "extract-0123456789ab", "extract", base, "a", "o"))


def test_claude_runs_headless_with_stream_json_a_turn_budget_and_only_read_edit_and_rw() -> None:
    argv = argv_for("claude", "PROMPT", max_turns=7)
    assert argv[:3] == ["claude", "-p", "PROMPT"]
    assert argv[argv.index("--output-format") + 1] == "stream-json" and "--verbose" in argv
    assert argv[argv.index("--max-turns") + 1] == "7"
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert "Bash(rw:*)" in allowed and "Bash" not in allowed and "WebFetch" not in allowed
    assert argv[argv.index("--disallowedTools") + 1] == "WebFetch,WebSearch"


def test_codex_runs_exec_json_in_a_workspace_write_sandbox_without_network_or_approvals() -> None:
    argv = argv_for("codex", "PROMPT")
    assert argv[:3] == ["codex", "exec", "--json"] and argv[-1] == "PROMPT"
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert 'approval_policy="never"' in argv and "sandbox_workspace_write.network_access=false" in argv


def test_an_unknown_agent_is_refused() -> None:
    with pytest.raises(ValueError, match="no agent CLI 'gemini'"):
        spec_for("gemini")


def test_the_prompt_names_the_leaf_its_inputs_and_what_it_may_write() -> None:
    prompt = prompt_for(PAYLOAD, "L3")
    assert "extract-0123456789ab" in prompt and ".rw/payload.json" in prompt and "fnd_*.yaml" in prompt
    assert "level L3" in prompt and "rwt_" not in prompt


@pytest.mark.parametrize(("agent", "where"), [("claude", ".claude/skills/researchwiki/SKILL.md"),
                                              ("codex", "AGENTS.md")])
def test_the_skill_is_written_where_the_cli_reads_it_and_never_enters_the_patch(tmp_path: Path, agent: str,
                                                                                 where: str) -> None:
    work = _work(tmp_path)
    assert install_skill(work, agent, b"the live skill\n") == where  # type: ignore[arg-type]
    assert (work.root / where).read_bytes() == b"the live skill\n"
    assert make_patch(work) == b""  # excluded from git like .rw/
    assert f"/{STATE_DIR}/" in (work.root / ".git" / "info" / "exclude").read_text()


def test_a_project_that_tracks_agents_md_is_refused_rather_than_overwritten(tmp_path: Path) -> None:
    work = _work(tmp_path, {"AGENTS.md": "the project's own\n"})
    with pytest.raises(SkillPlacementError, match=r"tracks AGENTS\.md"):
        install_skill(work, "codex", b"the live skill\n")
    assert (work.root / "AGENTS.md").read_text() == "the project's own\n"

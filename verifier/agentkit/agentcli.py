"""How each headless agent CLI is started on a working folder (docs/runners.md): where it reads the
skill, its argument list, its prompt and the transcript format it writes. Pure, except
`install_skill`, which writes the skill into the folder.

- **claude** (Claude Code, `claude -p`): reads project skills from `.claude/skills/<name>/SKILL.md`
  under its working folder; the live skill is written there as `researchwiki`. It runs with
  `--output-format stream-json --verbose` (one JSON object per line on stdout), `--max-turns`, the
  permission mode `dontAsk` (a tool not on the allow-list is denied, never asked about: there is
  nobody to ask), an allow-list of reading and editing files and running `rw` only, and the web
  tools denied, so it reaches no network but through `rw` (the service).
- **codex** (`codex exec`): reads `AGENTS.md` in its working folder; the live skill is written
  there. It runs with `--json` (JSON lines on stdout), `--sandbox workspace-write` (writes only in
  the folder, no network from its commands), approval `never` and `--skip-git-repo-check` (the
  folder is a detached clone). Codex has no turn limit: the wall-clock limit is its budget.

Both files are kept out of the patch through `.git/info/exclude`, like `.rw/`: a project tree that
already tracks one of them is refused, since the agent's instructions would then be the project's.
The prompt names the folder's files and the leaf, never the token: the token reaches the CLI only
in its environment (RW_TOKEN), and the transcript is redacted of it before import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from verifier.agentkit.safefiles import write_bytes
from verifier.agentkit.workdir import STATE_DIR, Work, git
from verifier.constants import AGENT_MAX_TURNS

AgentName = Literal["claude", "codex"]
AGENTS: tuple[AgentName, ...] = ("claude", "codex")
SKILL_NAME = "researchwiki"
TRANSCRIPT = f"{STATE_DIR}/transcript.jsonl"
AGENT_STDERR = f"{STATE_DIR}/agent-stderr.log"
DEFAULT_MAX_TURNS = AGENT_MAX_TURNS

# What the agent may do: read the folder, edit it, run `rw`. Nothing else (no other commands, no web).
CLAUDE_ALLOWED = ("Read", "Glob", "Grep", "Edit", "Write", "Skill", "Bash(rw:*)")
CLAUDE_DENIED = ("WebFetch", "WebSearch")


class SkillPlacementError(ValueError):
    """The project's own tree already holds the file the agent CLI would read its skill from."""


@dataclass(frozen=True)
class AgentSpec:
    name: AgentName
    skill_file: str  # where, inside the working folder, the CLI reads the skill
    transcript_format: str  # the `rw trace import --from` format of its stdout


SPECS: Mapping[str, AgentSpec] = {
    "claude": AgentSpec("claude", f".claude/skills/{SKILL_NAME}/SKILL.md", "claude-stream-json"),
    "codex": AgentSpec("codex", "AGENTS.md", "codex-jsonl"),
}


def spec_for(agent: str) -> AgentSpec:
    """The adapter of `agent`; fail closed on any other name."""
    spec = SPECS.get(agent)
    if spec is None:
        raise ValueError(f"no agent CLI {agent!r}; one of {', '.join(AGENTS)}")
    return spec


def prompt_for(payload: Mapping[str, object], level: str) -> str:
    """The task, from the leaf's payload: which leaf, where its inputs are, what to finish with."""
    contract = payload.get("contract")
    contract = contract if isinstance(contract, dict) else {}
    kind, leaf_id = str(contract.get("kind", "?")), str(contract.get("leaf_id", "?"))
    may_write = json.dumps(contract.get("may_write", []), sort_keys=True)
    lines = [
        f"Do ResearchWiki leaf {leaf_id} (kind {kind}) in this folder, following the researchwiki skill "
        f"(its {kind} section).",
        f"The leaf's contract and inputs are in {STATE_DIR}/payload.json, the project's Field Guide in "
        f"{STATE_DIR}/FIELD-GUIDE.md, the exact text of each input source in {STATE_DIR}/sources/.",
        f"You may write only what the contract allows: {may_write}.",
        "Write objects with `rw new ...` (it computes ids and offsets) and run `rw check` until it passes.",
        "Do not run `rw submit`: the worker submits this folder when you finish.",
        f"The trace is recorded at level {level} from your transcript.",
    ]
    return "\n".join(lines)


def argv_for(agent: AgentName, prompt: str, *, max_turns: int = DEFAULT_MAX_TURNS) -> list[str]:
    """The CLI's argument list (no shell): headless, JSON lines on stdout, limited tools."""
    if agent == "claude":
        return ["claude", "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--max-turns", str(max_turns), "--permission-mode", "dontAsk",
                "--allowedTools", ",".join(CLAUDE_ALLOWED), "--disallowedTools", ",".join(CLAUDE_DENIED)]
    return ["codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check",
            "-c", 'approval_policy="never"', "-c", "sandbox_workspace_write.network_access=false", prompt]


def install_skill(work: Work, agent: AgentName, skill: bytes) -> str:
    """Write the skill's exact bytes where `agent` reads skills in the folder; keep it out of the
    patch (git's exclude). Returns the path written, relative to the folder."""
    relative = spec_for(agent).skill_file
    tracked = git(work.root, "ls-files", "--", relative.split("/")[0]).strip()
    if tracked:
        raise SkillPlacementError(f"the project tracks {relative.split('/')[0]}; the {agent} skill cannot be "
                                    "installed there without changing the project's own files")
    work.write(relative, skill)
    write_bytes(work.root, ".git/info/exclude", f"/{relative.split('/')[0]}\n".encode(), append=True)
    return relative

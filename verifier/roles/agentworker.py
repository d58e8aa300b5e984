"""A real agent CLI on one leaf (docs/runners.md): `rw worker run SLUG LEAF --agent claude|codex`,
and what `rw runner --worker claude|codex` runs per claimed leaf.

For the leaf, in order:

 1. `rw work SLUG LEAF --server URL --dir FOLDER` makes the working folder (claim, clone, payload,
    sources, the live skill the service serves, its skill_version in `.rw/work.json`);
 2. the live skill is installed where the CLI reads skills (`agentkit.agentcli.install_skill`);
 3. at L3 (a warm leaf asks for it) the prompt joins the starting context `rw work` recorded;
    the CLI starts headless in the folder (`agentcli.argv_for`: JSON lines on stdout, tools limited
    to reading and editing the folder and running `rw`, a turn budget, the wall-clock limit) with a
    prompt built from the payload. Its environment is this process's without RW_HOME or the
    runner's token variable, plus RW_TOKEN, RW_SERVER, RW_PROJECT and RW_LEAF: the token is never
    on a command line;
 4. its stdout is the transcript, `.rw/transcript.jsonl` (redacted of the token, should the agent
    have printed it); its stderr goes to `.rw/agent-stderr.log`;
 5. `rw trace import --from FORMAT .rw/transcript.jsonl` turns it into the trace (events, model,
    tokens, usd, duration), then `rw check` and `rw submit --json`.

A CLI that exits non-zero, is killed by a signal, is stopped at the limit, or writes nothing on
stdout is a crash: one `crash` ledger row with the reason (`verifier.writes.crash`), and the claim
is released, so the leaf is back in the pool at once. So is a transcript the importer refuses.
What `rw` itself prints goes to `.rw/worker.log` (never the ledger: it may quote the transcript).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from verifier.agentkit.agentcli import (
    AGENT_STDERR,
    DEFAULT_MAX_TURNS,
    TRANSCRIPT,
    AgentName,
    SkillPlacementError,
    argv_for,
    install_skill,
    prompt_for,
    spec_for,
)
from verifier.agentkit.safefiles import LinkRefused
from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.workdir import STATE_DIR, Work, find_work
from verifier.client.http import Client
from verifier.constants import AGENT_RW_STEP_TIMEOUT_S, AGENT_STEPS_S
from verifier.errors import VerifierError
from verifier.roles.processes import Finished, run_limited
from verifier.store.home import Home
from verifier.writes.crash import record_agent_crash

WORKER_LOG = f"{STATE_DIR}/worker.log"
REDACTED = b"[redacted: RW_TOKEN]"
# Never handed to the agent CLI: the platform's home, and the runner's copy of the token.
WITHHELD_ENV = ("RW_HOME", "RW_WORKER_TOKEN")


class AgentWorkerError(VerifierError):
    """The working folder could not be made, so no agent ran (no crash row: nothing crashed)."""


@dataclass(frozen=True)
class AgentWorkerConfig:
    agent: AgentName
    server: str
    token: str
    limit_s: float = 900.0
    max_turns: int = DEFAULT_MAX_TURNS
    level: str | None = None  # None: what the leaf asks for (`rw work` decides), else L2


@dataclass(frozen=True)
class AgentRun:
    slug: str
    leaf_id: str
    agent: str
    folder: Path
    outcome: str  # accepted, held, rejected, crash, or submit_failed (no verdict came back)
    reason: str
    ledger_seq: int | None
    seconds: float
    skill_version: str | None


def rw_executable() -> str:
    """The `rw` of this installation (beside this Python), else the one on PATH."""
    beside = Path(sys.executable).parent / "rw"
    if beside.exists():
        return str(beside)
    found = shutil.which("rw")
    if found is None:
        raise AgentWorkerError("no `rw` command beside this Python or on PATH")
    return found


def agent_env(base: Mapping[str, str], config: AgentWorkerConfig, slug: str, leaf_id: str) -> dict[str, str]:
    """The environment the agent CLI (and every `rw` step) gets: the token only here."""
    env = {key: value for key, value in base.items() if key not in WITHHELD_ENV}
    # The agent's one command is `rw`: this installation's, first on its PATH.
    env["PATH"] = os.pathsep.join([str(Path(rw_executable()).parent), *filter(None, [base.get("PATH")])])
    env.update({"RW_TOKEN": config.token, "RW_SERVER": config.server, "RW_PROJECT": slug, "RW_LEAF": leaf_id,
                "GIT_TERMINAL_PROMPT": "0"})
    return env


def _rw(args: list[str], *, cwd: Path, env: Mapping[str, str], log: Path | None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([rw_executable(), *args], cwd=cwd, env=dict(env), capture_output=True, text=True,
                          check=False, timeout=AGENT_RW_STEP_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if log is not None:
        with log.open("a", encoding="utf-8") as out:
            out.write(f"$ rw {' '.join(args)}\n[exit {done.returncode}]\n{done.stdout}{done.stderr}\n")
    return done


def prepare(config: AgentWorkerConfig, slug: str, leaf_id: str, folder: Path, env: Mapping[str, str]) -> Work:
    """Step 1 and 2: the working folder, with the live skill where the CLI reads it."""
    ttl = f"{int(config.limit_s + AGENT_STEPS_S)}s"
    args = ["work", slug, leaf_id, "--server", config.server, "--dir", str(folder), "--ttl", ttl]
    if config.level is not None:
        args += ["--level", config.level]
    done = _rw(args, cwd=folder.parent, env=env, log=None)
    if done.returncode != 0:
        raise AgentWorkerError(f"`rw work {slug} {leaf_id}` exited {done.returncode}: "
                               f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no message'}")
    work = find_work(folder)
    try:
        install_skill(work, config.agent, work.read(f"{STATE_DIR}/SKILL.md"))
    except (SkillPlacementError, LinkRefused, OSError) as exc:
        release(config, slug, leaf_id)  # nothing ran: the leaf goes straight back
        raise AgentWorkerError(f"cannot install the skill for {config.agent}: {exc}") from exc
    return work


def redact(path: Path, token: str) -> bool:
    """Take the token out of the transcript, should the agent have printed it; True when it had."""
    data = path.read_bytes()
    if not token or token.encode() not in data:
        return False
    path.write_bytes(data.replace(token.encode(), REDACTED))
    return True


def crash_reason(agent: str, finished: Finished, transcript_bytes: int) -> str | None:
    """Why the CLI's run is a crash (pure), or None when it ran to the end and wrote a transcript."""
    failure = finished.failure()
    if failure is not None:
        return f"agent {agent} {failure}"
    if transcript_bytes == 0:
        return f"agent {agent} exited 0 but produced nothing (no transcript on stdout)"
    return None


def release(config: AgentWorkerConfig, slug: str, leaf_id: str) -> None:
    """Give the claim back, so the leaf is claimable again now rather than when the claim expires."""
    Client(config.server, config.token, retry_for_s=10.0).request(
        "DELETE", f"/projects/{quote(slug)}/leaves/{quote(leaf_id)}/claim")


def _crash(home: Home, config: AgentWorkerConfig, work: Work, reason: str, seconds: float,
           clock: Callable[[], datetime]) -> AgentRun:
    actor = home.identities.authenticate(config.token)
    skill = work.state.skill_version or None
    row = record_agent_crash(home, work.state.project, work.state.leaf_id, actor, reason, now=clock(),
                             duration_s=seconds, skill_version=skill)
    release(config, work.state.project, work.state.leaf_id)
    return AgentRun(work.state.project, work.state.leaf_id, config.agent, work.root, "crash", reason, row.seq,
                    seconds, skill)


def run_agent_leaf(home: Home, config: AgentWorkerConfig, slug: str, leaf_id: str, folder: Path, *,
                   base_env: Mapping[str, str] | None = None,
                   clock: Callable[[], datetime] = lambda: datetime.now(UTC).replace(microsecond=0)) -> AgentRun:
    """Run the agent CLI on one leaf in `folder` (which must not exist yet); see the module docstring."""
    spec = spec_for(config.agent)
    env = agent_env(os.environ if base_env is None else base_env, config, slug, leaf_id)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = prepare(config, slug, leaf_id, folder, env)
    prompt = prompt_for(work.payload(), work.state.level)
    if work.state.level == "L3":  # the context the agent starts with: `rw work`'s, and the prompt it is given
        context = work.read(f"{STATE_DIR}/trace/context.md").decode("utf-8") if work.has(
            f"{STATE_DIR}/trace/context.md") else ""
        TraceLog(work.trace_dir, "L3", root=work.root).set_context(f"{context}\n\n# The prompt\n\n{prompt}\n")
    transcript, stderr = work.root / TRANSCRIPT, work.root / AGENT_STDERR
    try:
        finished = run_limited(argv_for(config.agent, prompt, max_turns=config.max_turns), cwd=work.root, env=env,
                               stdout=transcript, stderr=stderr, limit_s=config.limit_s)
    except OSError as exc:  # no such CLI on PATH, or not executable: it never started
        return _crash(home, config, work, f"agent {config.agent} could not be started: {exc.strerror or exc}", 0.0,
                      clock)
    redact(transcript, config.token)
    redact(stderr, config.token)
    reason = crash_reason(config.agent, finished, transcript.stat().st_size)
    if reason is not None:
        return _crash(home, config, work, reason, finished.seconds, clock)
    log = work.root / WORKER_LOG
    imported = _rw(["trace", "import", "--from", spec.transcript_format, TRANSCRIPT], cwd=work.root, env=env, log=log)
    if imported.returncode != 0:
        return _crash(home, config, work, f"agent {config.agent}'s transcript was refused by `rw trace import` "
                                          f"(exit {imported.returncode}; see {WORKER_LOG} in the working folder)",
                      finished.seconds, clock)
    _rw(["check"], cwd=work.root, env=env, log=log)  # what it says is in the log; the verifier judges
    submitted = _rw(["submit", "--json"], cwd=work.root, env=env, log=log)
    try:
        verdict = json.loads(submitted.stdout)
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or "outcome" not in verdict:
        return AgentRun(slug, leaf_id, config.agent, work.root, "submit_failed",
                        f"`rw submit` exited {submitted.returncode} without a verdict (see {WORKER_LOG})", None,
                        finished.seconds, work.state.skill_version or None)
    seq = verdict.get("ledger_seq")
    return AgentRun(slug, leaf_id, config.agent, work.root, str(verdict["outcome"]), "",
                    seq if isinstance(seq, int) else None, finished.seconds, work.state.skill_version or None)

"""Running the controlled arm (design §12): each held-out plan twice, by one agent end to end
(`single`) and by the swarm (`swarm`), each in its own scratch copy of the project, then judged on
use score and resolution credit only (verifier.evaluation.arm compares them).

A held-out plan is a plan file (plans/<id>.md) whose hypotheses have already been decided in the
project, so the run's links can be judged against known outcomes. Each run gets a scratch home
(the project's repository copied and set back to the revision that landed the plan, so neither
arm sees the evidence or the resolution that came after; offline fetches) with one fresh agent identity,
`arm-<arm>` of operator `arm-<arm>`, and runs the arm's configured command (settings `eval_arm`)
(for `single`, when none is configured: the platform worker, `rw worker plan`, on the home's
`worker` model, whose settings the scratch copy carries) with this environment:

    RW_HOME  the scratch home          RW_TOKEN     the arm agent's bearer token
    RW_ARM   single | swarm            RW_ARM_PLAN  the plan id       RW_ARM_PROJECT  the slug
    RW_NOW   the reference time        RW_ARM_TRACE_LEVEL  L3

The command does the work however it likes (write leaves, submit through the verifier); only what
the verifier accepted counts. The leaves it writes ask for an L3 trace (design §3.10: L3 is
"requested for warm-leaf and controlled-arm runs"): `arm_leaf` marks a contract `trace_level: L3`,
its payload says so, and the verifier refuses an attempt on it with less (`trace_level`).

Judged: Σ U over the objects the arm agent's accepted submissions brought (the scratch copy's use
scores), and Σ credit of the links it brought on the plan's decided hypotheses, plus the credit
those links give the findings it brought (design §7.3). A command that fails or times out leaves
its plan unpaired, and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from verifier.constants import ARM_TIMEOUT_S as DEFAULT_TIMEOUT_S
from verifier.errors import FormatError, NotFound
from verifier.evaluation.arm import ARMS, Arm, ArmRun, compare_arms
from verifier.evaluation.history import read_use
from verifier.formats.base import iso
from verifier.formats.leaf import LeafContract, TraceLevel
from verifier.model.adapter import ModelConfig
from verifier.pipeline.ledger import ledger_head, read_chain
from verifier.roles.records import read_records
from verifier.scoring.resolution import Outcome, link_credit
from verifier.state.layout import plan_path
from verifier.state.project import ProjectView
from verifier.state.view import TreeView
from verifier.store.gitrepo import VERIFIER_EMAIL, ProjectRepo
from verifier.store.home import Anchor, Home, Settings

# The level every controlled-arm leaf asks for: the run is judged, so its full context is kept.
ARM_TRACE_LEVEL: TraceLevel = "L3"


def arm_leaf(contract: LeafContract) -> LeafContract:
    """A contract as an arm's command writes it: asking for an L3 trace (`trace_level`)."""
    return contract.model_copy(update={"trace_level": ARM_TRACE_LEVEL})


@dataclass(frozen=True)
class HeldOutPlan:
    plan_id: str
    outcomes: dict[str, Outcome]  # the plan's decided hypotheses
    revision: str  # where both arms start: the project when the plan was written


def held_out(repo: ProjectRepo, plan_ids: Sequence[str]) -> list[HeldOutPlan]:
    view = repo.view(repo.tip())
    state = ProjectView(view)
    records = read_records(view)
    plans = []
    for plan_id in plan_ids:
        found = state.plan(plan_id)
        if found is None:
            raise NotFound(f"there is no plan {plan_id} ({plan_path(plan_id)})")
        plan, _ = found
        outcomes: dict[str, Outcome] = {}
        for hypothesis in plan.hypotheses:
            outcome = records[hypothesis].outcome if hypothesis in records else None
            if outcome is not None:
                outcomes[hypothesis] = outcome
        if not outcomes:
            raise FormatError(f"plan {plan_id}: none of its hypotheses {plan.hypotheses} has been decided, so "
                              "a run cannot be judged on resolution", plan_path(plan_id))
        plans.append(HeldOutPlan(plan_id, outcomes, plan_revision(repo, plan_id)))
    return plans


def plan_revision(repo: ProjectRepo, plan_id: str) -> str:
    """The project as it was when the plan was written: the ledger commit that landed it (or the
    commit that brought it, when no ledger commit follows)."""
    chain = []
    tip = repo.tip()
    commit = repo.commit(tip) if tip else None
    while commit is not None:
        chain.append(commit)
        commit = commit.parents[0] if commit.parents else None
    chain.reverse()
    for index, commit in enumerate(chain):
        if repo.view(str(commit.id)).read(plan_path(plan_id)) is not None:
            following = chain[index + 1] if index + 1 < len(chain) else None
            landed = following is not None and following.author.email == VERIFIER_EMAIL
            return str(following.id if landed and following is not None else commit.id)
    raise NotFound(f"there is no plan {plan_id} in the history")


def scratch_copy(home: Home, slug: str, root: Path, revision: str) -> Home:
    """A throwaway home holding a copy of the project's repository, its branch at `revision` (the
    held-out plan's time: what came after, its evidence and resolution included, is not there)."""
    scratch = Home(root)
    # The models travel with the copy (paths made absolute), so the default single agent, the
    # platform worker, answers with the home's own `worker` model.
    scratch.save_settings(Settings(durable=False, fetch="offline", model=_rooted(home.settings.model, home.root),
                                   models={role: config for role, block in home.settings.models.items()
                                           if (config := _rooted(block, home.root)) is not None}))
    shutil.copytree(home.repo_path(slug), scratch.repo_path(slug))
    repo = scratch.project(slug)
    repo.move_branch(revision, repo.tip())
    # The copy's own anchor, at the revision it was set back to, so its writer takes that history.
    seq, row_hash = ledger_head(repo.view(revision))
    scratch.write_anchor(slug, Anchor(seq - 1, row_hash, revision))
    return Home(root)


def _rooted(config: ModelConfig | None, base: Path) -> ModelConfig | None:
    if config is None:
        return None
    update = {name: str(base / value) for name in ("recordings", "api_key_file")
              if (value := getattr(config, name)) is not None}
    return config.model_copy(update=update)


def default_commands(commands: Mapping[Arm, Sequence[str]]) -> dict[Arm, Sequence[str]]:
    """The arms' commands: the configured ones, and for `single` when none is configured the
    platform worker on the plan's extract and link leaves (`rw worker plan`, docs/models.md)."""
    chosen: dict[Arm, Sequence[str]] = dict(commands)
    if not chosen.get("single"):
        chosen["single"] = (sys.executable, "-c", "from verifier.cli.main import main; main()", "worker", "plan")
    return chosen


def judge(view: TreeView, *, after_seq: int, operator: str, plan: HeldOutPlan, arm: Arm) -> ArmRun:
    brought: set[str] = set()
    for _, row in read_chain(view):
        if (row.seq > after_seq and row.action == "submit" and row.outcome in ("accepted", "held")
                and row.operator == operator and row.objects):
            brought.update(row.objects)
    use = sum(read_use(view, brought).values())
    credit = 0
    state = ProjectView(view)
    for object_id in sorted(o for o in brought if o.startswith("lnk_")):
        link = state.link(object_id)
        if link is None:
            continue  # held in the queue or withdrawn: not in the evidence
        outcome = plan.outcomes.get(link.hypothesis_id)
        if outcome is not None:
            earned = link_credit(link.stance, link.leaf_kind, outcome)
            # The link's own credit, and again for its finding if the run brought that too (§7.3).
            credit += earned * (2 if link.finding_id in brought else 1)
    return ArmRun(plan.plan_id, arm, use, float(credit))


def _last_seq(view: TreeView) -> int:
    last = -1
    for _, row in read_chain(view):
        last = row.seq
    return last


def run_one(home: Home, slug: str, plan: HeldOutPlan, arm: Arm, command: Sequence[str], *, now: datetime,
            timeout_s: float) -> ArmRun | str:
    """One plan, one arm; the judged run, or why it did not finish."""
    with tempfile.TemporaryDirectory(prefix=f"rw-arm-{arm}-") as folder:
        scratch = scratch_copy(home, slug, Path(folder) / "home", plan.revision)
        repo = scratch.project(slug)
        after = _last_seq(repo.view(repo.tip()))
        handle = f"arm-{arm}"
        token = scratch.identities.add(handle, handle, "agent", now)
        env = {**os.environ, "RW_HOME": str(scratch.root), "RW_TOKEN": token, "RW_ARM": arm,
               "RW_ARM_PLAN": plan.plan_id, "RW_ARM_PROJECT": slug, "RW_NOW": iso(now),
               "RW_ARM_TRACE_LEVEL": ARM_TRACE_LEVEL}
        try:
            done = subprocess.run(list(command), env=env, cwd=folder, capture_output=True, timeout=timeout_s,
                                  check=False)
        except subprocess.TimeoutExpired:
            return f"{plan.plan_id} {arm}: the worker command ran past {timeout_s:.0f} s"
        except OSError as exc:
            return f"{plan.plan_id} {arm}: the worker command could not start: {exc}"
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            return f"{plan.plan_id} {arm}: the worker command exited {done.returncode}: {tail[0][:300]}"
        return judge(repo.view(repo.tip()), after_seq=after, operator=handle, plan=plan, arm=arm)


def run_arms(home: Home, slug: str, plan_ids: Sequence[str], commands: Mapping[Arm, Sequence[str]], *,
             now: datetime, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    commands = default_commands(commands)
    missing = [arm for arm in ARMS if not commands.get(arm)]
    if missing:
        raise FormatError(f"settings eval_arm has no command for {', '.join(missing)} (an argument list per arm)",
                          "config.json")
    repo = home.project(slug)
    plans = held_out(repo, plan_ids)
    runs: list[ArmRun] = []
    unfinished: list[str] = []
    for plan in plans:
        for arm in ARMS:
            result = run_one(home, slug, plan, arm, commands[arm], now=now, timeout_s=timeout_s)
            if isinstance(result, str):
                unfinished.append(result)
            else:
                runs.append(result)
    return {**compare_arms(runs), "unfinished": unfinished,
            "runs": [{"plan": r.plan, "arm": r.arm, "use_score": r.use_score,
                      "resolution_credit": r.resolution_credit} for r in sorted(runs, key=lambda r: (r.plan, r.arm))]}

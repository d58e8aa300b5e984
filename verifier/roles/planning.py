"""The Planner's decisions (design §5.1, §5.4, §9.1): a project's state in, a plan and its ordered
leaf contracts out. Pure: no git, no Commons, no clock (`now` is an input).

The shell (`verifier.roles.planner`) reads the state from the repository and lands the result;
everything here is deterministic, so the same state and `now` always give the same plan.

Leaves are disjoint by construction. Every leaf holds a set of *keys*, and no two open leaves
ever share one:

    extract  source:<source_id>          one source per extract (a warm leaf is an extract leaf)
    skeptic  hypothesis:<H>              one hypothesis per skeptic
    link     link:<H>:<finding_id> ...   each finding is filed against a hypothesis by one leaf
    review   object:<path>               one object per review
    scout    gap:<gap text>              one leaf per open gap or scout request
    guide    guide                       FIELD-GUIDE.md has one editor at a time

A candidate whose key an open leaf (or a leaf waiting in a held plan) already holds is refused
as overlapping, which is also why waking twice with nothing new adds nothing. A hypothesis
enters a plan only with a criterion, a check date and a measure (the activation gate, §3.5);
otherwise the steward is asked once and no leaf is made on it. A loose hypothesis that is ready
(for example one an `unresolved` outcome sent back, given a new check date) is targeted, and the
plan's landing activates it (`WakePlan.activates`): no leaf on a loose hypothesis is ever posted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from verifier.constants import LEAF_TTL, WARM_MAX_BYTES, WARM_POOL, WARM_TTL
from verifier.formats.base import iso
from verifier.formats.duration import parse_duration
from verifier.formats.leaf import LeafContract, LeafKind
from verifier.roles.lessons import Lesson, known
from verifier.state.layout import default_write_rules

PLANNER = "planner"
LINK_BATCH = 10  # findings per link leaf: enough to see a pattern, small enough to finish
MAX_EXTRACT_FAILURES = 3  # rejected extract attempts on one source before the Planner stops trying
GUIDE_REPEATS = 3  # rejections of one kind with one reason the decisions call a leaf-craft pattern


@dataclass(frozen=True)
class SourceFacts:
    source_id: str
    status: str  # staged | included | failed
    size: int
    warm: bool = False  # a steward marked it `warm: true`
    extracted: bool = False  # an extract leaf on it was accepted
    failures: int = 0  # rejected extract attempts on it


@dataclass(frozen=True)
class HypothesisFacts:
    hypothesis_id: str
    revision: int
    status: str  # loose | active | resolved
    ready: bool  # criterion, check date (still ahead) and measure: checks.hypotheses.ready_for_plan
    challenged: bool = False  # a contradicts link, or a "none found" note, at this revision
    not_ready: str = ""  # why it is not ready, in the steward's words (empty when ready)


@dataclass(frozen=True)
class OpenLeaf:
    """A leaf that holds its keys: open or claimed on the board, or waiting in a held plan."""

    leaf_id: str
    kind: str
    keys: frozenset[str]
    warm: bool = False


@dataclass(frozen=True)
class Settings:
    warm_pool: int = WARM_POOL
    leaf_ttl: timedelta = LEAF_TTL
    warm_ttl: timedelta = WARM_TTL
    link_batch: int = LINK_BATCH


@dataclass(frozen=True)
class ProjectState:
    """Everything one wake decides from, as plain values (the shell reads it from git)."""

    slug: str
    tip: str
    steward: str | None
    hold_plans: bool
    leaves_max: int
    hypotheses: list[HypothesisFacts]  # in PROJECT.md order: the order is the priority
    sources: list[SourceFacts]
    open_leaves: list[OpenLeaf]
    # finding ids accepted, not yet filed against the hypothesis by a link or any link leaf: H -> ids
    unfiled: dict[str, list[str]] = field(default_factory=dict)
    unreviewed: list[str] = field(default_factory=list)  # paths of accepted findings and links
    findings: int = 0  # accepted findings in the corpus
    unresolved_count: int = 0  # the Planner's planning failures so far (scores/planner.json, §7.3, §11)
    gaps: list[tuple[str | None, str]] = field(default_factory=list)  # (hypothesis or None, what to look for)
    rejections: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, reason code) -> count
    lessons: list[Lesson] = field(default_factory=list)  # research lessons (roles.lessons), for guide leaves
    field_guide: str = ""
    asked: frozenset[str] = frozenset()  # hypotheses (H:revision) the steward was already asked about
    released: list[LeafContract] = field(default_factory=list)  # leaves of approved plans not yet written
    settings: Settings = field(default_factory=Settings)
    # What budget_per_loop's tokens and usd leave room for, from the loop's disclosed costs
    # (roles.budget); None: no limit from cost. `budget_note` says why, for the decisions.
    cost_room: int | None = None
    budget_note: str = ""

    @property
    def wake_max(self) -> int:
        """The most leaves this wake may make: leaves_max, or less when the loop's budget is spent."""
        return self.leaves_max if self.cost_room is None else max(0, min(self.leaves_max, self.cost_room))


@dataclass(frozen=True)
class Question:
    hypothesis_id: str
    revision: int
    body: str

    @property
    def key(self) -> str:
        return f"{self.hypothesis_id}:{self.revision}"


@dataclass(frozen=True)
class Refusal:
    kind: str
    keys: frozenset[str]
    reason: str


@dataclass
class WakePlan:
    plan_id: str
    goal: str
    targets: list[str]
    decisions: list[str]
    leaves: list[LeafContract]
    refused: list[Refusal]
    questions: list[Question]
    held: bool
    released: frozenset[str] = frozenset()  # leaves of plans a person approved: written even when held
    # Loose targets the plan's landing makes active (design §3.5); a held plan's, on its approval.
    activates: tuple[str, ...] = ()
    # A model's texts the secret gate stopped (planjudge): never rendered; the wake revokes any
    # bearer token of ours in them before the plan lands.
    stopped: tuple[str, ...] = ()

    def postable(self) -> list[LeafContract]:
        """The leaves that go to leaves/ and the board now (a held plan's wait for approval)."""
        return [c for c in self.leaves if not self.held or c.leaf_id in self.released]

    def waiting(self) -> list[LeafContract]:
        return [c for c in self.leaves if self.held and c.leaf_id not in self.released]

    @property
    def empty(self) -> bool:
        return not self.leaves and not self.questions


def keys_of(kind: str, inputs: dict[str, Any]) -> frozenset[str]:
    """The keys a leaf of `kind` with these inputs holds while it is open (module docstring)."""
    if kind == "extract":
        return frozenset({f"source:{inputs.get('source_id')}"})
    if kind == "skeptic":
        return frozenset({f"hypothesis:{inputs.get('hypothesis_id')}"})
    if kind == "link":
        return frozenset(f"link:{inputs.get('hypothesis_id')}:{finding}" for finding in inputs.get("finding_ids", []))
    if kind == "review":
        return frozenset({f"object:{inputs.get('object_path')}"})
    if kind == "scout":
        return frozenset({f"gap:{' '.join(str(inputs.get('gap') or '').split()).lower()}"})
    return frozenset({"guide"})


def leaf_keys(contract: LeafContract) -> frozenset[str]:
    return keys_of(contract.kind, contract.inputs.model_dump(exclude_none=True))


def cadence(text: str) -> timedelta:
    """PROJECT.md's loop_cadence (20m, 1h, 1d, 90s) as a duration."""
    return parse_duration(text, "loop_cadence")


def due(last_wake: datetime | None, loop_cadence: str, now: datetime) -> bool:
    """Whether the Planner should wake: never woken, or a whole cadence since the last wake."""
    return last_wake is None or now - last_wake >= cadence(loop_cadence)


@dataclass
class _Draft:
    """A wake in progress: the keys taken so far, the leaves and the notes."""

    state: ProjectState
    now: datetime
    plan_id: str
    taken: dict[str, str]  # key -> leaf id holding it
    leaves: list[LeafContract] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    deferred: int = 0
    warm_deferred: int = 0  # warm leaves the budget left for the next wake
    cap: int | None = None  # leaves of one kind this pass may add (None: no cap)

    @property
    def room(self) -> int:
        return self.state.wake_max - len(self.leaves)

    def offer(self, kind: LeafKind, inputs: dict[str, Any], title: str, *, warm: bool = False,
              leaf_id: str | None = None) -> bool:
        """Add a leaf unless it overlaps an open one or the budget is spent."""
        keys = keys_of(kind, inputs)
        clash = sorted(key for key in keys if key in self.taken)
        if clash:
            if any(self.taken[clash[0]] == leaf.leaf_id for leaf in self.leaves):
                return False  # this wake already covers it (a warm leaf is its source's extract leaf)
            refusal = Refusal(kind, keys, f"overlaps open leaf {self.taken[clash[0]]} on {clash[0]}")
            if refusal not in self.refused:
                self.refused.append(refusal)
            return False
        if self.cap is not None and sum(1 for c in self.leaves if c.kind == kind) >= self.cap:
            return False  # this kind had its share in the first pass; the second pass may add more
        if self.room <= 0:
            self.deferred += 1
            return False
        contract = _contract(self, kind, inputs, title, warm, leaf_id)
        self.taken.update((key, contract.leaf_id) for key in keys)
        self.leaves.append(contract)
        return True


def _contract(draft: _Draft, kind: LeafKind, inputs: dict[str, Any], title: str, warm: bool,
              leaf_id: str | None) -> LeafContract:
    state, now = draft.state, draft.now
    seed = f"{kind}|{sorted(inputs.items())}|{state.tip}|{iso(now)}"
    leaf_id = leaf_id or f"{kind}-{hashlib.sha256(seed.encode()).hexdigest()[:12]}"
    ttl = state.settings.warm_ttl if warm else state.settings.leaf_ttl
    body: dict[str, Any] = {
        "leaf_id": leaf_id, "kind": kind, "title": title[:300], "inputs": inputs, "base_revision": state.tip,
        "may_write": [rule.model_dump() for rule in default_write_rules(kind)], "check": kind,
        "created_at": now, "created_by": PLANNER, "expires_at": now + ttl, "plan_id": draft.plan_id,
    }
    if warm:
        body["warm"] = True
    return LeafContract.model_validate(body)


def plan_id_for(now: datetime, tip: str) -> str:
    """Unique per landing: two wakes in one second land on different tips."""
    return f"plan-{now:%Y%m%d-%H%M%S}-{tip[:8]}"


def plan(state: ProjectState, now: datetime, *, warm_only: bool = False) -> WakePlan:
    """One wake: which leaves to create, in priority order, within the budget.

    Order: leaves of approved plans first (already decided), then the warm pool (the first
    minute of a newcomer), extract (new findings), link (file them), skeptic (hunt what breaks
    each hypothesis), review (check what was accepted), scout (fill gaps), guide (lessons);
    each kind at most a third of the budget at first, then the rest in that order.
    `warm_only` tops up the warm pool and does nothing else (after a warm leaf is taken).
    """
    taken = {key: leaf.leaf_id for leaf in state.open_leaves for key in leaf.keys}
    draft = _Draft(state, now, plan_id_for(now, state.tip), taken)
    targets, questions = _gate(draft)
    _release(draft)
    _warm(draft)
    if not warm_only:
        # Two passes: first each kind gets at most a third of the budget, so a backlog of one
        # kind (a hundred sources to extract) never starves the others; then the rest of the
        # budget goes in priority order.
        draft.cap = max(1, state.wake_max // 3)
        _stages(draft, targets)
        draft.cap, draft.deferred = None, 0
        _stages(draft, targets)
    draft.decisions = list(dict.fromkeys(draft.decisions))
    if state.unresolved_count and not warm_only:
        draft.decisions.append(f"unresolved_count is {state.unresolved_count}: a criterion could not be checked at "
                               "its check date; hypotheses are targeted only with a criterion, a check date and a "
                               "measure, and the steward is asked for them.")
    left_out = draft.deferred + draft.warm_deferred
    if state.wake_max < state.leaves_max:  # the loop's disclosed costs bind, not leaves_max
        draft.decisions.append(f"Budget: {state.budget_note}" + (f"; left out {left_out} leaves for budget"
                                                                if left_out else "") + ".")
    elif left_out:
        draft.decisions.append(f"Deferred {left_out} more leaves to the next wake: "
                               f"budget_per_loop.leaves_max is {state.leaves_max}.")
    goal = _goal(state, targets)
    released = frozenset(c.leaf_id for c in state.released) & {c.leaf_id for c in draft.leaves}
    loose = {h.hypothesis_id for h in state.hypotheses if h.status == "loose"}
    activates = tuple(h for h in targets if h in loose)
    for hypothesis_id in activates:
        draft.decisions.append(f"{hypothesis_id} is loose with a criterion, a check date ahead and a measure: this "
                               "plan targets it, which makes it active (design §3.5).")
    return WakePlan(draft.plan_id, goal, targets, draft.decisions, draft.leaves, draft.refused,
                    [] if warm_only else questions, state.hold_plans and len(released) < len(draft.leaves), released,
                    activates=activates)


def _stages(draft: _Draft, targets: list[str]) -> None:
    _extract(draft)
    _link(draft, targets)
    _skeptic(draft, targets)
    _review(draft)
    _scout(draft, targets)
    _guide(draft)


def _goal(state: ProjectState, targets: list[str]) -> str:
    if not targets:
        return f"Keep {state.slug}'s corpus growing while no hypothesis is ready to target."
    return f"Gather and test evidence on {', '.join(targets)}, in the steward's order of priority."


def _gate(draft: _Draft) -> tuple[list[str], list[Question]]:
    """The activation gate: targets are ready, unresolved hypotheses; the steward is asked once
    about each one that is missing a criterion, a check date or a measure."""
    targets, questions = [], []
    for hypothesis in draft.state.hypotheses:
        if hypothesis.status == "resolved":
            continue
        if hypothesis.ready:
            targets.append(hypothesis.hypothesis_id)
            continue
        why = hypothesis.not_ready or "it has no resolution criterion, check date and measure yet"
        draft.decisions.append(f"{hypothesis.hypothesis_id} is not targeted: {why}; no leaf is made on it until "
                               "the steward sets them.")
        question = Question(hypothesis.hypothesis_id, hypothesis.revision, (
            f"@{draft.state.steward or 'steward'}: {hypothesis.hypothesis_id} (revision {hypothesis.revision}) "
            f"cannot enter a plan: {why}. It needs resolution.criterion, resolution.measure and a "
            "resolution.check_date after today. What world on which date would show it true, and where is "
            "that checked?"))
        if question.key not in draft.state.asked:
            questions.append(question)
    return targets, questions


def _release(draft: _Draft) -> None:
    """Leaves of plans a person approved: already decided, written now against the current tip."""
    for contract in draft.state.released:
        inputs = contract.inputs.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
        draft.offer(contract.kind, inputs, contract.title or contract.kind, warm=bool(contract.warm),
                    leaf_id=contract.leaf_id)


def _warm(draft: _Draft) -> None:
    state = draft.state
    have = sum(1 for leaf in state.open_leaves if leaf.warm)
    need = state.settings.warm_pool - have
    if need <= 0:
        return
    candidates = [s for s in state.sources if s.status == "included" and (s.warm or s.extracted)
                  and s.size <= WARM_MAX_BYTES and s.failures < MAX_EXTRACT_FAILURES]
    candidates.sort(key=lambda s: (not s.warm, s.extracted, s.size, s.source_id))
    for source in candidates:
        if need <= 0 or draft.room <= 0:
            break
        if f"source:{source.source_id}" in draft.taken:
            continue
        if draft.offer("extract", {"source_id": source.source_id},
                       f"Warm leaf: 3 findings from {source.source_id}, under a minute", warm=True):
            need -= 1
    if need > 0:
        why = "the budget is spent" if draft.room <= 0 else "no more small, included warm sources are free"
        if draft.room <= 0:  # the next wake has a budget again: say what it will add
            free = sum(1 for source in candidates if f"source:{source.source_id}" not in draft.taken)
            draft.warm_deferred = min(need, free)
        draft.decisions.append(f"The warm-leaf pool is {need} short of {state.settings.warm_pool}: {why}.")


def _extract(draft: _Draft) -> None:
    for source in draft.state.sources:
        if source.status != "included" or source.extracted:
            continue
        if source.failures >= MAX_EXTRACT_FAILURES:
            draft.decisions.append(f"No extract leaf on {source.source_id}: {source.failures} extract attempts "
                                   "were rejected; a person should look at the source.")
            continue
        draft.offer("extract", {"source_id": source.source_id}, f"Extract 3-15 findings from {source.source_id}")


def _revision(state: ProjectState, hypothesis_id: str) -> int:
    return next(h.revision for h in state.hypotheses if h.hypothesis_id == hypothesis_id)


def _link(draft: _Draft, targets: list[str]) -> None:
    batch = draft.state.settings.link_batch
    for hypothesis_id in targets:
        free = [f for f in draft.state.unfiled.get(hypothesis_id, []) if f"link:{hypothesis_id}:{f}" not in draft.taken]
        for start in range(0, len(free), batch):
            findings = free[start:start + batch]
            draft.offer("link", {"hypothesis_id": hypothesis_id,
                                 "hypothesis_revision": _revision(draft.state, hypothesis_id),
                                 "finding_ids": findings},
                        f"File {len(findings)} new findings against {hypothesis_id}")


def _skeptic(draft: _Draft, targets: list[str]) -> None:
    if not draft.state.findings:
        if any(h.hypothesis_id in targets and not h.challenged for h in draft.state.hypotheses):
            draft.decisions.append("No skeptic leaf yet: the corpus has no accepted findings to hunt through; "
                                   "extract leaves come first.")
        return
    for hypothesis in draft.state.hypotheses:
        if hypothesis.hypothesis_id in targets and not hypothesis.challenged:
            draft.offer("skeptic", {"hypothesis_id": hypothesis.hypothesis_id,
                                    "hypothesis_revision": hypothesis.revision},
                        f"Hunt for evidence against {hypothesis.hypothesis_id} (revision {hypothesis.revision})")


def _review(draft: _Draft) -> None:
    for path in draft.state.unreviewed:
        draft.offer("review", {"object_path": path}, f"Review {path}")


def _scout(draft: _Draft, targets: list[str]) -> None:
    for hypothesis_id, gap in draft.state.gaps:
        if hypothesis_id is not None and hypothesis_id not in targets:
            continue
        draft.offer("scout", {"gap": gap, **({"hypothesis_id": hypothesis_id} if hypothesis_id else {})},
                    f"Scout: {gap}")


def _guide(draft: _Draft) -> None:
    """A guide leaf states one research lesson the Field Guide lacks (roles.lessons). Repeated
    rejections for one code are leaf craft: the ops wiki's, never a guide leaf (design §3.9)."""
    for (kind, code), count in sorted(draft.state.rejections.items()):
        if count >= GUIDE_REPEATS:
            draft.decisions.append(f"{kind} leaves were rejected {count} times for {code}: leaf craft, which the "
                                   "Wiki Maintainer writes up in the ops wiki; no guide leaf is made for it.")
    for lesson in draft.state.lessons:
        if known(lesson, draft.state.field_guide):
            continue
        if draft.offer("guide", {"gap": lesson.text}, f"Field Guide: a lesson about {lesson.mention}"):
            draft.decisions.append(f"A guide leaf: the Field Guide does not say this yet: {lesson.text}")
        return

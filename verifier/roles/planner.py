"""The Planner's shell (design §5.1): read the project, decide (`planning`), land, tell Commons.

`wake` reads the tip through `planstate.read_state`, asks the pure rules for a plan, and lands
the plan file and its new leaf contracts as ONE landing (`land_plan`, the only function here
that writes the repository): a contribution commit by `planner` holding plans/<id>.md (or
queue/plans/plans/<id>.md when PROJECT.md holds plans), then the verifier's ledger commit with
leaves/<id>.yaml for each leaf, the rescored plan and one `plan` ledger row. A loose hypothesis
the plan targets (ready: criterion, measure, a check date ahead) is made active in that same
contribution commit (design §3.5: it becomes active when a plan targets it); a held plan's
targets become active when a person approves it (writes.holds). Only then are the
leaves posted as Commons tasks (the contract as the body, idempotent per leaf) and the steward
asked about loose hypotheses, on the plan's thread and in the steward's inbox (idempotent per hypothesis
revision: once, not every wake), and the
baseline of any hypothesis now active without one is sealed (`writes.followups`), or the reason
it could not be is recorded.

If the branch moved while the Planner was deciding, the landing is refused and the wake starts
over from the new tip, so a plan is always decided on the state it lands on.

A plan carries text the Planner did not write (an agent's scout request in a leaf title or a
refusal, a model's goal), so structure never comes from the body: a held plan's leaf contracts
live in its front matter (`waiting`, YAML the Planner dumps, where any string is one scalar,
quoted or escaped as needed), the `plan` ledger row names their sha256, and only leaves with that
digest are released on approval (planstate). In the Markdown body every such text is quoted as data (`as_data`): one
line, with every character that could open Markdown structure escaped.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from verifier.checks.hypotheses import activation_writes
from verifier.commons.adapter import Commons, OutgoingMessage
from verifier.commons.backend import commons_database
from verifier.commons.local import LocalCommons
from verifier.errors import ConflictError, NotFound, VerifierError
from verifier.formats.base import iso
from verifier.formats.document import parse_plan
from verifier.formats.entries import PlanEntry
from verifier.formats.leaf import LeafContract
from verifier.formats.yamlout import dump_yaml
from verifier.messages.steward import Stewards, date_question_messages, revocation_messages, stewards_of
from verifier.model.adapter import Backend
from verifier.pipeline.landing import Contribution, Landed
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.secrets_gate import refuse_secret_files, revocation_note, revoke_found_tokens
from verifier.pipeline.writer import ProjectWriter
from verifier.roles.planjudge import judge, read_context
from verifier.roles.planning import PLANNER, Settings, WakePlan, due, plan
from verifier.roles.planstate import WAITING_MARK, held_plan_path, read_state, waiting_digest
from verifier.scoring.use import ScoreBook
from verifier.state.layout import PROJECT_FILE, leaf_path, plan_path
from verifier.store.audit import Door
from verifier.store.gitrepo import Person, agent_email
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.writes.authority import enforce_at
from verifier.writes.followups import seal_after_landing

ATTEMPTS = 3
MAX_REFUSALS_SHOWN = 30


class TipMoved(ConflictError):  # noqa: N818 - reads as the condition it reports
    """The branch moved between reading the state and landing the plan."""


@dataclass(frozen=True)
class WakeResult:
    slug: str
    plan: WakePlan | None
    landed: Landed | None
    posted: int
    skipped: str | None = None
    sealed: tuple[str, ...] = ()  # baselines sealed after the landing
    seal_note: str | None = None  # why some active hypothesis's baseline is not sealed

    def to_json(self) -> dict[str, object]:
        plan_ = self.plan
        return {
            "project": self.slug, "skipped": self.skipped, "posted": self.posted,
            "tip": self.landed.tip if self.landed else None, "seq": self.landed.row.seq if self.landed else None,
            "plan_id": plan_.plan_id if plan_ and self.landed else None, "held": bool(plan_ and plan_.held),
            "leaves": [{"leaf_id": c.leaf_id, "kind": c.kind, "warm": bool(c.warm), "title": c.title}
                       for c in (plan_.leaves if plan_ else [])],
            "refused": [{"kind": r.kind, "reason": r.reason} for r in (plan_.refused if plan_ else [])],
            "questions": [q.body for q in (plan_.questions if plan_ else [])],
            "decisions": plan_.decisions if plan_ else [],
            "activated": list(plan_.activates) if plan_ and self.landed and not plan_.held else [],
            "sealed": list(self.sealed), "seal_note": self.seal_note,
        }


def local_commons(home: Home) -> LocalCommons:
    """The Commons the service uses, opened from the command line."""
    return LocalCommons(commons_database(home), home.identities)


def question_key(slug: str, hypothesis_id: str, revision: int) -> str:
    return f"{slug}:planner:activation:{hypothesis_id}:{revision}"


def task_key(slug: str, leaf_id: str) -> str:
    return f"{slug}:planner:task:{leaf_id}"


def settings_of(home: Home) -> Settings:
    return Settings(warm_pool=home.settings.warm_pool)


def wake(home: Home, slug: str, now: datetime, *, commons: Commons, force: bool = False,
         warm_only: bool = False, settings: Settings | None = None, model: Backend | None = None,
         person: Actor | None = None, door: Door = "cli") -> WakeResult:
    """One wake of the project's Planner: plan, land, post. Not due (loop_cadence) unless forced.
    With `model`, the plan's judgement calls are asked of it (`planjudge`), with PROJECT.md's free
    text and the latest report (design §5.1). A `person` asking
    must be the steward, a maintainer or an admin (docs/authority.md); without one it is the
    runner or the home's owner at its shell."""
    repo = home.project(slug)
    if person is not None:
        enforce_at(home, slug, repo.view(repo.tip()), person, "wake_planner", now=now, door=door)
    chosen = settings or settings_of(home)
    for _attempt in range(ATTEMPTS):
        tip = repo.tip()
        if tip is None:
            raise NotFound(f"project {slug} has no commits")
        read = read_state(repo.view(tip), slug, tip, now, settings=chosen,
                          asked=lambda h, r: commons.message(question_key(slug, h, r)) is not None,
                          claimed=frozenset(commons.claims(slug, now=now)))
        if not (force or warm_only or due(read.last_wake, read.project.loop_cadence, now)):
            return WakeResult(slug, None, None, 0, skipped=f"not due: last wake {iso(read.last_wake)} "
                                                           f"(loop_cadence {read.project.loop_cadence})"
                              if read.last_wake else "not due")
        result = judge(read.state, now, model, read_context(repo.view(tip), tip)) \
            if model is not None and not warm_only else plan(read.state, now, warm_only=warm_only)
        result, revoked = _revoke_stopped(home, result, now)
        tell_revoked(commons, slug, result.plan_id, revoked, now, stewards_of(repo.view(tip).read(PROJECT_FILE)))
        if result.empty:
            return WakeResult(slug, result, None, post_tasks(commons, slug, list(read.open_leaves.values()), now,
                                                             repo.view(tip).read))
        try:
            landed = land_plan(home, slug, tip=tip, now=now, wake_plan=result)
        except TipMoved:
            continue
        posted = post_tasks(commons, slug, [*read.open_leaves.values(), *result.postable()], now,
                            repo.view(landed.tip).read)
        posted += post_questions(commons, slug, result, now,
                                 stewards_of(repo.view(landed.tip).read(PROJECT_FILE)))
        try:
            sealed, note = seal_after_landing(home, slug, now=now, remote=door != "cli")
        except VerifierError as exc:  # the plan has landed: sealing later never undoes it
            sealed, note = [], f"baselines not sealed: {exc if door == 'cli' else exc.code}; run `rw seal {slug}`"
        return WakeResult(slug, result, landed, posted, sealed=tuple(sealed), seal_note=note)
    raise ConflictError(f"project {slug} kept moving while the Planner planned; wake it again")


def _revoke_stopped(home: Home, wake_plan: WakePlan, now: datetime) -> tuple[WakePlan, list[str]]:
    """Revoke our bearer tokens in the model's texts the secret gate stopped, and say so in the
    plan; returns the plan without those texts, and whose tokens were revoked."""
    if not wake_plan.stopped:
        return wake_plan, []
    revoked = revoke_found_tokens(home.identities, [t.encode("utf-8", "surrogatepass") for t in wake_plan.stopped],
                                  now, "a model's answer to the Planner")
    decisions = list(wake_plan.decisions)
    if revoked:
        decisions.append(f"A bearer token was in the model's answer{revocation_note(revoked)}.")
    return replace(wake_plan, decisions=decisions, stopped=()), revoked


def tell_revoked(commons: Commons, slug: str, plan_id: str, handles: list[str], now: datetime,
                 who: Stewards | None = None) -> int:
    """Tell each owner that their token, found in a model's answer, was revoked (as for traces), and
    the steward (`who`) whose tokens they were."""
    inbox = revocation_messages(slug, f"{slug}:planner:revoked:{plan_id}", handles,
                                "a model's answer to the Planner", plan_id, who or Stewards(), {"plan_id": plan_id})
    body = (f"Your bearer token appeared in a model's answer to {slug}'s Planner and was revoked at once; it no "
            "longer authenticates. Ask the project's operator for a new token.")
    return commons.post([*inbox, *(OutgoingMessage(f"{slug}:planner:revoked:{plan_id}:{handle}", "secret", body, slug,
                                                   plan_id, handle, sender=PLANNER, data={"plan_id": plan_id})
                                   for handle in handles)], now=now)


# Markdown's inline markup (code, emphasis, links, HTML, entities, tables, strikethrough) and the
# escape character itself; block markup needs a line start, which quoted text never has.
_MARKUP = frozenset("\\`*_[]<>&|~#!")
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})  # controls, format characters, line and paragraph breaks


def as_data(text: str) -> str:
    """Text from an agent or a model, as Markdown that shows it and can form no structure. Every
    markup character is backslash-escaped; a line break, control or format character becomes a
    numeric character reference (`&#xA;`), which CommonMark never reads as structure, so the text
    stays on one line. It is always written after a fixed prefix on its line. The mapping is
    one to one: a literal `&` is escaped, so no text spells another text's reference."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in _INVISIBLE:
            out.append(f"&#x{ord(ch):X};")
        elif ch in _MARKUP:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def render_plan(wake_plan: WakePlan, now: datetime) -> bytes:
    """plans/<id>.md: the Plan format's front matter, then the plan in words. A held plan also
    carries its leaf contracts in the front matter (`waiting`), written to leaves/ once a person
    approves it; the body only lists them."""
    front: dict[str, object] = {
        "plan_id": wake_plan.plan_id, "hypotheses": wake_plan.targets,
        "leaves": [c.leaf_id for c in wake_plan.leaves],
        "decisions": wake_plan.decisions or ["No cross-cutting decision this wake: every rule applied as written."],
        "author": PLANNER, "created_at": iso(now),
    }
    if wake_plan.held and wake_plan.waiting():
        front["waiting"] = [_contract_json(c) for c in wake_plan.waiting()]
    lines = [f"# {wake_plan.plan_id}", "", f"Goal: {as_data(wake_plan.goal)}", "", "## Leaves", ""]
    lines += [f"- `{c.leaf_id}` ({c.kind}{', warm' if c.warm else ''}): {as_data(c.title or '(untitled)')}"
              for c in wake_plan.leaves] or ["- none"]
    if wake_plan.questions:
        lines += ["", "## Asked of the steward", ""] + [f"- Question: {as_data(q.body)}" for q in wake_plan.questions]
    if wake_plan.refused:
        lines += ["", "## Refused as overlapping an open leaf", ""]
        lines += [f"- {r.kind}: {as_data(r.reason)}" for r in wake_plan.refused[:MAX_REFUSALS_SHOWN]]
        if len(wake_plan.refused) > MAX_REFUSALS_SHOWN:
            lines.append(f"- ... and {len(wake_plan.refused) - MAX_REFUSALS_SHOWN} more")
    if wake_plan.held and wake_plan.waiting():
        lines += ["", "## Leaves waiting for approval", "",
                  "Their contracts are this file's front matter `waiting`; approving the plan writes exactly "
                  "those to leaves/.", ""]
        lines += [f"- `{c.leaf_id}` ({c.kind})" for c in wake_plan.waiting()]
    return b"---\n" + dump_yaml(front) + b"---\n" + ("\n".join(lines) + "\n").encode()


def _contract_json(contract: LeafContract) -> dict[str, object]:
    return contract.model_dump(mode="json", exclude_none=True)


def land_plan(home: Home, slug: str, *, tip: str, now: datetime, wake_plan: WakePlan) -> Landed:
    """The wake's one landing through the project's writer: the plan (contribution) and its
    leaves (bookkeeping), one ledger row. Nothing else here writes."""
    plan_file = held_plan_path(wake_plan.plan_id) if wake_plan.held else plan_path(wake_plan.plan_id)
    data = render_plan(wake_plan, now)
    leaves = {leaf_path(c.leaf_id): dump_yaml(_contract_json(c)) for c in wake_plan.postable()}
    kinds = ", ".join(sorted({c.kind for c in wake_plan.leaves})) or "no leaves"
    refuse_secret_files({plan_file: data, **leaves})  # a model's words may carry one; every agent reads these
    held_note = ""
    if wake_plan.held:
        written, _body = parse_plan(data, plan_file)  # the digest is of the leaves as they will be read back
        held_note = f"; held for a person's approval ({WAITING_MARK}{waiting_digest(written.waiting)})"
    with ProjectWriter.open(home, slug) as writer:
        if writer.tip != tip:
            raise TipMoved(f"project {slug} moved from {tip[:12]} while the Planner planned")
        view = writer.view()
        book = ScoreBook(view.read)
        # A held plan targets nothing until a person approves it (writes.holds activates then).
        activation = {} if wake_plan.held else activation_writes(view, wake_plan.activates, now.date())
        if not wake_plan.held:
            apply_writes(book, view, {plan_file: data, **activation}, PLANNER)
        if activation:
            held_note += f"; activated {', '.join(p.rsplit('/', 1)[1][:-3] for p in sorted(activation))}"
        contribution = Contribution(
            writes={plan_file: data, **activation}, author=Person(PLANNER, agent_email(PLANNER)),
            subject=f"plan: {wake_plan.plan_id}" + (" (held for approval)" if wake_plan.held else ""),
            body=wake_plan.goal, trailers={"Plan": wake_plan.plan_id},
        )
        entry = PlanEntry(
            at=now, outcome="held" if wake_plan.held else "accepted", actor=PLANNER,
            description=f"plan {wake_plan.plan_id}: {len(wake_plan.leaves)} leaves ({kinds}), "
                        f"{len(wake_plan.questions)} questions to the steward{held_note}")
        return writer.land(entry, contribution=contribution, bookkeeping={**leaves, **book.writes()})


def post_tasks(commons: Commons, slug: str, contracts: list[LeafContract], now: datetime,
               read: Callable[[str], bytes | None] | None = None) -> int:
    """Each leaf as a Commons task on its own thread: the contract as the body (§5.3), with its
    expiry. Idempotent per leaf, so every wake can post every open leaf again safely. `read`
    gives leaves/<id>.yaml's bytes as they landed (the body is exactly the file)."""
    def body(contract: LeafContract) -> str:
        data = read(leaf_path(contract.leaf_id)) if read is not None else None
        return (data or dump_yaml(_contract_json(contract))).decode()

    messages = [OutgoingMessage(
        task_key(slug, c.leaf_id), "task", body(c), slug, c.leaf_id, None,
        sender=PLANNER, data={"kind": c.kind, "title": c.title, "warm": bool(c.warm), "plan_id": c.plan_id,
                              "expires_at": iso(c.expires_at), "base_revision": c.base_revision},
    ) for c in contracts]
    return commons.post(messages, now=now)


def post_questions(commons: Commons, slug: str, wake_plan: WakePlan, now: datetime,
                   who: Stewards | None = None) -> int:
    """The activation gate's question to the steward, on the plan's thread and in the steward's
    inbox (`who`), once per revision."""
    inbox = [m for q in wake_plan.questions for m in date_question_messages(
        slug, q.hypothesis_id, q.revision, q.body, wake_plan.plan_id, who or Stewards())]
    messages = inbox + [OutgoingMessage(
        question_key(slug, q.hypothesis_id, q.revision), "question", q.body, slug, wake_plan.plan_id, None,
        sender=PLANNER, data={"hypothesis_id": q.hypothesis_id, "revision": q.revision, "plan_id": wake_plan.plan_id},
    ) for q in wake_plan.questions]
    return commons.post(messages, now=now)

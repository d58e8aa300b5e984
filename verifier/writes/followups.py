"""What runs after a landing, outside the project lock: sealing the baseline of any hypothesis
that is active without a current one (design §3.5.1), on every path that can make one active: a
person's edit (`rw submit`, a push to refs/for/main, the service's git endpoint), `rw init` from
a template, the Planner's plan, a person approving a held plan.

Sealing calls the frontier model, which can take minutes, so it never runs under the lock and
never decides whether the edit lands: the edit has landed. When no model or Resolver key is set
up, nothing is sealed and the reason is put on the record: one `resolve` row per hypothesis
(`baseline_not_sealed`, "not sealed: H: why", seal.status), landed only when the reason differs
from the one already recorded, so every later path that still cannot seal adds nothing. The
digest, the UI, `rw eval` and `rw seal SLUG` show it; the next path that can seal does.
"""

from __future__ import annotations

from datetime import datetime

from verifier.formats.entries import ResolveEntry
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.writer import ProjectWriter
from verifier.seal.keys import PUBLIC_PEM
from verifier.seal.status import NOT_SEALED, not_sealed_description, recorded_reasons
from verifier.store.home import Home
from verifier.writes.baseline import (
    BaselineError,
    SealFailedError,
    hypotheses_in,
    model_backend,
    public_key_of,
    seal_missing,
    seal_reason,
)

NO_MODEL = "no model is configured (add a `model` block to RW_HOME/config.json, docs/resolver.md)"
RECORDED_MODEL = ("the baseline model is a recorded backend, which cannot seal a baseline (configure "
                  "`models.baseline` with a provider or a command, docs/models.md)")
NO_KEY = f"the Resolver's public key ({PUBLIC_PEM}) is missing (create it with `rw resolver keys`)"


def record_not_sealed(home: Home, slug: str, waiting: list[str], why: str, *, now: datetime) -> list[int]:
    """Land a "not sealed: H: why" row for each hypothesis whose latest recorded reason is another
    one; returns the rows' seqs (none when the record already says so)."""
    repo = home.project(slug)
    tip = repo.tip()
    known = recorded_reasons(row for _, row in read_chain(repo.view(tip)))
    if all(known.get(hypothesis_id) == why for hypothesis_id in waiting):
        return []  # already on the record: no writer is opened (every later path lands nothing)
    seqs = []
    with ProjectWriter.open(home, slug) as writer:
        # Read again under the lock only if another landing came in between (the chain is the tip's).
        reasons = known if writer.tip == tip else recorded_reasons(row for _, row in read_chain(writer.view()))
        for hypothesis_id in waiting:
            if reasons.get(hypothesis_id) == why:
                continue
            landed = writer.land(ResolveEntry(at=now, actor="verifier", actor_type="verifier", kind="baseline",
                                              outcome="rejected", reason_code=NOT_SEALED,
                                              description=not_sealed_description(hypothesis_id, why)))
            seqs.append(landed.row.seq)
    return seqs


def seal_after_landing(home: Home, slug: str, *, now: datetime, remote: bool = False) -> tuple[list[str], str | None]:
    """Seal what needs sealing; returns (hypotheses sealed, a note for people when something was
    left unsealed). A path that cannot seal records why (`record_not_sealed`). `remote`: the note
    goes to a person on another machine, who is told what is missing without the home's paths and
    setup commands (the admins' to act on)."""
    repo = home.project(slug)
    view = repo.view(repo.tip())
    try:
        waiting = [h.hypothesis_id for h in hypotheses_in(view) if seal_reason(view, h) is not None]
    except BaselineError as exc:
        return [], f"baselines not sealed: {exc}"
    if not waiting:
        return [], None
    try:
        backend = model_backend(home)
    except BaselineError as exc:
        configured = home.model_config("baseline") is not None  # then it is a recorded one, refused
        record_not_sealed(home, slug, waiting, RECORDED_MODEL if configured else NO_MODEL, now=now)
        told = "the baseline model is a recorded backend" if configured else "no baseline model is configured"
        return [], _unsealed(slug, waiting, told if remote else str(exc), remote)
    try:
        key = public_key_of(home)
    except BaselineError as exc:
        record_not_sealed(home, slug, waiting, NO_KEY, now=now)
        return [], _unsealed(slug, waiting, "the Resolver's key is missing" if remote else str(exc), remote)
    try:
        return seal_missing(home, slug, now=now, backend=backend, public_key=key), None
    except SealFailedError as exc:  # each failure has its ledger row, which says why
        return list(exc.sealed), f"baseline sealing failed: {'see the ledger' if remote else exc}"
    except BaselineError as exc:
        return [], f"baselines not sealed: {exc.code if remote else exc}"


def _unsealed(slug: str, waiting: list[str], why: str, remote: bool) -> str:
    then = (f"the service's admins set it up (docs/resolver.md), then `rw seal {slug}` seals it" if remote
            else f"then run `rw seal {slug}`")
    return f"baseline not sealed for {', '.join(waiting)}: {why}; {then}"

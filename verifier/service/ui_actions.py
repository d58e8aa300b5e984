"""A person's decision from the UI, as the same writes the `rw` commands call (issue 22).

The body is checked against one strict model (unknown fields refused, types not coerced), then
handed to the write the CLI calls with the signed-in person as the actor: `writes.holds.decide`
(`rw hold approve|reject`, then the seal follow-up as the command does), `writes.revert.revert`
(`rw revert`), `roles.resolver.approve` and `set_verdict` (`rw verdict approve|set`). Who may
decide what is theirs to say: a refusal comes back as the error they raise.
"""

from __future__ import annotations

import logging
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationError

from verifier.errors import RequestError
from verifier.formats.base import Strict
from verifier.pipeline.landing import Landed
from verifier.roles.resolver import approve, set_verdict
from verifier.service.core import Service, clock
from verifier.store.identities import Actor
from verifier.writes.followups import seal_after_landing
from verifier.writes.holds import decide
from verifier.writes.revert import revert

log = logging.getLogger("rw.service")
Action = Literal["approve", "reject", "revert", "verdict_approve", "verdict_set"]
_ID = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]


class ActRequest(Strict):
    """What the page sends: the action, its object, and the person's reason."""

    action: Action
    reason: Annotated[str, StringConstraints(max_length=4000)]
    object_id: _ID | None = None
    commit: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")] | None = None
    hypothesis_id: _ID | None = None
    value: Literal["true", "false", "unresolved"] | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)


def parse_act(body: dict[str, object]) -> ActRequest:
    try:
        request = ActRequest.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise RequestError(400, "bad_request", f"{where}: {first['msg']}") from exc
    needs = {"approve": ("object_id",), "reject": ("object_id",), "revert": ("commit",),
             "verdict_approve": ("hypothesis_id",), "verdict_set": ("hypothesis_id", "value", "confidence")}
    missing = [name for name in needs[request.action] if getattr(request, name) is None]
    if missing:
        raise RequestError(400, "bad_request", f"{request.action} needs {', '.join(missing)}")
    return request


def _land(svc: Service, actor: Actor, slug: str, request: ActRequest) -> Landed:
    home, now = svc.home, clock()
    if request.action in ("approve", "reject"):
        assert request.object_id is not None
        landed = decide(home, slug, actor, request.object_id, approve=request.action == "approve",
                        reason=request.reason, now=now)
        if request.action == "approve":
            _sealed, note = seal_after_landing(home, slug, now=now, remote=True)
            if note:
                log.info("after approving in %s: %s", slug, note)
        return landed
    if request.action == "revert":
        assert request.commit is not None
        return revert(home, slug, actor, request.commit, reason=request.reason, now=now)
    assert request.hypothesis_id is not None
    if request.action == "verdict_approve":
        return approve(home, slug, actor, request.hypothesis_id, reason=request.reason, now=now)
    assert request.value is not None and request.confidence is not None
    return set_verdict(home, slug, actor, request.hypothesis_id, request.value, confidence=request.confidence,
                       reason=request.reason, now=now)


def act(svc: Service, actor: Actor, slug: str, body: dict[str, object]) -> dict[str, object]:
    """Do what the body asks as `actor`; the landing's ledger row, or the write's own error."""
    request = parse_act(body)
    landed = _land(svc, actor, slug, request)
    try:
        svc.notifier.landed(slug, clock)
    except Exception:  # the ledger has the row; the next catch-up posts what this one could not
        log.exception("telling Commons about a person's decision in %s failed", slug)
    return {"ok": True, "action": request.action, "seq": landed.row.seq, "commit": landed.commit,
            "description": landed.row.description}

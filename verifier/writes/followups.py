"""What runs after a landing, outside the project lock: sealing the baseline of any hypothesis a
person's edit (or an approved hold) made active, or whose question it changed (design §3.5.1).

Sealing calls the frontier model, which can take minutes, so it never runs under the lock and
never decides whether the edit lands: the edit has landed. When no model or Resolver key is set
up, nothing is sealed and the note says so; `rw seal SLUG` seals later.
"""

from __future__ import annotations

from datetime import datetime

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


def seal_after_landing(home: Home, slug: str, *, now: datetime) -> tuple[list[str], str | None]:
    """Seal what needs sealing; returns (hypotheses sealed, a note for people when something was
    left unsealed)."""
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
        key = public_key_of(home)
    except BaselineError as exc:
        return [], f"baseline not sealed for {', '.join(waiting)}: {exc}; then run `rw seal {slug}`"
    try:
        return seal_missing(home, slug, now=now, backend=backend, public_key=key), None
    except SealFailedError as exc:
        return list(exc.sealed), f"baseline sealing failed: {exc}"
    except BaselineError as exc:
        return [], f"baselines not sealed: {exc}"

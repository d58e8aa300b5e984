"""What a working folder's agent run disclosed (model, tokens, cost, time): kept in
`.rw/disclosure.json`, set by `rw trace import` (from the transcript), `rw trace meta` and
`rw submit`'s flags, and sent as the trace manifest's fields (formats.trace.TraceManifest).

Nothing here guesses: a field never disclosed stays null, so the ledger row and the scores say
"undisclosed" rather than a made-up zero. Every file is reached through the folder's `Work`
(safefiles: no link is followed).
"""

from __future__ import annotations

import json
import math

from verifier.agentkit.transcripts.model import MAX_DURATION_S, MAX_TOKENS, MAX_USD, Disclosure
from verifier.agentkit.workdir import STATE_DIR, Work

DISCLOSURE_FILE = f"{STATE_DIR}/disclosure.json"
_INTS = ("tokens_in", "tokens_out", "tokens_cached", "tokens")
_FLOATS = {"usd": MAX_USD, "duration_s": MAX_DURATION_S}


def check_disclosure(disclosure: Disclosure) -> Disclosure:
    """`disclosure` if every field is within the manifest's bounds; ValueError naming the field."""
    values = disclosure.to_json()
    for name in _INTS:
        value = values[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 <= value <= MAX_TOKENS):
            raise ValueError(f"{name} {value!r}: expected a whole number from 0 to {MAX_TOKENS}")
    for name, ceiling in _FLOATS.items():
        value = values[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not math.isfinite(value) or not 0 <= value <= ceiling):
            raise ValueError(f"{name} {value!r}: expected a number from 0 to {ceiling:g}")
    model = values["model"]
    if model is not None and (not isinstance(model, str) or not model.strip() or len(model) > 200):
        raise ValueError(f"model {model!r}: expected a name of 1 to 200 characters")
    return disclosure


def load_disclosure(work: Work) -> Disclosure:
    """The folder's disclosure so far (nothing disclosed when the file is absent)."""
    if not work.has(DISCLOSURE_FILE):
        return Disclosure()
    try:
        raw = json.loads(work.read(DISCLOSURE_FILE))
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        model, usd, duration = raw.get("model"), raw.get("usd"), raw.get("duration_s")
        ints = {name: raw.get(name) for name in _INTS}
        for name, value in ints.items():
            if value is not None and not isinstance(value, int):
                raise TypeError(f"{name} is not a whole number")
        return check_disclosure(Disclosure(
            model=model if isinstance(model, str) else None,
            tokens_in=ints["tokens_in"], tokens_out=ints["tokens_out"], tokens_cached=ints["tokens_cached"],
            tokens=ints["tokens"], usd=float(usd) if isinstance(usd, int | float) else None,
            duration_s=float(duration) if isinstance(duration, int | float) else None))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{work.root / DISCLOSURE_FILE} is not a disclosure rw wrote ({exc}); "
                         "remove it and disclose again with `rw trace meta`") from exc


def save_disclosure(work: Work, disclosure: Disclosure) -> None:
    data = json.dumps(check_disclosure(disclosure).to_json(), indent=2, sort_keys=True) + "\n"
    work.write(DISCLOSURE_FILE, data.encode("utf-8"))


def disclose(work: Work, given: Disclosure) -> Disclosure:
    """Lay `given`'s known fields over what the folder disclosed before, keep and return the result."""
    merged = given.over(load_disclosure(work))
    save_disclosure(work, merged)
    return merged

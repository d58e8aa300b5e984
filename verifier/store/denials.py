"""The record of refused authentications (a token unknown, revoked, expired or used outside its
scope; an invite code refused): one JSON line each in `HomeLayout.auth_denials`, mode 0600, at
most AUTH_DENIALS_MAX_BYTES (past it the older half is dropped), never holding a token or a code.

Recording never changes the answer: a log that cannot be written is skipped. The audit log of
authority denials (issue 22, point 5) is meant to take these rows in; until then `denials()`
reads them back.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from datetime import datetime
from pathlib import Path

from verifier.constants import AUTH_DENIALS_MAX_BYTES
from verifier.errors import BusyError
from verifier.formats.base import iso
from verifier.store.files import exclusive_lock, write_atomic

_SECRET = re.compile(r"rw[ti]_[A-Za-z0-9_-]{20,}")


def _clean(text: str | None, cap: int) -> str | None:
    """Capped, and with anything shaped like a token or invite code cut out, whatever the caller passed."""
    return None if text is None else _SECRET.sub("[redacted]", text)[:cap]


def record_denial(path: Path, *, who: str | None, what: str, project: str | None, code: str, why: str,
                  now: datetime) -> None:
    """Append one refusal; `who` is the handle when the token was known (a scope refusal), else None."""
    row = {"at": iso(now), "who": _clean(who, 63), "what": _clean(what, 200), "project": _clean(project, 63),
           "code": _clean(code, 40), "why": _clean(why, 300)}
    line = (json.dumps(row, sort_keys=True) + "\n").encode()
    with contextlib.suppress(OSError, BusyError), exclusive_lock(path.with_suffix(".lock"), wait_s=5):
        size = path.stat().st_size if path.exists() else 0
        if size + len(line) > AUTH_DENIALS_MAX_BYTES:  # rare: rewrite with the newer half
            old = path.read_bytes()
            kept = old[len(old) // 2:]
            write_atomic(path, kept[kept.find(b"\n") + 1:] + line, durable=False, mode=0o600)
            return
        # Appended, not rewritten: a burst of refusals costs a line each. O_NOFOLLOW: never through a link.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "ab") as out:
            out.write(line)


def denials(path: Path) -> list[dict[str, str | None]]:
    """The recorded refusals, oldest first (a line that does not parse is skipped)."""
    if not path.exists():
        return []
    rows: list[dict[str, str | None]] = []
    for line in path.read_bytes().splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                rows.append({str(k): (str(v) if v is not None else None) for k, v in value.items()})
    return rows

"""The audit log of denials: every refused authentication and every refused authority check,
one JSON line each (who, what, which project, why, when, through which door), never the token.

It lives in the home (HomeLayout.audit_log, a 0700 folder, a 0600 file) and is bounded: when a
line would take the file past AUDIT_MAX_BYTES, the file rolls over to `denials.1.jsonl` (the one
before is dropped), so a caller hammering with bad tokens costs at most two files. Appends are
serialised by a lock beside the file and each line is written whole (O_APPEND), so concurrent
service workers never interleave. The steward and the admin read it (`rw audit SLUG`, HTTP
`GET /projects/{slug}/audit`); the reader decides who may, this module only keeps the lines.

`record_denial` is the one function every door calls (the CLI, the service's bearer check, the
git door, the UI's sign-in); it never raises for a fault of the disk: a denial is refused whether
or not its line could be kept, and the refusal must not turn into a crash.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from verifier.constants import AUDIT_FIELD_CHARS, AUDIT_MAX_BYTES
from verifier.formats.base import iso
from verifier.secrets.tokens import KIND as TOKEN_KIND
from verifier.store.files import exclusive_lock, private_dir
from verifier.store.home import Home, HomeLayout

log = logging.getLogger("rw.audit")
DenialKind = Literal["authentication", "authority"]
Door = Literal["cli", "http", "git", "ui"]
# A bearer token or an invite code of ours starts so; neither is ever written here, whatever a message says.
_SECRET_MARKS = ("rwt_", "rwi_")


@dataclass(frozen=True)
class Denial:
    """One refused request. `who` is the authenticated handle, or "unknown" for a bad token."""

    at: datetime
    kind: DenialKind
    who: str
    action: str
    project: str | None
    why: str
    door: Door

    def line(self) -> str:
        return (f"{iso(self.at)} {self.kind:<14} {self.door:<4} {self.who} {self.action} "
                f"{self.project or '-'}: {self.why}")

    def to_json(self) -> dict[str, str | None]:
        return {"at": iso(self.at), "kind": self.kind, "who": self.who, "action": self.action,
                "project": self.project, "why": self.why, "door": self.door}


def _clean(text: str) -> str:
    """A field as kept: one line, cut to AUDIT_FIELD_CHARS, with anything shaped like our token or an
    invite code cut out."""
    text = " ".join(text.split())[:AUDIT_FIELD_CHARS]
    while any(mark in text for mark in _SECRET_MARKS):
        start = min(text.index(mark) for mark in _SECRET_MARKS if mark in text)
        end = start
        while end < len(text) and not text[end].isspace():
            end += 1
        text = text[:start] + f"[{TOKEN_KIND} withheld]" + text[end:]
    return text


def record_denial(home: Home, *, kind: DenialKind, who: str, action: str, project: str | None, why: str,
                  at: datetime, door: Door) -> None:
    """Append one denial to the home's audit log (rolling it over past its bound). Never raises
    for a fault of the disk: the refusal stands either way, and the service log says why."""
    denial = Denial(at, kind, _clean(who) or "unknown", _clean(action), _clean(project) if project else None,
                    _clean(why), door)
    data = (json.dumps(denial.to_json(), sort_keys=True) + "\n").encode("utf-8")
    layout = home.layout
    try:
        private_dir(layout.audit)
        with exclusive_lock(layout.audit / "denials.lock", what="the audit log"):
            _roll_over(layout, len(data))
            fd = os.open(layout.audit_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
    except OSError as exc:
        log.warning("could not keep a denial in the audit log: %s", exc)


def _roll_over(layout: HomeLayout, adding: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        if layout.audit_log.stat().st_size + adding > AUDIT_MAX_BYTES:
            layout.audit_log.replace(layout.audit_log_previous)


def read_denials(home: Home, project: str | None) -> list[Denial]:
    """The kept denials, oldest first: of `project`, or every one with None (the admin's view).
    A line that does not parse (a torn write of a killed process) is skipped, not fatal."""
    found: list[Denial] = []
    for path in (home.layout.audit_log_previous, home.layout.audit_log):
        try:
            lines = path.read_bytes().splitlines()
        except FileNotFoundError:
            continue
        for raw in lines:
            denial = _parse(raw)
            if denial is not None and (project is None or denial.project == project):
                found.append(denial)
    return found


def _parse(raw: bytes) -> Denial | None:
    try:
        value = json.loads(raw)
        kind, door = value["kind"], value["door"]
        if kind not in ("authentication", "authority") or door not in ("cli", "http", "git", "ui"):
            return None
        project = value["project"]
        return Denial(datetime.fromisoformat(str(value["at"]).replace("Z", "+00:00")), kind, str(value["who"]),
                      str(value["action"]), None if project is None else str(project), str(value["why"]), door)
    except (ValueError, KeyError, TypeError):
        return None

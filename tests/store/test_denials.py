"""The record of refused authentications: one row each, 0600, bounded, never a token."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.support.world import NOW
from verifier.constants import AUTH_DENIALS_MAX_BYTES
from verifier.store.denials import denials, record_denial


def test_a_refusal_is_recorded_without_the_token_it_carried(tmp_path: Path) -> None:
    path = tmp_path / "auth-denials.jsonl"
    token = "rwt_" + "x" * 43
    record_denial(path, who=None, what="GET /whoami", project=None, code="bad_token",
                  why=f"unknown token {token}", now=NOW)
    rows = denials(path)
    assert rows == [{"at": "2026-11-30T12:00:00Z", "who": None, "what": "GET /whoami", "project": None,
                     "code": "bad_token", "why": "unknown token [redacted]"}]
    assert token not in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_record_keeps_its_size_bound_by_dropping_the_oldest(tmp_path: Path) -> None:
    path = tmp_path / "auth-denials.jsonl"
    for number in range(AUTH_DENIALS_MAX_BYTES // 150):
        record_denial(path, who=f"h{number}", what="POST /x", project="p", code="token_scope", why="w" * 100,
                      now=NOW)
    assert path.stat().st_size <= AUTH_DENIALS_MAX_BYTES
    rows = denials(path)
    assert rows[-1]["who"] == f"h{AUTH_DENIALS_MAX_BYTES // 150 - 1}" and rows[0]["who"] != "h0"

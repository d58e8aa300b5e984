"""The one audit log of denials (verifier.store.audit): whatever door records a refusal, the line
keeps who, what and why, never a bearer token or an invite code, and stays within its bound."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.support.world import NOW, make_home
from verifier.constants import AUDIT_FIELD_CHARS, AUDIT_MAX_BYTES
from verifier.store.audit import read_denials, record_denial


def test_a_denial_keeps_neither_the_token_nor_the_invite_code_it_quoted(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    token, code = "rwt_" + "x" * 43, "rwi_" + "y" * 43
    record_denial(home, kind="authentication", who="unknown", action="POST /join", project=None,
                  why=f"[bad_invite] unknown invite {code} sent with {token}", at=NOW, door="http")
    [denial] = read_denials(home, None)
    assert denial.action == "POST /join" and "[bad_invite]" in denial.why
    kept = home.layout.audit_log.read_text()
    assert token not in kept and code not in kept and "withheld" in kept
    assert stat.S_IMODE(home.layout.audit_log.stat().st_mode) == 0o600


def test_the_log_rolls_over_once_so_a_flood_of_bad_tokens_stays_bounded(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    # Each line keeps a reason of the longest kept length, so it is longer than AUDIT_FIELD_CHARS
    # and these lines add up to more than three times the bound.
    lines = AUDIT_MAX_BYTES // AUDIT_FIELD_CHARS * 3
    for number in range(lines):
        record_denial(home, kind="authentication", who="unknown", action=f"GET /whoami {number}", project="p",
                      why="[bad_token] unknown token " + "w" * AUDIT_FIELD_CHARS, at=NOW, door="http")
    assert len(home.layout.audit_log.read_bytes().splitlines()[0]) > AUDIT_FIELD_CHARS
    kept = home.layout.audit_log.stat().st_size + home.layout.audit_log_previous.stat().st_size
    assert kept <= 2 * AUDIT_MAX_BYTES
    assert read_denials(home, "p")[-1].action == f"GET /whoami {lines - 1}"

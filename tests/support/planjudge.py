"""Helpers for the Planner's judgement tests: a project with a report, and the exact request a
wake will send, so a recorded answer can be stored under its sha256 before the wake runs."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.commons.adapter import Commons
from verifier.formats.yamlout import dump_yaml
from verifier.model.adapter import recording_path
from verifier.roles.planjudge import judgement_request, read_context
from verifier.roles.planner import question_key, settings_of
from verifier.roles.planning import plan
from verifier.roles.planstate import read_state
from verifier.store.home import Home
from verifier.writes.project import init_project

REPORT_TEXT = "Checking layers sold first: three buyers paid for verification before any bought data."


def report_file(report_id: str, created_at: str, body: str) -> bytes:
    front = dump_yaml({"report_id": report_id, "title": f"Report {report_id}", "author": "alice",
                       "created_at": created_at}).decode()
    return f"---\n{front}---\n{body}\n".encode()


def home_with_reports(root: Path) -> Home:
    """The fixture project with two reports, the later one saying REPORT_TEXT."""
    template = root / "template"
    shutil.copytree(FIXTURES / "demo-project", template)
    (template / "reports").mkdir()
    (template / "reports" / "r-older.md").write_bytes(report_file("r-older", "2026-11-01T09:00:00Z", "Old news."))
    (template / "reports" / "r-latest.md").write_bytes(report_file("r-latest", "2026-11-30T12:00:00Z", REPORT_TEXT))
    home = make_home(root / "home")
    init_project(home, SLUG, now=NOW, template=template)
    return home


def wake_request(home: Home, commons: Commons, now: datetime = NOW) -> bytes:
    """The judgement request the next wake of SLUG sends, read as the wake reads it."""
    repo = home.project(SLUG)
    tip = repo.tip()
    assert tip is not None
    read = read_state(repo.view(tip), SLUG, tip, now, settings=settings_of(home),
                      asked=lambda h, r: commons.message(question_key(SLUG, h, r)) is not None,
                      claimed=frozenset(commons.claims(SLUG, now=now)))
    return judgement_request(read.state, plan(read.state, now), read_context(repo.view(tip), tip))


def record(folder: Path, request: bytes, answer: object) -> None:
    """Store `answer` as the recorded reply to `request` (RecordedBackend reads it)."""
    path = recording_path(folder, request)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(answer).encode())

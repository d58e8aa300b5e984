"""An outside agent's first accepted leaves through the service alone (issue: the researchwiki
skill): a fresh folder with no RW_HOME, a token and a server URL, and only the commands SKILL.md
gives. It claims a warm extract, writes findings with `rw new`, passes `rw check`, submits, is
accepted and gets the first-minute message; then does a link and a review leaf the same way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent, sentences
from tests.support.service_harness import Server, live_leaf, start
from tests.support.world import FIXTURES, GUIDE_ID, NOTE_ID, NOW, PDF_ID, SLUG, make_home
from verifier.formats.skill import skill_version
from verifier.store.home import Home
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback

ROOT = Path(__file__).resolve().parents[2]
SKILL = (ROOT / "skill" / "SKILL.md").read_bytes().decode("utf-8")


@dataclass
class Site:
    home: Home
    server: Server
    token: str
    reviewer_token: str  # another agent of the same operator: nobody reviews their own objects


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = make_home(tmp_path_factory.mktemp("outside") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("outsider", "outside-op", "agent", NOW)
    reviewer = home.identities.add("outsider-2", "outside-op", "agent", NOW)
    server = start(home.root)
    yield Site(home, server, token, reviewer)
    server.stop()


def agent_in(site: Site, folder: Path) -> OutsideAgent:
    return OutsideAgent(folder, site.server.url, site.token)


def in_skill(*commands: str) -> None:
    """The agent only runs what the skill tells it to."""
    for command in commands:
        assert f"`{command}" in SKILL or f"    {command}" in SKILL or f"\n{command}" in SKILL, command


def test_first_accepted_extract_then_link_then_review(site: Site, tmp_path: Path) -> None:
    in_skill("rw board", "rw work", "rw new finding", "rw check", "rw submit", "rw new link", "rw new note",
             "rw new review", "rw trace add")
    live_leaf(site.home, "extract-warm-1")
    agent = agent_in(site, tmp_path)
    board = agent.rw("board", SLUG)
    assert "extract-warm-1" in board.out
    took = agent.rw("work", SLUG, "--warm", "--dir", "extract")
    assert f"no leaf marked warm is open in {SLUG}: took extract-warm-1" in took.err  # a plain one, said so
    work = tmp_path / "extract"
    state = json.loads((work / ".rw" / "work.json").read_text())
    assert state["leaf_id"] == "extract-warm-1" and state["agent"] == "outsider"
    text = next((work / ".rw" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    refused = agent.rw("new", "finding", "--excerpt", "words that are not in the note at all, none",
                       "--statement", "x", "--limitation", "y", cwd=work, ok=False)
    assert refused.code == 1 and "closest passage" in refused.err
    for number, sentence in enumerate(sentences(text, 3)):
        agent.rw("new", "finding", "--excerpt", sentence, "--statement", f"Claim {number} of the note.",
                 "--limitation", "One analyst note; interviews, not audited figures.", cwd=work)
    agent.rw("trace", "add", "reasoning", "Picked three sentences that carry numbers.", cwd=work)
    checked = agent.rw("check", cwd=work)
    assert checked.out.startswith("OK 3 findings")
    submitted = agent.rw("submit", cwd=work)
    assert submitted.out.startswith("ACCEPTED"), submitted.out
    assert "[first_minute]" in submitted.out
    rows = site.server.client().get(f"/projects/{SLUG}/ledger", auth=False).body["rows"]
    landed = [row for row in rows if row.get("leaf_id") == "extract-warm-1" and row["action"] == "submit"]
    assert landed[0]["skill_version"] == skill_version(SKILL.encode("utf-8")), landed  # from the file, never typed

    findings = sorted(path.stem for path in (work / "findings").rglob("fnd_*.yaml"))
    live_leaf(site.home, "link-1", kind="link", hypothesis_id="H1", hypothesis_revision=1)
    agent.rw("work", SLUG, "link-1", "--dir", "link")
    link = tmp_path / "link"
    agent.rw("new", "link", "--finding", findings[0], "--stance", "supports", "--rationale",
             "Seven of eleven paying for verification is what H1 predicts.", cwd=link)
    agent.rw("new", "note", "--source", NOTE_ID, "--source", GUIDE_ID, "--source", PDF_ID, cwd=link)
    agent.rw("trace", "add", "reasoning", "No finding reports a team that stopped paying.", cwd=link)
    agent.rw("check", cwd=link)
    assert agent.rw("submit", cwd=link).out.startswith("ACCEPTED")

    target = next((work / "findings").rglob("fnd_*.yaml")).relative_to(work).as_posix()
    live_leaf(site.home, "review-1", kind="review", object_path=target)
    agent = OutsideAgent(tmp_path, site.server.url, site.reviewer_token)
    agent.rw("work", SLUG, "review-1", "--dir", "review")
    review = tmp_path / "review"
    payload = (review / ".rw" / "payload.json").read_text()
    assert "trc_" not in payload  # never the author's trace
    agent.rw("new", "review", "--decision", "accept", "--reason", "The excerpt says exactly this.", cwd=review)
    agent.rw("trace", "add", "reasoning", "Statement and limitation match the excerpt.", cwd=review)
    agent.rw("check", cwd=review)
    assert agent.rw("submit", cwd=review).out.startswith("ACCEPTED")


def test_check_refuses_what_the_verifier_refuses(site: Site, tmp_path: Path) -> None:
    live_leaf(site.home, "extract-short-1")
    agent = agent_in(site, tmp_path)
    agent.rw("work", SLUG, "extract-short-1", "--dir", "w")
    work = tmp_path / "w"
    text = next((work / ".rw" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    agent.rw("new", "finding", "--excerpt", sentences(text, 1, skip=5)[0], "--statement", "s", "--limitation", "l",
             cwd=work)
    (work / "README.md").write_text("an agent may not touch this\n")
    agent.rw("trace", "add", "reasoning", "Editing the README too.", cwd=work)
    checked = agent.rw("check", cwd=work, ok=False)
    submitted = agent.rw("submit", cwd=work, ok=False)
    first_code = checked.out.split("]", 1)[0] + "]"
    assert checked.code == submitted.code == 1
    assert first_code in submitted.out, (checked.out, submitted.out)

"""The UI's pages and their JSON are agent-visible, so the leak test searches them (design §13:
"UI JSON"): a clean fixture has none of its baselines on any page, and a baseline planted where
the UI shows it is found on the page and in its JSON."""

from __future__ import annotations

from pathlib import Path

from tests.support.ui import AFTER_H1, copied_ui_project, edit
from tests.support.world import SLUG
from verifier.audits.leaks import agent_visible_payloads, leak_test, open_seals
from verifier.formats.yamlout import dump_yaml

P = f"ui:p/{SLUG}/"


def test_the_leak_test_covers_every_ui_page_and_finds_nothing_in_the_fixture(tmp_path: Path) -> None:
    project = copied_ui_project(tmp_path)
    world = project.world
    payloads = agent_visible_payloads(world.repo, SLUG, now=AFTER_H1)
    for page in ("index.html", "index.json", "hypotheses/H1.html", "holds.html", "ledger/1.html",
                 "findings/all/all/1.html", "findings/all/all/1.json", "who/op-b.html"):
        assert P + page in payloads, page
    report = leak_test(world.home, SLUG, now=AFTER_H1, private_key=project.scenario.private_key)
    assert report.ok and report.baselines == ["H3"], [leak.line() for leak in report.leaks]


def test_a_baseline_planted_in_a_report_is_found_on_the_project_page(tmp_path: Path) -> None:
    project = copied_ui_project(tmp_path)
    world = project.world
    scenario = project.scenario
    opened, problems = open_seals(scenario.view(), SLUG, scenario.private_key)
    assert not problems
    h3 = next(o for o in opened if o.hypothesis_id == "H3")
    front = dump_yaml({"report_id": "r-latest", "title": "Latest news", "introduced": [], "cites": [],
                       "author": "ericxtang", "created_at": "2027-06-30T12:00:00Z"}).decode()
    body = f"---\n{front}---\nThe answer we were told: {h3.baseline.canary}\n".encode()
    verdict = world.submit(edit(world, scenario.steward_token, {"reports/r-latest.md": body}))
    assert verdict.outcome == "accepted", verdict.line()
    report = leak_test(world.home, SLUG, now=AFTER_H1, private_key=scenario.private_key)
    where = {leak.leak.where for leak in report.leaks if leak.hypothesis_id == "H3"}
    assert {P + "index.html", P + "index.json"} <= where, sorted(where)

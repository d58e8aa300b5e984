"""The UI's pages over the fixture project, rendered in-process: every page renders and escapes
every value, the findings list filters and pages, a baseline shows only after resolution, the
ledger groups rejections, the hold queue shows the object in full, and `rw ui build` writes the
same pages as a static site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.ui import AFTER_H1, HOSTILE, UiProject, copied_ui_project, edit, resolve
from tests.support.world import SLUG
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.ui.site import build_site, open_reader, project_page

assert COMMAND_MODULES  # the commands register on import
P = f"p/{SLUG}/"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> UiProject:
    """One copy for the module: the tests that take it only read it (those that write take their own)."""
    return copied_ui_project(tmp_path_factory.mktemp("ui"))


def site(project: UiProject) -> dict[str, bytes]:
    return build_site(project.world.home, SLUG, AFTER_H1)


def page(project: UiProject, path: str) -> str:
    repo = project.world.repo
    found = project_page(open_reader(repo, SLUG, AFTER_H1), repo, P + path)
    assert found is not None, path
    return found[0].decode()


def model(project: UiProject, path: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(page(project, path.replace(".html", ".json")))
    return value


def test_every_page_renders_and_escapes_every_value(project: UiProject) -> None:
    html = {p: d.decode() for p, d in site(project).items() if p.endswith(".html")}
    assert {"index.html", P + "index.html", P + "hypotheses.html", P + "holds.html", P + "ledger/1.html",
            P + "findings/all/all/1.html", P + "who/op-b.html", P + "hypotheses/H1.html"} <= set(html)
    for path, text in html.items():
        assert HOSTILE not in text, path
        assert "<script>" not in text, path  # the one script tag is the external <script src=...>
        assert "<b>not bold</b>" not in text, path
    findings = html[P + "findings/all/all/1.html"]
    assert "&lt;script&gt;document.title=&#39;pwned&#39;" in findings
    assert "&lt;b&gt;not bold&lt;/b&gt;" in findings


def test_the_findings_list_filters_by_source_operator_and_hypothesis(project: UiProject) -> None:
    every = model(project, "findings/all/all/1.html")
    assert every["total"] == 5 and every["pages"] == 1
    by_h1 = model(project, "findings/hypothesis/H1/1.html")
    assert by_h1["total"] == 4
    assert {link["hypothesis_id"] for e in by_h1["entries"] for link in e["links"]} == {"H1"}
    hostile = model(project, f"findings/source/{project.hostile_source}/1.html")
    assert [e["finding_id"] for e in hostile["entries"]] == [project.hostile_finding]
    assert model(project, "findings/operator/op-a/1.html")["total"] == 4
    assert model(project, "findings/operator/ericxtang/1.html")["total"] == 1
    repo = project.world.repo
    reader = open_reader(repo, SLUG, AFTER_H1)
    for missing in ("findings/all/all/2.html", "findings/colour/red/1.html", "findings/all/all/0.html",
                    "nothing.html", "hypotheses/H9.html", "who/nobody.html", "../../etc/passwd"):
        assert project_page(reader, repo, P + missing) is None, missing


def test_each_excerpt_is_shown_in_its_place_in_the_source_text(project: UiProject) -> None:
    entries = model(project, f"findings/source/{project.hostile_source}/1.html")["entries"]
    place = entries[0]["place"]
    assert place["placed"] and place["before"].endswith("pasted this into the note: ")
    assert place["after"].startswith(" and then wrote")
    text = page(project, f"findings/source/{project.hostile_source}/1.html")
    assert '<span class="context">An analyst pasted this into the note: </span><mark class="excerpt">&lt;script' in text


def test_a_baseline_shows_only_after_resolution(tmp_path: Path) -> None:
    project = copied_ui_project(tmp_path, resolved=False)
    before = site(project)
    card = json.loads(before[P + "hypotheses/H1.json"])["cards"][0]
    assert card["resolution"] is None
    assert "unsealed" not in before[P + "hypotheses/H1.html"].decode()
    assert resolve(project.scenario) == ["H1 resolved"]
    after = site(project)
    card = json.loads(after[P + "hypotheses/H1.json"])["cards"][0]
    resolution = card["resolution"]
    assert resolution["outcome"] in ("true", "false") and resolution["baseline"]["state"] == "opened"
    assert resolution["baseline"]["verdict"] in ("true", "false") and resolution["deltas"]
    assert "Baseline, unsealed at resolution: opened" in after[P + "hypotheses/H1.html"].decode()
    h3 = json.loads(after[P + "hypotheses/H3.json"])["cards"][0]
    assert h3["resolution"] is None  # still sealed


def test_cards_follow_project_order_with_links_and_health(project: UiProject) -> None:
    cards = model(project, "hypotheses.html")["cards"]
    assert [c["hypothesis_id"] for c in cards] == ["H1", "H2", "H3"]
    h1 = cards[0]
    assert len(h1["supports"]) == 2 and len(h1["contradicts"]) == 2
    assert h1["evidence_health"] > 0 and h1["criterion"] and h1["check_date"] == "2027-06-30"
    assert all(link["finding"]["excerpt"] for link in h1["supports"])


def test_the_ledger_groups_rejections_and_never_shows_a_trace(project: UiProject) -> None:
    ledger = model(project, "ledger/1.html")
    codes = {r["code"]: r["count"] for r in ledger["rejections"]}
    assert codes == {"outside_write_set": 1}, codes  # the fixture's one rejected submission
    rows = ledger["rows"]
    assert rows[0]["seq"] > rows[-1]["seq"]
    assert all("trace_id" not in row and row["verifier_version"] for row in rows)
    text = page(project, "ledger/1.html")
    assert "trc_" not in text and 'class="commit"' in text


def test_the_hold_queue_shows_the_object_in_full_and_how_to_decide(project: UiProject) -> None:
    holds = model(project, "holds.html")["entries"]
    assert [h["object_id"] for h in holds] == [project.held_link]
    held = holds[0]
    assert "Held for a person" in held["files"][0]["text"]
    assert f"context link from {project.hostile_finding} to H3 (revision 1) to the evidence" in held["effect"]
    assert held["approve"].startswith("RW_TOKEN=<person> rw hold approve")


def test_an_operator_page_charts_use_over_time_and_acceptance_by_kind(project: UiProject) -> None:
    who = model(project, "who/op-b.html")
    assert who["is_operator"] and who["accepted_total"] >= 2
    assert {k["kind"] for k in who["by_kind"]} >= {"link", "review"}
    assert len(who["use_over_time"]) >= 2
    text = page(project, "who/op-b.html")
    assert "<polyline" in text and "<rect" in text


def test_rw_ui_build_writes_the_static_site(project: UiProject, tmp_path: Path) -> None:
    out = tmp_path / "site"
    env = {"RW_HOME": str(project.world.home.root), "RW_NOW": "2027-07-01T06:00:00Z"}
    result = CliRunner().invoke(cli, ["ui", "build", SLUG, "--out", str(out)], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file() and (out / "static" / "ui.css").is_file()
    assert (out / P / "hypotheses" / "H1.html").read_bytes() == site(project)[P + "hypotheses/H1.html"]
    # Signing in and deciding are the service's alone: a static site has neither page.
    assert not list(out.rglob("sign-in*")) and not list(out.rglob("needs-you*"))
    missing = CliRunner().invoke(cli, ["ui", "build", "no-such", "--out", str(out)], env=env)
    assert missing.exit_code == 2 and "no-such" in missing.output


def test_a_commit_page_shows_what_the_ledger_names_and_nothing_else(project: UiProject) -> None:
    ledger = model(project, "ledger/1.html")
    row = next(r for r in ledger["rows"]
               if r["outcome"] == "accepted" and r["action"] == "submit" and r["kind"] == "link")
    commit = model(project, f"commits/{row['commit']}.html")
    assert commit["commit"] == row["commit"] and [r["seq"] for r in commit["rows"]] == [row["seq"]]
    assert any(path.startswith("links/") for path in commit["changed"]) and "Operator:" in commit["message"]
    assert f'commits/{row["commit"]}.html' in page(project, "ledger/1.html")
    repo = project.world.repo
    reader = open_reader(repo, SLUG, AFTER_H1)
    tip = repo.tip()
    assert tip is not None  # the tip's own ledger commit is on the branch but named by no row
    assert project_page(reader, repo, P + f"commits/{tip}.html") is None


def test_a_held_verdict_is_in_the_hold_queue_and_its_baseline_is_not_shown(tmp_path: Path) -> None:
    project = copied_ui_project(tmp_path, resolved=False)
    world, scenario = project.world, project.scenario
    text = (scenario.read("PROJECT.md") or b"").decode().replace("holds: [ links ]", "holds: [ links, verdicts ]")
    assert world.submit(edit(world, scenario.steward_token, {"PROJECT.md": text.encode()})).outcome == "accepted"
    assert resolve(scenario) == ["H1 queued"]
    files = site(project)
    verdicts = json.loads(files[P + "holds.json"])["verdicts"]
    assert [(v["hypothesis_id"], v["verdict"]) for v in verdicts] == [("H1", "true")]
    assert "rw verdict approve world-model-eval H1" in files[P + "holds.html"].decode()
    assert json.loads(files[P + "hypotheses/H1.json"])["cards"][0]["resolution"] is None

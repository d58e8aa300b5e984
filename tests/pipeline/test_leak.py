"""The baseline leak test (design §3.5.1, §11, §13), in CI: over the fixture project after a full
resolution it finds nothing; a baseline planted in any agent-visible payload, in any spelling, makes
it fail; a leaked baseline is regenerated and resealed; a baseline that leaked before resolution is
opened but not compared."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from tests.support.edits import edit, report_doc
from tests.support.patches import modify
from tests.support.resolution import AFTER_H1, Answers, BuiltScenarios, Scenario, answer, build, resolve
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file
from verifier.audits.leaks import LeakReport, OpenedBaseline, agent_visible_payloads, leak_test, open_seals, search
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.commons.adapter import OutgoingMessage
from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.formats.leaf import LeafContract
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission
from verifier.roles.records import read_record
from verifier.seal import generate_keypair
from verifier.state.layout import RESOLUTION_SCORES, default_write_rules, record_path, seal_path
from verifier.writes.project import add_leaf
from verifier.writes.revert import revert

assert COMMAND_MODULES  # the commands register on import


@pytest.fixture
def scenario(built_scenarios: BuiltScenarios, tmp_path: Path) -> Scenario:
    return built_scenarios.copy(tmp_path)  # the fixture built once per session, copied for this test


def sealed(scenario: Scenario, hypothesis_id: str = "H1") -> OpenedBaseline:
    opened, problems = open_seals(scenario.view(), SLUG, scenario.private_key)
    assert not problems
    return next(o for o in opened if o.hypothesis_id == hypothesis_id)


def run(scenario: Scenario) -> LeakReport:
    return leak_test(scenario.home, SLUG, now=AFTER_H1, private_key=scenario.private_key)


def test_the_fixture_project_has_no_leak_before_or_after_a_full_resolution(scenario: Scenario) -> None:
    before = run(scenario)
    assert before.ok and before.baselines == ["H1", "H3"]
    assert resolve(scenario) == ["H1 resolved"]
    after = run(scenario)
    assert after.ok, [leak.line() for leak in after.leaks]
    assert after.baselines == ["H3"] and after.payloads > 100
    payloads = agent_visible_payloads(scenario.world.repo, SLUG, now=AFTER_H1)
    assert {name.split(":")[0] for name in payloads} >= {"tree", "history", "commit", "ledger", "leaf", "digest"}
    # The seal itself is ciphertext by design; the opened H1 baseline is public now.
    assert f"tree:{seal_path('H3')}" not in payloads and "tree:scores/baseline/H1.json" in payloads


# --- planting a baseline in every kind of payload, in every kind of spelling --------------------------


Spelling = Callable[[OpenedBaseline], str]
SPELLINGS: dict[str, Spelling] = {
    "canary": lambda o: o.baseline.canary,
    "canary upper case": lambda o: o.baseline.canary.upper(),
    "plaintext JSON-escaped": lambda o: json.dumps(o.baseline.canonical().decode())[1:-1],
    "plaintext upper case": lambda o: o.baseline.canonical().decode().upper(),
    "plaintext percent-encoded": lambda o: quote(o.baseline.canonical().decode(), safe=""),
    # The ciphertext inside a larger base64 blob, one byte off the 3-byte grid.
    "ciphertext in base64": lambda o: base64.b64encode(b"%" + o.sealed.parts()[2] + b"tail").decode(),
    "answer hash upper case": lambda o: o.baseline.answer_sha256.upper(),
}


def plant_leaf_title(scenario: Scenario, text: str) -> None:
    world = scenario.world
    contract = LeafContract.model_validate({
        "leaf_id": "scout-planted", "kind": "scout", "title": f"Find sources like {text}", "inputs": {},
        "base_revision": world.tip(), "may_write": [r.model_dump() for r in default_write_rules("scout")],
        "check": "scout", "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=1)})
    add_leaf(world.home, SLUG, contract, now=NOW, actor="planner")


def plant_rejected_submission(scenario: Scenario, text: str) -> None:
    """Findings whose leaf_id field is the secret: refused, and the refusal echoes the field."""
    world = scenario.world
    world.leaf("extract-2")
    source = world.agent.source_text(SLUG, NOTE_ID, world.tip())
    files = dict(finding_file(source_id=NOTE_ID, source_text=source, leaf_id=text, excerpt=excerpt,
                              statement="A figure from the note.", limitation="Vendor figure.")
                 for excerpt in ("It reports 14 paying customers", "an annual run rate of USD 3.6 million",
                                 "seven had a paid contract"))
    verdict = world.submit(world.creation("extract-2", files))
    assert verdict.outcome == "rejected" and verdict.rejections[0].code == "wrong_leaf", verdict.line()


def plant_report(scenario: Scenario, text: str) -> None:
    body = report_doc("r-planted", [], []).decode() + f"\nAppendix: {text}\n"
    files = {"reports/r-planted.md": body.encode()}
    landed = scenario.world.submit(edit(scenario.world, scenario.steward_token, files))
    assert landed.outcome == "accepted", landed.line()


def plant_reverted_report(scenario: Scenario, text: str) -> None:
    """Reverted, so not in the tree: but every clone still has it in history."""
    plant_report(scenario, text)
    commit = next(row.commit for _, row in reversed(list(read_chain(scenario.view()))) if row.commit)
    assert commit is not None
    revert(scenario.home, SLUG, scenario.steward, commit, reason="Planted.", now=NOW)
    assert scenario.read("reports/r-planted.md") is None


def plant_commit_message(scenario: Scenario, text: str) -> None:
    """The steward's revert reason goes into the revert commit's message (the trace summary no
    longer does: it is part of the private trace)."""
    world = scenario.world
    world.leaf("guide-1", "guide", source_id=None)
    old = (scenario.read("FIELD-GUIDE.md") or b"").decode()
    patch = modify("FIELD-GUIDE.md", old, old + "- Vendors report run rate, not revenue. (agent: agent-a)\n")
    trace = TraceRecorder()
    for kind in ("tool_call", "tool_result", "final"):
        trace.add(NOW, kind, "edit the guide")
    bundle = trace.bundle(leaf_id="guide-1", agent="agent-a", operator="op-a", base_revision=world.tip(),
                          patch=patch, level="L1", summary="Added a lesson.")
    verdict = world.submit(Submission(SLUG, "guide-1", patch, bundle, world.agent.token))
    assert verdict.outcome == "accepted", verdict.line()
    revert(world.home, SLUG, scenario.steward, verdict.commit or "",  # the steward reverts (docs/authority.md)
           reason=f"Wrong lesson. {text}", now=NOW)


def plant_log(scenario: Scenario, text: str) -> None:
    logs = scenario.home.root / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "resolve.log").write_text(f"2027-07-01 resolve: debug {text}\n")


PLACES: dict[str, tuple[Callable[[Scenario, str], None], str]] = {
    "leaf title": (plant_leaf_title, "leaf:scout-planted"),
    "error echoed in the ledger": (plant_rejected_submission, "ledger:"),
    "report": (plant_report, "tree:reports/r-planted.md"),
    "reverted report": (plant_reverted_report, "history:reports/r-planted.md"),
    "commit message": (plant_commit_message, "commit:"),
    "log": (plant_log, "log:resolve.log"),
}
CASES = [
    ("leaf title", "plaintext JSON-escaped"),
    ("error echoed in the ledger", "canary"),
    ("report", "ciphertext in base64"),
    ("reverted report", "plaintext upper case"),
    ("commit message", "canary upper case"),
    ("log", "plaintext percent-encoded"),
    ("report", "answer hash upper case"),
]


@pytest.mark.parametrize(("place", "spelling"), CASES)
def test_a_planted_baseline_fails_the_leak_test(scenario: Scenario, place: str, spelling: str) -> None:
    target = sealed(scenario)
    plant, where = PLACES[place]
    plant(scenario, SPELLINGS[spelling](target))
    report = run(scenario)
    assert not report.ok
    assert {b.hypothesis_id for b in report.leaks} == {"H1"}  # H3's baseline did not leak
    assert any(b.leak.where.startswith(where) for b in report.leaks), [b.line() for b in report.leaks]


def test_commons_and_ui_payloads_are_searched_when_given(scenario: Scenario) -> None:
    target = sealed(scenario, "H3")
    extra = {"commons:message:7": f"Your baseline is {target.baseline.canary}".encode()}
    report = leak_test(scenario.home, SLUG, now=AFTER_H1, private_key=scenario.private_key, extra=extra)
    assert {(b.hypothesis_id, b.leak.where, b.leak.secret) for b in report.leaks} == {
        ("H3", "commons:message:7", "canary")}


def test_the_commons_database_is_searched(scenario: Scenario) -> None:
    """Issue 10: `rw leaks` reads every payload Commons stores, not only what the caller hands it."""
    target = sealed(scenario, "H3")
    db = Database(scenario.home.layout.commons)
    try:
        commons = LocalCommons(db, scenario.home.identities)
        commons.post([OutgoingMessage("k-1", "outcome", "An ordinary outcome.", SLUG, "extract-1", None,
                                      data={"digest": {"note": f"seen {target.baseline.canary}"}})], now=NOW)
        commons.post([OutgoingMessage("k-2", "outcome", f"{target.baseline.canary}", "other-project", "x", None)],
                     now=NOW)
    finally:
        db.close()
    report = run(scenario)
    assert {(b.hypothesis_id, b.leak.where, b.leak.secret) for b in report.leaks} == {
        ("H3", "commons:messages:0", "canary")}  # the other project's message is not this project's payload


def test_search_is_exact_and_pure(scenario: Scenario) -> None:
    target = sealed(scenario)
    payloads = {"clean": b"nothing here " * 100, "dirty": b"x" + target.baseline.canary.encode() + b"y"}
    assert {(b.leak.where, b.leak.secret) for b in search(payloads, [target])} == {("dirty", "canary")}
    # An answer hash that another, opened baseline made public already is not a leak of this one.
    public = {"public": target.baseline.answer_sha256.encode()}
    assert search(public, [target], {target.baseline.answer_sha256}) == []
    assert search(public, [target])


# --- what happens to a leaked baseline --------------------------------------------------------------


def rw(scenario: Scenario, *args: str) -> tuple[int, str]:
    env = {"RW_HOME": str(scenario.home.root), "RW_NOW": "2026-12-01T12:00:00Z"}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_a_leaked_baseline_is_regenerated_and_resealed(scenario: Scenario) -> None:
    target = sealed(scenario, "H3")
    plant_report(scenario, target.baseline.canary)
    code, out = rw(scenario, "leaks", SLUG)
    assert code == 1 and "LEAK H3: canary (raw) in tree:reports/r-planted.md" in out
    code, out = rw(scenario, "leaks", SLUG, "--reseal", "--json")
    assert code == 1 and json.loads(out)["resealed"][0]["hypothesis_id"] == "H3"
    row = next(r for _, r in reversed(list(read_chain(scenario.view()))))
    assert row.reason_code == "baseline_resealed" and "leaked" in row.description
    assert target.baseline.canary not in row.description
    fresh = sealed(scenario, "H3")
    assert fresh.baseline.canary != target.baseline.canary and fresh.sealed != target.sealed
    assert fresh.baseline.verdict == target.baseline.verdict  # the same question, asked again
    code, out = rw(scenario, "leaks", SLUG)
    assert code == 0 and out.startswith("ok: 2 sealed baselines (H1, H3)")


def test_a_baseline_that_leaked_before_resolution_is_not_compared(scenario: Scenario) -> None:
    plant_report(scenario, sealed(scenario).baseline.canary)
    backend = Answers({"resolve:H1": answer("true", 0.8)})
    assert resolve(scenario, backend=backend) == ["H1 resolved"]
    record = read_record(scenario.view(), record_path("H1"))
    assert record is not None and record.baseline is not None and record.baseline.state == "leaked"
    assert "tree:reports/r-planted.md" in (record.baseline.note or "")
    document = json.loads(scenario.read(RESOLUTION_SCORES) or b"")
    assert document["lift"]["no_baseline"] == 1 and document["lift"]["n"] == 0


def test_identical_answers_for_two_hypotheses_are_not_a_false_leak(world: World) -> None:
    same = {"kind": "baseline", "verdict": "true", "confidence": 0.6, "model": "frontier-1"}
    scenario = build(world, backend=Answers({"baseline:H1": same, "baseline:H3": same}))
    assert resolve(scenario, backend=Answers({"resolve:H1": answer("true")})) == ["H1 resolved"]
    report = run(scenario)
    assert report.ok and report.baselines == ["H3"]
    plant_report(scenario, sealed(scenario, "H3").baseline.canary)  # its other secrets are still searched
    assert not run(scenario).ok


def test_the_leak_test_needs_the_private_key_and_reports_a_seal_it_cannot_open(scenario: Scenario) -> None:
    other, _ = generate_keypair()
    report = leak_test(scenario.home, SLUG, now=AFTER_H1, private_key=other)
    assert not report.ok and len(report.problems) == 2 and "made for Resolver key" in report.problems[0]
    (scenario.home.root / "resolver" / "private.pem").chmod(0o644)
    code, out = rw(scenario, "leaks", SLUG)
    assert code == 2 and "must be 0600" in out

"""The Resolver end to end, through real repositories and the recorded model backend: baselines
sealed at activation, the resolution fixture of design §13 (a hypothesis past its check date
resolves, credit flows, lift computes; golden scores/resolution.json and credit deltas), held
verdicts and people's decisions, overrides, unresolved outcomes, stale baselines, idempotence,
replay and the ledger after all of it.

Regenerate the golden files and the recorded answers after an intended change with
RW_UPDATE_GOLDEN=1 and review the diff: the answers the recordings hold are in
fixtures/resolution/answers.json, keyed by `<kind>:<hypothesis>`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tests.support.edits import edit
from tests.support.resolution import (
    AFTER_H1,
    RECORDINGS,
    UPDATE,
    Answers,
    BuiltScenarios,
    FixtureBackend,
    Scenario,
    answer,
    configure,
    resolve,
)
from tests.support.world import NOW, SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.audits.leaks import leak_test, open_seals
from verifier.audits.replay import replay
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.errors import AuthError, ConflictError, FormatError
from verifier.messages.notifier import Notifier
from verifier.model.adapter import CommandBackend, RecordedBackend
from verifier.model.schema import BaselineRequest, request_bytes
from verifier.pipeline.digest import digest, digest_of
from verifier.pipeline.ledger import read_chain
from verifier.roles.records import Balance, read_record
from verifier.roles.resolver import approve, resolve_project, set_verdict
from verifier.seal import Baseline
from verifier.state.layout import (
    PLANNER_SCORES,
    RESOLUTION_SCORES,
    deltas_path,
    opened_path,
    proposal_path,
    record_path,
    request_record_path,
    seal_path,
)
from verifier.state.project import current_hypothesis
from verifier.store.identities import Actor
from verifier.writes.baseline import BaselineError, SealFailedError, model_backend, seal_missing
from verifier.writes.revert import revert

assert COMMAND_MODULES  # the commands register on import
GOLDEN = Path(__file__).parents[1] / "golden" / "resolver"
AFTER_H3 = datetime(2028, 4, 1, 6, 0, tzinfo=UTC)  # the day after H3's (2028-03-31)


# --- the golden files and the scenario fixture ---------------------------------------------------


def check_golden(name: str, data: bytes) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert data == path.read_bytes(), f"{name} differs from tests/golden/resolver/{name}"


def healthy(scenario: Scenario) -> None:
    repo = scenario.world.repo
    assert replay(repo).ok, replay(repo).differences
    assert verify_ledger(repo, scenario.home.read_anchor(SLUG)).ok


@pytest.fixture
def scenario(built_scenarios: BuiltScenarios, tmp_path: Path) -> Scenario:
    return built_scenarios.copy(tmp_path)  # the fixture built once per session, copied for this test


# --- baselines at activation --------------------------------------------------------------------


def test_baselines_are_sealed_for_active_hypotheses_only(scenario: Scenario) -> None:
    view = scenario.view()
    assert view.read(seal_path("H1")) and view.read(seal_path("H3")) and view.read(seal_path("H2")) is None
    hypothesis = current_hypothesis(view, "H1")
    assert hypothesis is not None and hypothesis.resolution is not None
    request = BaselineRequest(hypothesis_id="H1", revision=1, statement=hypothesis.statement,
                              criterion=hypothesis.resolution.criterion)
    record = json.loads(view.read(request_record_path("H1")) or b"")
    assert record["request_sha256"] == hashlib.sha256(request_bytes(request)).hexdigest()
    rows = [row for _, row in read_chain(view) if row.reason_code == "baseline_sealed"]
    assert [(r.action, r.actor_type, r.kind) for r in rows] == [("resolve", "verifier", "baseline")] * 2
    # The rows name the request and the backend: never the answer, its hash or the model's name.
    opened = {o.hypothesis_id: o.baseline for o in open_seals(view, SLUG, scenario.private_key)[0]}
    assert sorted(opened) == ["H1", "H3"]
    for baseline in opened.values():
        for _, row in read_chain(view):
            assert baseline.answer_sha256 not in row.description and baseline.model not in row.description
            assert baseline.canary not in row.description
    assert seal_missing(scenario.home, SLUG, now=NOW, backend=FixtureBackend()) == []  # idempotent
    healthy(scenario)


# --- the resolution fixture (design §13) --------------------------------------------------------


def test_resolution_fixture_resolves_credit_flows_lift_computes(scenario: Scenario) -> None:
    assert resolve(scenario, now=datetime(2027, 6, 30, 23, 0, tzinfo=UTC)) == []  # not the day after yet
    assert resolve(scenario) == ["H1 resolved"]
    view = scenario.view()
    hypothesis = current_hypothesis(view, "H1")
    assert hypothesis is not None and hypothesis.status == "resolved"
    assert hypothesis.verdict.current.value == "true" and hypothesis.verdict.current.by is not None
    assert hypothesis.verdict.current.by.type == "resolver"
    assert hypothesis.verdict.history[-1] == hypothesis.verdict.current
    assert (view.read("hypotheses/H1.md") or b"").endswith(b"Scope: robotics and physical-AI teams that buy, not "
                                                           b"build, world-model products.\n")
    # The baseline is opened and committed; its seal retired. H3's stays sealed.
    opened = Baseline.model_validate_json(view.read(opened_path("H1")) or b"")
    assert opened.verdict == "false" and opened.model == "recorded:frontier-1"
    assert view.read(seal_path("H1")) is None and view.read(seal_path("H3")) is not None
    document = json.loads(view.read(RESOLUTION_SCORES) or b"")
    assert document["lift"] == {"n": 1, "wins": 1, "losses": 0, "ties": 0, "unresolved": 0, "no_baseline": 0,
                                "lift": 1.0}
    assert document["hypotheses"] == [{"hypothesis_id": "H1", "outcome": "true", "corpus_verdict": "true",
                                       "baseline_verdict": "false", "lift_term": 1, "links": 4}]
    row = next(r for _, r in reversed(list(read_chain(view))))
    assert (row.action, row.actor_type, row.reason_code) == ("resolve", "resolver", "resolved")
    deltas = json.loads(view.read(deltas_path(row.seq)) or b"")
    assert {d["operator"]: d["message"] for d in deltas["deltas"]} == {
        "op-a": "H1 resolved true. Your links: +1 (1 link). Your findings: +2 (4 findings).",
        "op-b": "H1 resolved true. Your links: +1 (2 links). Your review accuracy: +1 (1 review).",
        "op-c": "H1 resolved true. Your links: 0 (1 link). Your review accuracy: +2 (2 reviews).",
    }
    check_golden("resolution.json", view.read(RESOLUTION_SCORES) or b"")
    check_golden("credit_deltas.json", view.read(deltas_path(row.seq)) or b"")
    record = read_record(view, record_path("H1"))
    assert record is not None and record.baseline is not None and record.baseline.state == "opened"
    assert record.balance.supports == 2.25 and record.balance.contradicts == 1.0  # review-2 rejected northgate
    assert resolve(scenario) == []  # idempotent: a second run the same day does nothing
    moves = digest_of(view, SLUG, NOW)["moves"]  # issue 10: a resolution is a move in the digest
    assert moves[0]["action"] == "resolve" and moves[0]["kind"] == "verdict" and "H1" in moves[0]["description"]
    healthy(scenario)


def test_lift_pools_hypotheses_and_an_abstaining_corpus_counts(scenario: Scenario) -> None:
    """H3 has no evidence: V_c is none (a tie at 0 against 0), which is never correct. The baseline
    (true) is wrong too (the outcome is false), so the term is a tie and N counts it."""
    assert resolve(scenario) == ["H1 resolved"]
    assert resolve(scenario, now=AFTER_H3) == ["H3 resolved"]
    document = json.loads(scenario.read(RESOLUTION_SCORES) or b"")
    assert document["lift"] == {"n": 2, "wins": 1, "losses": 0, "ties": 1, "unresolved": 0, "no_baseline": 0,
                                "lift": 0.5}
    h3 = next(h for h in document["hypotheses"] if h["hypothesis_id"] == "H3")
    assert h3 == {"hypothesis_id": "H3", "outcome": "false", "corpus_verdict": "none", "baseline_verdict": "true",
                  "lift_term": 0, "links": 0}
    assert leak_test(scenario.home, SLUG, now=AFTER_H3, private_key=scenario.private_key).baselines == []
    healthy(scenario)


# --- people's decisions ----------------------------------------------------------------------------


def hold_verdicts(scenario: Scenario) -> None:
    project = (scenario.read("PROJECT.md") or b"").decode().replace("holds: []", "holds: [ verdicts ]")
    verdict = scenario.world.submit(edit(scenario.world, scenario.steward_token, {"PROJECT.md": project.encode()}))
    assert verdict.outcome == "accepted", verdict.line()


def test_held_verdict_waits_for_a_person_and_the_baseline_stays_sealed(scenario: Scenario) -> None:
    hold_verdicts(scenario)
    assert resolve(scenario) == ["H1 queued"]
    view = scenario.view()
    proposal = read_record(view, proposal_path("H1"))
    assert proposal is not None and proposal.proposal is not None and proposal.outcome is None
    assert proposal.proposal.verdict == "true" and proposal.corpus_verdict == "true"
    assert current_hypothesis(view, "H1").status == "active"  # type: ignore[union-attr]
    assert view.read(seal_path("H1")) is not None and view.read(opened_path("H1")) is None
    assert resolve(scenario) == ["H1 waiting"]
    with pytest.raises(AuthError):
        approve(scenario.home, SLUG, Actor("agent-a", "op-a", "agent"), "H1", reason="looks right", now=AFTER_H1)
    with pytest.raises(FormatError):
        approve(scenario.home, SLUG, scenario.steward, "H1", reason="  ", now=AFTER_H1)
    landed = approve(scenario.home, SLUG, scenario.steward, "H1", reason="The survey is the qualifying one.",
                     now=AFTER_H1)
    assert (landed.row.actor, landed.row.actor_type, landed.row.reason_code) == ("ericxtang", "human", "approved")
    view = scenario.view()
    hypothesis = current_hypothesis(view, "H1")
    assert hypothesis is not None and hypothesis.status == "resolved" and hypothesis.verdict.current.by is not None
    assert (hypothesis.verdict.current.by.type, hypothesis.verdict.current.by.id) == ("human", "ericxtang")
    assert view.read(proposal_path("H1")) is None
    # A person's command never reads the private key: credit flows now, the baseline opens next run.
    document = json.loads(view.read(RESOLUTION_SCORES) or b"")
    assert document["lift"]["no_baseline"] == 1 and document["lift"]["lift"] is None
    deltas = json.loads(view.read(deltas_path(landed.row.seq)) or b"")
    golden = json.loads((GOLDEN / "credit_deltas.json").read_text())
    assert deltas["deltas"] == golden["deltas"]
    assert resolve(scenario) == ["H1 opened"]
    assert scenario.read(RESOLUTION_SCORES) == (GOLDEN / "resolution.json").read_bytes()
    assert resolve(scenario) == []
    healthy(scenario)


def test_override_posts_the_differences_and_rescores(scenario: Scenario) -> None:
    resolve(scenario)
    first = json.loads(scenario.read(deltas_path(18)) or b"")
    landed = set_verdict(scenario.home, SLUG, scenario.steward, "H1", "false", confidence=0.9,
                         reason="The survey counted pilots as paid contracts.", now=AFTER_H1)
    view = scenario.view()
    hypothesis = current_hypothesis(view, "H1")
    assert hypothesis is not None and hypothesis.status == "resolved" and hypothesis.verdict.current.value == "false"
    assert [v.value for v in hypothesis.verdict.history] == ["true", "false"]
    second = json.loads(view.read(deltas_path(landed.row.seq)) or b"")
    assert second["previous_outcome"] == "true" and second["outcome"] == "false"
    assert next(d["message"] for d in second["deltas"] if d["operator"] == "op-a") == \
        "H1 verdict changed from true to false. Your links: -2 (1 link). Your findings: -3 (4 findings)."
    # Both sets of messages add up to the scores as they stand.
    document = json.loads(view.read(RESOLUTION_SCORES) or b"")
    for row in document["operators"]:
        name = row["operator"]
        total = sum(d["link_credit"] + d["finding_credit"] for d in first["deltas"] + second["deltas"]
                    if d["operator"] == name)
        assert total == row["resolution_credit"], name
    # The corpus said true, the baseline false: now the baseline was right.
    assert document["lift"]["losses"] == 1 and document["lift"]["lift"] == -1.0
    with pytest.raises(ConflictError, match="already"):
        set_verdict(scenario.home, SLUG, scenario.steward, "H1", "false", confidence=0.9, reason="again",
                    now=AFTER_H1)
    set_verdict(scenario.home, SLUG, scenario.steward, "H1", "unresolved", confidence=0.5,
                reason="Neither survey qualifies.", now=AFTER_H1)
    hypothesis = current_hypothesis(scenario.view(), "H1")
    assert hypothesis is not None and hypothesis.status == "loose"
    planner = json.loads(scenario.read(PLANNER_SCORES) or b"")
    assert planner["unresolved_count"] == 1 and planner["unresolved"][0]["by"] == "ericxtang"
    healthy(scenario)


def test_a_verdict_commit_cannot_be_reverted(scenario: Scenario) -> None:
    resolve(scenario)
    contribution = str(scenario.world.repo.commit(scenario.world.tip()).parents[0].id)
    with pytest.raises(ConflictError, match="verifier's own"):
        revert(scenario.home, SLUG, scenario.steward, contribution, reason="no", now=AFTER_H1)


def test_person_sets_a_due_verdict_without_a_proposal(scenario: Scenario) -> None:
    with pytest.raises(ConflictError, match="has not passed"):
        set_verdict(scenario.home, SLUG, scenario.steward, "H1", "true", confidence=0.6, reason="early", now=NOW)
    with pytest.raises(ConflictError, match="has no resolution record"):
        set_verdict(scenario.home, SLUG, scenario.steward, "H2", "true", confidence=0.6, reason="loose", now=AFTER_H1)
    landed = set_verdict(scenario.home, SLUG, scenario.steward, "H1", "true", confidence=0.6,
                         reason="Read the survey myself.", now=AFTER_H1)
    record = read_record(scenario.view(), record_path("H1"))
    assert record is not None and record.proposal is None and record.corpus_verdict == "true"
    assert landed.row.reason_code == "verdict_set"
    assert resolve(scenario) == ["H1 opened"]
    assert scenario.read(RESOLUTION_SCORES) == (GOLDEN / "resolution.json").read_bytes()


# --- unresolved, stale and withdrawn ------------------------------------------------------------------


def test_unresolved_returns_to_loose_counts_and_keeps_the_baseline_sealed(scenario: Scenario) -> None:
    backend = Answers({"resolve:H1": answer("unresolved", 0.6)})
    assert resolve(scenario, backend=backend) == ["H1 unresolved"]
    view = scenario.view()
    hypothesis = current_hypothesis(view, "H1")
    assert hypothesis is not None and hypothesis.status == "loose" and hypothesis.verdict.current.value == "unresolved"
    assert view.read(seal_path("H1")) is not None and view.read(opened_path("H1")) is None
    assert json.loads(view.read(PLANNER_SCORES) or b"")["unresolved_count"] == 1
    document = json.loads(view.read(RESOLUTION_SCORES) or b"")
    assert document["unresolved_count"] == 1 and document["lift"]["n"] == 0 and document["lift"]["lift"] is None
    assert all(link["credit"] == 0 for link in document["links"])
    row = next(r for _, r in reversed(list(read_chain(view))))
    deltas = json.loads(view.read(deltas_path(row.seq)) or b"")
    assert {d["message"] for d in deltas["deltas"]} == {
        "H1 could not be resolved at its check date; unresolved gives no credit."}
    assert "baseline still sealed" in row.description
    assert resolve(scenario, backend=backend) == []  # loose now: nothing to do
    # The steward fixes the measure's date; the same question keeps its sealed baseline.
    text = (view.read("hypotheses/H1.md") or b"").decode()
    text = text.replace("status: loose", "status: active").replace("check_date: 2027-06-30", "check_date: 2027-09-30")
    assert scenario.world.submit(edit(scenario.world, scenario.steward_token,
                                      {"hypotheses/H1.md": text.encode()})).outcome == "accepted"
    assert seal_missing(scenario.home, SLUG, now=AFTER_H1, backend=FixtureBackend()) == []
    later = datetime(2027, 10, 1, tzinfo=UTC)
    assert resolve(scenario, now=later, backend=Answers({"resolve:H1": answer("true")})) == ["H1 resolved"]
    record = read_record(scenario.view(), record_path("H1"))
    assert record is not None and record.baseline is not None and record.baseline.state == "opened"
    assert json.loads(scenario.read(PLANNER_SCORES) or b"")["unresolved_count"] == 1  # never goes down
    healthy(scenario)


def reword(scenario: Scenario) -> None:
    text = (scenario.read("hypotheses/H1.md") or b"").decode()
    text = text.replace("more robotics teams pay", "most robotics teams pay").replace("revision: 1", "revision: 2")
    assert scenario.world.submit(edit(scenario.world, scenario.steward_token,
                                      {"hypotheses/H1.md": text.encode()})).outcome == "accepted"


def test_a_reworded_hypothesis_is_resealed(scenario: Scenario) -> None:
    before = scenario.read(seal_path("H1"))
    reword(scenario)
    backend = Answers({"baseline:H1": {"kind": "baseline", "verdict": "true", "confidence": 0.5}})
    assert seal_missing(scenario.home, SLUG, now=NOW, backend=backend) == ["H1"]
    assert scenario.read(seal_path("H1")) != before
    row = next(r for _, r in reversed(list(read_chain(scenario.view()))))
    assert row.reason_code == "baseline_resealed" and "changed" in row.description
    assert json.loads(scenario.read(request_record_path("H1")) or b"")["revision"] == 2


def test_a_stale_baseline_is_opened_but_not_compared(scenario: Scenario) -> None:
    reword(scenario)  # and nobody reseals before the check date
    assert resolve(scenario, backend=Answers({"resolve:H1": answer("true")})) == ["H1 resolved"]
    record = read_record(scenario.view(), record_path("H1"))
    assert record is not None and record.baseline is not None and record.baseline.state == "stale"
    document = json.loads(scenario.read(RESOLUTION_SCORES) or b"")
    assert document["lift"]["no_baseline"] == 1 and document["lift"]["n"] == 0
    assert document["hypotheses"][0]["baseline_verdict"] is None


def test_rejected_links_earn_nothing_but_judge_their_reviewers_and_reverted_ones_take_their_reviews(
        scenario: Scenario) -> None:
    """review-2 rejected the northgate link: it stays in links/, out of the evidence, and its
    would-have credit judges its reviewer. Reverting link-2 withdraws the quillmark link and,
    with it, review-3 that rested on it (issue 10: reverts cascade)."""
    link_commit = next(row.commit for _, row in read_chain(scenario.view()) if row.leaf_id == "link-2" and row.commit)
    assert link_commit is not None
    revert(scenario.home, SLUG, scenario.steward, link_commit, reason="Misattributed quotes.", now=NOW)
    backend = Answers({"resolve:H1": answer("true")})
    assert resolve(scenario, backend=backend) == ["H1 resolved"]
    evidence = backend.asked[0]["evidence"]
    assert isinstance(evidence, list)
    assert [e["link_id"] for e in evidence] == sorted(
        [scenario.links["teams"], scenario.links["tessellate"]])
    document = json.loads(scenario.read(RESOLUTION_SCORES) or b"")
    by_link = {link["link_id"]: link for link in document["links"]}
    northgate = by_link[scenario.links["northgate"]]
    assert (northgate["in_evidence"], northgate["credit"], northgate["would_have_credit"]) == (False, 0, -1)
    assert scenario.links["quillmark"] not in by_link
    assert {a["reviewer"]: a["score"] for a in document["review_accuracy"]} == {"op-c": 2}
    assert document["hypotheses"][0]["corpus_verdict"] == "true"
    healthy(scenario)


# --- failures and set-up ----------------------------------------------------------------------------


def test_a_failed_model_call_is_a_ledger_row_and_nothing_else(scenario: Scenario, tmp_path: Path) -> None:
    tip = scenario.world.tip()
    runs = resolve_project(scenario.home, SLUG, now=AFTER_H1, backend=RecordedBackend(tmp_path / "none"),
                           private_key=scenario.private_key)
    assert [(r.hypothesis_id, r.status) for r in runs] == [("H1", "failed")]
    assert "no recorded answer" in runs[0].detail
    rows = [row for _, row in read_chain(scenario.view())]
    assert (rows[-1].outcome, rows[-1].reason_code) == ("rejected", "model_error")
    assert scenario.world.repo.changed_paths(tip, scenario.world.tip()) == ["ledger/000000.jsonl"]
    assert current_hypothesis(scenario.view(), "H1").status == "active"  # type: ignore[union-attr]


def test_a_failed_baseline_call_says_nothing_of_its_answer(world: World, tmp_path: Path) -> None:
    configure(world.home)
    leaky = tmp_path / "model.py"
    leaky.write_text("import sys\nsys.stdout.write('{\"kind\": \"baseline\", \"verdict\": \"maybe-true\"}')\n")
    backend = CommandBackend((sys.executable, str(leaky)), timeout_s=30)
    with pytest.raises(SealFailedError) as caught:
        seal_missing(world.home, SLUG, now=NOW, backend=backend)
    assert sorted(caught.value.failures) == ["H1", "H3"]
    rows = [row for _, row in read_chain(world.repo.view(world.tip())) if row.reason_code == "model_error"]
    assert len(rows) == 2 and all("withheld" in row.description and "maybe" not in row.description for row in rows)
    assert world.repo.view(world.tip()).read(seal_path("H1")) is None


def test_set_up_errors_name_the_fix(world: World) -> None:
    with pytest.raises(BaselineError, match="rw resolver keys"):
        seal_missing(world.home, SLUG, now=NOW, backend=FixtureBackend())
    with pytest.raises(BaselineError, match="no model is configured"):
        model_backend(world.home)
    text = (world.repo.view(world.tip()).read("hypotheses/H1.md") or b"").decode()
    text = text.replace("status: active", "status: active\nbaseline: { sealed: findings/x.sealed }")
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    # The baseline field is the Resolver's record: a person cannot point it anywhere by hand.
    verdict = world.submit(edit(world, token, {"hypotheses/H1.md": text.encode()}))
    assert verdict.rejections[0].code == "resolver_only" and "baseline" in verdict.rejections[0].message


# --- the command line ---------------------------------------------------------------------------------


def rw(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_set_up_through_the_command_line(world: World) -> None:
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z"}
    code, out = rw(env, "seal", SLUG)
    assert code == 2 and "no model is configured" in out
    code, out = rw(env, "resolver", "keys")
    assert code == 0 and "created" in out
    assert (world.home.root / "resolver" / "private.pem").stat().st_mode & 0o777 == 0o600
    code, out = rw(env, "resolver", "keys")
    assert code == 2 and "refusing to replace a Resolver key" in out
    config = json.loads((world.home.root / "config.json").read_text())
    # A recorded backend is no baseline: each hypothesis's line and the error say that, not "no model".
    config["model"] = {"backend": "recorded", "recordings": str(RECORDINGS)}
    (world.home.root / "config.json").write_text(json.dumps(config))
    code, out = rw(env, "seal", SLUG)
    assert code == 2 and "no model is configured" not in out, out
    assert out.count("the baseline model is a recorded backend, which cannot seal a baseline") == 2, out
    config["model"]["sealed_replay"] = True
    (world.home.root / "config.json").write_text(json.dumps(config))
    code, out = rw(env, "seal", SLUG)
    assert (code, out) == (0, "sealed H1\nsealed H3\n")
    code, out = rw(env, "seal", SLUG)
    assert (code, out) == (0, "every active hypothesis has a current baseline\n")


def test_resolve_and_verdicts_through_the_command_line(scenario: Scenario) -> None:
    env = {"RW_HOME": str(scenario.home.root), "RW_NOW": "2027-07-01T06:00:00Z", "RW_TOKEN": scenario.steward_token}
    code, out = rw(env, "resolve", SLUG, "--now", "2027-06-30")
    assert (code, out) == (0, "nothing to resolve in world-model-eval on 2027-06-30\n")
    code, out = rw(env, "resolve", SLUG, "--now", "2027-07-01", "--json")
    runs = json.loads(out)
    assert code == 0 and [(r["hypothesis_id"], r["status"]) for r in runs] == [("H1", "resolved")]
    assert scenario.read(RESOLUTION_SCORES) == (GOLDEN / "resolution.json").read_bytes()
    code, out = rw(env, "leaks", SLUG)
    assert code == 0 and out.startswith("ok: 1 sealed baselines (H3)")
    code, out = rw(env, "verdict", "list", SLUG)
    assert (code, out) == (0, "no verdict waits for a person\n")
    code, out = rw(env, "verdict", "approve", SLUG, "H1", "--reason", "ok")
    assert code == 2 and "no verdict proposal for H1" in out
    code, out = rw(env, "verdict", "set", SLUG, "H1", "false", "--confidence", "0.9", "--reason", "Pilots counted.")
    assert code == 0 and "H1 set to false" in out
    code, out = rw({**env, "RW_TOKEN": scenario.world.agent.token}, "verdict", "set", SLUG, "H1", "true",
                   "--confidence", "0.9", "--reason", "mine")
    assert code == 3 and "only people" in out
    code, out = rw(env, "resolve", SLUG, "--now", "2026-13-01")
    assert code == 2 and "--now" in out


# --- the messages -------------------------------------------------------------------------------------


def test_the_credit_deltas_reach_every_operators_agents_through_commons(scenario: Scenario) -> None:
    db = Database(scenario.home.root / "commons.sqlite3")
    try:
        commons = LocalCommons(db, scenario.home.identities)
        notifier = Notifier(scenario.home, commons, db, digest)
        notifier.catch_up(SLUG, now=NOW)  # a project seen for the first time is read silently
        resolve(scenario)
        notifier.catch_up(SLUG, now=AFTER_H1)
        sentences = {"agent-a": "Your findings: +2 (4 findings)", "agent-b": "Your review accuracy: +1",
                     "agent-c": "Your review accuracy: +2"}
        messages = {}
        for agent_handle, sentence in sentences.items():
            (moved,) = [m for m in commons.inbox(agent_handle) if m.kind == "hypothesis_moved"]
            assert sentence in moved.body, moved.body
            messages[f"commons:{moved.id}"] = (moved.body + json.dumps(moved.data)).encode()
        # What Commons carries is an agent-visible payload too: H3's sealed baseline is in none of it.
        assert leak_test(scenario.home, SLUG, now=AFTER_H1, private_key=scenario.private_key, extra=messages).ok
    finally:
        db.close()


@given(st.floats(0, 100), st.floats(0, 100))
def test_the_corpus_verdict_is_the_evidence_balance(supports: float, contradicts: float) -> None:
    verdict = Balance(supports=supports, contradicts=contradicts).corpus_verdict()
    flipped = Balance(supports=contradicts, contradicts=supports).corpus_verdict()
    assert {verdict, flipped} == ({"none"} if supports == contradicts else {"true", "false"})
    assert (verdict == "true") == (supports > contradicts)

"""The local Commons (claims, idempotent messages, outage windows) and the notifier: the messages of
design §6 and §9 come from what landed in the ledger, exactly once, whoever did the landing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.edits import edit
from tests.support.service_harness import distinct_findings, live_leaf
from tests.support.world import NOW, SLUG, ScriptedAgent, World
from verifier.agentkit.objects import link_file
from verifier.commons.adapter import ClaimConflict, Outage, OutgoingMessage
from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.formats.entries import ResolveEntry
from verifier.formats.leaf import parse_leaf
from verifier.messages.notifier import Notifier
from verifier.pipeline.digest import digest
from verifier.pipeline.ledger import ledger_head, read_chain
from verifier.pipeline.submit import Submission, land_group, prepare
from verifier.pipeline.writer import ProjectWriter
from verifier.service.config import ServiceConfig
from verifier.service.core import Service
from verifier.service.journal import Journal
from verifier.service.outage import Heartbeat
from verifier.service.recovery import recover
from verifier.state.layout import deltas_path, leaf_path

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def commons(world: World) -> Iterator[LocalCommons]:
    db = Database(world.home.layout.commons)
    yield LocalCommons(db, world.home.identities)
    db.close()


@pytest.fixture
def notifier(world: World, commons: LocalCommons) -> Notifier:
    made = Notifier(world.home, commons, commons.db, digest)
    made.catch_up(SLUG, now=NOW)  # a project seen for the first time is read silently
    return made


def kinds(commons: LocalCommons, agent: str) -> list[str]:
    return [m.kind for m in commons.inbox(agent)]


def test_claims_are_exclusive_until_they_expire(commons: LocalCommons) -> None:
    claim = commons.claim("p", "leaf-1", "a", until=T0 + timedelta(minutes=30), now=T0)
    assert claim.agent == "a"
    with pytest.raises(ClaimConflict) as refused:
        commons.claim("p", "leaf-1", "b", until=T0 + timedelta(minutes=30), now=T0 + timedelta(minutes=1))
    assert refused.value.holder == "a" and "claimed by a" in str(refused.value)
    # The holder may renew; after expiry anyone may claim, and the old holder cannot release it.
    commons.claim("p", "leaf-1", "a", until=T0 + timedelta(minutes=40), now=T0 + timedelta(minutes=2))
    later = T0 + timedelta(minutes=41)
    assert commons.claims("p", now=later) == {}
    assert commons.claim("p", "leaf-1", "b", until=later + timedelta(minutes=5), now=later).agent == "b"
    assert not commons.release("p", "leaf-1", "a", now=later)
    assert commons.release("p", "leaf-1", "b", now=later)


def test_claims_keep_the_time_an_outage_took(commons: LocalCommons) -> None:
    commons.claim("p", "leaf-1", "a", until=T0 + timedelta(minutes=30), now=T0)
    commons.claim("p", "leaf-2", "a", until=T0 + timedelta(minutes=5), now=T0)
    outage = Outage(T0 + timedelta(minutes=10), T0 + timedelta(minutes=25))
    assert commons.extend_claims(outage) == 1  # the claim that had expired before the outage stays expired
    commons.record_outage(outage)
    live = commons.claims("p", now=T0 + timedelta(minutes=40))
    assert live["leaf-1"].expires_at == T0 + timedelta(minutes=45)
    assert commons.outages() == [outage]


def test_posting_is_idempotent_by_key(commons: LocalCommons) -> None:
    message = OutgoingMessage("k1", "question", "why?", "p", "leaf-1", None, sender="a")
    assert commons.post([message], now=T0) == 1
    assert commons.post([message, OutgoingMessage("k2", "new_leaf", "hi", "p", "leaf-1", "a")], now=T0) == 1
    assert [m.body for m in commons.thread("p", "leaf-1")] == ["why?"]
    inbox = commons.inbox("a")
    assert [m.kind for m in inbox] == ["new_leaf"] and commons.inbox("a", after=inbox[0].id) == []


def test_outcome_and_first_minute_message(world: World, commons: LocalCommons, notifier: Notifier,
                                          second_agent: Callable[[], ScriptedAgent]) -> None:
    world.leaf("extract-1")
    verdict = world.submit(world.extract("extract-1"))
    assert verdict.outcome == "accepted"
    assert notifier.catch_up(SLUG, now=NOW) == 3  # the outcome, the first-minute message and its operator's copy
    (outcome,) = commons.thread(SLUG, "extract-1")
    assert outcome.body.startswith(f"ACCEPTED {SLUG}/extract-1 by agent-a (op-a)")
    (first,) = commons.inbox("agent-a")
    assert first.kind == "first_minute"
    assert first.data["findings_added"] == len(world.findings("extract-1"))
    assert first.data["first_on_source"] is True and first.data["digest"]["project"] == SLUG
    (copy,) = commons.inbox("op-a")  # issue 10: the operator is told too
    assert copy.kind == "first_minute" and copy.data["agent"] == "agent-a" and "agent-a" in copy.body
    # A second operator's first acceptance on the same source: a first-minute message, not first on it.
    other = second_agent()
    world.leaf("extract-2")
    files = distinct_findings(other, "extract-2", 40)
    assert world.submit(world.creation("extract-2", files, agent=other)).outcome == "accepted"
    notifier.catch_up(SLUG, now=NOW)
    (theirs,) = commons.inbox("agent-b")
    assert theirs.kind == "first_minute" and theirs.data["first_on_source"] is False
    # The same operator again: no second first-minute message; nothing is posted twice.
    world.leaf("extract-3")
    world.submit(world.creation("extract-3", distinct_findings(world.agent, "extract-3", 50)))
    notifier.catch_up(SLUG, now=NOW)
    assert kinds(commons, "agent-a").count("first_minute") == 1
    assert notifier.catch_up(SLUG, now=NOW) == 0


def test_secret_in_trace_tells_the_agent(world: World, commons: LocalCommons, notifier: Notifier) -> None:
    world.leaf("extract-1")
    good = world.extract("extract-1")
    secret = "AKIA" + "IOSFODNN7EXAMPLX"
    leak = {"ts": "2026-11-30T12:00:00Z", "type": "tool_result", "content": f"aws_access_key_id={secret}"}
    events = good.bundle["events.jsonl"] + json.dumps(leak).encode() + b"\n"
    verdict = world.submit(Submission(SLUG, "extract-1", good.patch, {**good.bundle, "events.jsonl": events},
                                      good.token))
    assert verdict.rejections[0].code == "secret_in_trace"
    notifier.catch_up(SLUG, now=NOW)
    (told,) = commons.inbox("agent-a")
    assert told.kind == "secret" and secret not in told.body and secret not in json.dumps(told.data)


def _two_links(world: World) -> tuple[list[str], dict[str, bytes]]:
    """agent-a's accepted findings, and a link leaf's files linking the first two to H1 (one
    supporting, one contradicting), for another agent to submit."""
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    findings = sorted(path.rsplit("/", 1)[1][:-5] for path in world.findings("extract-1"))
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    links = dict(link_file(finding_id=finding_id, hypothesis_id="H1", revision=1, stance=stance,
                           rationale=f"{stance} because the figures say so", leaf_kind="link", leaf_id="link-1")
                 for finding_id, stance in zip(findings[:2], ["supports", "contradicts"], strict=True))
    return findings, links


def test_linked_finding_and_hypothesis_moves_reach_their_authors(
        world: World, commons: LocalCommons, notifier: Notifier, second_agent: Callable[[], ScriptedAgent]) -> None:
    findings, links = _two_links(world)
    other = second_agent()
    assert world.submit(world.creation("link-1", links, agent=other)).outcome == "accepted"
    notifier.catch_up(SLUG, now=NOW)
    linked = [m for m in commons.inbox("agent-a") if m.kind == "finding_linked"]
    assert sorted(m.data["finding_id"] for m in linked) == findings[:2]
    assert all(m.data["use_before"] == 0.0 and m.data["use_after"] == 1.0 for m in linked)  # cross-operator: 1.0
    assert "use score moved 0 -> 1" in linked[0].body
    # Their own link: no trigger; and a link leaf is no first-minute leaf (§9.1 counts findings added).
    assert [m.kind for m in commons.inbox("agent-b")] == []

    # A person revises H1: everyone with links or findings on it hears about it.
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # the demo project's steward
    text = (world.repo.view(world.tip()).read("hypotheses/H1.md") or b"").decode()
    revised = text.replace("more robotics teams pay", "most robotics teams pay").replace("revision: 1", "revision: 2")
    assert world.submit(edit(world, token, {"hypotheses/H1.md": revised.encode()})).outcome == "accepted"
    notifier.catch_up(SLUG, now=NOW)
    for agent in ("agent-a", "agent-b"):
        (moved,) = [m for m in commons.inbox(agent) if m.kind == "hypothesis_moved"]
        assert moved.data["hypothesis_id"] == "H1" and moved.data["before"]["revision"] == 1
        assert moved.data["after"]["revision"] == 2 and "revision 1 -> 2" in moved.body


def test_a_link_landed_in_a_group_tells_the_findings_author_of_its_own_use_move(
        world: World, commons: LocalCommons, notifier: Notifier, second_agent: Callable[[], ScriptedAgent]) -> None:
    findings, links = _two_links(world)
    other = second_agent()
    world.leaf("extract-2")
    group = [world.creation("link-1", links, agent=other),
             world.creation("extract-2", distinct_findings(world.agent, "extract-2", 3))]
    verdicts = land_group(world.home, SLUG, [prepare(world.home, s, now=NOW, fetcher=world.fetcher) for s in group])
    assert [getattr(v, "outcome", v) for v in verdicts] == ["accepted", "accepted"]
    notifier.catch_up(SLUG, now=NOW)
    linked = [m for m in commons.inbox("agent-a") if m.kind == "finding_linked"]
    assert sorted(m.data["finding_id"] for m in linked) == findings[:2]
    for message in linked:  # each told with the link's own move and its own author, not the group's last
        assert message.data["by"] == other.handle
        assert (message.data["use_before"], message.data["use_after"]) == (0.0, 1.0)
    assert [m for m in commons.inbox("agent-a") if m.kind == "use_score"] == []


def test_new_leaf_of_the_kind_you_do_best(world: World, commons: LocalCommons, notifier: Notifier) -> None:
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    notifier.catch_up(SLUG, now=NOW)
    world.leaf("extract-2")
    world.leaf("link-9", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    notifier.catch_up(SLUG, now=NOW)
    (new,) = [m for m in commons.inbox("agent-a") if m.kind == "new_leaf"]
    assert new.leaf_id == "extract-2" and new.data == {"leaf_id": "extract-2", "kind": "extract", "accepted": 1,
                                                       "attempts": 1}


def test_catch_up_after_a_crash_between_posting_and_the_cursor(world: World, commons: LocalCommons,
                                                               notifier: Notifier) -> None:
    world.leaf("extract-1")
    world.submit(world.extract("extract-1"))

    def die(*_args: object) -> None:
        raise KeyboardInterrupt("killed after posting, before the cursor moved")

    advance, notifier._advance = notifier._advance, die  # type: ignore[method-assign,assignment]
    with pytest.raises(KeyboardInterrupt):
        notifier.catch_up(SLUG, now=NOW)
    posted = commons.db.read("SELECT COUNT(*) AS n FROM messages")[0]["n"]
    assert posted == 3
    notifier._advance = advance  # type: ignore[method-assign]
    assert notifier.catch_up(SLUG, now=NOW) == 0
    assert commons.db.read("SELECT COUNT(*) AS n FROM messages")[0]["n"] == posted


def test_a_crash_verdict_returns_the_leaf_to_the_pool(world: World) -> None:
    service = Service(ServiceConfig(home=world.home.root))
    service.notifier.catch_up(SLUG, now=NOW)  # as start-up does: the past is read silently
    live_leaf(world.home, "crashy-1")
    actor = world.home.identities.authenticate(world.agent.token)
    service.claim(actor, SLUG, "crashy-1", {})
    submission = world.creation("crashy-1", distinct_findings(world.agent, "crashy-1", 0))

    armed = ["ledger"]

    def boom(step: str) -> None:
        if step in armed:
            armed.remove(step)  # once: the crash row itself must land
            raise RuntimeError("injected")

    service.home.crash_point = boom  # the crash point every writer of this home is handed
    answer = service.submit(actor, world.agent.token, SLUG, "crashy-1", submission.bundle, submission.patch, None)
    assert answer.body["verdict"]["outcome"] == "crash"
    assert service.commons.claims(SLUG, now=datetime.now(UTC)) == {}
    thread = service.thread(SLUG, "crashy-1", 0, 100)["messages"]  # waits for the pass after the answer
    assert [m["body"].split(" ")[0] for m in thread] == ["CRASH"]
    service.close(60)


def test_an_outage_extends_open_leaves_and_claims(world: World) -> None:
    db = Database(world.home.layout.commons)
    commons = LocalCommons(db, world.home.identities)
    now = datetime.now(UTC).replace(microsecond=0)
    open_leaf = live_leaf(world.home, "open-1", expires_in=timedelta(minutes=10))
    live_leaf(world.home, "gone-1", expires_in=timedelta(seconds=1))
    commons.claim(SLUG, "open-1", "agent-a", until=now + timedelta(minutes=5), now=now)
    heartbeat = Heartbeat(db)
    heartbeat.beat(now - timedelta(minutes=2))
    later = now + timedelta(seconds=5)
    report = recover(world.home, Journal(db), commons, Notifier(world.home, commons, db, digest), heartbeat,
                     now=later, outage_min_s=60)
    assert report.outage is not None and report.outage.duration == timedelta(minutes=2, seconds=5)
    assert report.leaves_extended == {SLUG: ["gone-1", "open-1"]}  # both were open when it began
    extended = parse_leaf(world.repo.view(world.tip()).read(leaf_path("open-1")) or b"", "open-1")
    assert extended.expires_at == open_leaf.expires_at + report.outage.duration
    last = [row for _, row in read_chain(world.repo.view(world.tip()))][-1]
    assert (last.action, last.actor) == ("leaf", "verifier") and "outage" in last.description
    assert commons.claims(SLUG, now=later)["open-1"].expires_at == now + timedelta(minutes=5) + report.outage.duration
    # A short restart is no outage.
    again = recover(world.home, Journal(db), commons, Notifier(world.home, commons, db, digest), heartbeat,
                    now=later + timedelta(seconds=3), outage_min_s=60)
    assert again.outage is None and again.leaves_extended == {}
    db.close()


def test_the_resolvers_credit_deltas_reach_each_operators_agents(
        world: World, commons: LocalCommons, notifier: Notifier, second_agent: Callable[[], ScriptedAgent]) -> None:
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    other = second_agent()
    world.leaf("extract-2")
    assert world.submit(world.creation("extract-2", distinct_findings(other, "extract-2", 40), agent=other)).outcome \
        == "accepted"
    notifier.catch_up(SLUG, now=NOW)
    # What the Resolver lands (roles.resolver): the hypothesis resolved, and its messages per operator.
    repo, tip = world.repo, world.tip()
    seq = ledger_head(repo.view(tip))[0]
    text = (repo.view(tip).read("hypotheses/H1.md") or b"").decode()
    deltas = {"version": 1, "project": SLUG, "seq": seq, "hypothesis_id": "H1", "outcome": "true",
              "previous_outcome": None, "deltas": [
                  {"operator": "op-a", "hypothesis_id": "H1", "finding_credit": 1, "message": "H1 resolved true. "
                   "Your findings: +1 (1 finding)."},
                  {"operator": "op-b", "hypothesis_id": "H1", "finding_credit": 0, "message": "H1 resolved true."}]}
    with ProjectWriter.open(world.home, SLUG) as writer:
        writer.land(ResolveEntry(at=NOW, kind="verdict", actor="resolver", actor_type="resolver",
                                 description="H1 resolved true"), bookkeeping={
            deltas_path(seq): json.dumps(deltas).encode(),
            "hypotheses/H1.md": text.replace("status: active", "status: resolved").encode()})
    notifier.catch_up(SLUG, now=NOW)
    for agent, operator, sentence in (("agent-a", "op-a", "Your findings: +1"), ("agent-b", "op-b", "resolved true")):
        (moved,) = [m for m in commons.inbox(agent) if m.kind == "hypothesis_moved"]
        assert sentence in moved.body and moved.data["credit_delta"]["operator"] == operator
        assert moved.data["after"]["status"] == "resolved"

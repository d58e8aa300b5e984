"""Property tests for use scores: independent of landing order, and a revert followed by a
revert of the revert restores every score byte for byte; on the score book alone, and (issue 10)
with `reject` reviews and cascaded reverts through the real landing path."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from random import Random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.templates import built
from tests.support.world import FIXTURES, NOW, SLUG, World, copied_world, make_home
from verifier.agentkit.objects import link_file, review_file
from verifier.agentkit.scripted import ScriptedAgent
from verifier.audits.replay import replay
from verifier.pipeline.ledger import read_chain
from verifier.scoring import use, useindex
from verifier.scoring.use import CROSS_OPERATOR, SAME_OPERATOR, ObjectFacts, ScoreBook
from verifier.state.layout import USE_SCORES
from verifier.store.fetcher import OfflineFetcher
from verifier.writes.project import init_project
from verifier.writes.revert import revert

OPERATORS = ["op-a", "op-b", "op-c"]


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[ObjectFacts], list[ObjectFacts], list[ObjectFacts]]:
    findings = [ObjectFacts("finding", f"fnd_{n:016x}", draw(st.sampled_from(OPERATORS)))
                for n in range(draw(st.integers(1, 8)))]
    links = []
    for n in range(draw(st.integers(0, 12))):
        finding = draw(st.sampled_from(findings))
        links.append(ObjectFacts("link", f"lnk_{n:016x}", draw(st.sampled_from(OPERATORS)),
                                 finding_id=finding.object_id, hypothesis_id=draw(st.sampled_from(["H1", "H2"]))))
    documents = []
    citable = [f.object_id for f in findings] + [link.object_id for link in links]
    for n in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["plan", "report"]))
        cites = tuple(sorted(set(draw(st.lists(st.sampled_from(citable), max_size=4)))))
        picked = draw(st.lists(st.sampled_from(citable), max_size=3))
        introduced = tuple(sorted(set(picked))) if kind == "report" else ()
        documents.append(ObjectFacts(kind, f"{kind}-{n:03d}", draw(st.sampled_from(OPERATORS)), cites=cites,
                                     introduced=introduced))
    return findings, links, documents


def land_all(objects: list[ObjectFacts]) -> dict[str, bytes | None]:
    book = ScoreBook(lambda _path: None)
    for facts in objects:
        book.add(facts)
    book.dirty = set(book.shards)
    book.summary_dirty = True
    return book.writes()


def use_of(book: ScoreBook, object_id: str) -> float:
    entry = book.entry(object_id)
    assert entry is not None
    return float(entry.u)


@settings(max_examples=150, deadline=None)
@given(corpora(), st.randoms(use_true_random=False))
def test_scores_do_not_depend_on_landing_order(corpus, rng) -> None:  # type: ignore[no-untyped-def]
    findings, links, documents = corpus
    first = land_all(findings + links + documents)
    shuffled_links, shuffled_findings, shuffled_docs = list(links), list(findings), list(documents)
    rng.shuffle(shuffled_links)
    rng.shuffle(shuffled_findings)
    # Documents whose citations are already in place are independent of each other.
    rng.shuffle(shuffled_docs)
    second = land_all(shuffled_findings + shuffled_links + shuffled_docs)
    assert first == second


@settings(max_examples=150, deadline=None)
@given(corpora(), st.data())
def test_revert_then_revert_of_revert_restores(corpus, data) -> None:  # type: ignore[no-untyped-def]
    findings, links, documents = corpus
    everything = findings + links + documents
    book = ScoreBook(lambda _path: None)
    for facts in everything:
        book.add(facts)
    book.dirty = set(book.shards)
    book.summary_dirty = True
    before = json.dumps({k: v.decode() if v else None for k, v in book.writes().items()}, sort_keys=True)
    contribution = data.draw(st.lists(st.sampled_from(everything), min_size=1, max_size=5, unique=True))
    for facts in contribution:
        book.remove(facts.object_id)
    for facts in contribution:
        book.add(facts)
    book.dirty = set(book.shards)
    after = json.dumps({k: v.decode() if v else None for k, v in book.writes().items()}, sort_keys=True)
    assert before == after


@given(corpora())
def test_finding_use_is_the_sum_of_link_weights(corpus) -> None:  # type: ignore[no-untyped-def]
    findings, links, _ = corpus
    book = ScoreBook(lambda _path: None)
    for facts in findings + links:
        book.add(facts)
    operator_of = {f.object_id: f.operator for f in findings}
    for finding in findings:
        expected = sum(CROSS_OPERATOR if link.operator != operator_of[finding.object_id] else SAME_OPERATOR
                       for link in links if link.finding_id == finding.object_id)
        entry = book.entry(finding.object_id)
        assert entry is not None and entry.u == expected
    for hypothesis in ("H1", "H2"):
        expected_h = sum(use_of(book, link.object_id) for link in links
                         if link.hypothesis_id == hypothesis)
        assert book.summary.hypotheses.get(hypothesis, 0.0) == expected_h


# --- reviews (issue 10): a standing `reject` withdraws its object's use --------------------------


@st.composite
def reviewed_corpora(draw: st.DrawFn) -> tuple[list[ObjectFacts], list[ObjectFacts]]:
    """A corpus and `reject` reviews of some of its findings and links (several may reject one)."""
    findings, links, documents = draw(corpora())
    targets = [f.object_id for f in findings] + [link.object_id for link in links]
    reviews = [ObjectFacts("review", f"rev_{n:016x}", draw(st.sampled_from(OPERATORS)),
                           rejects=draw(st.sampled_from(targets)))
               for n in range(draw(st.integers(0, 4)))]
    return findings + links + documents, reviews


def book_bytes(book: ScoreBook) -> str:
    book.dirty = set(book.shards)
    book.summary_dirty = True
    return json.dumps({k: v.decode() if v else None for k, v in book.writes().items()}, sort_keys=True)


@settings(max_examples=150, deadline=None)
@given(reviewed_corpora(), st.randoms(use_true_random=False))
def test_rejections_do_not_depend_on_landing_order(corpus, rng) -> None:  # type: ignore[no-untyped-def]
    objects, reviews = corpus
    first = land_all(objects + reviews)
    shuffled = list(reviews)
    rng.shuffle(shuffled)
    assert land_all(objects + shuffled) == first


@settings(max_examples=150, deadline=None)
@given(reviewed_corpora(), st.data())
def test_revert_of_objects_and_reviews_then_its_revert_restores(corpus, data) -> None:  # type: ignore[no-untyped-def]
    objects, reviews = corpus
    book = ScoreBook(lambda _path: None)
    for facts in objects + reviews:
        book.add(facts)
    before = book_bytes(book)
    contribution = data.draw(st.lists(st.sampled_from(objects + reviews), min_size=1, max_size=5, unique=True))
    for facts in contribution:
        book.remove(facts.object_id)
    for facts in sorted(contribution, key=lambda f: f.type == "review"):  # reviews come back after their objects
        book.add(facts)
    assert book_bytes(book) == before


@given(reviewed_corpora())
def test_a_rejected_object_counts_nowhere(corpus) -> None:  # type: ignore[no-untyped-def]
    objects, reviews = corpus
    book = ScoreBook(lambda _path: None)
    for facts in objects + reviews:
        book.add(facts)
    rejected = {review.rejects for review in reviews}
    for facts in objects:
        entry = book.entry(facts.object_id)
        assert entry is not None
        assert bool(entry.rejected_by) == (facts.object_id in rejected)
        if facts.object_id in rejected:
            assert entry.gave is None  # it lends nothing while rejected
    # U(H) sums only the links that are not rejected.
    for hypothesis in ("H1", "H2"):
        expected = sum(use_of(book, f.object_id) for f in objects
                       if f.type == "link" and f.hypothesis_id == hypothesis and f.object_id not in rejected)
        assert book.summary.hypotheses.get(hypothesis, 0.0) == expected


# --- through the real landing path: links, reject reviews, cascaded reverts ----------------------


@dataclass(frozen=True)
class Step:
    """One landing of the drawn history: a link by agent `by`, or a reject review of link `of`."""

    kind: str  # "link" | "review"
    index: int  # the link's number (a review names the link it rejects)
    finding: int = 0
    by: str = "agent-a"


@st.composite
def histories(draw: st.DrawFn) -> list[Step]:
    findings = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))  # one link per finding
    links = [Step("link", n, finding, draw(st.sampled_from(["agent-a", "agent-b"])))
             for n, finding in enumerate(findings)]
    reviewed = draw(st.lists(st.sampled_from(range(len(links))), max_size=2, unique=True))
    reviews = [Step("review", n, by="agent-b" if links[n].by == "agent-a" else "agent-a") for n in reviewed]
    return links + reviews


Agents = dict[str, ScriptedAgent]


def _extracted_world(root: Path) -> tuple[World, Agents]:
    home = make_home(root / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    agents = {handle: ScriptedAgent(home, handle, op, home.identities.add(handle, op, "agent", NOW))
              for handle, op in (("agent-a", "op-a"), ("agent-b", "op-b"))}
    world = World(home, agents["agent-a"], OfflineFetcher())
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    return world, agents


def fresh_world(root: Path) -> tuple[World, Agents]:
    """The project after its first extract, agents a and b registered: built once per worker,
    copied under `root` for each drawn history."""
    template, agents = built("use-scores-extracted", _extracted_world)
    world = copied_world(template, root)
    return world, {handle: replace(agent, home=world.home) for handle, agent in agents.items()}


def play(world: World, agents: Agents, steps: list[Step]) -> dict[int, str]:
    """Land the steps in order; returns the accepted steps' contribution commits (reviews at 100+)."""
    findings = sorted(path.rsplit("/", 1)[1][:-5] for path in world.findings("extract-1"))
    paths = {step.index: link_file(finding_id=findings[step.finding], hypothesis_id="H1", revision=1,
                                   stance="contradicts", rationale="Against.", leaf_kind="link",
                                   leaf_id=f"link-{step.index}") for step in steps if step.kind == "link"}
    commits: dict[int, str] = {}
    for step in steps:
        if step.kind == "link":
            leaf_id = f"link-{step.index}"
            world.leaf(leaf_id, "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
            path, data = paths[step.index]
            verdict = world.submit(world.creation(leaf_id, {path: data}, agent=agents[step.by]))
        else:
            leaf_id = f"review-{step.index}"
            path = paths[step.index][0]
            if world.repo.view(world.tip()).read(path) is None:
                continue
            world.leaf(leaf_id, "review", source_id=None, object_path=path)
            review = review_file(object_path=path, object_id=path.rsplit("/", 1)[1][:-5], decision="reject",
                                 reason="Out of context.", leaf_id=leaf_id)
            verdict = world.submit(world.creation(leaf_id, dict([review]), agent=agents[step.by]))
        if verdict.outcome == "accepted" and verdict.commit:
            commits[step.index if step.kind == "link" else 100 + step.index] = verdict.commit
    return commits


def scores_of(world: World) -> dict[str, bytes | None]:
    view = world.repo.view(world.tip())
    return {path: view.read(path) for path in sorted(view.walk("scores"))}


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(histories(), st.randoms(use_true_random=False))
def test_landed_scores_do_not_depend_on_order_with_reviews(steps: list[Step], rng: Random) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        first, agents = fresh_world(Path(tmp) / "one")
        play(first, agents, steps)
        links = [s for s in steps if s.kind == "link"]
        reviews = [s for s in steps if s.kind == "review"]
        rng.shuffle(links)
        rng.shuffle(reviews)
        second, agents = fresh_world(Path(tmp) / "two")
        play(second, agents, links + reviews)
        assert scores_of(first) == scores_of(second)
        assert replay(first.repo).ok and replay(second.repo).ok


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(histories(), st.data())
def test_a_cascaded_revert_and_its_revert_restore_the_landed_scores(steps: list[Step], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world, agents = fresh_world(Path(tmp) / "home")
        commits = play(world, agents, steps)
        extract = next(row.commit for _, row in read_chain(world.repo.view(world.tip()))
                       if row.leaf_id == "extract-1" and row.commit)
        assert extract is not None
        target = data.draw(st.sampled_from([*sorted(commits.values()), extract]))
        before = scores_of(world)
        person = world.home.identities.authenticate(world.home.identities.add("ericxtang", "ericxtang", "human", NOW))
        landed = revert(world.home, SLUG, person, target, reason="Check the cascade.", now=NOW)
        if target == extract:  # every link and review rested on the extract's findings
            assert json.loads(world.repo.view(world.tip()).read(USE_SCORES) or b"{}")["hypotheses"].get("H1", 0.0) \
                == 0.0
        revert(world.home, SLUG, person, landed.commit or "", reason="Restore it.", now=NOW)
        assert scores_of(world) == before
        assert replay(world.repo).ok


def _landed(tree: dict[str, bytes], events: list[tuple[str, ObjectFacts, int]]) -> dict[str, bytes]:
    """Each event its own landing, in its own book over the tree the last one left."""
    tree = dict(tree)
    for action, facts, objects in events:
        book = ScoreBook(tree.get)
        if action == "remove":
            book.remove(facts.object_id)
        else:
            book.add(facts)
        book.record_submission(facts.operator, objects=objects, tokens=None if objects % 2 else objects * 10,
                               usd=None if objects % 3 else objects / 7)
        for path, data in book.writes().items():
            if data is None:
                tree.pop(path, None)
            else:
                tree[path] = data
    return tree


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.lists(st.tuples(st.sampled_from(["add", "add", "remove"]), st.integers(0, 99), st.integers(0, 5)),
                           min_size=1, max_size=8))
def test_landings_score_the_same_with_or_without_what_the_process_kept(
        corpus: tuple[list[ObjectFacts], list[ObjectFacts], list[ObjectFacts]],
        picks: list[tuple[str, int, int]]) -> None:
    # The process keeps the summaries and index files it parsed or wrote (by blob id); landing
    # after landing on the trees it made gives the bytes a process that keeps nothing gives.
    objects = [*corpus[0], *corpus[1], *corpus[2]]
    events = [(action, objects[n % len(objects)], count) for action, n, count in picks]
    kept = _landed({}, events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(use, "SUMMARIES_KEPT", 0)
        patch.setattr(useindex, "KNOWN_BYTES", 0)
        assert _landed({}, events) == kept


def test_two_landings_on_one_tree_each_count_only_their_own_submission() -> None:
    tree = _landed({}, [("add", ObjectFacts("finding", "fnd_" + "a" * 16, "op-a"), 1)])
    before = json.loads(tree[USE_SCORES])["operators"]
    first, second = ScoreBook(tree.get), ScoreBook(tree.get)
    first.record_submission("op-a", objects=5, tokens=None, usd=None)
    first.writes()  # kept by the process, by its blob id, for a landing on the tree it makes
    second.record_submission("op-a", objects=2, tokens=None, usd=None)
    second.record_submission("op-b", objects=3, tokens=None, usd=None)
    operators = json.loads(second.writes()[USE_SCORES] or b"{}")["operators"]
    assert operators["op-a"]["accepted_objects"] == before["op-a"]["accepted_objects"] + 2  # not the first's 5
    assert operators["op-b"]["accepted_objects"] == 3

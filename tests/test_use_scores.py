"""Property tests for use scores: independent of landing order, and a revert followed by a
revert of the revert restores every score byte for byte."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.scoring.use import CROSS_OPERATOR, SAME_OPERATOR, ObjectFacts, ScoreBook

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
        assert entry is not None and entry["u"] == expected
    for hypothesis in ("H1", "H2"):
        expected_h = sum(book.entry(link.object_id)["u"] for link in links  # type: ignore[index]
                         if link.hypothesis_id == hypothesis)
        assert book.summary["hypotheses"].get(hypothesis, 0.0) == expected_h

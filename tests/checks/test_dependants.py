"""The cascade of a revert, on plain data (verifier.checks.dependants): what rests on a withdrawn
source, finding or link goes with it, held copies too; documents block; the ledger line is bounded."""

from __future__ import annotations

from verifier.agentkit.objects import finding_file, link_file, review_file
from verifier.checks.dependants import Cascade, cascade, withdrawn_note
from verifier.state.layout import finding_path, link_path, queue_path, source_record_path
from verifier.state.view import DictTree

SOURCE = "src_" + "a" * 16
OTHER = "src_" + "b" * 16
TEXT = "Seven of eleven teams pay for verification. Two pay for rollouts."


def corpus() -> tuple[dict[str, bytes], dict[str, str]]:
    files: dict[str, bytes] = {source_record_path(SOURCE): b"record\n", source_record_path(OTHER): b"record\n"}
    ids: dict[str, str] = {}
    for name, source, excerpt in (("f1", SOURCE, "Seven of eleven teams pay for verification."),
                                  ("f2", OTHER, "Two pay for rollouts.")):
        path, data = finding_file(source_id=source, source_text=TEXT, excerpt=excerpt, statement="S.",
                                  limitation="L.", leaf_id="extract-1")
        files[path] = data
        ids[name] = path.rsplit("/", 1)[1][:-5]
    for name, finding in (("l1", ids["f1"]), ("l2", ids["f2"])):
        path, data = link_file(finding_id=finding, hypothesis_id="H1", revision=1, stance="supports",
                               rationale="R.", leaf_kind="link", leaf_id="link-1")
        files[path] = data
        ids[name] = path.rsplit("/", 1)[1][:-5]
    held_path, held = link_file(finding_id=ids["f1"], hypothesis_id="H2", revision=1, stance="supports",
                                rationale="R.", leaf_kind="link", leaf_id="link-2")
    files[queue_path("links", held_path)] = held
    ids["held"] = held_path.rsplit("/", 1)[1][:-5]
    path, data = review_file(object_path=link_path(ids["l1"]), object_id=ids["l1"], decision="accept",
                             reason="Fine.", leaf_id="review-1")
    files[path] = data
    ids["r1"] = path.rsplit("/", 1)[1][:-5]
    return files, ids


def test_withdrawing_a_source_pulls_its_findings_their_links_and_reviews_and_held_copies() -> None:
    files, ids = corpus()
    result = cascade(DictTree(files), {source_record_path(SOURCE): None})
    assert result.object_ids == sorted([ids["f1"], ids["l1"], ids["held"], ids["r1"]])
    assert result.blockers == []
    untouched = cascade(DictTree(files), {finding_path(ids["f2"]): None})
    assert untouched.object_ids == [ids["l2"]]


def test_a_document_citing_a_withdrawn_object_blocks_the_revert() -> None:
    files, ids = corpus()
    files["reports/r-one.md"] = (f"---\nreport_id: r-one\ntitle: T\ncites: [{ids['l1']}]\nauthor: steward\n"
                                 "created_at: '2026-11-30T12:00:00Z'\n---\nBody.\n").encode()
    result = cascade(DictTree(files), {finding_path(ids["f1"]): None})
    assert result.blockers == [f"reports/r-one.md cites {ids['l1']}"]


def test_nothing_rests_on_an_addition() -> None:
    files, ids = corpus()
    assert cascade(DictTree(files), {finding_path(ids["f1"]): files[finding_path(ids["f1"])]}) == Cascade()


def test_the_ledger_line_names_at_most_forty_ids() -> None:
    many = Cascade({link_path(f"lnk_{n:016x}"): None for n in range(100)})
    line = withdrawn_note(many, line=True)
    assert line.startswith("; withdrew 100 dependent objects: ") and "(+60 more" in line and len(line) < 1200
    assert withdrawn_note(many).count("\n- lnk_") == 100

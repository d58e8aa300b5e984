"""The read model (verifier.state.project) and the typed files under it: lazy enough that one leaf
is read without the corpus, and typed without moving a byte of what the verifier writes."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.support.state import NOW, ReadLog, contract_bytes
from verifier.errors import FormatError
from verifier.formats.leaf import parse_leaf_result
from verifier.formats.ledger import LedgerRow, LedgerSubject, ledger_subject, parse_ledger_subject, row_line
from verifier.formats.usescores import UseSummary, dump_shard, parse_shard
from verifier.scoring.use import ObjectFacts, ScoreBook
from verifier.scoring.useindex import MARKER, dump_index_file, parse_index_file
from verifier.state.layout import (
    USE_INDEX,
    USE_INDEX_ROOT,
    USE_SCORES,
    finding_path,
    leaf_path,
    leaf_result_path,
    queue_path,
    segment_path,
)
from verifier.state.project import ProjectView

SOURCE = "src_ab00000000000000"
COMMIT = "c" * 40


def _result_bytes(leaf_id: str) -> bytes:
    """A result file as the verifier has always written it (json.dumps, sorted, indent 2)."""
    body = {"leaf_id": leaf_id, "outcome": "accepted", "commit": COMMIT, "actor": "ann", "operator": "op-a",
            "trace_id": None, "at": "2026-12-01T11:00:00Z"}
    return json.dumps(body, sort_keys=True, indent=2).encode() + b"\n"


def test_open_leaves_are_read_without_touching_the_corpus_or_closed_contracts() -> None:
    files = {leaf_path("extract-1"): contract_bytes("extract-1", SOURCE),
             leaf_path("extract-2"): contract_bytes("extract-2", SOURCE, expires_in=-timedelta(hours=1)),
             leaf_path("extract-3"): contract_bytes("extract-3", SOURCE),
             leaf_result_path("extract-3"): _result_bytes("extract-3")}
    # A corpus that would fail to parse: reading any of it would raise.
    files.update({finding_path(f"fnd_{n:016x}"): b"finding_id: [" for n in range(2000)})
    tree = ReadLog(files)
    view = ProjectView(tree)
    assert [leaf.leaf_id for leaf in view.open_leaves(NOW)] == ["extract-1"]
    assert not any(path.startswith("findings/") for path in tree.reads)
    assert leaf_path("extract-3") not in tree.reads  # its result file alone closed it
    statuses = {leaf_id: leaf.status(NOW) for leaf_id, leaf in view.leaves.items()}
    assert statuses == {"extract-1": "open", "extract-2": "expired", "extract-3": "accepted"}


def test_a_leaf_asked_for_by_id_raises_when_its_contract_is_unreadable() -> None:
    view = ProjectView(ReadLog({leaf_path("extract-9"): b"leaf_id: ["}))
    with pytest.raises(FormatError):
        view.leaf("extract-9")
    assert view.leaves == {}  # the mapping over the folder leaves it out
    assert view.leaf("extract-404") is None


def test_a_leaf_result_reads_back_to_the_bytes_the_verifier_writes() -> None:
    data = _result_bytes("extract-3")
    result = parse_leaf_result(data, leaf_result_path("extract-3"))
    assert result.operator == "op-a" and result.commit == COMMIT
    assert result.dump() == data


def test_a_leaf_result_with_a_field_missing_is_refused_naming_the_file() -> None:
    with pytest.raises(FormatError, match=r"result\.json"):
        parse_leaf_result(b'{"leaf_id": "extract-3", "outcome": "accepted"}', leaf_result_path("extract-3"))


def test_the_use_score_files_round_trip_through_their_models_byte_for_byte() -> None:
    book = ScoreBook(lambda _path: None)
    finding, link, review = "fnd_ab00000000000001", "lnk_ab00000000000002", "rev_ab00000000000003"
    book.add(ObjectFacts("finding", finding, "op-a"))
    book.add(ObjectFacts("link", link, "op-b", finding_id=finding, hypothesis_id="H1"))
    book.add(ObjectFacts("report", "weekly-report", "op-c", cites=(finding,), introduced=(link,)))
    book.add(ObjectFacts("review", review, "op-c", rejects=link))
    book.record_submission("op-a", objects=1, tokens=None, usd=0.5)
    written = book.writes()
    assert written[USE_SCORES] is not None and len(written) > 2
    for path, data in written.items():
        assert data is not None
        if path == USE_INDEX:
            again = MARKER
        elif path.startswith(f"{USE_INDEX_ROOT}/"):
            again = dump_index_file(parse_index_file(data, path))
        else:
            again = UseSummary.parse(data, path).dump() if path == USE_SCORES else dump_shard(parse_shard(data, path))
        assert again == data, path
    entry = ProjectView(ReadLog({p: d for p, d in written.items() if d is not None})).use_entry(link)
    assert entry is not None and entry.rejected_by == [review] and entry.gave is None


def test_an_operator_row_from_before_undisclosed_cost_keeps_its_shape() -> None:
    old = b'{"hypotheses": {}, "operators": {"op-a": {"accepted_leaves": 1, "accepted_objects": 2, ' \
          b'"tokens": null, "usd": 1.0, "use_score": 0.0, "usd_per_accepted_object": 0.5}}, "reports": {}, ' \
          b'"weights": {"cross_operator": 1.0, "same_operator": 0.25}}'
    summary = UseSummary.parse(old, USE_SCORES)
    assert summary.operators["op-a"].usd_objects is None  # absent, not zero
    assert json.loads(summary.dump()) == json.loads(old)


def test_the_ledger_subject_is_written_and_parsed_by_one_pair() -> None:
    row = LedgerRow(seq=7, prev="0" * 64, at=NOW, action="submit", outcome="held", leaf_id="extract-1", actor="ann",
                    actor_type="agent", verifier_version="test")
    subject = ledger_subject(row)
    assert subject == "ledger: #7 held submit extract-1"
    assert parse_ledger_subject(subject + "\n\n{...}") == LedgerSubject(7)
    assert parse_ledger_subject("ledger: fix") == LedgerSubject(None)  # a ledger commit all the same
    assert parse_ledger_subject("extract: 3 findings") is None


def test_ledger_rows_from_a_cursor_skip_the_segments_before_it() -> None:
    rows = [LedgerRow(seq=n, prev="0" * 64, at=NOW, action="submit", outcome="rejected", actor="ann",
                      actor_type="agent", verifier_version="test") for n in range(300)]
    segments: dict[str, bytes] = {}
    for row in rows:
        segments[segment_path(row.seq)] = segments.get(segment_path(row.seq), b"") + row_line(row)
    tree = ReadLog(segments)
    found = ProjectView(tree).rows_from(290)
    assert [row.seq for row in found] == list(range(290, 300))
    assert segment_path(0) not in tree.reads


def test_held_objects_group_a_sources_record_with_its_bytes() -> None:
    record = f"sources/ab/{SOURCE}"
    files = {queue_path("sources", f"{record}.yaml"): b"source_id: [", queue_path("sources", f"{record}.txt"): b"x"}
    held = ProjectView(ReadLog(files)).held
    assert [(h.hold, h.object_id, h.type, h.paths, h.leaf_id) for h in held] == [
        ("sources", SOURCE, "source", (f"{record}.txt", f"{record}.yaml"), None)]

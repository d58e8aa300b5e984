"""`rw eval`'s ledger reader (verifier.evaluation.history.read_ledger) gives exactly what the
ledger's own reader (`read_chain`) gives: the same rows over several segments, and the same
refusal, of the same class and wording, for every way a ledger can be broken or a row be bad."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from verifier.errors import VerifierError
from verifier.evaluation.history import read_ledger
from verifier.formats.ledger import GENESIS_PREV, Cost, LedgerRow, row_hash, row_line
from verifier.pipeline.ledger import read_chain
from verifier.state.layout import segment_path
from verifier.state.view import DictTree

T0 = datetime(2026, 9, 1, tzinfo=UTC)


def _lines(count: int) -> list[bytes]:
    lines: list[bytes] = []
    prev = GENESIS_PREV
    for seq in range(count):
        submit = seq % 3 != 0
        row = LedgerRow(seq=seq, prev=prev, at=T0 + timedelta(minutes=seq), action="submit" if submit else "leaf",
                        outcome="accepted" if seq % 2 else "rejected", leaf_id=f"extract-{seq}", kind="extract",
                        actor="agent-a" if submit else "planner", actor_type="agent" if submit else "planner",
                        verifier_version="0.1.0", description="caf\u00e9 \u2014 \U0001f600",
                        cost=Cost(tokens=seq, usd=0.25 if seq % 4 else None),
                        objects=[f"fnd_{seq:016x}"] if submit and seq % 2 else None,
                        claimed_at=T0 if seq % 5 == 0 else None)
        line = row_line(row)
        lines.append(line)
        prev = row_hash(line)
    return lines


def _tree(lines: list[bytes]) -> DictTree:
    files: dict[str, bytes] = {}
    for seq, line in enumerate(lines):
        files[segment_path(seq)] = files.get(segment_path(seq), b"") + line
    return DictTree(files)


def _outcome(read: Callable[[DictTree], list[LedgerRow]], tree: DictTree) -> tuple[str, object]:
    try:
        return "rows", read(tree)
    except VerifierError as exc:
        return type(exc).__name__, str(exc)


def _both(tree: DictTree) -> tuple[tuple[str, object], tuple[str, object]]:
    return _outcome(read_ledger, tree), _outcome(lambda t: [row for _, row in read_chain(t)], tree)


def test_the_eval_reader_gives_the_ledgers_rows_over_several_segments() -> None:
    ours, theirs = _both(_tree(_lines(600)))
    assert ours == theirs
    assert ours[0] == "rows" and isinstance(ours[1], list) and len(ours[1]) == 600


def _with(lines: list[bytes], seq: int, line: bytes) -> list[bytes]:
    return [*lines[:seq], line, *lines[seq + 1:]]


def _row_json(line: bytes, **changes: object) -> bytes:
    value = json.loads(line)
    value.update(changes)
    return json.dumps(value).encode() + b"\n"


LINES = _lines(300)
BROKEN: dict[str, Callable[[], DictTree]] = {
    "a row rewritten": lambda: _tree(_with(LINES, 10, _row_json(LINES[10], description="changed"))),
    "two rows swapped": lambda: _tree([*LINES[:5], LINES[6], LINES[5], *LINES[7:]]),
    "a row left out": lambda: _tree(LINES[:7] + LINES[8:]),
    "not JSON": lambda: _tree(_with(LINES, 3, b"{not json\n")),
    "an unknown field": lambda: _tree(_with(LINES, 3, _row_json(LINES[3], extra=1))),
    "a number as text": lambda: _tree(_with(LINES, 3, _row_json(LINES[3], seq="3"))),
    "a time without its zone": lambda: _tree(_with(LINES, 3, _row_json(LINES[3], at="2026-09-01T00:03:00"))),
    "NaN for a cost": lambda: _tree(_with(LINES, 3, LINES[3].replace(b'"usd":0.25', b'"usd":NaN'))),
    "a lone surrogate": lambda: _tree(_with(LINES, 3, _row_json(LINES[3], description="\ud800"))),
    "bytes that are not UTF-8": lambda: _tree(_with(LINES, 3, LINES[3].replace(b"caf\xc3\xa9", b"caf\xe9"))),
    "a byte-order mark": lambda: _tree(_with(LINES, 0, b"\xef\xbb\xbf" + LINES[0])),
    "a line in UTF-16": lambda: _tree(_with(LINES, 0, LINES[0].rstrip(b"\n").decode().encode("utf-16") + b"\n")),
    "a truncated segment": lambda: DictTree({**_tree(LINES).files, segment_path(256): LINES[256].rstrip(b"\n")}),
    "an empty segment": lambda: DictTree({**_tree(LINES).files, segment_path(256): b""}),
    "a missing segment": lambda: DictTree({path: data for path, data in _tree(_lines(600)).files.items()
                                           if path != segment_path(256)}),
    "too many rows in a segment": lambda: DictTree({segment_path(0): b"".join(_lines(257))}),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_eval_reader_refuses_or_reads_a_bad_ledger_as_the_ledgers_reader_does(case: str) -> None:
    ours, theirs = _both(BROKEN[case]())
    assert ours == theirs

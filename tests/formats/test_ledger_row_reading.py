"""A ledger row read by the model from its bytes (parse_row's first way) is the row the plain
reading (json.loads, then the model) gives, and a line either refuses is refused with the plain
reading's own error: on canonical rows of every shape and on every way one line can be bad."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from verifier.errors import FormatError
from verifier.formats.ledger import GENESIS_PREV, Cost, LedgerRow, parse_row, row_hash, row_line

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


def _plain(line: bytes, where: str) -> LedgerRow:
    """The plain reading, as parse_row read every row before it let the model read the bytes."""
    try:
        return LedgerRow.model_validate(json.loads(line))
    except (ValueError, ValidationError) as exc:
        raise FormatError(f"not a ledger row: {exc}", where) from exc


def _outcome(read: Callable[[bytes, str], LedgerRow], line: bytes) -> tuple[str, object]:
    try:
        return "row", read(line, "ledger/000000.jsonl:4")
    except FormatError as exc:
        return "refused", str(exc)


def _row_json(line: bytes, **changes: object) -> bytes:
    value = json.loads(line)
    value.update(changes)
    return json.dumps(value).encode()


LINES = [line.rstrip(b"\n") for line in _lines(60)]
BAD: dict[str, bytes] = {
    "not JSON": b"{not json",
    "an unknown field": _row_json(LINES[3], extra=1),
    "a number as text": _row_json(LINES[3], seq="3"),
    "a fraction for a count": _row_json(LINES[3], seq=3.0),
    "a time without its zone": _row_json(LINES[3], at="2026-09-01T00:03:00"),
    "a time in another spelling": _row_json(LINES[3], at="2026-09-01 00:03:00Z"),
    "a time as a number": _row_json(LINES[3], at=1756684980),
    "NaN for a cost": LINES[1].replace(b'"usd":0.25', b'"usd":NaN'),
    "a cost as text": _row_json(LINES[1], cost={"usd": "0.25"}),
    "a lone surrogate": _row_json(LINES[3], description="\ud800"),
    "bytes that are not UTF-8": LINES[3].replace(b"caf\xc3\xa9", b"caf\xe9"),
    "a byte-order mark": b"\xef\xbb\xbf" + LINES[0],
    "a line in UTF-16": LINES[0].decode().encode("utf-16"),
    "a key twice": LINES[3][:-1] + b',"seq":99}',
    "a list for the objects' text": _row_json(LINES[1], objects="fnd_1"),
    "a description past its cap": _row_json(LINES[3], description="x" * 4001),
    "null where a value is needed": _row_json(LINES[3], actor=None),
    "an array, not an object": b"[1, 2]",
    "an empty line": b"",
}


def test_canonical_rows_read_the_same_both_ways() -> None:
    for line in LINES:
        assert _outcome(parse_row, line) == _outcome(_plain, line)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_line_is_read_or_refused_as_the_plain_reading_does(case: str) -> None:
    assert _outcome(parse_row, BAD[case]) == _outcome(_plain, BAD[case])

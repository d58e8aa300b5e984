"""Appending to the ledger and reading it back, over a TreeView. Pure.

`append_row` turns a row's fields into the next chained row and the one segment write it needs.
`read_chain` walks every segment in order and checks the chain as it goes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from verifier.errors import FormatError, LedgerIntegrityError
from verifier.formats.ledger import (
    GENESIS_PREV,
    ROWS_PER_SEGMENT,
    LedgerRow,
    parse_row,
    parse_segment,
    row_hash,
    row_line,
)
from verifier.state.layout import LEDGER_DIR, segment_path
from verifier.state.view import TreeView


def _segments(view: TreeView) -> list[str]:
    names = [name for name in view.list_dir(LEDGER_DIR) if name.endswith(".jsonl")]
    return [f"{LEDGER_DIR}/{name}" for name in sorted(names)]


def ledger_head(view: TreeView) -> tuple[int, str]:
    """(seq of the next row, hash of the last row) at this tree."""
    seq, prev, _, _ = _head(view)
    return seq, prev


def _head(view: TreeView) -> tuple[int, str, str | None, bytes]:
    """ledger_head, with the last segment's path and bytes (read once: an append extends them)."""
    segments = _segments(view)
    if not segments:
        return 0, GENESIS_PREV, None, b""
    data = view.read(segments[-1]) or b""
    if not data:
        raise FormatError("empty ledger segment", segments[-1])
    if not data.endswith(b"\n"):
        raise FormatError("segment does not end with a newline (truncated write?)", segments[-1])
    # Only the last row is needed: parsing the segment's other rows would make every write pay
    # for up to 255 rows it does not read (the chain itself is `read_chain`'s to check).
    line = data[data.rfind(b"\n", 0, len(data) - 1) + 1:]
    row = parse_row(line.rstrip(b"\n"), f"{segments[-1]}:last")
    return row.seq + 1, row_hash(line), segments[-1], data


def append_row(view: TreeView, fields: Mapping[str, object]) -> tuple[LedgerRow, bytes, dict[str, bytes]]:
    """Chain a new row after the ledger in `view`; return (row, its line, the segment write)."""
    seq, prev, last, data = _head(view)
    row = LedgerRow.model_validate({**fields, "seq": seq, "prev": prev})
    line = row_line(row)
    path = segment_path(seq)
    # A row that opens a new segment starts an empty file; any other appends to its segment.
    existing = (data if path == last else view.read(path) or b"") if seq % ROWS_PER_SEGMENT else b""
    return row, line, {path: existing + line}


def read_chain(view: TreeView) -> Iterator[tuple[bytes, LedgerRow]]:
    """Every row in order, raising LedgerIntegrityError where the chain breaks."""
    expected_seq, expected_prev = 0, GENESIS_PREV
    for number, path in enumerate(_segments(view)):
        if path != segment_path(number * ROWS_PER_SEGMENT):
            raise LedgerIntegrityError(f"{path}: expected segment {segment_path(number * ROWS_PER_SEGMENT)}")
        rows = parse_segment(view.read(path) or b"", path)
        if len(rows) > ROWS_PER_SEGMENT or (not rows):
            raise LedgerIntegrityError(f"{path}: holds {len(rows)} rows; a segment holds 1-{ROWS_PER_SEGMENT}")
        for line, row in rows:
            if row.seq != expected_seq:
                raise LedgerIntegrityError(f"{path}: row seq {row.seq} where {expected_seq} was expected")
            if row.prev != expected_prev:
                raise LedgerIntegrityError(
                    f"{path}: row {row.seq} says the previous row hashes to {row.prev[:12]}..., "
                    f"it hashes to {expected_prev[:12]}... (rewritten or reordered)"
                )
            expected_seq, expected_prev = row.seq + 1, row_hash(line)
            yield line, row

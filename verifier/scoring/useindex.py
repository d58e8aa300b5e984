"""Each scored object's U as the evaluation counts it, kept beside the use-score shards (issue 26):
`rw eval` reads one small file per pair of id digits instead of one shard per object.

    scores/use-index/<ab>.json   object id -> its u while present, 0 once withdrawn
    scores/use-index.json        the marker: {"format": 1}, the index covers every shard

The shards (verifier.scoring.use) stay the truth; the index is derived from them and written in
the same landing, from the same entries: `ScoreBook.writes` rewrites the index file of every shard
it rewrites. It is trusted only under its marker, and the marker is written only where the index
is complete: a book whose tree had no use scores yet (a fresh project, replay's rebuild), or one
that built the whole index by a scan of the shards (`ScoreBook.ensure_use_index`, at the first
scored landing of a project scored before the index, or after its index was dropped). Until then
the evaluation reads the shards; an index file a landing finds unparseable drops the marker. The
values are the shards' numbers unchanged (sums of 1.0 and 0.25 weights), so both roads give the
evaluation the same floats.

Pure: files are read through a callable and written back as bytes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping

from verifier.errors import FormatError
from verifier.formats.usescores import Number, UseEntry
from verifier.state.layout import USE_INDEX, use_index_path, use_shard_path

FORMAT = 1
MARKER = (json.dumps({"format": FORMAT}) + "\n").encode()


def counted_use(entry: UseEntry) -> Number:
    """What the evaluation counts of an object's use: its U while present, 0 once withdrawn."""
    return entry.u if entry.present else 0


def is_live(read: Callable[[str], bytes | None]) -> bool:
    """Whether the tree holds an index covering every shard (its marker, in this format)."""
    marker = read(USE_INDEX)
    if marker is None:
        return False
    try:
        value = json.loads(marker)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("format") == FORMAT


def parse_index_file(data: bytes, where: str) -> dict[str, Number]:
    """scores/use-index/<ab>.json: object id -> counted use; a clear error names what is wrong."""
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise FormatError(f"not JSON: {exc}", where) from exc
    if not isinstance(value, dict):
        raise FormatError("expected a JSON object of object id -> use", where)
    for object_id, use in value.items():
        if isinstance(use, bool) or not isinstance(use, int | float):
            raise FormatError(f"{object_id}: expected a number, found {use!r}", where)
    return value


def dump_index_file(values: Mapping[str, Number]) -> bytes:
    """One line of sorted `"id":use` pairs: no indent, so the C encoder writes it (an indented dump
    goes through json's Python encoder, and a landing rewrites files of hundreds of ids)."""
    return (json.dumps(dict(sorted(values.items())), separators=(",", ":"), allow_nan=False) + "\n").encode()


def index_writes(read: Callable[[str], bytes | None], shards: Mapping[str, Mapping[str, UseEntry]], *,
                 fresh: bool) -> dict[str, bytes | None]:
    """The index files to write beside rewritten shards (shard path -> its entries, whole). `fresh`:
    the tree has no use scores yet, so the index starts here, complete, with its marker. Otherwise
    only a live index is kept (a project from before it has none to keep)."""
    if not fresh and not is_live(read):
        return {}
    by_file: dict[str, list[str]] = defaultdict(list)
    for shard_path, entries in shards.items():
        for object_id in entries:
            by_file[use_index_path(object_id)].append(shard_path)
    out: dict[str, bytes | None] = {USE_INDEX: MARKER} if fresh else {}
    for path, shard_paths in sorted(by_file.items()):
        rewritten = set(shard_paths)
        data = None if fresh else read(path)
        try:
            values = parse_index_file(data, path) if data else {}
        except FormatError:
            return {USE_INDEX: None}  # a damaged index is dropped; the evaluation reads the shards
        # The rewritten shards' objects are taken from the shards whole, so none is left behind.
        values = {key: use for key, use in values.items() if use_shard_path(key) not in rewritten}
        for shard_path in rewritten:
            values.update((object_id, counted_use(entry)) for object_id, entry in shards[shard_path].items())
        out[path] = dump_index_file(values)
    return out


def index_of(shards: Mapping[str, Mapping[str, UseEntry]]) -> dict[str, bytes]:
    """The whole index and its marker, built from every shard of a tree (a tree made by hand)."""
    written = index_writes(lambda _path: None, shards, fresh=True)
    return {path: data for path, data in written.items() if data is not None}

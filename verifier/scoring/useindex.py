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

A landing changes two or three of the ~430 entries a file holds at 100,000 links, so a file as
this module writes it is edited in its text at those entries, not parsed and dumped whole (the
bytes are the same: `_rewrite`); whether a file is so is checked once per content, and the files
this process read or wrote are kept by git blob id (`_known`), so a landing on a tree the process
made finds them unread. A file whose bytes come out as they were is not written again.

Pure but for that memo: files are read through a callable and written back as bytes.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from json.encoder import encode_basestring_ascii

from verifier.errors import FormatError
from verifier.formats.usescores import Number, UseEntry
from verifier.patch.apply import git_blob_id
from verifier.state.layout import USE_INDEX, USE_SHARD_ROOT, id_digits, use_index_path

FORMAT = 1
MARKER = (json.dumps({"format": FORMAT}) + "\n").encode()
MARKER_ID = git_blob_id(MARKER)


def counted_use(entry: UseEntry) -> Number:
    """What the evaluation counts of an object's use: its U while present, 0 once withdrawn."""
    return entry.u if entry.present else 0


def is_live(read: Callable[[str], bytes | None], blob_id: Callable[[str], str | None] | None = None) -> bool:
    """Whether the tree holds an index covering every shard (its marker, in this format). With the
    tree's `blob_id`, the marker as written here is known by its id alone, unread."""
    if blob_id is not None:
        found = blob_id(USE_INDEX)
        if found is None or found == MARKER_ID:
            return found is not None
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
                 fresh: bool, blob_id: Callable[[str], str | None] | None = None) -> dict[str, bytes | None]:
    """The index files to write beside rewritten shards (shard path -> its entries, whole). `fresh`:
    the tree has no use scores yet, so the index starts here, complete, with its marker. Otherwise
    only a live index is kept (a project from before it has none to keep), and a file whose bytes
    come out as they were is left as it is. `blob_id`: the tree's (TreeView.blob_id), so that a file
    this process read or wrote before is found by its id, unread (`_known`)."""
    if not fresh and not is_live(read, blob_id):
        return {}
    # Per index file: the rewritten shards it indexes, in the order met.
    by_file: dict[str, dict[str, None]] = {}
    for shard_path, entries in shards.items():
        for object_id in entries:
            by_file.setdefault(use_index_path(object_id), {})[shard_path] = None
    out: dict[str, bytes | None] = {USE_INDEX: MARKER} if fresh else {}
    for path, rewritten in sorted(by_file.items()):
        new: dict[str, Number] = {}
        for shard_path in rewritten:
            new.update((object_id, counted_use(entry)) for object_id, entry in shards[shard_path].items())
        data, named = (None, None) if fresh else _look_up(read, blob_id, path)
        if not data:
            written = dump_index_file(new)
            _remember_written(written, {}, new)
        elif named is None:  # not as this module writes it: parsed, changed and dumped whole
            try:
                values = parse_index_file(data, path)
            except FormatError:
                return {USE_INDEX: None}  # a damaged index is dropped; the evaluation reads the shards
            digits = _digits_of(rewritten)
            kept = {key: use for key, use in values.items() if id_digits(key) not in digits}
            kept.update(new)
            written = dump_index_file(kept)
        else:
            written = _rewrite(data, named, _digits_of(rewritten), new)
        if written != data:
            out[path] = written
    return out


def _digits_of(shard_paths: Iterable[str]) -> frozenset[str]:
    """The id digits of each shard path (use_shard_path's inverse); a path of no such shape has
    none, as no object's shard is there."""
    digits = set()
    for shard_path in shard_paths:
        found = shard_path[_SHARD_AT:_SHARD_AT + 2] + shard_path[_SHARD_AT + 3:_SHARD_AT + 5]
        if (len(found) == 4 and not found.strip(_HEX)
                and f"{USE_SHARD_ROOT}/{found[:2]}/{found[2:]}.json" == shard_path):
            digits.add(found)
    return frozenset(digits)


_SHARD_AT = len(USE_SHARD_ROOT) + 1
_HEX = "0123456789abcdef"


def _rewrite(data: bytes, named: Mapping[str, str], rewritten: frozenset[str], new: Mapping[str, Number]) -> bytes:
    """An index file as `dump_index_file` writes it (`_plain`), with every object of the
    `rewritten` shards (by their id digits) replaced by `new`: the bytes `dump_index_file` writes
    of the file parsed and so changed, made by editing its text at the entries that change (a
    landing changes two or three of the ~430 a file holds at 100,000 links). `named`: its keys
    whose digits are not their characters 4 to 8, and theirs."""
    body = data[1:-2].decode("ascii")  # the entries, '"id":use' joined by commas, ids in order
    edits = _edits(body, named, rewritten, new)
    written = ("{" + _edited(body, edits, new) + "}\n").encode()
    if written != data:
        removed = {key for (_, removal, key) in edits if removal}
        _remember_written(written, {key: digits for key, digits in named.items() if key not in removed}, new)
    return written


Edits = dict[tuple[int, int, str], int]  # (offset, 0 an insertion | 1 a removal, id) -> a removed entry's end


def _edits(body: str, named: Mapping[str, str], rewritten: frozenset[str], new: Mapping[str, Number]) -> Edits:
    """Where the entries of the rewritten shards' objects go, and where those of `new` come."""
    edits: Edits = {}
    for digits in rewritten:
        # A plain id's digits are its characters 4 to 8: where the four stand in a key (a quote
        # that opens an entry, five before them), the key is one of the shard's objects.
        at = body.find(digits, 5)
        while at != -1:
            start = at - 5
            if body[start] == '"' and (start == 0 or body[start - 1] == ","):
                key_end = body.index('"', at)
                edits[(start, 1, body[start + 1:key_end])] = _entry_end(body, key_end)
            at = body.find(digits, at + 1)
    for key, digits in named.items():
        if digits in rewritten:
            start = _entry_of(body, key)
            edits[(start, 1, key)] = _entry_end(body, start)
    for key in new:
        start = _entry_of(body, key)
        if start == -1:
            edits[(_insertion(body, key), 0, key)] = 0
        else:
            edits[(start, 1, key)] = _entry_end(body, start)
            edits[(start, 0, key)] = 0
    return edits


def _edited(body: str, edits: Edits, new: Mapping[str, Number]) -> str:
    """`body` with `edits` made, in offset order (an insertion before the removal at one offset)."""
    chunks: list[str] = []
    done = 0  # where the next kept entry starts
    for (at, removal, key), end in sorted(edits.items()):
        if at > done:  # the kept entries before this edit, without the comma that follows them
            chunks.append(body[done:at - 1] if body[at - 1] == "," else body[done:at])
        if removal:
            done = end + 1
        else:
            chunks.append(f"{encode_basestring_ascii(key)}:{_number_text(new[key])}")
            done = at
    if done < len(body):
        chunks.append(body[done:])
    return ",".join(chunks)


def _entry_of(body: str, key: str) -> int:
    """Where the entry of `key` starts in `body`, or -1 (in a plain file a quoted key followed by
    a colon is always an entry: a key holds no quote and no comma)."""
    at = body.find(f'"{key}":')
    while at > 0 and body[at - 1] != ",":
        at = body.find(f'"{key}":', at + 1)
    return at


def _entry_end(body: str, at: int) -> int:
    comma = body.find(",", at)
    return len(body) if comma == -1 else comma


def _insertion(body: str, key: str) -> int:
    """Where a new entry for `key` goes in `body`: the start of the first entry whose key sorts
    after it, or the end (a binary search over the text: entries start at a comma)."""
    low, high = 0, len(body)  # low, high: entry starts (or the end); before low < key < from high
    while low < high:
        comma = body.rfind(",", low, (low + high) // 2)
        start = low if comma == -1 else comma + 1
        if body[start + 1:body.index('"', start + 1)] < key:
            low = _entry_end(body, start) + 1
        else:
            high = start
    return min(low, len(body))


def _number_text(use: Number) -> str:
    """A use as json.dumps spells it (a shard's numbers are finite; anything else takes json's own
    road, and its error)."""
    if type(use) is float and math.isfinite(use):
        return float.__repr__(use)
    if type(use) is int:
        return int.__repr__(use)
    return json.dumps(use, allow_nan=False)


def _plain(text: str) -> dict[str, str] | None:
    """Whether an index file is exactly what `dump_index_file` writes of its parsed value, with
    keys this module finds in its text (none with an escape, a comma or a brace): its named keys
    (digits not their characters 4 to 8) and their digits if so, else None.

    Checked without a parse: split at its quotes, such a file is `{`, then each key and what
    follows it (`:` a number `,`, the last `:` a number `}` and a newline); json writes a key as it
    is when it is printable ASCII but for a quote and a backslash, and a number so when it is the
    repr of the number it parses to. The pieces between keys are checked once per distinct text
    (a file holds a few numbers: sums of 1.0 and 0.25)."""
    if "\\" in text or not text.isascii() or not text[:-1].isprintable() or not text.endswith("}\n"):
        return None
    pieces = text.split('"')
    if len(pieces) < 3 or len(pieces) % 2 == 0 or pieces[0] != "{":
        return None
    last = _LAST_NUMBER.fullmatch(pieces[-1])
    if last is None or not _spelt_as_json(last[1]):
        return None
    for between in set(pieces[2:-1:2]):
        number = _NUMBER_BETWEEN.fullmatch(between)
        if number is None or not _spelt_as_json(number[1]):
            return None
    keys = pieces[1::2]
    joined = "".join(keys)
    # In order, each once, none with a brace or a comma.
    if keys != sorted(keys) or len(set(keys)) != len(keys) or "{" in joined or "," in joined:
        return None
    return _named(keys)


_NUMBER = r"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"  # a JSON number
_NUMBER_BETWEEN = re.compile(f":{_NUMBER},")
_LAST_NUMBER = re.compile(f":{_NUMBER}}}\n")


def _spelt_as_json(token: str) -> bool:
    """Whether a JSON number's text is what json.dumps writes of the number it parses to."""
    if "." in token or "e" in token or "E" in token:
        number = float(token)
        return math.isfinite(number) and float.__repr__(number) == token
    return int.__repr__(int(token)) == token


def _named(keys: list[str]) -> dict[str, str]:
    """The keys whose digits are not their characters 4 to 8 (sha256's: named ids), and theirs."""
    joined = "".join(keys)
    width = len(keys[0]) if keys else 0
    # Keys of one length (ids): their characters 4 to 8 are four strided slices of the join.
    if (width >= 8 and len(joined) == width * len(keys) and set(map(len, keys)) == {width}
            and not "".join(joined[at::width] for at in range(4, 8)).translate(_NOT_HEX)):
        return {}
    return {key: digits for key in keys if (digits := id_digits(key)) != key[4:8]}


def _plain_key(key: str) -> bool:
    """A key `dump_index_file` writes as it is, that `_rewrite` finds in the text."""
    return key.isascii() and key.isprintable() and not any(mark in key for mark in '"\\,{')


_NOT_HEX = str.maketrans("", "", _HEX)


# Index files this process read (and found plain) or wrote, by git blob id: the file's bytes and
# its named keys. A landing after one this process made finds the files it changes here, checked
# and unread. Bounded by their bytes (~10 KB a file at 100,000 links: every file of such a
# project fits), oldest out.
KNOWN_BYTES = 8 << 20  # 8 MiB of index files: a memory bound for this memo, like contracts.LIMIT
_known: OrderedDict[str, tuple[bytes, dict[str, str]]] = OrderedDict()
_known_size = [0]
_known_lock = threading.Lock()


def _look_up(read: Callable[[str], bytes | None], blob_id: Callable[[str], str | None] | None,
             path: str) -> tuple[bytes | None, dict[str, str] | None]:
    """An index file's bytes, with its named keys if it is plain (`_plain`), else None."""
    found_id = blob_id(path) if blob_id is not None else None
    if blob_id is not None and found_id is None:
        return None, None  # no such file
    if found_id is not None:
        with _known_lock:
            known = _known.get(found_id)
            if known is not None:
                _known.move_to_end(found_id)
                return known
    data = read(path)
    if not data:
        return data, None
    found_id = found_id or git_blob_id(data)
    with _known_lock:
        known = _known.get(found_id)
    if known is not None:
        return known
    named = _plain(data.decode("utf-8", errors="replace"))
    if named is not None:
        _keep(found_id, data, named)
    return data, named


def _remember_written(data: bytes, named: dict[str, str], new: Mapping[str, Number]) -> None:
    """Keep a file written here, if plain: `named` its named keys kept, and those of `new`."""
    if not all(map(_plain_key, new)):
        return
    named = {**named, **{key: digits for key in new if (digits := id_digits(key)) != key[4:8]}}
    _keep(git_blob_id(data), data, named)


def _keep(found_id: str, data: bytes, named: dict[str, str]) -> None:
    with _known_lock:
        if found_id in _known:
            return
        _known[found_id] = (data, named)
        _known_size[0] += len(data)
        while _known_size[0] > KNOWN_BYTES:
            _, (dropped, _) = _known.popitem(last=False)
            _known_size[0] -= len(dropped)


def index_of(shards: Mapping[str, Mapping[str, UseEntry]]) -> dict[str, bytes]:
    """The whole index and its marker, built from every shard of a tree (a tree made by hand)."""
    written = index_writes(lambda _path: None, shards, fresh=True)
    return {path: data for path, data in written.items() if data is not None}

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
import math
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from json.encoder import encode_basestring_ascii

from verifier.errors import FormatError
from verifier.formats.usescores import Number, UseEntry
from verifier.state.layout import USE_INDEX, USE_SHARD_ROOT, id_digits, use_index_path

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
    only a live index is kept (a project from before it has none to keep), and a file whose bytes
    come out as they were is left as it is."""
    if not fresh and not is_live(read):
        return {}
    # Per index file: the rewritten shards it indexes (in the order met) and their digits.
    by_file: dict[str, dict[str, None]] = {}
    for shard_path, entries in shards.items():
        for object_id in entries:
            by_file.setdefault(use_index_path(object_id), {})[shard_path] = None
    out: dict[str, bytes | None] = {USE_INDEX: MARKER} if fresh else {}
    for path, rewritten in sorted(by_file.items()):
        new: dict[str, Number] = {}
        for shard_path in rewritten:
            new.update((object_id, counted_use(entry)) for object_id, entry in shards[shard_path].items())
        data = None if fresh else read(path)
        if not data:
            out[path] = dump_index_file(new)
            continue
        try:
            written = _rewrite(data, path, _digits_of(rewritten), new)
        except FormatError:
            return {USE_INDEX: None}  # a damaged index is dropped; the evaluation reads the shards
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


def _rewrite(data: bytes, where: str, rewritten: frozenset[str], new: Mapping[str, Number]) -> bytes:
    """The index file `data` with every object of the `rewritten` shards (by their id digits)
    replaced by `new`: what `dump_index_file` writes of the parsed file so changed.

    A file exactly as `dump_index_file` writes (checked once per content: `_plain`) is edited in
    its text, entry by entry, so a landing costs the entries it changes rather than the ~430 ids
    (at 100,000 links) the file holds, parsed and dumped; any other file is parsed, changed and
    dumped whole, as before."""
    text = data.decode("utf-8", errors="replace")
    known = _known(data)
    if known is None:
        known = _plain(text, parsed=True)
        if known is None:
            values = parse_index_file(data, where)
            kept = {key: use for key, use in values.items() if id_digits(key) not in rewritten}
            kept.update(new)
            return dump_index_file(kept)
        _remember(data, known)
    keys, odd = known
    gone: set[str] = set()
    for digits in rewritten:
        # A plain id's digits are its characters 4 to 8: each place the four digits stand there
        # in a key (a quote five before them, opening a key) is one of the shard's objects.
        at = text.find(digits, 6)
        while at != -1:
            if text[at - 5] == '"' and text[at - 6] in "{,":
                gone.add(text[at - 4:text.index('"', at)])
            at = text.find(digits, at + 1)
    gone.update(key for key, digits in odd.items() if digits in rewritten)
    # Edits in key order: at index i of the old keys, an insertion (0) before a removal (1).
    edits = [(bisect_left(keys, key), 1, key) for key in gone]
    for key in new:
        at = bisect_left(keys, key)
        if at < len(keys) and keys[at] == key and key not in gone:
            edits.append((at, 1, key))
        edits.append((at, 0, key))
    entries = text[1:-2].split(",") if keys else []
    pieces: list[str] = []
    new_keys: list[str] = []
    done = 0
    for at, removal, key in sorted(edits):
        pieces.extend(entries[done:at])
        new_keys.extend(keys[done:at])
        if removal:
            done = at + 1
        else:
            pieces.append(f"{encode_basestring_ascii(key)}:{_number_text(new[key])}")
            new_keys.append(key)
            done = at
    pieces.extend(entries[done:])
    new_keys.extend(keys[done:])
    out = "{" + ",".join(pieces) + "}\n"
    written = out.encode()
    if written != data and _plain(out, parsed=False) is not None and out.count(",") == max(len(new_keys) - 1, 0):
        new_odd = {key: digits for key, digits in odd.items() if key not in gone}
        new_odd.update((key, id_digits(key)) for key in new if id_digits(key) != key[4:8])
        _remember(written, (new_keys, new_odd))
    return written


def _number_text(use: Number) -> str:
    """A use as json.dumps spells it (a shard's numbers are finite; anything else takes json's own
    road, and its error)."""
    if type(use) is float and math.isfinite(use):
        return float.__repr__(use)
    if type(use) is int:
        return int.__repr__(use)
    return json.dumps(use, allow_nan=False)


def _plain(text: str, *, parsed: bool) -> tuple[list[str], dict[str, str]] | None:
    """The sorted keys of an index file exactly as `dump_index_file` writes its parsed value, with
    the keys among them whose digits are not their characters 4 to 8 (named ids) and theirs; None
    for any other file, or one whose keys this module does not find in its text (a key with an
    escape, a comma or a brace). `parsed`: a file read, so parse it and check it; else one written
    here, in `dump_index_file`'s spelling, whose keys the caller knows."""
    if "\\" in text or not text.isascii() or text.count("{") != 1 or not text.endswith("}\n"):
        return None
    if not parsed:
        return [], {}
    try:
        # Numbers kept as the text they are: each is then checked to be json's spelling of its
        # value, once per distinct number (a file holds a few: sums of 1.0 and 0.25).
        value = _TOKENS.decode(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(type(token) is str for token in value.values()):
        return None  # a number that parse_constant made (NaN, Infinity), true, false, null, a list...
    keys = list(value)
    tokens = value.values()
    # Two quotes a key and none elsewhere (no string value, no key twice), no comma in a key, no
    # space between (the length of the text without one), in order, each number as json spells it.
    if (text.count('"') != 2 * len(keys) or text.count(",") != max(len(keys) - 1, 0)
            or len(text) != 2 + 4 * len(keys) + sum(map(len, keys)) + sum(map(len, tokens))
            or keys != sorted(keys) or not all(map(_spelt_as_json, set(tokens)))):
        return None
    return keys, _named(keys)


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


_TOKENS = json.JSONDecoder(parse_float=str, parse_int=str)
_NOT_HEX = str.maketrans("", "", _HEX)


# Index files read or written by this process, by their bytes, as `_plain` found them: a landing
# after one that wrote a file (or read it) finds it here, checked. Bounded by the bytes of the
# files held (~10 KB a file at 100,000 links, so every file of such a project fits), oldest out.
KNOWN_BYTES = 8 * 1024 * 1024
_known_files: OrderedDict[bytes, tuple[list[str], dict[str, str]]] = OrderedDict()
_known_size = [0]
_known_lock = threading.Lock()


def _known(data: bytes) -> tuple[list[str], dict[str, str]] | None:
    with _known_lock:
        found = _known_files.get(data)
        if found is not None:
            _known_files.move_to_end(data)
        return found


def _remember(data: bytes, known: tuple[list[str], dict[str, str]]) -> None:
    with _known_lock:
        if data in _known_files:
            return
        _known_files[data] = known
        _known_size[0] += len(data)
        while _known_size[0] > KNOWN_BYTES:
            oldest, _ = _known_files.popitem(last=False)
            _known_size[0] -= len(oldest)


def index_of(shards: Mapping[str, Mapping[str, UseEntry]]) -> dict[str, bytes]:
    """The whole index and its marker, built from every shard of a tree (a tree made by hand)."""
    written = index_writes(lambda _path: None, shards, fresh=True)
    return {path: data for path, data in written.items() if data is not None}

"""The use index's rewrite as first written (parse the file, drop the rewritten shards' ids, add
theirs, dump it whole): the reference the text-editing rewrite of verifier.scoring.useindex must
match byte for byte, and random index files and shards to hold them to it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hypothesis import strategies as st

from verifier.errors import FormatError
from verifier.formats.usescores import Number, UseEntry
from verifier.patch.apply import git_blob_id
from verifier.scoring.useindex import MARKER, counted_use, dump_index_file, is_live, parse_index_file
from verifier.state.layout import USE_INDEX, use_index_path, use_shard_path

HEX = "0123456789abcdef"


def reference_index_writes(read: Callable[[str], bytes | None], shards: Mapping[str, Mapping[str, UseEntry]], *,
                           fresh: bool) -> dict[str, bytes | None]:
    """What a landing writes of the index, every file it touches written whole."""
    if not fresh and not is_live(read):
        return {}
    by_file: dict[str, set[str]] = {}
    for shard_path, entries in shards.items():
        for object_id in entries:
            by_file.setdefault(use_index_path(object_id), set()).add(shard_path)
    out: dict[str, bytes | None] = {USE_INDEX: MARKER} if fresh else {}
    for path, rewritten in sorted(by_file.items()):
        data = None if fresh else read(path)
        try:
            values = parse_index_file(data, path) if data else {}
        except FormatError:
            return {USE_INDEX: None}
        values = {key: use for key, use in values.items() if use_shard_path(key) not in rewritten}
        for shard_path in sorted(rewritten):
            values.update((object_id, counted_use(entry)) for object_id, entry in shards[shard_path].items())
        out[path] = dump_index_file(values)
    return out


def land(files: dict[str, bytes], written: Mapping[str, bytes | None]) -> None:
    for path, data in written.items():
        if data is None:
            files.pop(path, None)
        else:
            files[path] = data


def blob_ids(files: Mapping[str, bytes]) -> Callable[[str], str | None]:
    return lambda path: git_blob_id(files[path]) if path in files else None


# Ids as the verifier makes them (a prefix, 16 hex digits), many under the same first digits so
# that files hold several; named ids (plans, reports: their digits are sha256's); and odd keys a
# hand-edited file may hold (short, not hex, quotes, commas, braces, spaces, non-ASCII).
_HEX_TAIL = st.text(HEX, min_size=12, max_size=12)
PLAIN_IDS = st.builds(lambda prefix, digits, tail: prefix + digits + tail,
                      st.sampled_from(["fnd_", "lnk_", "src_", "rev_"]),
                      st.sampled_from(["ab12", "ab13", "ab9f", "c0de"]), _HEX_TAIL)
NAMED_IDS = st.sampled_from(["weekly-report", "plan-one", "plan-two", "report-2026-11"])
ODD_IDS = st.sampled_from(["", "ab12", "fnd_ab1", "fnd_AB12", "x{y", "a,b", 'q"uote', "spa ce", "é-ab12",
                           "back\\slash", "fnd_ab12\x7f", "tab\there"])
ANY_IDS = st.one_of(PLAIN_IDS, PLAIN_IDS, NAMED_IDS, ODD_IDS, st.text(max_size=8))
USES = st.one_of(st.sampled_from([0, 1.0, 0.25, 10.0, -0.0, 12.75, 1e16, 0.0001, 3, -5]),
                 st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**20, 10**20))
ENTRIES = st.builds(lambda use, present: UseEntry(type="finding", operator="op", present=present, u=use),
                    USES, st.booleans())
# Files that are not as the index writes them: every one is parsed and dumped whole, or dropped.
ODD_FILES = st.sampled_from([b"[1]\n", b"{}\n", b"", b'{"a": 1}\n', b'{"b":1,"a":2}\n', b'{"a":1,"a":2}\n',
                             b'{"a":1.50}\n', b'{"a":1e2}\n', b'{"a":NaN}\n', b'{"fnd_ab12":true}\n',
                             b'{"fnd_ab12":"1.0"}\n', b'{"fnd_ab12x":1.0,"fnd_ab13":-0}\n', b"\xff\n",
                             b'{"a":1}', b'{"a\\u00e9":1}\n', b'{"fnd_ab120000":1.0}\n', b'{"fnd_ab12\x7f":1.0}\n',
                             b'{"fnd_ab12":1.0,}\n', b'{"fnd_ab12":01}\n', b'{"fnd_ab12":1.0}\n\n'])


@st.composite
def shard_sets(draw: st.DrawFn, ids: st.SearchStrategy[str] = PLAIN_IDS | NAMED_IDS) -> dict[str, dict[str, UseEntry]]:
    """The shards one landing rewrites: each object in the shard its id places it in."""
    shards: dict[str, dict[str, UseEntry]] = {}
    for object_id in draw(st.lists(ids, min_size=1, max_size=6, unique=True)):
        shards.setdefault(use_shard_path(object_id), {})[object_id] = draw(ENTRIES)
    return shards


@st.composite
def index_trees(draw: st.DrawFn, ids: st.SearchStrategy[str]) -> dict[str, bytes]:
    """A tree's live index: files as the index writes them from random values, and some not."""
    files: dict[str, bytes] = {USE_INDEX: MARKER}
    values: dict[str, Number] = draw(st.dictionaries(ids, USES, max_size=60))
    for path in {use_index_path(object_id) for object_id in values}:
        if draw(st.integers(0, 5)) == 0:
            files[path] = draw(ODD_FILES)
        else:
            files[path] = dump_index_file({key: use for key, use in values.items() if use_index_path(key) == path})
    return files

"""The use index (verifier.scoring.useindex) kept beside the shards: after any run of landings,
each in its own score book over the tree the last one left, the index files say exactly what the
shards say; it is trusted only where it started complete, and built whole by one scan at the
first scored landing of a project scored before it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.useindex import (
    ANY_IDS,
    NAMED_IDS,
    ODD_IDS,
    PLAIN_IDS,
    blob_ids,
    index_trees,
    land,
    reference_index_writes,
    shard_sets,
)
from verifier.formats.usescores import UseEntry, parse_shard
from verifier.pipeline.scores import apply_writes
from verifier.scoring.use import ObjectFacts, ScoreBook
from verifier.scoring.useindex import MARKER, index_of, index_writes, is_live, parse_index_file
from verifier.state.layout import (
    USE_INDEX,
    USE_INDEX_ROOT,
    USE_SCORES,
    USE_SHARD_ROOT,
    finding_path,
    use_index_path,
    use_shard_path,
)
from verifier.state.view import DictTree

OPERATORS = ["op-a", "op-b"]
# Ids that share first digits (so several objects share an index file and a shard), and some that do not.
FINDINGS = [f"fnd_{prefix}{n:012x}" for prefix in ("aa00", "aa01", "ab00") for n in range(3)]
LINKS = [f"lnk_{prefix}{n:012x}" for prefix in ("aa00", "ab07") for n in range(3)]


def _facts(object_id: str, operator: str, target: int) -> ObjectFacts:
    if object_id.startswith("lnk_"):
        return ObjectFacts("link", object_id, operator, finding_id=FINDINGS[target % len(FINDINGS)],
                           hypothesis_id="H1")
    return ObjectFacts("finding", object_id, operator)


events = st.lists(st.tuples(st.sampled_from(["add", "remove", "replace"]), st.sampled_from(FINDINGS + LINKS),
                            st.sampled_from(OPERATORS), st.integers(0, 8)), min_size=1, max_size=6)


def _land(tree: dict[str, bytes], landing: list[tuple[str, str, str, int]]) -> None:
    book = ScoreBook(tree.get)
    for action, object_id, operator, target in landing:
        if action == "remove":
            book.remove(object_id)
        elif action == "replace":
            book.replace(_facts(object_id, operator, target))
        else:
            book.add(_facts(object_id, operator, target))
    for path, data in book.writes().items():
        if data is None:
            tree.pop(path, None)
        else:
            tree[path] = data


def _index_files(tree: dict[str, bytes]) -> dict[str, bytes]:
    return {path: data for path, data in tree.items() if path == USE_INDEX or path.startswith(f"{USE_INDEX_ROOT}/")}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(events, min_size=1, max_size=6))
def test_use_index_written_landing_by_landing_equals_the_index_of_the_shards(landings: list[
        list[tuple[str, str, str, int]]]) -> None:
    tree: dict[str, bytes] = {}
    for landing in landings:
        _land(tree, landing)
    shards = {path: parse_shard(data, path) for path, data in tree.items() if path.startswith(f"{USE_SHARD_ROOT}/")}
    if USE_SCORES not in tree:  # nothing scored yet: nothing to index
        assert not shards and not _index_files(tree)
        return
    assert is_live(tree.get)
    assert _index_files(tree) == index_of(shards)


def test_use_index_counts_a_withdrawn_object_as_zero() -> None:
    tree: dict[str, bytes] = {}
    finding, link = FINDINGS[0], LINKS[0]
    _land(tree, [("add", finding, "op-a", 0), ("add", link, "op-b", 0)])
    values = parse_index_file(tree[use_index_path(finding)], "index")
    assert values[finding] == 1.0 and values[link] == 1.0
    _land(tree, [("remove", link, "op-b", 0)])
    values = parse_index_file(tree[use_index_path(finding)], "index")
    assert values[finding] == 0 and values[link] == 0


def test_use_index_is_not_kept_piecemeal_on_a_project_scored_before_it() -> None:
    tree: dict[str, bytes] = {}
    _land(tree, [("add", FINDINGS[0], "op-a", 0)])
    # A project scored before the index: its shards and summary, no index and no marker.
    legacy = {path: data for path, data in tree.items() if path not in _index_files(tree)}
    _land(legacy, [("add", FINDINGS[5], "op-a", 0)])
    assert not _index_files(legacy) and not is_live(legacy.get)


def test_damaged_use_index_file_drops_the_marker() -> None:
    tree: dict[str, bytes] = {}
    _land(tree, [("add", FINDINGS[0], "op-a", 0)])
    tree[use_index_path(FINDINGS[1])] = b"[1, 2]\n"
    _land(tree, [("add", FINDINGS[1], "op-b", 0)])
    assert not is_live(tree.get)


def test_first_scored_landing_of_a_project_scored_before_the_index_builds_it_whole() -> None:
    tree: dict[str, bytes] = {}
    _land(tree, [("add", FINDINGS[0], "op-a", 0), ("add", FINDINGS[6], "op-b", 0), ("add", LINKS[3], "op-b", 6)])
    # A project scored before the index: shards and summary only, plus a stray index file.
    legacy = {path: data for path, data in tree.items() if path not in _index_files(tree)}
    legacy[f"{USE_INDEX_ROOT}/00.json"] = b"{}\n"
    book = ScoreBook(legacy.get)
    written = apply_writes(book, DictTree(legacy), {finding_path(FINDINGS[3]): b"finding: x\n"}, "op-a")
    assert written == 1
    for path, data in book.writes().items():
        if data is None:
            legacy.pop(path, None)
        else:
            legacy[path] = data
    shards = {path: parse_shard(data, path) for path, data in legacy.items() if path.startswith(f"{USE_SHARD_ROOT}/")}
    assert FINDINGS[0] in parse_index_file(legacy[use_index_path(FINDINGS[0])], "index")  # landed before: indexed
    assert is_live(legacy.get) and _index_files(legacy) == index_of(shards)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_trees(PLAIN_IDS | NAMED_IDS | ANY_IDS), st.lists(shard_sets(PLAIN_IDS | NAMED_IDS | ODD_IDS), min_size=1,
                                                                 max_size=5), st.booleans())
def test_index_files_edited_in_their_text_are_the_bytes_of_a_whole_parse_and_dump(
        start: dict[str, bytes], landings: list[dict[str, dict[str, UseEntry]]], by_blob_id: bool) -> None:
    # Landing after landing on the tree the last left (the process keeping what it read and wrote),
    # with the tree's blob ids or without: the same files as the rewrite that parses and dumps.
    edited, whole = dict(start), dict(start)
    for shards in landings:
        ids = blob_ids(edited) if by_blob_id else None
        try:
            expected = reference_index_writes(whole.get, shards, fresh=False)
        except ValueError:  # a file holding NaN: json will not write it back, on either road
            with pytest.raises(ValueError):
                index_writes(edited.get, shards, fresh=False, blob_id=ids)
            return
        written = index_writes(edited.get, shards, fresh=False, blob_id=ids)
        # A file that comes out as it was is not written again; the tree is the same.
        assert written == {path: data for path, data in expected.items()
                           if path == USE_INDEX or whole.get(path) != data}
        land(edited, written)
        land(whole, expected)
        assert edited == whole


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(shard_sets(), min_size=1, max_size=6))
def test_an_index_built_fresh_then_kept_matches_the_whole_rewrite(
        landings: list[dict[str, dict[str, UseEntry]]]) -> None:
    edited: dict[str, bytes] = {}
    whole: dict[str, bytes] = {}
    for n, shards in enumerate(landings):
        land(edited, index_writes(edited.get, shards, fresh=n == 0, blob_id=blob_ids(edited)))
        land(whole, reference_index_writes(whole.get, shards, fresh=n == 0))
    assert edited == whole


def test_a_damaged_index_file_known_by_its_blob_id_is_still_refused() -> None:
    finding = FINDINGS[0]
    shards = {use_shard_path(finding): {finding: UseEntry(type="finding", operator="op-a", present=True, u=1.0)}}
    tree = {USE_INDEX: MARKER, use_index_path(finding): b'{"' + finding.encode() + b'":x}\n'}
    assert index_writes(tree.get, shards, fresh=False, blob_id=blob_ids(tree)) == {USE_INDEX: None}


def test_an_index_file_json_would_spell_otherwise_is_rewritten_whole() -> None:
    # A key with DEL in it is printable to a YAML eye but json writes it escaped: the file is not
    # as this module writes it, so it is parsed and dumped, not edited in its text.
    finding = FINDINGS[0]
    odd = f'{{"{finding}":1.0,"{FINDINGS[3]}\x7f":2.0}}\n'.encode()  # another shard, the same file
    tree = {USE_INDEX: MARKER, use_index_path(finding): odd}
    shards = {use_shard_path(finding): {finding: UseEntry(type="finding", operator="op-a", present=True, u=3.0)}}
    written = index_writes(tree.get, shards, fresh=False, blob_id=blob_ids(tree))
    assert written == reference_index_writes(tree.get, shards, fresh=False)
    assert b"\\u007f" in (written[use_index_path(finding)] or b"")

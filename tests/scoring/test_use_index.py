"""The use index (verifier.scoring.useindex) kept beside the shards: after any run of landings,
each in its own score book over the tree the last one left, the index files say exactly what the
shards say; it is trusted only where it started complete, and built whole by one scan at the
first scored landing of a project scored before it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.formats.usescores import parse_shard
from verifier.pipeline.scores import apply_writes
from verifier.scoring.use import ObjectFacts, ScoreBook
from verifier.scoring.useindex import index_of, is_live, parse_index_file
from verifier.state.layout import (
    USE_INDEX,
    USE_INDEX_ROOT,
    USE_SCORES,
    USE_SHARD_ROOT,
    finding_path,
    use_index_path,
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

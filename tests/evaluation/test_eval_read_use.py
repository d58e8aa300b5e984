"""`read_use`: each shard read once, only the entries asked for checked; a withdrawn object is 0;
the use index read instead under its marker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.eval_bench_home import project_view_with
from verifier.errors import FormatError
from verifier.evaluation.history import read_use
from verifier.scoring.useindex import MARKER
from verifier.state.layout import USE_INDEX, use_index_path, use_shard_path

WANTED = "fnd_ab12000000000001"
GONE = "fnd_ab12000000000002"
OTHER = "fnd_ab12000000000003"  # same shard, never asked for


def _shard(other: object) -> bytes:
    entry = {"type": "extract", "operator": "op", "present": True, "u": 2.0}
    return json.dumps({WANTED: entry, GONE: {**entry, "present": False}, OTHER: other}).encode()


def test_read_use_reads_wanted_entries_and_ignores_a_shard_neighbour_it_never_asked_for(tmp_path: Path) -> None:
    assert use_shard_path(WANTED) == use_shard_path(OTHER)
    view = project_view_with(tmp_path, {use_shard_path(WANTED): _shard({"type": "extract"})})
    assert read_use(view, {WANTED, GONE, "fnd_cd340000000000ff"}) == {WANTED: 2.0, GONE: 0.0}


def test_read_use_refuses_a_malformed_entry_it_asked_for_naming_the_shard_and_object(tmp_path: Path) -> None:
    view = project_view_with(tmp_path, {use_shard_path(WANTED): _shard({"type": "extract"})})
    with pytest.raises(FormatError, match=OTHER):
        read_use(view, {WANTED, OTHER})


def test_read_use_reads_the_use_index_under_its_marker(tmp_path: Path) -> None:
    index = {WANTED: 3.0, GONE: 0}
    view = project_view_with(tmp_path, {use_shard_path(WANTED): _shard({"type": "extract"}), USE_INDEX: MARKER,
                                        use_index_path(WANTED): json.dumps(index).encode()})
    assert read_use(view, {WANTED, GONE, "fnd_cd340000000000ff"}) == {WANTED: 3.0, GONE: 0.0}


def test_read_use_refuses_a_use_index_file_that_is_not_numbers_naming_it(tmp_path: Path) -> None:
    view = project_view_with(tmp_path, {USE_INDEX: MARKER, use_index_path(WANTED): json.dumps({WANTED: "2"}).encode()})
    with pytest.raises(FormatError, match=use_index_path(WANTED)):
        read_use(view, {WANTED})

"""The scanner starts light (issue 26): what it reads from detect-secrets is cached, keyed by the
installed library, and ignored when it was written for another or does not parse; the frozen
table of invisible characters is what unicodedata says today."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from verifier.secrets import layers, patterns


def test_the_frozen_invisible_ranges_are_the_characters_unicodedata_calls_invisible() -> None:
    frozen = {chr(code) for code in range(0x80, 0x110000) if layers._FORMAT.fullmatch(chr(code))}
    assert frozen == set(layers.invisible_chars()), (
        f"Unicode {unicodedata.unidata_version} changed the format characters: regenerate INVISIBLE_RANGES")


def test_the_cache_holds_exactly_what_the_library_says_and_is_read_back(tmp_path: Path) -> None:
    cache = tmp_path / "stock.json"
    library = patterns.read_library()
    assert patterns.stock_detectors(cache) == library
    assert cache.is_file()
    # Read back, not recomputed: an entry changed in the file (same key) comes back changed.
    body = json.loads(cache.read_bytes())
    body["detectors"][0]["kind"] = "changed here"
    cache.write_text(json.dumps(body))
    assert patterns.stock_detectors(cache)[0].kind == "changed here"


def test_a_cache_written_for_another_library_or_malformed_is_rebuilt_from_the_library(tmp_path: Path) -> None:
    cache = tmp_path / "stock.json"
    library = patterns.read_library()
    patterns.stock_detectors(cache)
    good = json.loads(cache.read_bytes())
    bad_bodies = [
        {**good, "key": "0" * 64},  # another install of detect-secrets
        {**good, "detectors": [{**good["detectors"][0], "patterns": [["x", "not flags"]]}]},
        {**good, "detectors": [{**good["detectors"][0], "extra": 1}]},
        {**good, "detectors": "none"},
    ]
    for body in bad_bodies:
        cache.write_text(json.dumps(body))
        assert patterns.stock_detectors(cache) == library, body
        assert json.loads(cache.read_bytes()) == good
    cache.write_bytes(b"\xff not json")
    assert patterns.stock_detectors(cache) == library


def test_an_unwritable_cache_only_costs_the_library_read(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    assert patterns.stock_detectors(blocked / "stock.json") == patterns.read_library()


def test_the_scanner_runs_every_stock_detector_it_was_built_from() -> None:
    stock = {found.kind: found.patterns for found in patterns.read_library() if found.name not in patterns.SKIPPED}
    assert {detector.kind: detector.sources for detector in patterns.DETECTORS} == stock

"""Tests for verifier.checks.citation: exact excerpt location and the closest-match report."""

from __future__ import annotations

import functools
import random
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.checks.citation import ExcerptFound, ExcerptMissing, locate_excerpt
from verifier.text.extract import extract_text
from verifier.text.normalize import normalize

SOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "sources-raw"


@pytest.fixture(scope="module")
def note() -> str:
    return extract_text((SOURCES / "analyst-note-2026-03-12.txt").read_bytes(), "text/plain")


@pytest.fixture(scope="module")
def guide() -> str:
    data = (SOURCES / "conditioning-layers-buyers-guide.html").read_bytes()
    return extract_text(data, "text/html")


@pytest.fixture(scope="module")
def paper() -> str:
    data = (SOURCES / "verification-layer-eval-2026.pdf").read_bytes()
    return extract_text(data, "application/pdf")


@functools.cache
def _big_text(size: int, seed: int = 7) -> str:
    """Deterministic English-like filler of about `size` code points, already normalized."""
    rng = random.Random(seed)
    common = [
        "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "with", "was",
        "on", "be", "by", "at", "this", "are", "from", "or", "an", "which", "world", "model",
        "video", "robot", "policy", "evaluation", "verification", "conditioning", "layer",
    ]  # fmt: skip
    rare = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)) for _ in range(3000)
    ]
    vocab = common * 20 + rare
    sentences: list[str] = []
    length = 0
    while length < size:
        words = [rng.choice(vocab) for _ in range(rng.randint(8, 25))]
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return normalize(" ".join(sentences))[:size].strip()


def _sentence_start_near(text: str, offset: int) -> int:
    return text.index(". ", offset) + 2


def _change_middle_word(excerpt: str) -> str:
    words = excerpt.split(" ")
    words[len(words) // 2] = "QUIXOTIC"
    return " ".join(words)


# --- exact matches -----------------------------------------------------------------------------


def test_found_offsets_are_exact_in_each_fixture(note: str, guide: str, paper: str) -> None:
    cases = [
        (note, "Quillmark's pitch is that the world model is a commodity and the\ninterface"),
        (guide, "Halden &\u00a0Rowe charges per million conditioned frames"),
        (paper, "Filtering raised the mean real-world success rate from 58.3% to 66.1%"),
    ]
    for text, excerpt in cases:
        result = locate_excerpt(text, excerpt)
        assert isinstance(result, ExcerptFound), excerpt
        assert text[result.start : result.end] == normalize(excerpt)
        assert result.end - result.start == len(normalize(excerpt))


def test_excerpt_is_normalized_before_matching(note: str) -> None:
    raw = "  Kestrel Verifikation AG (Zu\u0308rich)\r\n sells   an audit\tservice "
    result = locate_excerpt(note, raw)
    assert isinstance(result, ExcerptFound)
    assert (
        note[result.start : result.end]
        == "Kestrel Verifikation AG (Z\u00fcrich) sells an audit service"
    )


def test_first_occurrence_wins() -> None:
    assert locate_excerpt("a b a b a b", "a b") == ExcerptFound(0, 3)
    assert locate_excerpt("x a b a b", "b a") == ExcerptFound(4, 7)


def test_match_is_exact_not_folded(note: str) -> None:
    # Case, quotes and hyphenation are not folded: each of these differs from the source.
    for excerpt in (
        "tessellate labs (Oslo)",
        "Nobody could give us an equivalent number for \u201cbetter world model\u201d",
        "2.7-billion-parameter video world-model",
    ):
        assert isinstance(locate_excerpt(note, excerpt), ExcerptMissing), excerpt


@pytest.mark.parametrize("excerpt", ["", " ", "\r\n\t\u00a0"])
def test_empty_excerpt_is_missing(note: str, excerpt: str) -> None:
    assert locate_excerpt(note, excerpt) == ExcerptMissing(0, 0.0, "")


def test_empty_text_is_missing() -> None:
    assert locate_excerpt("", "anything") == ExcerptMissing(0, 0.0, "")


# --- closest match on a miss -------------------------------------------------------------------


def test_one_word_changed_points_at_the_original_passage(note: str) -> None:
    original = "Tessellate says RolloutGuard rejected 18.4% of the 2.1 million eight-second clips"
    result = locate_excerpt(note, original.replace("rejected", "accepted"))
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == note.index(original)
    assert 80 < result.similarity < 100
    assert (
        result.closest_text == note[result.closest_offset : result.closest_offset + len(original)]
    )


def test_one_word_changed_in_the_pdf(paper: str) -> None:
    original = (
        "The verification layer rejected 21.7% of Northgate rollouts and 34.9% of OpenWM-1 "
        "rollouts. To keep the comparison fair, the unfiltered policies were trained on a "
        "random subsample of the same size as the filtered set."
    )
    result = locate_excerpt(paper, original.replace("fair", "honest"))
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == paper.index(original)
    assert result.similarity > 90


@pytest.mark.parametrize("position", [0, 300_000, 999_000])
def test_near_miss_in_a_1mb_text_points_at_the_right_place(position: int) -> None:
    text = _big_text(1_000_000)
    start = 0 if position == 0 else _sentence_start_near(text, position - 600)
    original = text[start : start + 500]
    result = locate_excerpt(text, _change_middle_word(original))
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == start
    assert result.similarity > 95
    assert text.startswith(result.closest_text, result.closest_offset)


def test_near_miss_in_a_1mb_text_is_fast() -> None:
    text = _big_text(1_000_000)
    start = _sentence_start_near(text, 600_000)
    excerpt = _change_middle_word(text[start : start + 500])
    began = time.perf_counter()
    result = locate_excerpt(text, excerpt)
    elapsed = time.perf_counter() - began
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == start
    # Measured at about 35 ms; the bound is loose so a slow CI machine does not flake.
    assert elapsed < 1.0


def test_case_only_difference_is_placed_correctly() -> None:
    text = _big_text(200_000)
    start = _sentence_start_near(text, 120_000)
    original = text[start : start + 200]
    result = locate_excerpt(text, original.upper())
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == start
    # Similarity is reported on the original strings, so a case change is not "100% similar".
    assert result.similarity < 100


def test_paraphrase_with_no_verbatim_piece_still_lands_nearby() -> None:
    text = _big_text(200_000)
    start = _sentence_start_near(text, 80_000)
    words = text[start : start + 400].split(" ")
    # Replace every third word: no 12-character piece survives verbatim in most places.
    paraphrase = " ".join("zz" if i % 3 == 1 else word for i, word in enumerate(words))
    result = locate_excerpt(text, paraphrase)
    assert isinstance(result, ExcerptMissing)
    assert abs(result.closest_offset - start) < 20


def test_long_excerpt_changed_near_its_end() -> None:
    text = _big_text(300_000)
    start = _sentence_start_near(text, 150_000)
    original = text[start : start + 5_000]
    excerpt = original[:-40] + " a different ending to this long quotation"
    result = locate_excerpt(text, excerpt)
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == start
    assert len(result.closest_text) == len(normalize(excerpt))
    assert result.similarity > 95


def test_excerpt_longer_than_the_text() -> None:
    result = locate_excerpt("short source", "short source, and then a great deal more text")
    assert isinstance(result, ExcerptMissing)
    assert result.closest_offset == 0
    assert result.closest_text == "short source"


# --- properties --------------------------------------------------------------------------------


@given(st.text(), st.data())
def test_any_slice_of_normalized_text_is_found_where_it_is_equal(
    raw: str, data: st.DataObject
) -> None:
    text = normalize(raw)
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, len(text)))
    piece = text[i:j]
    needle = normalize(piece)
    result = locate_excerpt(text, piece)
    if not needle:
        assert result == ExcerptMissing(0, 0.0, "")
        return
    assert isinstance(result, ExcerptFound)
    assert text[result.start : result.end] == needle
    # The first occurrence is reported, so it is never after the slice it came from.
    assert result.start <= i + (len(piece) - len(piece.lstrip()))


@given(st.text(max_size=300), st.text(min_size=1, max_size=120))
def test_a_miss_always_reports_a_real_passage(text_raw: str, excerpt: str) -> None:
    text = normalize(text_raw)
    result = locate_excerpt(text, excerpt)
    if isinstance(result, ExcerptFound):
        assert text[result.start : result.end] == normalize(excerpt)
        return
    assert 0 <= result.closest_offset <= len(text)
    assert text[result.closest_offset :].startswith(result.closest_text)
    assert 0.0 <= result.similarity <= 100.0


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(65, 1_500))
def test_a_miss_in_a_large_text_reports_a_real_passage(seed: int, length: int) -> None:
    # Large texts take the candidate-narrowing path; its offsets must be real offsets too.
    text = _big_text(40_000, seed=1)
    rng = random.Random(seed)
    start = rng.randrange(0, len(text) - length)
    excerpt = _change_middle_word(text[start : start + length])
    result = locate_excerpt(text, excerpt)
    if isinstance(result, ExcerptFound):  # the changed word may be cut off at a slice edge
        assert text[result.start : result.end] == normalize(excerpt)
        return
    assert text[result.closest_offset :].startswith(result.closest_text)
    assert abs(result.closest_offset - start) <= 10

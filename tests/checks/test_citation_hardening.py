"""Citations: an excerpt shorter than the project's minimum (default 20 characters) is refused,
since a few letters occur in any source; the excerpt side is normalised like the source side, so
a quote copied with a byte-order mark, in NFD or with non-breaking spaces still matches."""

from __future__ import annotations

import unicodedata

from tests.support.hostile import assert_refused_cleanly
from tests.support.world import NOTE_ID, World
from verifier.agentkit.objects import finding_file
from verifier.checks.extract import check_finding_file
from verifier.constants import MIN_EXCERPT_CHARS
from verifier.formats.project import parse_project

SOURCE = "The caf\u00e9 team said: verification layers ship first, before any generator is sold to buyers."
PASSAGE = "verification layers ship first"


def _codes(excerpt: str, text: str = SOURCE, *, min_chars: int = MIN_EXCERPT_CHARS) -> list[str]:
    path, data = finding_file(source_id=NOTE_ID, source_text=text, excerpt=excerpt, statement="A claim.",
                              limitation="One note.", leaf_id="extract-1")
    found = check_finding_file(path, data, text, source_id=NOTE_ID, leaf_id="extract-1", min_chars=min_chars)
    return [problem.code for problem in found]


def test_a_one_letter_excerpt_is_refused() -> None:
    assert _codes("v") == ["excerpt_too_short"]
    assert _codes("verification") == ["excerpt_too_short"]


def test_the_minimum_is_a_project_setting() -> None:
    assert _codes(PASSAGE, min_chars=40) == ["excerpt_too_short"]
    project, _ = parse_project("---\nproject: demo-x\nmin_excerpt_chars: 40\n---\n", "PROJECT.md")
    assert project.min_excerpt_chars == 40
    assert parse_project("---\nproject: demo-x\n---\n", "PROJECT.md")[0].min_excerpt_chars == 20


def test_an_excerpt_of_the_minimum_length_passes() -> None:
    assert len(PASSAGE) >= MIN_EXCERPT_CHARS
    assert _codes(PASSAGE) == []


def test_an_excerpt_copied_with_a_byte_order_mark_matches() -> None:
    assert _codes("\ufeff" + PASSAGE) == []
    assert _codes(PASSAGE, text="\ufeff" + SOURCE) == []


def test_nfd_and_non_breaking_space_excerpts_match() -> None:
    quote = "The caf\u00e9 team said: verification"
    assert _codes(unicodedata.normalize("NFD", quote)) == []
    assert _codes(quote.replace(" ", "\u00a0")) == []


def test_a_short_excerpt_is_refused_cleanly_end_to_end(world: World) -> None:
    world.leaf("extract-1")
    files = world.findings("extract-1")
    text = world.agent.source_text("world-model-eval", NOTE_ID, world.tip())
    letter = next(ch for ch in text if ch.isalpha())
    path, data = finding_file(source_id=NOTE_ID, source_text=text, excerpt=letter, statement="Anything at all.",
                              limitation="None.", leaf_id="extract-1")
    files[path] = data
    assert_refused_cleanly(world, world.creation("extract-1", files), "excerpt_too_short")

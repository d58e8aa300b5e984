"""`rw new ...` writes object files the verifier accepts: ids and offsets computed from the content,
a quote that is not in the source refused with the closest passage (one shorter than the project
asks, as the extract check would), and `rw check` passing on what
it wrote, for each leaf kind an agent works on."""

from __future__ import annotations

from pathlib import Path

from tests.support.agent import OutsideAgent, sentences
from tests.support.workdir import working_folder
from tests.support.world import NOTE_ID, World
from verifier.checks.citation import ExcerptFound, locate_excerpt
from verifier.formats.finding import parse_finding
from verifier.state.layout import FIELD_GUIDE


def agent(tmp_path: Path) -> OutsideAgent:
    # These commands never call the service; rw runs in this process.
    return OutsideAgent(tmp_path, "http://127.0.0.1:9", "rwt_unused", in_process=True)


def test_finding_ids_and_offsets_are_computed_and_a_misquote_is_refused(world: World, tmp_path: Path) -> None:
    world.leaf("extract-1")
    work = working_folder(world, "extract-1", tmp_path / "w")
    text = work.source_text(NOTE_ID)
    rw = agent(tmp_path)
    quote = sentences(text, 1, skip=2)[0]
    refused = rw.rw("new", "finding", "--excerpt", quote.replace(" ", "  ", 1)[:-1] + "!", "--statement", "s",
                    "--limitation", "l", cwd=work.root, ok=False)
    assert refused.code == 1 and "closest passage is at offset" in refused.err and "% similar" in refused.err
    path = rw.rw("new", "finding", "--excerpt", quote, "--statement", "s", "--limitation", "l", cwd=work.root).out
    finding = parse_finding((work.root / path.strip()).read_bytes(), path)
    found = locate_excerpt(text, quote)
    assert isinstance(found, ExcerptFound)
    assert (finding.location.start, finding.location.end) == (found.start, found.end)
    again = rw.rw("new", "finding", "--excerpt", quote, "--statement", "s", "--limitation", "l", cwd=work.root,
                  ok=False)
    assert again.code != 0 and "already exists" in again.err


def test_a_scout_source_passes_the_local_check(world: World, tmp_path: Path) -> None:
    world.leaf("scout-1", "scout", source_id=None, gap="teams that stopped paying for verification")
    work = working_folder(world, "scout-1", tmp_path / "w")
    page = tmp_path / "page.txt"
    page.write_text("Three of the teams we followed stopped paying for verification in 2026. " * 3)
    rw = agent(tmp_path)
    written = rw.rw("new", "source", "--url", "https://news.example.org/a/churn", "--file", str(page),
                    "--media-type", "text/plain", "--language", "en", "--rights", "public", "--published",
                    "2026-06-01", cwd=work.root).out.split()
    assert len(written) == 2 and all((work.root / path).exists() for path in written)
    checked = rw.rw("check", cwd=work.root)
    assert checked.out.startswith("OK"), checked.out


def test_a_guide_line_is_attributed_and_passes(world: World, tmp_path: Path) -> None:
    world.leaf("guide-1", "guide", source_id=None)
    work = working_folder(world, "guide-1", tmp_path / "w")
    rw = agent(tmp_path)
    rw.rw("new", "guide-line", "--text", "The analyst note counts teams, not contracts.", cwd=work.root)
    last = (work.root / FIELD_GUIDE).read_text().splitlines()[-1]
    assert last == f"The analyst note counts teams, not contracts. (agent: {world.agent.handle})"
    assert rw.rw("check", cwd=work.root).out.startswith("OK")


def test_a_review_amendment_needs_its_field(world: World, tmp_path: Path) -> None:
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    target = sorted(world.findings("extract-1"))[0]
    world.leaf("review-1", "review", source_id=None, object_path=target)
    # Another agent of the same operator reviews: an agent never reviews its own objects.
    work = working_folder(world, "review-1", tmp_path / "w", agent=("agent-b", world.agent.operator))
    rw = agent(tmp_path)
    bare = rw.rw("new", "review", "--decision", "amend", "--reason", "r", cwd=work.root, ok=False)
    assert bare.code != 0 and "amend" in bare.err
    rw.rw("new", "review", "--decision", "amend", "--reason", "The limitation leaves out who chose the teams.",
          "--amend-limitation", "Eleven teams the analyst chose.", cwd=work.root)
    assert rw.rw("check", cwd=work.root).out.startswith("OK")


def test_an_excerpt_shorter_than_the_project_asks_is_refused_before_rw_check(world: World, tmp_path: Path) -> None:
    world.leaf("extract-1")
    work = working_folder(world, "extract-1", tmp_path / "w")
    text = work.source_text(NOTE_ID)
    rw = agent(tmp_path)
    words = sentences(text, 1, skip=2)[0][:12]  # in the text, under PROJECT.md's default of 20 characters
    refused = rw.rw("new", "finding", "--excerpt", words, "--statement", "s", "--limitation", "l", cwd=work.root,
                    ok=False)
    assert refused.code == 1 and "12 characters" in refused.err and "at least 20" in refused.err, refused.err
    assert not list(work.root.glob("findings/*.md"))  # nothing written


def test_a_guide_line_of_several_lines_is_refused_before_anything_is_written(world: World, tmp_path: Path) -> None:
    world.leaf("guide-1", "guide", source_id=None)
    work = working_folder(world, "guide-1", tmp_path / "w")
    before = (work.root / FIELD_GUIDE).read_bytes()
    refused = agent(tmp_path).rw("new", "guide-line", "--text", "A lesson.\nA second line, unattributed.",
                                 cwd=work.root, ok=False)
    assert refused.code == 2 and "one line of plain text" in refused.err and "U+000A" in refused.err, refused.err
    assert (work.root / FIELD_GUIDE).read_bytes() == before

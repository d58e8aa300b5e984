"""`rw check` and the verifier agree: the golden extract cases (tests/golden/checks.json), made as
an agent makes them in a working folder, give the same rejections (code, where, message) from the
local check as from the verifier's pipeline on the same patch and trace."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.workdir import working_folder
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.agentkit.localcheck import result_json, run_checks
from verifier.agentkit.objects import finding_file
from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.workdir import Work, make_patch, manifest_for
from verifier.errors import Rejection
from verifier.pipeline.submit import Submission

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "checks.json").read_text())


def write_findings(work: Work, count: int = 3, replace: dict[str, str] | None = None) -> None:
    text = work.source_text(NOTE_ID)
    sentences = [part.strip() + "." for part in text.split(". ") if len(part.split()) >= 6][:count]
    for number, sentence in enumerate(sentences):
        path, data = finding_file(source_id=NOTE_ID, source_text=text, excerpt=sentence, statement=f"Claim {number}.",
                                  limitation="A limit.", leaf_id=work.state.leaf_id)
        for old, new in (replace or {}).items():
            data = data.replace(old.encode(), new.encode(), 1) if number == 0 else data
        work.write(path, data)


def bad_id(work: Work) -> None:
    write_findings(work)
    first = sorted((work.root / "findings").rglob("*.yaml"))[0]
    first.write_text(first.read_text().replace(f"finding_id: {first.stem}", "finding_id: fnd_0000000000000000"))


def misquote(work: Work) -> None:
    """The first finding's excerpt with two words the source does not have in front."""
    write_findings(work)
    first = sorted((work.root / "findings").rglob("*.yaml"))[0]
    lines = first.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("excerpt: "))
    value = lines[at][len("excerpt: "):]
    quote = value[0] if value[0] in "'\"" else ""
    lines[at] = f"excerpt: {quote}Zq Zq {value[len(quote):]}"
    first.write_text("\n".join(lines))


def unexpected_file(work: Work) -> None:
    write_findings(work)
    work.write("notes/x.md", b"hi\n")


CASES: dict[str, Callable[[Work], None]] = {
    "extract/accepted": write_findings,
    "extract/too_few": lambda work: write_findings(work, 2),
    "extract/excerpt_not_substring": misquote,
    "extract/wrong_location": lambda work: write_findings(work, 3, {"start: ": "start: 1", "end: ": "end: 1"}),
    "extract/limitation_blank": lambda work: write_findings(work, 3, {"limitation: A limit.": "limitation: '  '"}),
    "extract/bad_id": bad_id,
    "extract/wrong_leaf": lambda work: write_findings(work, 3, {"leaf_id: extract-": "leaf_id: other-"}),
    "extract/unknown_field": lambda work: write_findings(work, 3, {"statement:": "mood: happy\nstatement:"}),
    "extract/unexpected_file": unexpected_file,
}


def codes(rejections: list[Rejection]) -> list[tuple[str, str | None, str]]:
    return [(r.code, r.where, r.message) for r in rejections]


@pytest.mark.parametrize("name", sorted(CASES))
def test_rw_check_gives_the_verifiers_rejections(world: World, tmp_path: Path, name: str) -> None:
    assert name in GOLDEN  # the same cases as the golden check tests
    world.leaf("extract-agree")
    work = working_folder(world, "extract-agree", tmp_path / "work")
    CASES[name](work)
    local = run_checks(work, NOW, "sk-test")
    patch = make_patch(work)
    bundle = TraceLog(work.trace_dir).bundle(manifest_for(work, "sk-test"), patch)
    verdict = world.submit(Submission(SLUG, "extract-agree", patch, bundle, world.agent.token))
    assert codes(local.trace_problems + local.rejections) == codes(verdict.rejections), verdict.line()
    assert (verdict.outcome == "accepted") == (name == "extract/accepted") == local.ok
    if name != "extract/accepted":
        assert local.rejections[0].code in {code for code, _ in GOLDEN[name]} | {"outside_write_set"}


def test_rw_check_refuses_a_trace_below_the_level_its_leaf_asks_for(world: World, tmp_path: Path) -> None:
    world.leaf("extract-l3", trace_level="L3")  # as a warm leaf or the controlled arm's asks
    work = working_folder(world, "extract-l3", tmp_path / "work")  # its trace meets L2: no context.md
    write_findings(work)
    local = run_checks(work, NOW, "sk-test")
    patch = make_patch(work)
    bundle = TraceLog(work.trace_dir).bundle(manifest_for(work, "sk-test"), patch)
    verdict = world.submit(Submission(SLUG, "extract-l3", patch, bundle, world.agent.token))
    assert verdict.outcome == "rejected" and local.ok and local.trace_problems  # the patch passes; its trace not
    assert codes(local.trace_problems) == codes(verdict.rejections)
    assert local.trace_problems[0].code == "trace_level" and "asks for an L3 trace" in local.trace_problems[0].message
    assert result_json(local)["ok"] is False  # `rw check --json` and the MCP check: not ok, as the exit code

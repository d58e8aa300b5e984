"""The Field Guide rules (design §3.9): at most 150 lines, and every lesson line ends with
(agent: id) or (human: id); lines a contributor adds carry that contributor's own attribution."""

from __future__ import annotations

import re

from verifier.checks.context import CheckContext, CheckResult
from verifier.constants import MAX_GUIDE_LINES as MAX_LINES
from verifier.errors import Rejection
from verifier.state.layout import FIELD_GUIDE

ATTRIBUTION = re.compile(r"\((agent|human): ([a-z0-9][a-z0-9_.-]{0,62})\)\s*$")


HEADING = re.compile(r"^#{1,6}( |$)")


def _lesson_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, text) of lesson lines: every line that is not blank, not a Markdown heading
    (`# ` to `###### `) and not part of a comment that starts a line and ends one. Text after
    `-->` on a line, or a `#word`, is visible when the guide renders, so it is a lesson."""
    lessons: list[tuple[int, str]] = []
    in_comment = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if in_comment or stripped.startswith("<!--"):
            closes = "-->" in stripped
            in_comment = not closes
            if not closes or stripped.endswith("-->"):
                continue
        if stripped and not HEADING.match(stripped):
            lessons.append((number, line))
    return lessons


def guide_problems(old: bytes | None, new: bytes, *, actor: str, actor_type: str) -> list[Rejection]:
    """Why `new` is not an acceptable Field Guide written by `actor` over `old`."""
    try:
        text = new.decode("utf-8")
    except UnicodeDecodeError:
        return [Rejection("bad_format", "FIELD-GUIDE.md is not UTF-8", FIELD_GUIDE)]
    lines = text.splitlines()
    problems: list[Rejection] = []
    if len(lines) > MAX_LINES:
        problems.append(Rejection("guide_budget", f"the Field Guide has {len(lines)} lines; the limit is {MAX_LINES}",
                                  FIELD_GUIDE))
    old_lines = old.decode("utf-8", "replace").splitlines() if old else []
    before = set(old_lines)
    expected_kind = "human" if actor_type == "human" else "agent"
    kept = set(lines)
    removed = [line for _, line in _lesson_lines(old_lines) if line not in kept]
    added = [line for _, line in _lesson_lines(lines) if line not in before]
    if actor_type != "human":
        # Agents add lines or replace them one for one; they never drop a person's lesson.
        people = [line for line in removed if (m := ATTRIBUTION.search(line)) and m.group(1) == "human"]
        if people:
            problems.append(Rejection("guide_removal", f"only people remove a person's lesson: {people[0][:80]!r}",
                                      FIELD_GUIDE))
        elif len(removed) > len(added):
            problems.append(Rejection("guide_removal", f"the edit removes {len(removed)} lessons and adds "
                                      f"{len(added)}; a guide leaf adds lines or replaces them one for one",
                                      FIELD_GUIDE))
    for number, line in _lesson_lines(lines):
        match = ATTRIBUTION.search(line)
        where = f"{FIELD_GUIDE}:{number}"
        if match is None:
            problems.append(Rejection("guide_attribution", "a lesson line ends with (agent: id) or (human: id)", where))
        elif line not in before and (match.group(1), match.group(2)) != (expected_kind, actor):
            problems.append(Rejection(
                "guide_attribution",
                f"a new line by {actor} ends with ({expected_kind}: {actor}), not ({match.group(1)}: {match.group(2)})",
                where))
    return problems


def check_guide(ctx: CheckContext) -> CheckResult:
    if set(ctx.writes) != {FIELD_GUIDE} or ctx.writes[FIELD_GUIDE] is None:
        return CheckResult([Rejection("unexpected_file", "a guide leaf only edits FIELD-GUIDE.md")], "")
    new = ctx.writes[FIELD_GUIDE]
    assert new is not None
    old = ctx.base_tree.read(FIELD_GUIDE) if ctx.base_tree is not None else None
    problems = guide_problems(old, new, actor=ctx.actor, actor_type="agent")
    added = len(set(new.decode("utf-8", "replace").splitlines()) - set((old or b"").decode("utf-8", "replace")
                                                                         .splitlines()))
    return CheckResult(problems, f"{added} Field Guide lines added or replaced")

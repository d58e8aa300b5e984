"""Research lessons for the Field Guide (design §3.9, issue 23): what a project's own history says
about the world it studies, stated as a lesson a guide leaf can write down. Pure.

Two sources of lessons, both about the research, never about how to fill in a leaf:

- failed sources (checks.failed_sources: a rejected scout's URL that did not resolve lands as a
  `status: failed` record with the reason): LESSON_REPEATS or more of one host failing for one
  kind of reason (a paywall, a login wall, a refusal, a dead link) is a lesson about that host;
- skeptic notes ("none found after N sources"): a scout request's `why` says why the evidence
  was not where one would look (for example "the metric is reported quarterly, not monthly").

Rejection codes that repeat (excerpt_not_found, bad_format) are leaf craft: the Wiki Maintainer
writes those up in the ops wiki (roles.maintainer), and nothing here turns them into a lesson.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from verifier.constants import LESSON_REPEATS

LESSON_CHARS = 600  # a lesson fits a leaf's gap and one Field Guide paragraph


@dataclass(frozen=True)
class FailedSource:
    source_id: str
    url: str
    failure: str  # the record's `failure`: why the verifier could not fetch it


@dataclass(frozen=True)
class SkepticNote:
    hypothesis_id: str
    gap: str  # what the skeptic asked a scout to look for
    why: str  # why it was not found where one would look


@dataclass(frozen=True)
class Lesson:
    mention: str  # the word the Field Guide names when it already has the lesson (a host, a reason)
    text: str  # the lesson, stated
    evidence: tuple[str, ...]  # source ids or hypothesis ids it comes from


# What a fetch failure says about the host, most specific first: (pattern over the reason, lesson).
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b402\b|paywall|subscri|payment", re.I), "paywalls its documents"),
    (re.compile(r"\b401\b|log ?in|sign ?in|authori[sz]", re.I), "puts its documents behind a login"),
    (re.compile(r"robots", re.I), "disallows fetching in its robots.txt"),
    (re.compile(r"\b403\b|forbidden", re.I), "refuses the verifier's fetch (HTTP 403)"),
    (re.compile(r"\b404\b|\b410\b|not found", re.I), "no longer serves the documents linked to it"),
    (re.compile(r"\b429\b|rate.?limit", re.I), "rate-limits fetches"),
    (re.compile(r"time(d)? ?out|did not answer", re.I), "does not answer in time"),
)


def host_of(url: str) -> str:
    """The host a URL names, lower case, without a leading `www.` ("" when it names none)."""
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def failure_kind(reason: str) -> str | None:
    """What a failed fetch's reason says about its host, or None when it says nothing general
    (an offline check, a malformed response: bad luck with one URL, not a lesson)."""
    return next((lesson for pattern, lesson in _KINDS if pattern.search(reason)), None)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def research_lessons(failed: Iterable[FailedSource], notes: Iterable[SkepticNote],
                     repeats: int = LESSON_REPEATS) -> list[Lesson]:
    """The lessons the history holds, host lessons first (most failures first), then skeptic notes."""
    by_host: dict[tuple[str, str], list[str]] = {}
    for source in failed:
        host, kind = host_of(source.url), failure_kind(source.failure)
        if host and kind:
            by_host.setdefault((host, kind), []).append(source.source_id)
    lessons = [
        Lesson(host, _one_line(f"{host} {kind}: {len(ids)} scouted sources from it failed "
                               f"({', '.join(sorted(ids)[:5])}). Look for the same document elsewhere (the "
                               f"publisher's own release, a public filing, an archive) before scouting {host} "
                               "again.")[:LESSON_CHARS], tuple(sorted(ids)))
        for (host, kind), ids in sorted(by_host.items(), key=lambda item: (-len(item[1]), item[0]))
        if len(ids) >= repeats
    ]
    seen: set[str] = set()
    for note in notes:
        why = _one_line(note.why)
        if not why or why.lower() in seen:
            continue
        seen.add(why.lower())
        lessons.append(Lesson(why[:80], _one_line(f"Looking for {note.gap} ({note.hypothesis_id}), the skeptic "
                                                  f"found none: {why}")[:LESSON_CHARS], (note.hypothesis_id,)))
    return lessons


def known(lesson: Lesson, field_guide: str) -> bool:
    """Whether the Field Guide already states the lesson (it names the host or the reason)."""
    return lesson.mention.lower() in field_guide.lower()

"""A page path (see `verifier.ui.render`) to its template and view-model, and every page path of a
project (for the static site and the leak test). Pure."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verifier.formats.usescores import UseSummary
from verifier.ui import pages
from verifier.ui.readmodel import ProjectReader

_COMMIT = re.compile(r"^[0-9a-f]{40}\.html$")


@dataclass(frozen=True)
class Lookups:
    """What a page may need from outside the tip's tree, passed in by the edge."""

    history: Callable[[], list[tuple[str, UseSummary]]]  # (time, scores/use.json), oldest first
    commit: Callable[[str], dict[str, Any] | None]  # a commit's message, author and changed paths


_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_NUMBER = re.compile(r"^[1-9][0-9]{0,8}$")


def _numbered(part: str) -> int | None:
    stem = part.removesuffix(".html")
    return int(stem) if stem != part and _NUMBER.match(stem) else None


def _findings(reader: ProjectReader, parts: list[str]) -> dict[str, Any] | None:
    if len(parts) != 3 or (page := _numbered(parts[2])) is None:
        return None
    facet, value = parts[0], parts[1]
    if facet == "all" and value != "all":
        return None
    return pages.findings_page(reader, facet, value, page)


def page_model(reader: ProjectReader, rel: str, lookups: Lookups) -> tuple[str, dict[str, Any]] | None:
    """(template, view-model) of the project page at `rel` (the path after p/<slug>/), or None."""
    parts = rel.split("/") if rel else ["index.html"]
    if any(not _SEGMENT.match(part) for part in parts):
        return None
    head, rest = parts[0], parts[1:]
    found: tuple[str, dict[str, Any] | None] | None = None
    if not rest:
        simple: dict[str, tuple[str, Callable[[ProjectReader], dict[str, Any]]]] = {
            "index.html": ("project.html", pages.project_page),
            "hypotheses.html": ("hypotheses.html", pages.hypotheses_page),
            "holds.html": ("holds.html", pages.holds_page)}
        if head in simple:
            template, build = simple[head]
            found = (template, build(reader))
    elif head == "hypotheses" and len(rest) == 1 and rest[0].endswith(".html"):
        found = ("hypotheses.html", pages.hypothesis_page(reader, rest[0].removesuffix(".html")))
    elif head == "findings":
        found = ("findings.html", _findings(reader, rest))
    elif head == "ledger" and len(rest) == 1 and (number := _numbered(rest[0])) is not None:
        found = ("ledger.html", pages.ledger_page(reader, number))
    elif head == "who" and len(rest) == 1 and rest[0].endswith(".html"):
        found = ("who.html", pages.who_page(reader, rest[0].removesuffix(".html"), lookups.history()))
    elif head == "commits" and len(rest) == 1 and _COMMIT.match(rest[0]):
        sha = rest[0][:40]
        # Only commits the ledger names: anything else in the object store was never handed out.
        named = any(row.commit == sha for row in reader.rows)
        found = ("commit.html", pages.commit_page(reader, lookups.commit(sha) if named else None))
    if found is None or found[1] is None:
        return None
    return found[0], found[1]


def _findings_paths(reader: ProjectReader) -> list[str]:
    total = pages.pages_count(len(reader.finding_ids), pages.FINDINGS_PER_PAGE)
    paths = [f"findings/all/all/{n}.html" for n in range(1, total + 1)]
    for facet, options in pages.findings_facets(reader).items():
        for option in options:
            count = len(pages.matching(reader, facet, option["value"]))
            paths += [f"findings/{facet}/{option['value']}/{n}.html"
                      for n in range(1, pages.pages_count(count, pages.FINDINGS_PER_PAGE) + 1)]
    return paths


def project_paths(reader: ProjectReader) -> list[str]:
    """Every page of one project, relative to p/<slug>/."""
    paths = ["index.html", "hypotheses.html", "holds.html"]
    paths += [f"hypotheses/{h.hypothesis_id}.html" for h in reader.hypotheses]
    paths += _findings_paths(reader)
    paths += [f"ledger/{n}.html" for n in range(1, pages.pages_count(len(reader.rows), pages.ROWS_PER_PAGE) + 1)]
    paths += [f"who/{pages.key_of(name)}.html" for name in pages.people(reader)]
    paths += [f"commits/{commit}.html" for commit in sorted({row.commit for row in reader.rows if row.commit})]
    return paths

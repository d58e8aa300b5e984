"""One project at one commit, read for the UI through the verifier's own readers and strict models.

Everything is read lazily and once: a page asks only for what it shows (the findings list parses
the 50 findings of its page, not the corpus). Reading goes through a read-only tree (the same
`read`/`list_dir`/`walk` view the checks use) and a `text_of` callable for derived source text, so
the pages built from it (`verifier.ui.pages`) are plain functions with no git in them.

What this never reads: the seal files (`scores/baseline/<H>.sealed`), trace contents, the trace
store. An opened baseline (`scores/baseline/<H>.json`) is read only for a hypothesis whose
resolution record says it was opened at resolution.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from verifier.errors import FormatError, LedgerIntegrityError
from verifier.formats.document import Report
from verifier.formats.finding import Finding, parse_finding
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.ledger import LedgerRow
from verifier.formats.link import Link, parse_link
from verifier.formats.project import ProjectFile
from verifier.formats.source import SourceRecord
from verifier.formats.usescores import UseEntry, UseSummary
from verifier.pipeline.ledger import read_chain
from verifier.roles.records import ResolutionRecord, parse_record, read_records
from verifier.state.layout import (
    DELTAS_DIR,
    LINKS_DIR,
    PROPOSALS_DIR,
    RESOLUTION_SCORES,
    finding_path,
    opened_path,
    queue_path,
)
from verifier.state.project import HeldObject, ProjectView, current_hypothesis, walk
from verifier.store.gitrepo import GitTree

UNKNOWN = "unknown"
# Findings are written by the verifier's own YAML dumper: the top-level key starts its line.
_SOURCE_LINE = re.compile(rb"^source_id: (src_[0-9a-f]{16})$", re.MULTILINE)
_FINDING_LINE = re.compile(rb"^finding_id: (fnd_[0-9a-f]{16})$", re.MULTILINE)
TextOf = Callable[[str], str | None]


@dataclass(frozen=True)
class HeldItem:
    held: HeldObject
    files: dict[str, bytes]  # corpus path -> the queued bytes


class ProjectReader:
    """Lazily read facts of one project tree; each property is read at most once."""

    def __init__(self, view: GitTree, slug: str, now: datetime, text_of: TextOf, commit: str | None = None) -> None:
        self.view = view
        self.slug = slug
        self.now = now
        self.text_of = text_of
        self.commit = commit
        self.state = ProjectView(view, commit)
        self._findings: dict[str, Finding | None] = {}
        # Derived lists the pages compute once per reader (e.g. a filter's matching findings).
        self.memo: dict[tuple[str, ...], list[str]] = {}

    def _json(self, path: str) -> Any:
        data = self.view.read(path)
        try:
            return json.loads(data) if data else {}
        except ValueError:
            return {}

    @property
    def project(self) -> ProjectFile:
        return self.state.project

    @cached_property
    def use(self) -> UseSummary:
        try:
            return self.state.use
        except FormatError:
            return UseSummary()  # a page shows what it can read

    @cached_property
    def resolution(self) -> dict[str, Any]:
        value: dict[str, Any] = self._json(RESOLUTION_SCORES)
        return value

    def _entry(self, object_id: str) -> UseEntry | None:
        try:
            return self.state.use_entry(object_id)
        except FormatError:
            return None

    def operator_of(self, object_id: str) -> str:
        entry = self._entry(object_id)
        return entry.operator if entry is not None else UNKNOWN

    def use_of(self, object_id: str) -> float:
        entry = self._entry(object_id)
        return float(entry.u) if entry is not None and entry.present else 0.0

    @cached_property
    def hypotheses(self) -> list[Hypothesis]:
        """PROJECT.md's order, then any other hypothesis file by id."""
        order = list(self.project.hypotheses)
        files = sorted(set(self.state.hypothesis_ids) - set(order))
        found = (current_hypothesis(self.view, h) for h in [*order, *files])
        return [h for h in found if h is not None]

    @cached_property
    def links(self) -> list[Link]:
        return sorted(self.state.links.values(), key=lambda link: link.link_id)

    @cached_property
    def _link_paths_by_finding(self) -> dict[str, list[str]]:
        """finding id -> paths of the links naming it, from one pass over the bytes (no parse)."""
        out: dict[str, list[str]] = {}
        for path in walk(self.view, LINKS_DIR):
            match = _FINDING_LINE.search(self.view.read(path) or b"")
            if match:
                out.setdefault(match.group(1).decode(), []).append(path)
        return out

    def links_of(self, finding_id: str) -> list[Link]:
        """The links to one finding, parsed and confirmed, by link id."""
        links = []
        for path in self._link_paths_by_finding.get(finding_id, []):
            try:
                link = parse_link(self.view.read(path) or b"", path)
            except FormatError:
                continue
            if link.finding_id == finding_id:
                links.append(link)
        return sorted(links, key=lambda link: link.link_id)

    @cached_property
    def finding_ids(self) -> list[str]:
        return list(self.state.finding_ids)

    def finding(self, finding_id: str) -> Finding | None:
        return self._findings[finding_id] if finding_id in self._findings else self._load(finding_id)

    def _load(self, finding_id: str) -> Finding | None:
        path = finding_path(finding_id)
        data = self.view.read(path)
        try:
            found = parse_finding(data, path) if data is not None else None
        except FormatError:
            found = None
        self._findings[finding_id] = found
        return found

    @cached_property
    def source_of_finding(self) -> dict[str, str]:
        """finding id -> the source id its file names, from one pass over the bytes (no parse);
        the findings a page shows are parsed, and a page keeps only those that agree."""
        out = {}
        for finding_id in self.finding_ids:
            match = _SOURCE_LINE.search(self.view.read(finding_path(finding_id)) or b"")
            if match:
                out[finding_id] = match.group(1).decode()
        return out

    @cached_property
    def sources(self) -> dict[str, SourceRecord]:
        return dict(self.state.sources)

    @cached_property
    def records(self) -> dict[str, ResolutionRecord]:
        try:
            return read_records(self.view)
        except FormatError:
            return {}

    def opened_baseline(self, hypothesis_id: str) -> dict[str, Any] | None:
        """The opened baseline, only for a decided resolution that opened it."""
        record = self.records.get(hypothesis_id)
        if record is None or record.outcome is None or record.baseline is None:
            return None
        if record.baseline.state not in ("opened", "stale", "leaked"):
            return None
        value = self._json(opened_path(hypothesis_id))
        return value if isinstance(value, dict) and value else None

    @cached_property
    def deltas(self) -> list[dict[str, Any]]:
        out = []
        for name in sorted(self.view.list_dir(DELTAS_DIR)):
            if name.endswith(".json"):
                value = self._json(f"{DELTAS_DIR}/{name}")
                if isinstance(value, dict) and value:
                    out.append(value)
        return out

    @cached_property
    def rows(self) -> list[LedgerRow]:
        try:
            return [row for _, row in read_chain(self.view)]
        except (FormatError, LedgerIntegrityError):
            return []

    @cached_property
    def held(self) -> list[HeldItem]:
        items = []
        for held in self.state.held:
            files = {path: self.view.read(queue_path(held.hold, path)) or b"" for path in held.paths}
            items.append(HeldItem(held, files))
        return items

    @cached_property
    def proposals(self) -> list[ResolutionRecord]:
        """Verdicts waiting for a person (the `verdicts` hold): records without a decision."""
        out = []
        for name in sorted(self.view.list_dir(PROPOSALS_DIR)):
            path = f"{PROPOSALS_DIR}/{name}"
            if name.endswith(".json"):
                try:
                    out.append(parse_record(self.view.read(path) or b"", path))
                except FormatError:
                    continue
        return out

    @cached_property
    def reports(self) -> list[tuple[Report, str]]:
        out = list(self.state.reports.values())
        return sorted(out, key=lambda item: (item[0].created_at, item[0].report_id), reverse=True)

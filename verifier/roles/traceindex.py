"""The trace readers' interface (design §3.10): which traces exist, how each ended, and its bundle.

The outcome of a trace lives in its project's ledger row; the bundle lives in the private trace
store. This module joins them through an append-only index under `$RW_HOME/loop/outcomes/`:

    cursor.json               per project, the next ledger seq not yet indexed
    counts.json               entries per leaf kind and outcome (the outcome summary)
    <kind>.<outcome>.jsonl    one OutcomeEntry a line, oldest first

`refresh` reads only ledger segments at or after each project's cursor, so keeping the index
current costs what was submitted since the last refresh; `recent` reads a stratum from its tail,
so sampling costs the same at 1,000 traces as at 1,000,000. The steward, the maintainer, the
proposer and the controlled arm read traces here; `authorize_reader` keeps agents out and gives a
person the projects they steward, and a reader's `listing` and `show` see those projects' traces
only (a trace of another project is "no trace", exactly as a missing one, so ids are no oracle).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from verifier.errors import AuthError, FormatError, NotFound
from verifier.formats.ledger import ROWS_PER_SEGMENT, parse_segment
from verifier.formats.project import parse_project
from verifier.formats.skill import SKILL_KINDS
from verifier.roles.authority import Authority, authorise
from verifier.roles.outcomes import OUTCOMES, OutcomeEntry, counts, entry_from_row, parse_entry
from verifier.state.layout import PROJECT_FILE, segment_path
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.home import Home
from verifier.store.identities import Actor

_TAIL_CHUNK = 64 * 1024


@dataclass(frozen=True)
class TraceDetail:
    """One trace as a reader sees it: every ledger outcome that cites it, and its bundle files."""

    trace_id: str
    entries: list[OutcomeEntry]
    files: dict[str, bytes]


@dataclass(frozen=True)
class Reader:
    """A person allowed to read traces, and the projects whose traces they may read."""

    actor: Actor
    projects: frozenset[str]


def authorize_reader(home: Home, token: str, now: datetime | None = None) -> Reader:
    """The caller, if a person the authority rule lets read a project's traces (its steward, or an
    admin: docs/authority.md), with those projects; agents never read traces."""
    actor = home.identities.authenticate(token)
    if actor.type != "human":
        raise AuthError(f"{actor.handle} is an agent; traces are private to the platform and its stewards")
    stewarded: set[str] = set()
    at = now if now is not None else datetime.now(UTC)  # the shell's clock; the rule is given it
    for slug in home.projects():
        repo = home.project(slug)
        data = repo.view(repo.tip()).read(PROJECT_FILE)
        if data is not None and authorise(Authority.of(parse_project(data, f"{slug}:{PROJECT_FILE}")[0],
                                                       home.settings.admins), actor, "read_traces", at) is None:
            stewarded.add(slug)
    if not stewarded:
        raise AuthError(f"{actor.handle} is not the steward of any project (PROJECT.md `steward:`); "
                        "only stewards read traces")
    return Reader(actor, frozenset(stewarded))


class TraceIndex:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.root = home.layout.loop / "outcomes"

    def _stratum(self, kind: str, outcome: str) -> Path:
        return self.root / f"{kind}.{outcome}.jsonl"

    def _read_json(self, name: str) -> dict[str, object]:
        path = self.root / name
        if not path.exists():
            return {}
        try:
            value = json.loads(path.read_bytes())
        except ValueError as exc:
            raise FormatError(f"not JSON: {exc}", str(path)) from exc
        if not isinstance(value, dict):
            raise FormatError("expected a JSON object", str(path))
        return value

    def counts(self) -> dict[str, dict[str, int]]:
        """Entries per kind and outcome: the outcome summary the proposer reads."""
        raw = self._read_json("counts.json")
        return {str(kind): {str(k): int(v) for k, v in row.items()} for kind, row in raw.items()
                if isinstance(row, dict)}

    def refresh(self) -> int:
        """Index every traced ledger row written since the last refresh; returns how many."""
        self.root.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self.root / "lock"):
            cursor = {str(k): int(str(v)) for k, v in self._read_json("cursor.json").items()}
            table = self.counts()
            added = 0
            for slug in self.home.projects():
                entries, cursor[slug] = self._new_entries(slug, cursor.get(slug, 0))
                self._append(entries)
                for kind, row in counts(entries).items():
                    for outcome, number in row.items():
                        table.setdefault(kind, {})[outcome] = table.get(kind, {}).get(outcome, 0) + number
                added += len(entries)
            # Entries first, then the counts and the cursor: a crash in between re-reads a few
            # rows next time, and readers drop duplicates by (project, seq).
            write_atomic(self.root / "counts.json", json.dumps(table, sort_keys=True).encode())
            write_atomic(self.root / "cursor.json", json.dumps(cursor, sort_keys=True).encode())
        return added

    def _new_entries(self, slug: str, start: int) -> tuple[list[OutcomeEntry], int]:
        repo = self.home.project(slug)
        view = repo.view(repo.tip())
        entries: list[OutcomeEntry] = []
        seq = start
        segment = start // ROWS_PER_SEGMENT
        while True:
            path = segment_path(segment * ROWS_PER_SEGMENT)
            data = view.read(path)
            if data is None:
                return entries, seq
            for _line, row in parse_segment(data, f"{slug}:{path}"):
                if row.seq >= seq:
                    entry = entry_from_row(slug, row)
                    if entry is not None:
                        entries.append(entry)
                    seq = row.seq + 1
            segment += 1

    def _append(self, entries: list[OutcomeEntry]) -> None:
        by_stratum: dict[tuple[str, str], list[bytes]] = {}
        for entry in entries:
            by_stratum.setdefault(entry.stratum, []).append(entry.line())
        for (kind, outcome), lines in by_stratum.items():
            with self._stratum(kind, outcome).open("ab") as handle:
                handle.write(b"".join(lines))

    def recent(self, kind: str, outcome: str, limit: int,
               projects: Collection[str] | None = None) -> list[OutcomeEntry]:
        """The newest `limit` entries of one stratum (of `projects` only, when given), newest
        first, read from the file's tail: a longer tail only while too few of them match."""
        path = self._stratum(kind, outcome)
        if limit <= 0 or not path.exists():
            return []
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            span = _TAIL_CHUNK
            while True:
                start = max(0, size - span)
                handle.seek(start)
                newest = self._newest(handle.read(size - start), start > 0, limit, projects, str(path))
                if len(newest) >= limit or start == 0:
                    return newest
                span *= 2

    @staticmethod
    def _newest(chunk: bytes, cut: bool, limit: int, projects: Collection[str] | None,
                where: str) -> list[OutcomeEntry]:
        lines = chunk.split(b"\n")[:-1]
        if cut:
            lines = lines[1:]  # the first line may be cut
        seen: set[tuple[str, int]] = set()
        newest: list[OutcomeEntry] = []
        for line in reversed(lines):
            entry = parse_entry(line, where)
            if (entry.project, entry.seq) not in seen and (projects is None or entry.project in projects):
                seen.add((entry.project, entry.seq))
                newest.append(entry)
            if len(newest) == limit:
                break
        return newest

    def listing(self, *, kind: str | None = None, outcome: str | None = None, limit: int = 50,
                projects: Collection[str] | None = None) -> list[OutcomeEntry]:
        """The newest traced attempts, newest first, optionally of one kind and outcome; of
        `projects` only when given (a steward's reading)."""
        rows = [entry for k in SKILL_KINDS if kind in (None, k) for o in OUTCOMES if outcome in (None, o)
                for entry in self.recent(k, o, limit, projects)]
        return sorted(rows, key=lambda entry: (entry.at, entry.project, entry.seq), reverse=True)[:limit]

    def show(self, trace_id: str, projects: Collection[str] | None = None) -> TraceDetail:
        """One trace and its outcomes; with `projects`, only a trace cited by one of their ledger
        rows (another project's trace is refused exactly as a missing one, before it is read)."""
        missing = NotFound(f"no trace {trace_id!r} in the trace store" if projects is None else
                           f"no trace {trace_id!r} among the traces of the projects you steward "
                           f"({', '.join(sorted(projects))})")
        if not _safe_id(trace_id):
            raise missing
        entries = [parse_entry(line, str(path)) for path in sorted(self.root.glob("*.jsonl"))
                   for line in path.read_bytes().split(b"\n")[:-1] if trace_id.encode() in line]
        entries = [entry for entry in entries if entry.trace_id == trace_id]
        if projects is not None:
            entries = [entry for entry in entries if entry.project in projects]
            if not entries:
                raise missing
        files = self.home.traces.read(trace_id)
        if not files:
            raise missing
        return TraceDetail(trace_id, entries, files)


def _safe_id(trace_id: str) -> bool:
    """A trace id names a folder: only its own character set, so `..` cannot reach elsewhere."""
    return trace_id.startswith("trc_") and trace_id[4:].isalnum() and len(trace_id) <= 40

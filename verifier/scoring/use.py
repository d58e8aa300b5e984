"""Use scores (design §7.2), kept incrementally: the cost of one contribution does not grow with
the corpus.

    U(f) = Σ over links l to f: w(l)  +  Σ over plans and reports citing f: w(citing)
    w    = 1.0 when the citing object's operator differs from f's operator, 0.25 when the same
    U(l) = w(l) (the weight it lends its finding) + Σ over plans and reports citing l: w
    U(r) = Σ U(x) over x in r.introduced
    U(H) = Σ U(l) over H's links

Every object that ever landed has an entry, kept in a shard file scores/use/<ab>/<cd>.json (by
the id's hex digits; plans and reports by sha256 of their id): its type, its operator (who
first landed it), whether it is present now, its use, and what it cites. Withdrawing an object
(revert, removal) takes back exactly what it gave, from the weights its entry recorded; restoring
it gives them again, so revert-then-revert-the-revert restores every score. An accepted `reject`
review withdraws its object the same way while the review stands (the entry keeps `rejected_by`);
the object stays in the tree, and only active objects (present, not rejected) count. The small summary,
scores/use.json, holds U(H), U(r) and the v0 components per operator, side by side, never
combined. Beside the shards, scores/use-index/ holds each object's U alone, rewritten with its
shard (verifier.scoring.useindex), for the evaluation. Weights are 1.0 and 0.25, exact in
binary floating point, so sums do not depend on the order contributions landed in.

Cost that an agent did not disclose stays unknown: an operator's `usd` (`tokens`) sums only the
disclosed leaves and is null until one discloses; `usd_objects` counts the accepted objects of
those leaves (the denominator of `usd_per_accepted_object`), and `usd_undisclosed` counts the
leaves left out, so an average is never diluted by zeros that were never measured.

Pure: shard files are read through a callable and written back as bytes, through the typed
models of verifier.formats.usescores. One memo: the summaries this process parsed or wrote, by
git blob id, each operator row's text beside it, so a landing parses no summary it made and spells
only the rows it changed (a book copies a row before it changes it, so the kept ones never change).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from verifier.formats.usescores import (
    COST_UNITS,
    CROSS_OPERATOR,
    SAME_OPERATOR,
    Number,
    OperatorUse,
    UseEntry,
    UseSummary,
    dump_shard,
    parse_shard,
    row_text,
)
from verifier.patch.apply import git_blob_id
from verifier.scoring.rests import RestIndex
from verifier.scoring.useindex import index_writes, is_live
from verifier.state.layout import USE_INDEX_ROOT, USE_SCORES, USE_SHARD_ROOT, use_shard_path
from verifier.state.view import TreeView

SCORED_TYPES = ("source", "finding", "link", "plan", "report", "review")
__all__ = ["COST_UNITS", "CROSS_OPERATOR", "SAME_OPERATOR", "SCORED_TYPES", "ObjectFacts", "ScoreBook", "weight"]


def weight(citing_operator: str, cited_operator: str) -> float:
    return CROSS_OPERATOR if citing_operator != cited_operator else SAME_OPERATOR


@dataclass(frozen=True)
class ObjectFacts:
    """What scoring needs to know about one object, parsed by the caller."""

    type: str
    object_id: str
    operator: str
    finding_id: str | None = None  # links
    hypothesis_id: str | None = None  # links
    cites: tuple[str, ...] = ()  # plans, reports
    introduced: tuple[str, ...] = ()  # reports
    rejects: str | None = None  # a review whose decision is reject: the reviewed object's id


@dataclass
class ScoreBook:
    """Scores over lazily read shards; `writes()` returns only what changed."""

    read: Callable[[str], bytes | None]
    shards: dict[str, dict[str, UseEntry]] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    _summary: UseSummary | None = None
    summary_dirty: bool = False
    # The use index is built whole by this book (a project scored before it): the index files the
    # tree already holds, each rewritten or deleted by `writes`.
    index_built: set[str] | None = None
    # What rests on what (verifier.scoring.rests), kept beside the scores from the same writes.
    rests: RestIndex = field(init=False)
    # The few files a landing asks for more than once (the summary, the index marker), as read.
    _once: dict[str, bytes | None] = field(default_factory=dict, init=False, repr=False)
    # The tree `read` reads, once a caller names it (`ensure_use_index`) and `read` is its own read
    # (ScoreBook(view.read)): files this process has parsed or written are then known by their
    # blob ids, unread. A book that reads something else (replay's, which reads nothing) has none.
    _tree: TreeView | None = field(default=None, init=False, repr=False)
    # Operator rows of the summary this book changes: copies of its own. The others are the
    # process's parsed summary (`_summary_of`), shared, never changed; `_texts` spells them.
    _owned: set[str] = field(default_factory=set, init=False, repr=False)
    _texts: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.rests = RestIndex(self.read)

    def _read_once(self, path: str) -> bytes | None:
        if path not in self._once:
            self._once[path] = self.read(path)
        return self._once[path]

    def _blob_id(self, path: str) -> str | None:
        """The blob id of the file at `path` (None: no file), from the tree when it is known."""
        if self._tree is not None:
            return self._tree.blob_id(path)
        data = self._read_once(path)
        return None if data is None else git_blob_id(data)

    def _index_ids(self) -> Callable[[str], str | None] | None:
        return self._tree.blob_id if self._tree is not None else None

    # -- storage ---------------------------------------------------------------------------
    def _shard(self, path: str) -> dict[str, UseEntry]:
        if path not in self.shards:
            data = self.read(path)
            self.shards[path] = parse_shard(data, path) if data else {}
        return self.shards[path]

    def entry(self, object_id: str) -> UseEntry | None:
        return self._shard(use_shard_path(object_id)).get(object_id)

    def _put(self, object_id: str, entry: UseEntry) -> None:
        path = use_shard_path(object_id)
        self._shard(path)[object_id] = entry
        self.dirty.add(path)

    def ensure_use_index(self, tree: TreeView) -> None:
        """Build the use index by one scan of `tree`'s shards (the tree `read` reads) when the tree
        has use scores but no live index: a project scored before the index, or one whose index
        was dropped. Every shard is loaded, and `writes` writes the whole index and its marker."""
        if getattr(self.read, "__self__", None) is tree:
            self._tree = tree
        if (self.index_built is not None or self._blob_id(USE_SCORES) is None
                or is_live(self._read_once, self._index_ids())):
            return
        for first in tree.list_dir(USE_SHARD_ROOT):
            for name in tree.list_dir(f"{USE_SHARD_ROOT}/{first}"):
                self._shard(f"{USE_SHARD_ROOT}/{first}/{name}")
        self.index_built = {f"{USE_INDEX_ROOT}/{name}" for name in tree.list_dir(USE_INDEX_ROOT)}

    @property
    def summary(self) -> UseSummary:
        if self._summary is None:
            parsed, self._texts = _summary_of(self._blob_id(USE_SCORES), self._read_once)
            self._summary = UseSummary(hypotheses=dict(parsed.hypotheses), reports=dict(parsed.reports),
                                       operators=dict(parsed.operators), weights=dict(parsed.weights))
        return self._summary

    def _own(self, name: str) -> OperatorUse:
        """The operator's row, this book's own copy (new if the summary has none), to change."""
        operators = self.summary.operators
        if name not in self._owned:
            found = operators.get(name)
            operators[name] = replace(found) if found is not None else OperatorUse()
            self._owned.add(name)
        return operators[name]

    def _operator(self, name: str) -> OperatorUse:
        self.summary_dirty = True
        row = self._own(name)
        for unit in COST_UNITS:
            if getattr(row, f"{unit}_objects") is None:
                setattr(row, f"{unit}_objects", 0)
            if getattr(row, f"{unit}_undisclosed") is None:
                setattr(row, f"{unit}_undisclosed", 0)
        return row

    # -- use flowing through the graph -------------------------------------------------------
    def _aggregate(self, object_id: str, entry: UseEntry, delta: Number) -> None:
        """Carry a change of a present object's use into the sums that include it."""
        self._operator(entry.operator).use_score += delta
        if entry.type == "link":
            hypotheses = self.summary.hypotheses
            assert entry.hypothesis is not None, f"link {object_id} has no hypothesis in its entry"
            hypotheses[entry.hypothesis] = hypotheses.get(entry.hypothesis, 0.0) + delta

    def _bump(self, object_id: str, delta: Number) -> None:
        """Add `delta` to an object's use and to every sum that includes it."""
        entry = self.entry(object_id)
        if entry is None:
            return
        entry.u += delta
        self._put(object_id, entry)
        if entry.active:
            self._aggregate(object_id, entry, delta)
        reports = self.summary.reports
        for report in entry.introduced_by or []:
            if report in reports:
                reports[report] += delta
                self.summary_dirty = True

    def _activate(self, object_id: str, entry: UseEntry) -> None:
        """The object starts counting: its own use in the sums, and what it lends to what it cites."""
        self._aggregate(object_id, entry, entry.u)
        gave: list[tuple[str, Number]] = []
        if entry.type == "link" and entry.finding is not None:
            finding = self.entry(entry.finding)
            if finding is not None:
                w = weight(entry.operator, finding.operator)
                gave.append((entry.finding, w))
                gave.append((object_id, w))  # a link's own use starts at the weight it lends
        for target in entry.cites or []:
            cited = self.entry(target)
            if cited is not None:
                gave.append((target, weight(entry.operator, cited.operator)))
        entry.gave = gave
        for target, w in gave:
            self._bump(target, w)
        if entry.type == "report":
            self._introduce(object_id, entry, +1)

    def _deactivate(self, object_id: str, entry: UseEntry) -> None:
        """The object stops counting: take back exactly what it gave, from the weights recorded."""
        gave, entry.gave = entry.gave or [], None
        for target, w in gave:
            self._bump(target, -w)
        if entry.type == "report":
            self._introduce(object_id, entry, -1)
        self._aggregate(object_id, entry, -entry.u)

    # -- events ----------------------------------------------------------------------------
    def add(self, facts: ObjectFacts) -> None:
        """An object landed, or came back after a revert (then it keeps its first operator)."""
        entry = self.entry(facts.object_id)
        if entry is not None and entry.present:
            return
        if entry is None:
            entry = UseEntry(type=facts.type, operator=facts.operator, present=False, u=0.0)
            _describe(entry, facts)
            if facts.type == "review" and facts.rejects:
                entry.rejects = facts.rejects
        entry.present = True
        self._put(facts.object_id, entry)
        if entry.active:
            self._activate(facts.object_id, entry)
        if entry.rejects:
            self._reject(entry.rejects, facts.object_id, +1)

    def remove(self, object_id: str) -> None:
        """An object was withdrawn (reverted or deleted): take back exactly what it gave."""
        entry = self.entry(object_id)
        if entry is None or not entry.present:
            return
        if entry.rejects:
            self._reject(entry.rejects, object_id, -1)
        if entry.active:
            self._deactivate(object_id, entry)
        entry.present = False
        self._put(object_id, entry)

    def _reject(self, target_id: str, review_id: str, sign: int) -> None:
        """A `reject` review lands (+1) or goes (-1): the target stops or resumes counting. It stays
        in the tree and in history; its entry names the reviews that rejected it."""
        target = self.entry(target_id)
        if target is None:
            return
        rejected_by = list(target.rejected_by or [])
        if (review_id in rejected_by) == (sign > 0):
            return
        if sign > 0:
            if target.active:
                self._deactivate(target_id, target)
            target.rejected_by = sorted([*rejected_by, review_id])
        else:
            rejected_by.remove(review_id)
            target.rejected_by = rejected_by or None
            if target.active:
                self._activate(target_id, target)
        self._put(target_id, target)

    def replace(self, facts: ObjectFacts) -> None:
        """An object's content changed in place (a person edited a link or a report)."""
        self.remove(facts.object_id)
        entry = self.entry(facts.object_id)
        if entry is not None:
            _describe(entry, facts)
            if facts.type == "review":
                entry.rejects = facts.rejects or None
        self.add(facts)

    def _introduce(self, report_id: str, entry: UseEntry, sign: int) -> None:
        reports = self.summary.reports
        total: Number = 0.0
        for object_id in entry.introduced or []:
            target = self.entry(object_id)
            if target is None:
                continue
            if target.introduced_by is None:
                target.introduced_by = []
            owners = target.introduced_by
            if sign > 0 and report_id not in owners:
                owners.append(report_id)
                owners.sort()
            elif sign < 0 and report_id in owners:
                owners.remove(report_id)
            self._put(object_id, target)
            total += target.u
        if sign > 0:
            reports[report_id] = total
        else:
            reports.pop(report_id, None)
        self.summary_dirty = True

    def record_submission(self, operator: str, *, objects: int, tokens: int | None, usd: float | None) -> None:
        """An accepted (or held) leaf submission: the components other than use."""
        row = self._operator(operator)
        row.accepted_leaves += 1
        row.accepted_objects += objects
        for unit, amount in (("tokens", tokens), ("usd", usd)):
            if amount is None:  # unknown, not free: left out of the sum and the average
                setattr(row, f"{unit}_undisclosed", (getattr(row, f"{unit}_undisclosed") or 0) + 1)
            else:
                setattr(row, unit, (getattr(row, unit) or 0) + amount)
                setattr(row, f"{unit}_objects", (getattr(row, f"{unit}_objects") or 0) + objects)

    # -- output ----------------------------------------------------------------------------
    def writes(self) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {path: dump_shard(self.shards[path]) for path in sorted(self.dirty)}
        if self.summary_dirty or self.dirty:
            if self.index_built is not None:  # built whole here: every shard, what it replaces deleted
                index = index_writes(self._read_once,
                                     {path: entries for path, entries in self.shards.items() if entries}, fresh=True,
                                     blob_id=self._index_ids())
                out.update(dict.fromkeys(self.index_built - set(index)))
                out.update(index)
            else:
                # No summary in the tree yet means no shard either: the U index starts here, complete.
                fresh = self._blob_id(USE_SCORES) is None
                out.update(index_writes(self._read_once, {path: self.shards[path] for path in self.dirty},
                                        fresh=fresh, blob_id=self._index_ids()))
            summary = self.summary
            for name, seen in list(summary.operators.items()):
                usd = seen.usd
                objects = seen.usd_objects if seen.usd_objects is not None else seen.accepted_objects
                per_object = round(usd / objects, 6) if usd is not None and objects else None
                if name not in self._owned and seen.has_per_object and _same(seen.usd_per_accepted_object, per_object):
                    continue  # a row this landing did not touch, written as it was
                row = self._own(name)
                row.usd_per_accepted_object = per_object
                row.has_per_object = True
            texts = self._texts
            for name, row in summary.operators.items():
                if name not in self._owned and name not in texts:
                    texts[name] = row_text(row)  # once per process for each row of this summary
            data = summary.dump({name: texts[name] for name in summary.operators if name not in self._owned})
            out[USE_SCORES] = data
            _remember_summary(git_blob_id(data), summary, self._owned, texts)
        out.update(self.rests.writes())
        return out


def _same(old: Number | None, new: Number | None) -> bool:
    """Whether two numbers are spelt alike in a JSON file (0.0 and -0.0 are equal, not alike)."""
    return type(old) is type(new) and repr(old) == repr(new)


# Summaries (scores/use.json) this process parsed or wrote, by blob id: a landing on the tree the
# last one made finds its summary parsed, and the text of each operator row it does not touch.
# The values are never changed (a book copies a row before it changes it: `ScoreBook._own`).
SUMMARIES_KEPT = 64  # a few KiB each: one a project, for the projects one process lands on
_summaries: OrderedDict[str, tuple[UseSummary, dict[str, str]]] = OrderedDict()
_summaries_lock = threading.Lock()


def _summary_of(blob: str | None, read: Callable[[str], bytes | None]) -> tuple[UseSummary, dict[str, str]]:
    """The parsed summary of the blob (None, no file: the empty one) and the row texts known of it;
    the caller changes neither the summary nor its rows, and adds to the texts only true ones."""
    if blob is None:
        return UseSummary(), {}
    with _summaries_lock:
        found = _summaries.get(blob)
        if found is not None:
            _summaries.move_to_end(blob)
            return found
    parsed: tuple[UseSummary, dict[str, str]] = (UseSummary.parse(read(USE_SCORES), USE_SCORES), {})
    _keep(blob, parsed)
    return parsed


def _remember_summary(blob: str, summary: UseSummary, owned: set[str], texts: dict[str, str]) -> None:
    """Keep the summary a book wrote, for the landing after: a copy of the rows the book owns (it
    may go on changing them), the others shared as they are, and every row's text."""
    operators = {name: replace(row) if name in owned else row for name, row in summary.operators.items()}
    kept = UseSummary(hypotheses=dict(summary.hypotheses), reports=dict(summary.reports), operators=operators,
                      weights=dict(summary.weights))
    spelt = {name: texts[name] if name in texts and name not in owned else row_text(row)
             for name, row in operators.items()}
    _keep(blob, (kept, spelt))


def _keep(blob: str, parsed: tuple[UseSummary, dict[str, str]]) -> None:
    with _summaries_lock:
        _summaries[blob] = parsed
        _summaries.move_to_end(blob)
        while len(_summaries) > SUMMARIES_KEPT:
            _summaries.popitem(last=False)


def _describe(entry: UseEntry, facts: ObjectFacts) -> None:
    """What an object's entry records of what it links and cites (set on landing and on an edit)."""
    if facts.type == "link":
        entry.finding, entry.hypothesis, entry.linked = facts.finding_id, facts.hypothesis_id, True
    if facts.type in ("plan", "report"):
        entry.cites, entry.introduced = sorted(facts.cites), sorted(facts.introduced)

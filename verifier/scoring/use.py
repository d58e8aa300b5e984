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
combined. Weights are 1.0 and 0.25, exact in binary floating point, so sums do not depend on
the order contributions landed in.

Cost that an agent did not disclose stays unknown: an operator's `usd` (`tokens`) sums only the
disclosed leaves and is null until one discloses; `usd_objects` counts the accepted objects of
those leaves (the denominator of `usd_per_accepted_object`), and `usd_undisclosed` counts the
leaves left out, so an average is never diluted by zeros that were never measured.

Pure: shard files are read through a callable and written back as bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from verifier.state.layout import USE_SCORES, use_shard_path

CROSS_OPERATOR = 1.0
SAME_OPERATOR = 0.25
SCORED_TYPES = ("source", "finding", "link", "plan", "report", "review")
COST_UNITS = ("tokens", "usd")


def weight(citing_operator: str, cited_operator: str) -> float:
    return CROSS_OPERATOR if citing_operator != cited_operator else SAME_OPERATOR


def _dump(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False).encode() + b"\n"


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
    shards: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    _summary: dict[str, Any] | None = None
    summary_dirty: bool = False

    # -- storage ---------------------------------------------------------------------------
    def _shard(self, path: str) -> dict[str, dict[str, Any]]:
        if path not in self.shards:
            data = self.read(path)
            self.shards[path] = json.loads(data) if data else {}
        return self.shards[path]

    def entry(self, object_id: str) -> dict[str, Any] | None:
        return self._shard(use_shard_path(object_id)).get(object_id)

    def _put(self, object_id: str, entry: dict[str, Any]) -> None:
        path = use_shard_path(object_id)
        self._shard(path)[object_id] = entry
        self.dirty.add(path)

    @property
    def summary(self) -> dict[str, Any]:
        if self._summary is None:
            data = self.read(USE_SCORES)
            self._summary = json.loads(data) if data else {
                "hypotheses": {}, "reports": {}, "operators": {},
                "weights": {"cross_operator": CROSS_OPERATOR, "same_operator": SAME_OPERATOR}}
        return self._summary

    def _operator(self, name: str) -> dict[str, Any]:
        self.summary_dirty = True
        operators: dict[str, dict[str, Any]] = self.summary["operators"]
        row = operators.setdefault(name, {"accepted_leaves": 0, "accepted_objects": 0, "use_score": 0.0,
                                          "tokens": None, "usd": None})
        for unit in COST_UNITS:
            row.setdefault(f"{unit}_objects", 0)
            row.setdefault(f"{unit}_undisclosed", 0)
        return row

    # -- use flowing through the graph -------------------------------------------------------
    def _aggregate(self, object_id: str, entry: dict[str, Any], delta: float) -> None:
        """Carry a change of a present object's use into the sums that include it."""
        self._operator(entry["operator"])["use_score"] += delta
        if entry["type"] == "link":
            hypotheses: dict[str, float] = self.summary["hypotheses"]
            hypotheses[entry["hypothesis"]] = hypotheses.get(entry["hypothesis"], 0.0) + delta

    @staticmethod
    def _active(entry: dict[str, Any]) -> bool:
        """Present and not rejected by a review: only active objects count anywhere."""
        return bool(entry["present"]) and not entry.get("rejected_by")

    def _bump(self, object_id: str, delta: float) -> None:
        """Add `delta` to an object's use and to every sum that includes it."""
        entry = self.entry(object_id)
        if entry is None:
            return
        entry["u"] += delta
        self._put(object_id, entry)
        if self._active(entry):
            self._aggregate(object_id, entry, delta)
        reports: dict[str, float] = self.summary["reports"]
        for report in entry.get("introduced_by", []):
            if report in reports:
                reports[report] += delta
                self.summary_dirty = True

    def _activate(self, object_id: str, entry: dict[str, Any]) -> None:
        """The object starts counting: its own use in the sums, and what it lends to what it cites."""
        self._aggregate(object_id, entry, entry["u"])
        gave: list[list[Any]] = []
        if entry["type"] == "link":
            finding = self.entry(entry["finding"])
            if finding is not None:
                w = weight(entry["operator"], finding["operator"])
                gave.append([entry["finding"], w])
                gave.append([object_id, w])  # a link's own use starts at the weight it lends
        for target in entry.get("cites", []):
            cited = self.entry(target)
            if cited is not None:
                gave.append([target, weight(entry["operator"], cited["operator"])])
        entry["gave"] = gave
        for target, w in gave:
            self._bump(target, w)
        if entry["type"] == "report":
            self._introduce(object_id, entry, +1)

    def _deactivate(self, object_id: str, entry: dict[str, Any]) -> None:
        """The object stops counting: take back exactly what it gave, from the weights recorded."""
        for target, w in entry.pop("gave", []):
            self._bump(target, -w)
        if entry["type"] == "report":
            self._introduce(object_id, entry, -1)
        self._aggregate(object_id, entry, -entry["u"])

    # -- events ----------------------------------------------------------------------------
    def add(self, facts: ObjectFacts) -> None:
        """An object landed, or came back after a revert (then it keeps its first operator)."""
        entry = self.entry(facts.object_id)
        if entry is not None and entry["present"]:
            return
        if entry is None:
            entry = {"type": facts.type, "operator": facts.operator, "present": False, "u": 0.0}
            if facts.type == "link":
                entry.update(finding=facts.finding_id, hypothesis=facts.hypothesis_id)
            if facts.type in ("plan", "report"):
                entry.update(cites=sorted(facts.cites), introduced=sorted(facts.introduced))
            if facts.type == "review" and facts.rejects:
                entry["rejects"] = facts.rejects
        entry["present"] = True
        self._put(facts.object_id, entry)
        if self._active(entry):
            self._activate(facts.object_id, entry)
        if entry.get("rejects"):
            self._reject(entry["rejects"], facts.object_id, +1)

    def remove(self, object_id: str) -> None:
        """An object was withdrawn (reverted or deleted): take back exactly what it gave."""
        entry = self.entry(object_id)
        if entry is None or not entry["present"]:
            return
        if entry.get("rejects"):
            self._reject(entry["rejects"], object_id, -1)
        if self._active(entry):
            self._deactivate(object_id, entry)
        entry["present"] = False
        self._put(object_id, entry)

    def _reject(self, target_id: str, review_id: str, sign: int) -> None:
        """A `reject` review lands (+1) or goes (-1): the target stops or resumes counting. It stays
        in the tree and in history; its entry names the reviews that rejected it."""
        target = self.entry(target_id)
        if target is None:
            return
        rejected_by: list[str] = list(target.get("rejected_by", []))
        if (review_id in rejected_by) == (sign > 0):
            return
        if sign > 0:
            if self._active(target):
                self._deactivate(target_id, target)
            target["rejected_by"] = sorted([*rejected_by, review_id])
        else:
            rejected_by.remove(review_id)
            if rejected_by:
                target["rejected_by"] = rejected_by
            else:
                target.pop("rejected_by")
            if self._active(target):
                self._activate(target_id, target)
        self._put(target_id, target)

    def replace(self, facts: ObjectFacts) -> None:
        """An object's content changed in place (a person edited a link or a report)."""
        self.remove(facts.object_id)
        entry = self.entry(facts.object_id)
        if entry is not None:
            if facts.type == "link":
                entry.update(finding=facts.finding_id, hypothesis=facts.hypothesis_id)
            if facts.type in ("plan", "report"):
                entry.update(cites=sorted(facts.cites), introduced=sorted(facts.introduced))
            if facts.type == "review":
                entry.pop("rejects", None)
                if facts.rejects:
                    entry["rejects"] = facts.rejects
        self.add(facts)

    def _introduce(self, report_id: str, entry: dict[str, Any], sign: int) -> None:
        reports: dict[str, float] = self.summary["reports"]
        total = 0.0
        for object_id in entry.get("introduced", []):
            target = self.entry(object_id)
            if target is None:
                continue
            owners: list[str] = target.setdefault("introduced_by", [])
            if sign > 0 and report_id not in owners:
                owners.append(report_id)
                owners.sort()
            elif sign < 0 and report_id in owners:
                owners.remove(report_id)
            self._put(object_id, target)
            total += target["u"]
        if sign > 0:
            reports[report_id] = total
        else:
            reports.pop(report_id, None)
        self.summary_dirty = True

    def record_submission(self, operator: str, *, objects: int, tokens: int | None, usd: float | None) -> None:
        """An accepted (or held) leaf submission: the components other than use."""
        row = self._operator(operator)
        row["accepted_leaves"] += 1
        row["accepted_objects"] += objects
        for unit, amount in (("tokens", tokens), ("usd", usd)):
            if amount is None:
                row[f"{unit}_undisclosed"] += 1  # unknown, not free: left out of the sum and the average
            else:
                row[unit] = (row[unit] or 0) + amount
                row[f"{unit}_objects"] += objects

    # -- output ----------------------------------------------------------------------------
    def writes(self) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {path: _dump(self.shards[path]) for path in sorted(self.dirty)}
        if self.summary_dirty or self.dirty:
            summary = self.summary
            for row in summary["operators"].values():
                usd, objects = row.get("usd"), row.get("usd_objects", row["accepted_objects"])
                row["usd_per_accepted_object"] = round(usd / objects, 6) if usd is not None and objects else None
            out[USE_SCORES] = _dump(summary)
        return out

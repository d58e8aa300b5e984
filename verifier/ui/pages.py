"""Each page's view-model: a plain JSON-ready dict built from a `ProjectReader`. No git, no disk,
no clock (the reader carries `now`), no model.

What a page shows is exactly what an agent could read in a clone, so nothing here is secret; the
rules that keep it so: a baseline appears only inside a decided resolution that opened it, and a
ledger row's trace id is never shown (only the row's own fields).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

from verifier.errors import FormatError
from verifier.formats.base import iso
from verifier.formats.finding import Finding
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.ledger import LedgerRow
from verifier.formats.link import Link, parse_link
from verifier.formats.usescores import UseSummary
from verifier.pipeline.digest import digest_of
from verifier.roles.records import ResolutionRecord
from verifier.seal.status import unsealed
from verifier.state.layout import queue_path
from verifier.ui.readmodel import HeldItem, ProjectReader

FINDINGS_PER_PAGE = 50
ROWS_PER_PAGE = 100
CONTEXT_CHARS = 240
CONTRIBUTIONS_SHOWN = 200
FACETS = ("all", "source", "operator", "hypothesis")
_SAFE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def key_of(name: str) -> str:
    """A name as one URL path segment and file name: itself when plain, else a stable hash."""
    return name if _SAFE_KEY.match(name) else "x-" + hashlib.sha256(name.encode()).hexdigest()[:16]


def pages_count(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))


# --- the project list and the project page -------------------------------------------------------


def projects_page(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"title": "Projects", "projects": entries}


def project_entry(reader: ProjectReader) -> dict[str, Any]:
    return {"slug": reader.slug, "question": reader.project.question, "hypotheses": len(reader.hypotheses),
            "commit": reader.commit}


def _leaders(reader: ProjectReader) -> list[dict[str, Any]]:
    components = {row["operator"]: row for row in reader.resolution.get("components", [])
                  if isinstance(row, dict) and "operator" in row}
    rows = []
    for name, row in reader.use.operators.items():
        extra = components.get(name, {})
        rows.append({"operator": name, "key": key_of(name), "use_score": row.use_score,
                     "accepted_leaves": row.accepted_leaves, "accepted_objects": row.accepted_objects,
                     "usd_per_accepted_object": row.usd_per_accepted_object,
                     "resolution_credit": extra.get("resolution_credit"),
                     "review_accuracy": extra.get("review_accuracy")})
    return sorted(rows, key=lambda r: (-float(r["use_score"] or 0), r["operator"]))


def project_page(reader: ProjectReader) -> dict[str, Any]:
    digest = digest_of(reader.view, reader.slug, reader.now)
    latest = None
    if reader.reports:
        report, body = reader.reports[0]
        latest = {"report_id": report.report_id, "title": report.title, "author": report.author,
                  "created_at": iso(report.created_at), "body": body, "introduced": list(report.introduced)}
    lift = reader.resolution.get("lift") if isinstance(reader.resolution.get("lift"), dict) else None
    return {"title": reader.slug, "slug": reader.slug, "question": reader.project.question, "digest": digest,
            "leaders": _leaders(reader), "lift": lift, "latest_report": latest, "commit": reader.commit,
            "held": len(reader.held)}


# --- hypothesis cards ------------------------------------------------------------------------------


def _finding_brief(reader: ProjectReader, finding_id: str) -> dict[str, Any] | None:
    finding = reader.finding(finding_id)
    if finding is None:
        return None
    return {"finding_id": finding_id, "statement": finding.statement, "excerpt": finding.excerpt,
            "source_id": finding.source_id}


def _link_card(reader: ProjectReader, link: Link, current_revision: int) -> dict[str, Any]:
    return {"link_id": link.link_id, "stance": link.stance, "rationale": link.rationale,
            "revision": link.hypothesis_revision, "earlier_wording": link.hypothesis_revision < current_revision,
            "leaf_kind": link.leaf_kind, "operator": reader.operator_of(link.link_id),
            "use": reader.use_of(link.link_id), "finding": _finding_brief(reader, link.finding_id)}


def _resolution(reader: ProjectReader, hypothesis_id: str) -> dict[str, Any] | None:
    """Only a decided resolution; its baseline only if the Resolver opened it."""
    record = reader.records.get(hypothesis_id)
    if record is None or record.outcome is None:
        return None
    opened = reader.opened_baseline(hypothesis_id)
    baseline = None
    if record.baseline is not None:
        baseline = {"state": record.baseline.state, "verdict": record.baseline.verdict, "note": record.baseline.note,
                    "confidence": opened.get("confidence") if opened else None,
                    "model": opened.get("model") if opened else None,
                    "sealed_at": opened.get("sealed_at") if opened else None}
    deltas = [d for doc in reader.deltas if doc.get("hypothesis_id") == hypothesis_id for d in doc.get("deltas", [])]
    return {"outcome": record.outcome, "confidence": record.confidence, "revision": record.revision,
            "decided_by": record.decided_by.id if record.decided_by else None,
            "decided_at": iso(record.decided_at) if record.decided_at else None, "reason": record.reason,
            "corpus_verdict": record.corpus_verdict, "supports": record.balance.supports,
            "contradicts": record.balance.contradicts, "baseline": baseline,
            "deltas": [{"operator": d.get("operator"), "key": key_of(str(d.get("operator"))),
                        "link_credit": d.get("link_credit"), "finding_credit": d.get("finding_credit"),
                        "review_accuracy": d.get("review_accuracy"), "outcome": d.get("outcome"),
                        "previous_outcome": d.get("previous_outcome")} for d in deltas]}


def hypothesis_card(reader: ProjectReader, hypothesis: Hypothesis) -> dict[str, Any]:
    h = hypothesis.hypothesis_id
    links = [_link_card(reader, link, hypothesis.revision) for link in reader.links if link.hypothesis_id == h]
    criterion = hypothesis.resolution
    return {
        "hypothesis_id": h, "revision": hypothesis.revision, "status": hypothesis.status,
        "statement": hypothesis.statement,
        "criterion": criterion.criterion if criterion else None,
        "check_date": criterion.check_date.isoformat() if criterion else None,
        "measure": criterion.measure if criterion else None,
        "evidence_health": reader.use.hypotheses.get(h, 0.0),
        "supports": [x for x in links if x["stance"] == "supports"],
        "contradicts": [x for x in links if x["stance"] == "contradicts"],
        "context": [x for x in links if x["stance"] == "context"],
        "earlier_wording": sum(1 for x in links if x["earlier_wording"]),
        "resolution": _resolution(reader, h),
        "not_sealed": next((item.to_json() for item in unsealed(reader.view, [h], reader.rows)), None),
    }


def hypotheses_page(reader: ProjectReader) -> dict[str, Any]:
    return {"title": f"{reader.slug}: hypotheses", "slug": reader.slug,
            "cards": [hypothesis_card(reader, h) for h in reader.hypotheses]}


def hypothesis_page(reader: ProjectReader, hypothesis_id: str) -> dict[str, Any] | None:
    found = next((h for h in reader.hypotheses if h.hypothesis_id == hypothesis_id), None)
    if found is None:
        return None
    return {"title": f"{reader.slug}: {hypothesis_id}", "slug": reader.slug, "cards": [hypothesis_card(reader, found)]}


# --- findings ----------------------------------------------------------------------------------


def matching(reader: ProjectReader, facet: str, value: str) -> list[str]:
    """The ids of the findings a filter keeps, in id order (once per reader and filter)."""
    key = ("matching", facet, value)
    if key not in reader.memo:
        reader.memo[key] = _matching(reader, facet, value)
    return reader.memo[key]


def _matching(reader: ProjectReader, facet: str, value: str) -> list[str]:
    ids = reader.finding_ids
    if facet == "hypothesis":
        linked = {link.finding_id for link in reader.links if link.hypothesis_id == value}
        return [f for f in ids if f in linked]
    if facet == "operator":
        return [f for f in ids if key_of(reader.operator_of(f)) == value]
    if facet == "source":
        sources = reader.source_of_finding
        return [f for f in ids if sources.get(f) == value]
    return ids


def in_place(text: str | None, finding: Finding) -> dict[str, Any]:
    """The excerpt with the source text around it, when the text at its location is the excerpt."""
    start, end = finding.location.start, finding.location.end
    if text is None or text[start:end] != finding.excerpt:
        return {"before": "", "after": "", "placed": False}
    before = text[max(0, start - CONTEXT_CHARS):start]
    after = text[end:end + CONTEXT_CHARS]
    return {"before": ("…" if start > CONTEXT_CHARS else "") + before,
            "after": after + ("…" if end + CONTEXT_CHARS < len(text) else ""), "placed": True}


def _finding_item(reader: ProjectReader, finding_id: str) -> dict[str, Any] | None:
    finding = reader.finding(finding_id)
    if finding is None:
        return None
    source = reader.sources.get(finding.source_id)
    operator = reader.operator_of(finding_id)
    return {"finding_id": finding_id, "statement": finding.statement, "excerpt": finding.excerpt,
            "limitation": finding.limitation, "leaf_id": finding.leaf_id, "operator": operator,
            "operator_key": key_of(operator), "use": reader.use_of(finding_id),
            "source": {"source_id": finding.source_id, "title": source.title if source else None,
                       "url": source.url if source else None},
            "place": in_place(reader.text_of(finding.source_id), finding),
            "links": [{"link_id": link.link_id, "hypothesis_id": link.hypothesis_id, "stance": link.stance}
                      for link in reader.links_of(finding_id)]}


def findings_facets(reader: ProjectReader) -> dict[str, list[dict[str, str]]]:
    operators = sorted(reader.use.operators)
    return {
        "source": [{"value": s, "label": r.title or r.url} for s, r in sorted(reader.sources.items())],
        "operator": [{"value": key_of(o), "label": o} for o in operators],
        "hypothesis": [{"value": h.hypothesis_id, "label": h.hypothesis_id} for h in reader.hypotheses],
    }


def findings_page(reader: ProjectReader, facet: str, value: str, page: int) -> dict[str, Any] | None:
    """One page of the findings list, filtered by one facet (None: no such facet or page)."""
    if facet not in FACETS:
        return None
    ids = matching(reader, facet, value)
    count = pages_count(len(ids), FINDINGS_PER_PAGE)
    if not 1 <= page <= count:
        return None
    window = ids[(page - 1) * FINDINGS_PER_PAGE:page * FINDINGS_PER_PAGE]
    items = [item for item in (_finding_item(reader, f) for f in window) if item is not None
             and (facet != "source" or item["source"]["source_id"] == value)]
    return {"title": f"{reader.slug}: findings", "slug": reader.slug, "facet": facet, "value": value,
            "page": page, "pages": count, "total": len(ids), "entries": items, "facets": findings_facets(reader)}


# --- the ledger --------------------------------------------------------------------------------


def row_view(row: LedgerRow) -> dict[str, Any]:
    """A ledger row's fields as shown; the trace id is left out (its contents are private)."""
    return {"seq": row.seq, "at": iso(row.at), "action": row.action, "outcome": row.outcome,
            "reason_code": row.reason_code, "description": row.description, "leaf_id": row.leaf_id,
            "kind": row.kind, "actor": row.actor, "actor_key": key_of(row.actor), "actor_type": row.actor_type,
            "operator": row.operator, "operator_key": key_of(row.operator) if row.operator else None,
            "verifier_version": row.verifier_version, "commit": row.commit,
            "tokens": row.cost.tokens, "usd": row.cost.usd, "duration_s": row.cost.duration_s}


def rejections_by_code(rows: list[LedgerRow]) -> list[dict[str, Any]]:
    counts = Counter(row.reason_code or "(none)" for row in rows if row.outcome in ("rejected", "crash"))
    latest: dict[str, int] = {}
    for row in rows:
        if row.outcome in ("rejected", "crash"):
            latest[row.reason_code or "(none)"] = row.seq
    return [{"code": code, "count": n, "latest_seq": latest[code]}
            for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def ledger_page(reader: ProjectReader, page: int) -> dict[str, Any] | None:
    rows = reader.rows
    count = pages_count(len(rows), ROWS_PER_PAGE)
    if not 1 <= page <= count:
        return None
    newest_first = rows[::-1][(page - 1) * ROWS_PER_PAGE:page * ROWS_PER_PAGE]
    outcomes = Counter(row.outcome for row in rows)
    return {"title": f"{reader.slug}: ledger", "slug": reader.slug, "page": page, "pages": count,
            "total": len(rows), "outcomes": dict(sorted(outcomes.items())),
            "rejections": rejections_by_code(rows), "rows": [row_view(row) for row in newest_first]}


# --- holds -------------------------------------------------------------------------------------


def _effect(item: HeldItem) -> str:
    held = item.held
    moves = ", ".join(f"{queue_path(held.hold, p)} → {p}" for p in held.paths)
    if held.type == "source":
        return f"Approving includes this source in the corpus (status: included): {moves}."
    if held.type == "link":
        try:
            link = parse_link(next(iter(item.files.values()), b""), held.paths[0])
        except FormatError:
            return f"Approving adds this link to the evidence and scores it: {moves}."
        return (f"Approving adds a {link.stance} link from {link.finding_id} to {link.hypothesis_id} "
                f"(revision {link.hypothesis_revision}) to the evidence; it is scored, and "
                f"{link.hypothesis_id}'s evidence health moves by its weight: {moves}.")
    return f"Approving moves it into the corpus: {moves}."


def holds_page(reader: ProjectReader) -> dict[str, Any]:
    items = []
    for item in reader.held:
        held = item.held
        files = [{"path": path, "text": data.decode("utf-8", errors="replace") if path.endswith((".yaml", ".md",
                  ".txt", ".json")) else f"({len(data)} bytes of {path.rsplit('.', 1)[-1]})"}
                 for path, data in sorted(item.files.items())]
        items.append({"hold": held.hold, "object_id": held.object_id, "type": held.type, "leaf_id": held.leaf_id,
                      "files": files, "effect": _effect(item),
                      "approve": f'RW_TOKEN=<person> rw hold approve {reader.slug} {held.object_id} --reason "..."',
                      "reject": f'RW_TOKEN=<person> rw hold reject {reader.slug} {held.object_id} --reason "..."'})
    return {"title": f"{reader.slug}: holds", "slug": reader.slug, "entries": items,
            "verdicts": [_proposal(reader.slug, record) for record in reader.proposals]}


def _proposal(slug: str, record: ResolutionRecord) -> dict[str, Any]:
    proposal = record.proposal
    h = record.hypothesis_id
    return {"hypothesis_id": h, "revision": record.revision, "check_date": record.check_date.isoformat(),
            "corpus_verdict": record.corpus_verdict, "supports": record.balance.supports,
            "contradicts": record.balance.contradicts, "links": len(record.links),
            "verdict": proposal.verdict if proposal else None, "confidence": proposal.confidence if proposal else None,
            "rationale": proposal.rationale if proposal else None, "model": proposal.model if proposal else None,
            "approve": f'RW_TOKEN=<person> rw verdict approve {slug} {h} --reason "..."',
            "set": f'RW_TOKEN=<person> rw verdict set {slug} {h} true|false|unresolved --confidence 0.N --reason "..."'}


# --- an agent's or an operator's page ----------------------------------------------------------


def acceptance_by_kind(rows: list[LedgerRow]) -> list[dict[str, Any]]:
    kinds: dict[str, Counter[str]] = {}
    for row in rows:
        if row.action == "submit":
            kinds.setdefault(row.kind or "(none)", Counter())[row.outcome] += 1
    out = []
    for kind, counts in sorted(kinds.items()):
        total = sum(counts.values())
        out.append({"kind": kind, "accepted": counts["accepted"], "held": counts["held"], "total": total,
                    "rate": counts["accepted"] / total if total else 0.0})
    return out


def who_page(reader: ProjectReader, key: str, history: list[tuple[str, UseSummary]]) -> dict[str, Any] | None:
    """An operator's or an agent's rows (`key` is `key_of` their name), with use score over time
    from `history` (time, use summary) pairs, oldest first."""
    name = next((n for n in people(reader) if key_of(n) == key), None)
    if name is None:
        return None
    rows = [row for row in reader.rows if name in (row.operator, row.actor)]
    accepted = [row_view(row) for row in rows if row.outcome == "accepted" and row.commit][::-1]
    series = [(at, float(row.use_score) if (row := summary.operators.get(name)) is not None else 0.0)
              for at, summary in history]
    now_use = reader.use.operators.get(name)
    by_kind = acceptance_by_kind(rows)
    return {"title": f"{reader.slug}: {name}", "slug": reader.slug, "name": name,
            "is_operator": now_use is not None, "use_score": now_use.use_score if now_use is not None else None,
            "accepted_total": len(accepted), "accepted": accepted[:CONTRIBUTIONS_SHOWN],
            "use_over_time": series, "by_kind": by_kind,
            "by_kind_rows": [(k["kind"], k["accepted"], k["total"]) for k in by_kind]}


def people(reader: ProjectReader) -> list[str]:
    """Every operator and agent named in the ledger or the scores (for the static site)."""
    names = {row.operator for row in reader.rows if row.operator} | {row.actor for row in reader.rows}
    return sorted(names | set(reader.use.operators))


# --- a commit ----------------------------------------------------------------------------------


def commit_page(reader: ProjectReader, facts: dict[str, Any] | None) -> dict[str, Any] | None:
    """A commit the ledger names: its message, author, time and the paths it changed."""
    if facts is None:
        return None
    rows = [row_view(row) for row in reader.rows if row.commit == facts["commit"]]
    return {"title": f"{reader.slug}: commit {facts['commit'][:12]}", "slug": reader.slug, **facts, "rows": rows}

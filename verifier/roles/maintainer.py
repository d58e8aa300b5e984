"""The Wiki Maintainer (design §5.1): one pass from the trace store to the ops wiki's pattern pages.

A pass refreshes the outcome index, samples the newest traces of every (leaf kind, outcome)
stratum, runs the deterministic root-cause pass (verifier/roles/patterns.py), asks the model for a
root cause per failure group when one is configured (the request carries the newest failing
trace's last events, bounded: `diagnose_request`), and writes the pages, `index.md` and one
`logs.md` entry as one ops-wiki commit. It never edits the skill. A diagnosis is a model's
untrusted text: it passes the secret gate (roles.answergate) before it goes on a page; one that
fails is dropped with a note naming the field and the detector, and a bearer token of ours in it
is revoked. The runner calls
`due_for_maintenance` after landing leaves and runs a pass when it says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from verifier.constants import DIAGNOSE_EVENT_CHARS, DIAGNOSE_EVENTS_MAX, MAX_DIAGNOSES
from verifier.formats.base import iso
from verifier.formats.skill import SKILL_KINDS
from verifier.model.adapter import Backend, ModelError
from verifier.model.roles import Role, role_backend
from verifier.pipeline.secrets_gate import revocation_note
from verifier.roles.answergate import Screened, all_texts, revoke_in, safe_text, screen
from verifier.roles.loopmodel import DiagnoseAnswer, DiagnoseRequest, ask_loop
from verifier.roles.opswiki import OpsWiki
from verifier.roles.outcomes import OUTCOMES, OutcomeEntry, kinds_due
from verifier.roles.patterns import (
    SAMPLE_PER_OUTCOME,
    Pattern,
    TraceFacts,
    add_contrast,
    bounded_events,
    facts_from_events,
    failure_patterns,
    log_entry,
    page_meta,
    render_index,
    render_page,
    strategy_patterns,
)
from verifier.roles.traceindex import TraceIndex
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.home import Home


@dataclass(frozen=True)
class PassReport:
    sampled: dict[tuple[str, str], int]
    written: list[str]
    commit: str
    model: str | None
    notes: list[str]


def configured_backend(home: Home, role: Role = "diagnose") -> Backend | None:
    """The model backend of `role` (docs/models.md), or None: the deterministic pass runs either way."""
    return role_backend(home, role)


def _counts_at_last_pass(home: Home) -> dict[str, dict[str, int]]:
    path = home.layout.loop / "maintainer.json"
    if not path.exists():
        return {}
    value = json.loads(path.read_bytes()).get("counts_at_last_pass", {})
    return {str(k): {str(o): int(n) for o, n in row.items()} for k, row in value.items()}


def kinds_due_for_maintenance(home: Home) -> list[str]:
    """The leaf kinds with `settings.maintainer_every[kind]` (default 20) accepted or rejected
    leaves since the last pass. Refreshes the outcome index (cheap: only new ledger rows)."""
    index = TraceIndex(home)
    index.refresh()
    return kinds_due(index.counts(), _counts_at_last_pass(home), home.settings.maintainer_every)


def due_for_maintenance(home: Home) -> bool:
    """The runner's hook: True when a maintainer pass (then a proposer run) is due."""
    return bool(kinds_due_for_maintenance(home))


def sample(index: TraceIndex) -> list[OutcomeEntry]:
    """The newest traces of each (kind, outcome) stratum, up to its budget."""
    return [entry for kind in SKILL_KINDS for outcome in OUTCOMES
            for entry in index.recent(kind, outcome, SAMPLE_PER_OUTCOME[outcome])]


def _facts(home: Home, entries: list[OutcomeEntry]) -> list[TraceFacts]:
    facts = []
    for entry in entries:
        events = home.traces.read(entry.trace_id).get("events.jsonl")
        if events is not None:  # a purged bundle leaves its ledger row; nothing to read
            facts.append(facts_from_events(entry, events))
    return facts


def diagnose_request(home: Home, pattern: Pattern) -> DiagnoseRequest:
    """What the model is asked about one failure group: the verifier's words, the contrast, and the
    newest failing trace's last events, bounded (constants.DIAGNOSE_EVENTS_MAX, _EVENT_CHARS). The
    trace store holds only bundles that passed ingest's secret scan, so the events hold no secret."""
    newest = max(pattern.facts, key=lambda item: item.entry.at, default=None)
    data = home.traces.read(newest.entry.trace_id).get("events.jsonl") if newest is not None else None
    return DiagnoseRequest(
        leaf_kind=pattern.kind, reason_code=pattern.reason_code or "", failing_step=pattern.failing_step or "",
        verifier_said=sorted({item.entry.description[:400] for item in pattern.facts})[:3],
        contrast=pattern.contrast, evidence=[item.entry.trace_id for item in pattern.facts][:20],
        events=bounded_events(data or b"", DIAGNOSE_EVENTS_MAX, DIAGNOSE_EVENT_CHARS))


def pending_diagnoses(home: Home) -> list[DiagnoseRequest]:
    """The diagnosis requests a pass would send now, biggest failure group first (at most MAX_DIAGNOSES)."""
    index = TraceIndex(home)
    index.refresh()
    facts = _facts(home, sample(index))
    failures, strategies = failure_patterns(facts), strategy_patterns(facts)
    add_contrast(failures, strategies)
    return [diagnose_request(home, pattern) for pattern in failures[:MAX_DIAGNOSES]]


def _diagnose(home: Home, backend: Backend, failures: list[Pattern], notes: list[str],
              stopped: list[Screened]) -> str | None:
    model = None
    for pattern in failures[:MAX_DIAGNOSES]:
        request = diagnose_request(home, pattern)
        try:
            answer, named = ask_loop(backend, request, DiagnoseAnswer)
        except ModelError as exc:
            said, screened = safe_text(str(exc), name="the error message",
                                       instead=f"{type(exc).__name__}; its message was withheld")
            stopped.append(screened)
            notes.append(f"model call for {pattern.path} failed: {said}")
            continue
        screened = screen({"root_cause": answer.root_cause, "advice": answer.advice, "model": named})
        if not screened.clean:
            stopped.append(screened)
            notes.append(f"the diagnosis for {pattern.path} was dropped: {screened.summary()}")
            continue
        model = named
        pattern.analysis = f"{answer.root_cause}\n\n**Advice.** {answer.advice}\n\n(by {model})"
    return model


def run_pass(home: Home, *, now: datetime, backend: Backend | None = None) -> PassReport:
    """One maintainer pass; returns what it sampled and wrote. One pass at a time: a page is read,
    merged and written back, and two passes at once would lose one's evidence."""
    with exclusive_lock(home.layout.named_lock("maintainer")):
        return _pass(home, now, backend)


def _pass(home: Home, now: datetime, backend: Backend | None) -> PassReport:
    index = TraceIndex(home)
    index.refresh()
    entries = sample(index)
    facts = _facts(home, entries)
    failures, strategies = failure_patterns(facts), strategy_patterns(facts)
    add_contrast(failures, strategies)
    notes: list[str] = []
    stopped: list[Screened] = []
    model = _diagnose(home, backend, failures, notes, stopped) if backend is not None else None
    revoked = revoke_in(home.identities, all_texts(stopped), now, "a model's diagnosis")
    if revoked:
        notes.append(f"a bearer token was in a model's answer{revocation_note(revoked)}")
    wiki = OpsWiki(home)
    stamp = iso(now)
    writes = {p.path: render_page(p, wiki.read(p.path), stamp).encode() for p in failures + strategies}
    metas = [page_meta(path, data.decode()) for path, data in writes.items()]
    for kind in SKILL_KINDS:
        for name in wiki.list_dir(f"patterns/{kind}"):
            path = f"patterns/{kind}/{name}"
            if path not in writes and name.endswith(".md"):
                metas.append(page_meta(path, wiki.read(path) or ""))
    writes["index.md"] = render_index(meta for meta in metas if meta is not None).encode()
    sampled: dict[tuple[str, str], int] = {}
    for item in facts:
        sampled[item.entry.stratum] = sampled.get(item.entry.stratum, 0) + 1
    written = sorted(path for path in writes if path.startswith("patterns/"))
    writes["logs.md"] = ((wiki.read("logs.md") or "") + log_entry(stamp, sampled, written, model)).encode()
    commit = wiki.write(writes, f"maintainer pass: {len(facts)} traces, {len(written)} pattern pages", now)
    write_atomic(home.layout.loop / "maintainer.json",
                 json.dumps({"counts_at_last_pass": index.counts(), "last_pass": stamp}).encode())
    return PassReport(sampled, written, commit, model, notes)

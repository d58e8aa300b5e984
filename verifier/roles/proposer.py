"""The Skill Proposer (design §5.1): one atomic proposal per run, handed to the gate.

It reads `index.md`, `skill-impact.md` and the outcome summary, opens the pattern pages the
index ranks highest (failure modes by how many traces they cite, then the working strategies of
the same kinds), and asks the model for the new body of one leaf kind's section. The answer can
only name a section and its body, and the candidate is checked again by the gate; a proposal that
would touch anything else is refused and recorded. The answer is untrusted text: its body,
rationale and model name pass the secret gate (roles.answergate) first; a proposal that fails
is refused (`secret_in_answer`, recorded without its text) and a bearer token of ours in it is
revoked.
"""

from __future__ import annotations

from datetime import datetime

from verifier.errors import FormatError, NotFound
from verifier.formats.frontmatter import load_front_matter
from verifier.formats.skill import sections
from verifier.model.adapter import Backend
from verifier.pipeline.secrets_gate import revocation_note
from verifier.roles.answergate import SECRET_IN_ANSWER, revoke_in, screen
from verifier.roles.gating import Decision
from verifier.roles.liveskill import read_live_skill
from verifier.roles.loopmodel import ProposeAnswer, ProposeRequest, ask_loop
from verifier.roles.opswiki import OpsWiki
from verifier.roles.patterns import PageMeta, page_meta
from verifier.roles.proposals import ProposalRefused, candidate_from_section
from verifier.roles.skillgate import gate, refuse
from verifier.roles.traceindex import TraceIndex
from verifier.roles.validation import LoadedSet, Worker, load_validation_set
from verifier.store.home import Home

PAGES_OPENED = 6
TRACES_OPENED = 2  # evidence traces of the top failure page whose events the proposer reads
TRACE_CHARS = 6000


def _pages(wiki: OpsWiki) -> list[PageMeta]:
    metas = []
    for kind in wiki.list_dir("patterns"):
        for name in wiki.list_dir(f"patterns/{kind}"):
            path = f"patterns/{kind}/{name}"
            meta = page_meta(path, wiki.read(path) or "") if name.endswith(".md") else None
            if meta is not None:
                metas.append(meta)
    return metas


def opened_pages(metas: list[PageMeta]) -> list[str]:
    """Which pages the proposer opens: the most cited failures, then strategies of their kinds."""
    failures = sorted((m for m in metas if m.type == "failure"), key=lambda m: (-m.seen, m.path))[:PAGES_OPENED]
    kinds = {m.kind for m in failures}
    strategies = sorted(m.path for m in metas if m.type == "strategy" and m.kind in kinds)
    return [m.path for m in failures] + strategies


def _evidence_events(home: Home, page: str) -> dict[str, str]:
    """The first evidence traces' events (truncated), read through the trace readers' interface."""
    try:
        meta, _body = load_front_matter(page, "pattern page")
    except FormatError:
        return {}
    if not isinstance(meta, dict):
        return {}
    evidence = [str(item) for item in meta.get("evidence", [])][:TRACES_OPENED]
    opened: dict[str, str] = {}
    index = TraceIndex(home)
    for trace_id in evidence:
        try:
            events = index.show(trace_id).files.get("events.jsonl", b"")
        except NotFound:
            continue
        opened[trace_id] = events.decode("utf-8", errors="replace")[:TRACE_CHARS]
    return opened


def build_request(home: Home) -> ProposeRequest:
    """The proposer's request, from the ops wiki, the outcome summary, a few traces and the live skill."""
    wiki = OpsWiki(home)
    live = read_live_skill(home).decode("utf-8")
    pages = {path: wiki.read(path) or "" for path in opened_pages(_pages(wiki))}
    first_failure = next((text for text in pages.values() if "\ntype: failure\n" in text), "")
    return ProposeRequest(
        index=wiki.read("index.md") or "", skill_impact=wiki.read("skill-impact.md") or "",
        outcome_summary=TraceIndex(home).counts(), pages=pages, traces=_evidence_events(home, first_failure),
        sections={kind: section.body for kind, section in sections(live).items()},
    )


def run_proposer(home: Home, *, backend: Backend, worker: Worker, now: datetime,
                 validation: LoadedSet | None = None) -> Decision:
    """Ask for one proposal and gate it; returns the gate's decision (kept, rolled back or refused)."""
    validation = validation or load_validation_set()
    answer, model = ask_loop(backend, build_request(home), ProposeAnswer)
    screened = screen({"body": answer.body, "rationale": answer.rationale, "model": model})
    if not screened.clean:
        revoked = revoke_in(home.identities, screened, now, "a model's skill proposal")
        return refuse(home, answer.section, f"{SECRET_IN_ANSWER}: {screened.summary()}; nothing of the proposal "
                      f"was kept{revocation_note(revoked)}", rationale="(withheld: the proposal failed the secret "
                      "gate)", now=now, set_version=validation.version)
    rationale = f"{answer.rationale} (by {model})".strip()
    live = read_live_skill(home).decode("utf-8")
    try:
        candidate = candidate_from_section(live, answer.section, answer.body)
    except ProposalRefused as exc:
        return refuse(home, answer.section, str(exc), rationale=rationale, now=now, set_version=validation.version)
    return gate(home, answer.section, candidate, worker=worker, now=now, rationale=rationale, validation=validation)

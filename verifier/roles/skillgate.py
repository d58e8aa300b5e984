"""The validation gate's harness (design §6.1): replay, score, keep or roll back, record.

One gate at a time (a lock under `$RW_HOME/locks/`). The best score so far is kept per validation
set version in `$RW_HOME/loop/gate.json`; a version with no best yet starts from the live skill's
own score on it, so changing the set's version resets the best. A kept proposal becomes the live
skill (a new `skill_version`); anything else leaves the live skill as it was, which is the
rollback. Every proposal, refused ones included, gets its row and section in `skill-impact.md`,
which nothing but this harness writes.

Every replay is also a validation result for `rw eval` (docs/eval.md): one entry per replayed skill
version (the live skill's own run when a set version starts, and each candidate's) appended to
`$RW_HOME/eval/validation.json`, so the evaluation sets a version's validation acceptance beside
its live acceptance and raises the stale-validation flag (§12) from these rows.
"""

from __future__ import annotations

import json
from datetime import datetime

from verifier.errors import FormatError
from verifier.evaluation.rows import ValidationFile, ValidationResult, parse_validation
from verifier.formats.base import iso
from verifier.formats.skill import skill_version
from verifier.roles.gating import Decision, Score, impact_document, keep, score, section_diff
from verifier.roles.liveskill import install_skill, read_live_skill
from verifier.roles.opswiki import OpsWiki
from verifier.roles.proposals import ProposalRefused, check_one_section, proposal_id
from verifier.roles.validation import LoadedSet, Worker, load_validation_set, replay
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.home import Home


def _state(home: Home) -> dict[str, dict[str, object]]:
    path = home.layout.loop / "gate.json"
    return dict(json.loads(path.read_bytes())) if path.exists() else {}


def best_so_far(home: Home, set_version: str) -> float | None:
    entry = _state(home).get(set_version)
    return float(str(entry["best"])) if entry else None


def _check_pinned(home: Home, validation: LoadedSet) -> None:
    """A set whose content changed under the same version would compare scores of different sets."""
    entry = _state(home).get(validation.version)
    if entry and entry.get("digest") not in (None, validation.digest()):
        raise FormatError(f"the validation set changed but its version is still {validation.version!r}; "
                          "give it a new version (the best so far then starts again)", str(validation.folder))


def _save_best(home: Home, validation: LoadedSet, best: float, version: str) -> None:
    state = _state(home)
    state[validation.version] = {"best": best, "skill_version": version, "digest": validation.digest()}
    write_atomic(home.layout.loop / "gate.json", json.dumps(state, sort_keys=True, indent=2).encode())


def record_validation(home: Home, version: str, validation: LoadedSet, result: Score) -> None:
    """Append one replay's figures to the validation results `rw eval` reads (under the gate's lock)."""
    path = home.layout.validation_set
    known = parse_validation(path.read_bytes(), str(path)) if path.exists() else []
    known.append(ValidationResult(skill_version=version, validation_set=validation.version, attempts=result.leaves,
                                  accepted=result.accepted, objects=result.objects))
    data = ValidationFile(results=known).model_dump_json(indent=2, exclude_none=True).encode() + b"\n"
    write_atomic(path, data, durable=home.settings.durable)


def _record(home: Home, decision: Decision, now: datetime) -> None:
    wiki = OpsWiki(home)
    document = impact_document(wiki.read("skill-impact.md") or "", decision)
    wiki.write({"skill-impact.md": document.encode("utf-8")},
               f"skill gate: {decision.proposal_id} ({decision.kind}) {decision.outcome}", now)


def refuse(home: Home, kind: str, reason: str, *, rationale: str, now: datetime, set_version: str) -> Decision:
    """Record a proposal refused before any replay (its shape was wrong); the live skill is untouched."""
    live = read_live_skill(home)
    decision = Decision(proposal_id=f"prop-{kind}-refused-{iso(now)}", kind=kind, at=iso(now),
                        set_version=set_version, candidate=None, best=best_so_far(home, set_version),
                        outcome="refused", diff="", rationale=rationale, skill_version=skill_version(live),
                        reason=reason)
    _record(home, decision, now)
    return decision


def gate(home: Home, kind: str, candidate: str, *, worker: Worker, now: datetime, rationale: str = "",
         validation: LoadedSet | None = None) -> Decision:
    """Gate one proposal: a candidate skill that may differ from the live one in `kind`'s section only."""
    validation = validation or load_validation_set()
    with exclusive_lock(home.layout.named_lock("skillgate")):
        live = read_live_skill(home).decode("utf-8")
        try:
            check_one_section(live, candidate, kind)
        except ProposalRefused as exc:
            return refuse(home, kind, str(exc), rationale=rationale, now=now, set_version=validation.version)
        _check_pinned(home, validation)
        best = best_so_far(home, validation.version)
        if best is None:  # a new validation set version: the live skill's score is the best so far
            baseline = score(replay(validation, live, worker, now=now))
            record_validation(home, skill_version(live.encode("utf-8")), validation, baseline)
            best = baseline.value
            _save_best(home, validation, best, skill_version(live.encode("utf-8")))
        result: Score = score(replay(validation, candidate, worker, now=now))
        record_validation(home, skill_version(candidate.encode("utf-8")), validation, result)
        kept = keep(kind, result, best)
        version = install_skill(home, candidate) if kept else skill_version(live.encode("utf-8"))
        if kept:
            _save_best(home, validation, max(best, result.value), version)
        decision = Decision(proposal_id=proposal_id(kind, candidate), kind=kind, at=iso(now),
                            set_version=validation.version, candidate=result, best=best,
                            outcome="kept" if kept else "rolled back", diff=section_diff(live, candidate, kind),
                            rationale=rationale, skill_version=version)
        _record(home, decision, now)
        return decision

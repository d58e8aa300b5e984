"""Sealing baselines (design §3.5.1): the verifier's half of the Resolver's honesty check.

When a hypothesis is active and no baseline answers its current wording, the verifier asks the
frontier model for a verdict from the statement and criterion alone (a `baseline` request, no
corpus), seals the answer with the Resolver's PUBLIC key and commits the seal. The verifier never
holds the private key, so from here on nobody reads the baseline until the Resolver opens it.

    scores/baseline/<H>.sealed        the seal (verifier.seal.SealedBaseline); opaque
    scores/baseline/<H>.request.json  which question it answers: revision and the sha256 of the
                                      exact baseline request. Public: the request is rebuilt from
                                      the hypothesis by anyone, so its hash says nothing about the
                                      answer. It is how a stale seal is noticed without opening it.

A seal is made (or remade) when:
- the hypothesis is active and has no seal, or
- its statement or criterion changed since (the request hash differs): the old seal answers
  another question and is replaced, unopened;
- `reseal` is asked for (the leak test found the baseline in an agent-visible payload).

Each seal is one verifier landing with a `resolve` ledger row (actor_type verifier, kind
baseline) that names the request hash and the backend, and never the model's name, its answer or
the answer's hash: each could give the verdict away. A failed call is a `rejected` row whose
description is the adapter's withheld message (the headline only).

The model call is made outside the project lock (it can take minutes); the landing then re-reads
the tip under the lock and lands only if the hypothesis still asks the same question.

The answer is untrusted text, and the one free-text field of it that lands (the model's name, in
the seal, public once the Resolver opens it) passes the secret gate: a name that fails is sealed
as `withheld` instead, and a bearer token of ours in it is revoked. The ledger row does not say
so (whether the name failed is a bit the model chose).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationError

from verifier.errors import FormatError, VerifierError
from verifier.formats.base import Sha256Hex, Strict, Timestamp
from verifier.formats.entries import ResolveEntry
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.project import HypothesisId
from verifier.model.adapter import Backend, ModelError, ModelReply, ask, backend_from_config
from verifier.model.roles import Role
from verifier.model.schema import BaselineAnswer, BaselineRequest, request_sha256
from verifier.pipeline.landing import Landed
from verifier.pipeline.secrets_gate import revoke_found_tokens
from verifier.pipeline.writer import ProjectWriter
from verifier.seal.keys import PUBLIC_PEM, KeyFileError, read_public_key, resolver_dir
from verifier.seal.sealing import KEY_ID_RE, Baseline, SealedBaseline, baseline_context, seal
from verifier.secrets import scan_bytes
from verifier.state.layout import SEAL_DIR, SEAL_SUFFIX, hypothesis_path, request_record_path, seal_path
from verifier.state.project import ProjectView, current_hypothesis
from verifier.store.audit import Door
from verifier.store.gitrepo import GitTree
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.writes.authority import enforce_at

# A hypothesis whose wording changes while its baseline call is out is asked again, this often.
ATTEMPTS = 3
WITHHELD_MODEL = "withheld"  # sealed instead of a model name that failed the secret gate


class BaselineError(VerifierError):
    """The baseline machinery is not set up (no model, no key) or a hypothesis names a bad seal path.
    Over HTTP (`POST /projects/{slug}/seal`) it is the home's state, not the request's: 409
    `seal_not_set_up`; `rw seal` says what to set up and exits 4 as before."""

    http_status = 409
    code = "seal_not_set_up"


class SealFailedError(BaselineError):
    """Some baselines could not be sealed; the others landed. Each failure has its ledger row."""

    def __init__(self, sealed: list[str], failures: dict[str, str]) -> None:
        self.sealed = sealed
        self.failures = failures
        listed = "; ".join(f"{h}: {why}" for h, why in sorted(failures.items()))
        super().__init__(f"could not seal {len(failures)} baseline{'s' if len(failures) != 1 else ''}: {listed}")


def seal_path_of(hypothesis: Hypothesis) -> str:
    """The seal's path: scores/baseline/<H>.sealed. A hypothesis may name it (`baseline.sealed`,
    design §3.5) but not elsewhere: the verifier writes only its own layout, and a path outside
    scores/ would be one that agents can write."""
    default = seal_path(hypothesis.hypothesis_id)
    named = hypothesis.baseline.sealed if hypothesis.baseline is not None else None
    if named is not None and named != default:
        raise BaselineError(f"{hypothesis_path(hypothesis.hypothesis_id)}: baseline.sealed is {named!r}; "
                            f"the verifier seals baselines at {default!r} only (or leave the field out)")
    return default


class SealRecord(Strict):
    """scores/baseline/<H>.request.json: the public facts of a seal."""

    version: Literal[1] = 1
    hypothesis_id: HypothesisId
    revision: int = Field(ge=1)
    request_sha256: Sha256Hex
    recipient: Annotated[str, StringConstraints(pattern=KEY_ID_RE)]
    sealed_at: Timestamp
    seal: str

    def to_json(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=2).encode() + b"\n"


@dataclass(frozen=True)
class SealState:
    """A seal found in a tree, with its public record (None if the record is missing or broken)."""

    hypothesis_id: str
    path: str
    sealed: SealedBaseline
    record: SealRecord | None


def read_seal(view: GitTree, hypothesis_id: str) -> SealState | None:
    path = seal_path(hypothesis_id)
    data = view.read(path)
    if data is None:
        return None
    sealed = SealedBaseline.from_json(data, path)
    raw = view.read(request_record_path(hypothesis_id))
    record = None
    if raw is not None:
        try:
            record = SealRecord.model_validate(json.loads(raw))
        except (ValueError, ValidationError):
            record = None  # treated as stale: a new seal replaces it
    return SealState(hypothesis_id, path, sealed, record)


def seals_in(view: GitTree) -> list[SealState]:
    """Every seal in the tree (every baseline still sealed), by hypothesis id."""
    found = []
    for name in view.list_dir(SEAL_DIR):
        if name.endswith(SEAL_SUFFIX):
            state = read_seal(view, name[: -len(SEAL_SUFFIX)])
            if state is not None:
                found.append(state)
    return found


def hypotheses_in(view: GitTree) -> list[Hypothesis]:
    """Every readable hypothesis, in id order (a malformed file is the human check's business)."""
    state = ProjectView(view)
    ids = sorted(state.hypothesis_ids, key=lambda h: (len(h), h))
    return [h for h in (current_hypothesis(view, i) for i in ids) if h is not None]


def baseline_request(hypothesis: Hypothesis) -> BaselineRequest:
    """The baseline call for the hypothesis as it reads now: statement and criterion, nothing else."""
    if hypothesis.resolution is None:
        raise BaselineError(f"{hypothesis.hypothesis_id} has no resolution criterion to ask about")
    return BaselineRequest(hypothesis_id=hypothesis.hypothesis_id, revision=hypothesis.revision,
                           statement=hypothesis.statement, criterion=hypothesis.resolution.criterion)


def seal_reason(view: GitTree, hypothesis: Hypothesis) -> str | None:
    """Why the hypothesis needs a (new) seal now, or None if it has a current one or needs none."""
    if hypothesis.status != "active" or hypothesis.resolution is None:
        return None
    seal_path_of(hypothesis)
    state = read_seal(view, hypothesis.hypothesis_id)
    if state is None:
        return "no baseline was sealed yet"
    wanted = request_sha256(baseline_request(hypothesis))
    if state.record is None or state.record.request_sha256 != wanted:
        return "the statement or criterion changed since the last seal"
    return None


def public_key_of(home: Home) -> bytes:
    path = resolver_dir(home.root) / PUBLIC_PEM
    try:
        return read_public_key(path)
    except KeyFileError as exc:
        raise BaselineError(f"{exc}; create the Resolver's key pair with `rw resolver keys`") from exc


def model_backend(home: Home, role: Role = "baseline") -> Backend:
    """The frontier-model backend configured in $RW_HOME/config.json for `role` (docs/models.md).

    The baseline is meant to be a live frontier call (design §3.5.1): a `recorded` backend seals
    only when its block says `"sealed_replay": true` (the tests' and demo's fixtures), and every
    such baseline's model name says `recorded:` wherever it is shown."""
    config = home.model_config(role)
    if config is None:
        raise BaselineError(f"no model is configured for {role}: add a `model` block (or `models.{role}`) to "
                            f'{home.layout.config}, e.g. {{"model": {{"backend": "anthropic", "name": '
                            '"claude-sonnet-4-5"}} (docs/models.md)')
    if role == "baseline" and config.backend == "recorded" and not config.sealed_replay:
        raise BaselineError(f"the baseline model of {home.layout.config} is a recorded backend: a baseline must be "
                            "a live frontier call; configure `models.baseline` with a provider or a command, or "
                            'mark a test or demo fixture `"sealed_replay": true` (docs/models.md)')
    return backend_from_config(config, base=home.root)


def screened_model(home: Home, reply: ModelReply[BaselineAnswer], now: datetime) -> str:
    """The model's name as it may be sealed: itself, or `withheld` when it fails the secret gate
    (a bearer token of ours in it is revoked)."""
    name = reply.model.encode()
    if not scan_bytes(name, name="model"):
        return reply.model
    revoke_found_tokens(home.identities, [name], now, "a model's baseline answer")
    return WITHHELD_MODEL


def _seal_writes(slug: str, hypothesis: Hypothesis, reply: ModelReply[BaselineAnswer], public_key: bytes,
                 now: datetime, model: str) -> dict[str, bytes | None]:
    baseline = Baseline(hypothesis_id=hypothesis.hypothesis_id, revision=hypothesis.revision,
                        verdict=reply.answer.verdict, confidence=reply.answer.confidence, model=model,
                        request_sha256=reply.request_sha256, answer_sha256=reply.answer_sha256, sealed_at=now)
    sealed = seal(public_key, baseline, context=baseline_context(slug, hypothesis.hypothesis_id))
    path = seal_path_of(hypothesis)
    record = SealRecord(hypothesis_id=hypothesis.hypothesis_id, revision=hypothesis.revision,
                        request_sha256=reply.request_sha256, recipient=sealed.recipient, sealed_at=now, seal=path)
    return {path: sealed.to_json(), request_record_path(hypothesis.hypothesis_id): record.to_json()}


def _row(now: datetime, *, outcome: Literal["accepted", "rejected"], reason_code: str,
         description: str) -> ResolveEntry:
    return ResolveEntry(at=now, actor="verifier", actor_type="verifier", kind="baseline", outcome=outcome,
                        reason_code=reason_code, description=description)


def _seal_one(home: Home, slug: str, hypothesis_id: str, *, now: datetime, backend: Backend,
              public_key: bytes, force_reason: str | None) -> tuple[Landed | None, str | None]:
    """Ask and seal one hypothesis's baseline. Returns (landing or None, failure or None)."""
    repo = home.project(slug)
    for _ in range(ATTEMPTS):
        hypothesis = current_hypothesis(repo.view(repo.tip()), hypothesis_id)
        if hypothesis is None or hypothesis.resolution is None:
            return None, None
        request = baseline_request(hypothesis)
        try:
            reply = ask(backend, request)
        except ModelError as exc:
            # The adapter withholds what a baseline call said: the message is the headline only.
            with ProjectWriter.open(home, slug) as writer:
                writer.land(_row(
                    now, outcome="rejected", reason_code="model_error",
                    description=f"baseline call for {hypothesis_id} failed: {exc}"[:4000]))
            return None, str(exc)
        with ProjectWriter.open(home, slug) as writer:
            view = writer.view()
            now_hypothesis = current_hypothesis(view, hypothesis_id)
            if now_hypothesis is None:
                return None, None
            reason = force_reason if force_reason is not None else seal_reason(view, now_hypothesis)
            if reason is None:
                return None, None  # sealed meanwhile, or no longer active
            if now_hypothesis.resolution is None or \
                    request_sha256(baseline_request(now_hypothesis)) != reply.request_sha256:
                continue  # reworded while the model was asked: ask about the new wording
            writes = _seal_writes(slug, now_hypothesis, reply, public_key, now, screened_model(home, reply, now))
            code = "baseline_sealed" if force_reason is None and reason.startswith("no baseline") \
                else "baseline_resealed"
            landed = writer.land(_row(
                now, outcome="accepted", reason_code=code,
                description=(f"sealed a baseline for {hypothesis_id} revision {now_hypothesis.revision} ({reason}); "
                             f"request {reply.request_sha256}, {reply.backend} backend")[:4000]), bookkeeping=writes)
            return landed, None
    return None, f"{hypothesis_id} kept changing while its baseline was asked for; try again"


def seal_missing(home: Home, slug: str, *, now: datetime, backend: Backend,
                 public_key: bytes | None = None, person: Actor | None = None, door: Door = "cli") -> list[str]:
    """Seal a baseline for every active hypothesis that has no current one; returns their ids.
    A `person` asking (over HTTP, or with RW_TOKEN) must be the steward, a maintainer or an admin
    (docs/authority.md); without one it is the home's owner at its shell.

    Raises BaselineError before any call when the Resolver's public key is missing, and
    SealFailedError after the others landed when some calls failed.
    """
    repo = home.project(slug)
    view = repo.view(repo.tip())
    if person is not None:
        enforce_at(home, slug, view, person, "seal", now=now, door=door)
    key = public_key if public_key is not None else public_key_of(home)
    wanted = []
    for hypothesis in hypotheses_in(view):
        try:
            if seal_reason(view, hypothesis) is not None:
                wanted.append(hypothesis.hypothesis_id)
        except BaselineError as exc:
            raise BaselineError(f"{slug}: {exc}") from exc
    sealed: list[str] = []
    failures: dict[str, str] = {}
    for hypothesis_id in wanted:
        landed, failure = _seal_one(home, slug, hypothesis_id, now=now, backend=backend, public_key=key,
                                    force_reason=None)
        if landed is not None:
            sealed.append(hypothesis_id)
        if failure is not None:
            failures[hypothesis_id] = failure
    if failures:
        raise SealFailedError(sealed, failures)
    return sealed


def reseal(home: Home, slug: str, hypothesis_id: str, *, now: datetime, backend: Backend, reason: str,
           public_key: bytes | None = None) -> Landed:
    """Regenerate and reseal one baseline (a new model call, a new canary), e.g. after a leak."""
    key = public_key if public_key is not None else public_key_of(home)
    repo = home.project(slug)
    hypothesis = current_hypothesis(repo.view(repo.tip()), hypothesis_id)
    if hypothesis is None or hypothesis.resolution is None:
        raise FormatError(f"{hypothesis_id} is not a hypothesis with a resolution criterion in {slug}")
    landed, failure = _seal_one(home, slug, hypothesis_id, now=now, backend=backend, public_key=key,
                                force_reason=reason)
    if landed is None:
        raise SealFailedError([], {hypothesis_id: failure or "the hypothesis has no criterion to ask about"})
    return landed

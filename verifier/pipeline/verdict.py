"""What a submission is, and what its caller is told: plain values shared by the pipeline, the
command line and the service."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from verifier.errors import Rejection

if TYPE_CHECKING:  # the store is not loaded by the light commands that show a verdict (rw check, rw board)
    from verifier.store.audit import Door

Outcome = Literal["accepted", "held", "rejected", "crash"]


def verdict_line(outcome: str, subject: str, rejections: Sequence[Rejection] = (), detail: str = "") -> str:
    """The one-line verdict every face prints (`rw submit` in every form, a push's `remote:` lines):
    `OUTCOME subject: [code] where: why (+N more)` when refused, else `OUTCOME subject<detail>`."""
    head = f"{outcome.upper()} {subject}"
    if rejections:
        more = f" (+{len(rejections) - 1} more)" if len(rejections) > 1 else ""
        return f"{head}: {rejections[0].line()}{more}"
    return head + detail


@dataclass(frozen=True)
class Submission:
    """One attempt. `leaf_id` None is a person's edit outside any leaf (the human path), whose
    trace is optional and whose base is `base` (default: the tip)."""

    slug: str
    leaf_id: str | None
    patch: bytes
    bundle: dict[str, bytes]
    token: str
    base: str | None = None
    # Why the bundle could not be read at all (an unreadable archive, a link member...): the
    # pipeline records this reason rather than "no trace".
    bundle_problem: Rejection | None = None
    # When the submitting agent's live claim on the leaf began, as the Commons says (the service
    # reads it as the submission arrives); recorded on the row so time to accept runs from it.
    claimed_at: datetime | None = None
    # Where it came in (the CLI, HTTP), for the audit log's record of a refusal.
    door: Door = "cli"


@dataclass(frozen=True)
class Verdict:
    """What the caller is told. `rejections` lists every problem found, the first is the headline."""

    outcome: Outcome
    project: str
    leaf_id: str | None
    actor: str
    summary: str
    rejections: list[Rejection] = field(default_factory=list)
    commit: str | None = None
    ledger_seq: int | None = None
    trace_id: str | None = None
    tip: str | None = None
    holds: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The one-line verdict for people."""
        detail = f": {self.summary}" if self.summary else ""
        where = f" -> queue/{','.join(self.holds)}" if self.holds else ""
        commit = f" commit {self.commit[:12]}" if self.commit else ""
        return verdict_line(self.outcome, f"{self.project}/{self.leaf_id or 'edit'} by {self.actor}", self.rejections,
                            f"{detail}{where}{commit}")

    def lines(self) -> list[str]:
        """The verdict for people: the one line, then every further rejection (`  also ...`)."""
        return [self.line(), *(f"  also {rejection.line()}" for rejection in self.rejections[1:])]

    @classmethod
    def from_json(cls, body: Mapping[str, object]) -> Verdict:
        """The verdict a service answered (`to_json`), back as the value, for the same rendering."""
        def text(key: str) -> str | None:
            value = body.get(key)
            return None if value is None else str(value)

        def items(key: str) -> list[object]:
            value = body.get(key)
            return list(value) if isinstance(value, list) else []

        seq = body.get("ledger_seq")
        # An outcome this version does not know keeps its name; its exit code is a crash's.
        return cls(outcome=cast(Outcome, str(body.get("outcome"))), ledger_seq=seq if isinstance(seq, int) else None,
                   project=str(body.get("project", "")), leaf_id=text("leaf_id"), actor=str(body.get("actor", "")),
                   summary=str(body.get("summary") or ""),
                   rejections=[Rejection(str(r.get("code")), str(r.get("message")),
                                         None if r.get("where") is None else str(r.get("where")))
                               for r in items("rejections") if isinstance(r, dict)],
                   commit=text("commit"), tip=text("tip"), trace_id=text("trace_id"),
                   holds=[str(h) for h in items("holds")], notes=[str(n) for n in items("notes")])

    def to_json(self) -> VerdictJson:
        return {
            "outcome": self.outcome, "project": self.project, "leaf_id": self.leaf_id,
            "actor": self.actor, "summary": self.summary, "commit": self.commit,
            "ledger_seq": self.ledger_seq, "trace_id": self.trace_id, "tip": self.tip,
            "holds": self.holds, "notes": self.notes,
            "rejections": [{"code": r.code, "message": r.message, "where": r.where} for r in self.rejections],
        }


class RejectionJson(TypedDict):
    code: str
    message: str
    where: str | None


class VerdictJson(TypedDict):
    """A verdict as `rw submit --json` prints it and the service answers it (docs/api.md)."""

    outcome: Outcome
    project: str
    leaf_id: str | None
    actor: str
    summary: str
    commit: str | None
    ledger_seq: int | None
    trace_id: str | None
    tip: str | None
    holds: list[str]
    notes: list[str]
    rejections: list[RejectionJson]

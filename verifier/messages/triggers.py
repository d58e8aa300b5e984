"""The messages of design §6 and §9 as pure functions of what one landing changed. Pure.

One ledger row is one landing. `RowFacts` says what that landing changed (read from git by the
notifier); the functions here decide who is told what, with a key that makes the message
idempotent: the same row always yields the same keys, so posting twice keeps one.

Every trigger reads the row and what its landing changed, never who wrote it: a Planner's `plan`
row, a person's edit or `rw leaf add`, the Resolver's rows and an agent's submission are read the
same way.

- outcome        every submit row, on the leaf's thread (§6 "post the outcome to the leaf's thread")
- first_minute   an operator's first accepted leaf of a first-minute kind (extract: the kind §9.1
                 makes the first leaf, the one that adds findings) in a project: findings added,
                 the project, first on that source or not, and the project's current digest, in
                 the body (its headline numbers) and in full in the message's data (§9.1)
- secret         a trace or patch refused for a secret: the agent is told, nothing was kept (§11);
                 and each person or agent whose bearer token was found and revoked
- finding_linked a link landed on your finding; says how its use score moved when it did (§9.2)
- use_score      your finding's use score moved for another reason (a report cited it, a revert)
- hypothesis_moved a hypothesis you have links or findings on changed or resolved; with the
                 credit delta when scores/resolution.json moved (§9.2)
- new_leaf       each new leaf of the kind you have the best acceptance rate on, whatever row
                 wrote it (a Planner's plan, `rw leaf add`); never a review leaf of your own object
                 (§5.4: an agent does not review its own objects) (§9.2)
- reverted       your contribution was reverted: "leaf X reverted by Y: reason" (§11)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from verifier.commons.adapter import OutgoingMessage
from verifier.errors import FormatError
from verifier.formats.ledger import LedgerRow
from verifier.formats.usescores import parse_shard
from verifier.pipeline.digest import Digest
from verifier.state.layout import USE_SHARD_ROOT

SUBMIT_ACCEPTED = ("accepted", "held")
FIRST_MINUTE_KINDS = ("extract",)  # §9.1: the first leaf, and the one whose message counts findings
# secret_in_answer: a model's answer the Resolver refused (verifier/roles/answergate.py); only
# `submit` rows tell the submitter, every one of them tells a revoked token's owner.
SECRET_CODES = ("secret_in_trace", "secret_in_patch", "secret_in_answer")
# Must match verifier.pipeline.secrets_gate.REVOKED_MARK (commons does not import the pipeline).
_REVOKED = re.compile(r"revoked the bearer token of: ([a-z0-9_.,\s-]+)")


@dataclass(frozen=True)
class LinkFacts:
    link_id: str
    finding_id: str
    hypothesis_id: str
    stance: str
    leaf_id: str | None


@dataclass(frozen=True)
class HypothesisMove:
    hypothesis_id: str
    before: dict[str, Any] | None  # {revision, status, verdict} or None when it is new
    after: dict[str, Any] | None  # None when it was removed


@dataclass(frozen=True)
class NewLeaf:
    leaf_id: str
    kind: str
    title: str | None
    object_id: str | None = None  # a review leaf's object (its author is never offered the leaf)


@dataclass(frozen=True)
class RevertFacts:
    """A revert row: the commit it undid, who made that commit and for which leaf, and why."""

    commit: str
    author: str | None  # the reverted commit's author handle (an agent or a person)
    leaf_id: str | None  # the reverted commit's Leaf trailer (None: a person's edit)
    reason: str


@dataclass
class RowFacts:
    """What one landing (one ledger row) changed, as plain values."""

    slug: str
    row: LedgerRow
    leaf_kind: str | None = None
    leaf_title: str | None = None
    leaf_created: bool = False  # the row wrote a new leaf contract for row.leaf_id
    new_leaves: list[NewLeaf] = field(default_factory=list)  # every leaf contract the landing added
    reverted: RevertFacts | None = None
    source_id: str | None = None  # an extract leaf's source
    created: dict[str, list[str]] = field(default_factory=dict)  # object type -> ids created
    links: list[LinkFacts] = field(default_factory=list)  # links that landed in links/
    use_moves: dict[str, tuple[float, float]] = field(default_factory=dict)  # finding -> (before, after)
    hypotheses: list[HypothesisMove] = field(default_factory=list)
    credit: dict[str, dict[str, float]] = field(default_factory=dict)  # operator -> component -> delta
    resolved: str | None = None  # the hypothesis the Resolver's credit deltas (if any) are about
    credit_messages: dict[str, dict[str, Any]] = field(default_factory=dict)  # operator -> Resolver's delta

    def hypotheses_touched(self) -> list[str]:
        touched = {move.hypothesis_id for move in self.hypotheses}
        return sorted(touched | ({self.resolved} if self.resolved else set()))


@dataclass(frozen=True)
class Snapshot:
    """What the notifier remembers, as far as one row's messages need it."""

    operator_has_accepted: bool
    source_seen: bool
    finding_authors: dict[str, str]  # finding id -> agent
    lineage: dict[str, set[str]]  # hypothesis id -> agents with links or findings on it
    agent_operator: dict[str, str]
    operator_agents: dict[str, set[str]]  # for operators the Resolver's credit deltas name
    best_kind_agents: dict[str, dict[str, tuple[int, int]]]  # kind -> agent best at it -> (accepted, attempts)
    object_authors: dict[str, str] = field(default_factory=dict)  # object id -> agent (review leaves' objects)


def _key(facts: RowFacts, *parts: str) -> str:
    return ":".join((facts.slug, str(facts.row.seq), *parts))


def outcome_message(facts: RowFacts) -> OutgoingMessage | None:
    row = facts.row
    if row.action != "submit" or row.leaf_id is None:
        return None
    why = f" [{row.reason_code}]" if row.reason_code else ""
    commit = f" commit {row.commit[:12]}" if row.commit else ""
    body = f"{row.outcome.upper()} {facts.slug}/{row.leaf_id} by {row.actor} ({row.operator}){why}{commit}: " \
           f"{row.description}"
    # No trace id: threads are readable by anyone, traces are private.
    data = {"seq": row.seq, "outcome": row.outcome, "reason_code": row.reason_code, "actor": row.actor,
            "operator": row.operator, "commit": row.commit, "kind": row.kind}
    return OutgoingMessage(_key(facts, "outcome"), "outcome", body[:4000], facts.slug, row.leaf_id, None,
                           data=data)


def first_minute_applies(facts: RowFacts) -> bool:
    """Whether this row is one a first-minute message is about: an accepted (or held) leaf of a
    first-minute kind. Whether it is the operator's first is the notifier's memory."""
    row = facts.row
    return row.action == "submit" and row.outcome in SUBMIT_ACCEPTED and row.leaf_id is not None \
        and facts.leaf_kind in FIRST_MINUTE_KINDS


def digest_headline(digest: Digest) -> str:
    """The digest's headline numbers, for a message body (the whole digest travels in its data)."""
    corpus = digest["corpus"]
    report = digest["reports"][0]["title"] if digest["reports"] else "none yet"
    hypotheses = ", ".join(f"{card['hypothesis_id']} {card['status']}" for card in digest["hypotheses"][:5])
    return (f"{corpus['findings']} findings from {corpus['sources']} sources, {len(digest['open_leaves'])} open "
            f"leaves, {len(digest['open_gaps'])} open gaps; newest report: {report}"
            + (f"; hypotheses: {hypotheses}" if hypotheses else ""))


def first_minute_message(facts: RowFacts, snapshot: Snapshot, digest: Digest) -> OutgoingMessage | None:
    row = facts.row
    if not first_minute_applies(facts) or snapshot.operator_has_accepted:
        return None
    findings = len(facts.created.get("finding", []))
    first_on_source = facts.source_id is not None and not snapshot.source_seen
    source = ""
    if facts.source_id is not None:
        source = f", {'the first' if first_on_source else 'not the first'} on source {facts.source_id}"
    body = (f"Welcome to {facts.slug}: {row.actor} added {findings} finding{'s' if findings != 1 else ''}"
            f"{source} (leaf {row.leaf_id}, {row.outcome}). The project's digest: {digest_headline(digest)}. "
            f"The whole digest is in this message's data (and at GET /projects/{facts.slug}/digest).")
    data = {"project": facts.slug, "leaf_id": row.leaf_id, "findings_added": findings,
            "source_id": facts.source_id, "first_on_source": first_on_source, "digest": digest}
    return OutgoingMessage(_key(facts, "first-minute"), "first_minute", body, facts.slug, row.leaf_id,
                           row.actor, data=data)


def secret_message(facts: RowFacts) -> OutgoingMessage | None:
    row = facts.row
    if row.action != "submit" or row.reason_code not in SECRET_CODES:
        return None
    part = "trace" if row.reason_code == "secret_in_trace" else "patch"
    body = (f"Your {part} for {facts.slug}/{row.leaf_id or 'an edit'} contained a secret. It was refused and "
            "nothing of it was kept; rotate the credential and submit again without it.")
    return OutgoingMessage(_key(facts, "secret"), "secret", body, facts.slug, row.leaf_id, row.actor,
                           data={"seq": row.seq, "description": row.description})


def revoked_messages(facts: RowFacts) -> list[OutgoingMessage]:
    """A bearer token found in a refused submission was revoked: tell its owner (§11)."""
    row = facts.row
    match = _REVOKED.search(row.description) if row.reason_code in SECRET_CODES else None
    if match is None:
        return []
    handles = [handle.strip() for handle in match.group(1).split(",") if handle.strip()]
    where = "a model's answer" if row.reason_code == "secret_in_answer" else "a submission"
    body = (f"Your bearer token appeared in {where} to {facts.slug} and was revoked at once; it no longer "
            "authenticates. Ask the project's operator for a new token, and keep tokens out of traces and files.")
    return [OutgoingMessage(_key(facts, "revoked", handle), "secret", body, facts.slug, row.leaf_id, handle,
                            data={"seq": row.seq}) for handle in handles]


def linked_messages(facts: RowFacts, snapshot: Snapshot) -> list[OutgoingMessage]:
    messages = []
    told: set[str] = set()
    for link in facts.links:
        author = snapshot.finding_authors.get(link.finding_id)
        if author is None:
            continue
        move = facts.use_moves.get(link.finding_id)
        moved = f"; its use score moved {move[0]:g} -> {move[1]:g}" if move else ""
        body = (f"Leaf {link.leaf_id or '(human edit)'} linked your finding {link.finding_id} to "
                f"{link.hypothesis_id} ({link.stance}){moved}.")
        data = {"link_id": link.link_id, "finding_id": link.finding_id, "hypothesis_id": link.hypothesis_id,
                "stance": link.stance, "leaf_id": link.leaf_id, "by": facts.row.actor,
                "use_before": move[0] if move else None, "use_after": move[1] if move else None}
        messages.append(OutgoingMessage(_key(facts, "linked", link.link_id), "finding_linked", body, facts.slug,
                                        link.leaf_id, author, data=data))
        told.add(link.finding_id)
    for finding_id, (before, after) in sorted(facts.use_moves.items()):
        author = snapshot.finding_authors.get(finding_id)
        if author is None or finding_id in told:
            continue
        body = f"The use score of your finding {finding_id} moved {before:g} -> {after:g} ({facts.row.action} " \
               f"by {facts.row.actor})."
        messages.append(OutgoingMessage(_key(facts, "use", finding_id), "use_score", body, facts.slug,
                                        facts.row.leaf_id, author,
                                        data={"finding_id": finding_id, "use_before": before, "use_after": after}))
    return messages


def _describe_move(move: HypothesisMove) -> str:
    if move.after is None:
        return f"{move.hypothesis_id} was removed"
    if move.before is None:
        return f"{move.hypothesis_id} was added (status {move.after['status']})"
    changes = [f"{name} {move.before[name]} -> {move.after[name]}"
               for name in ("revision", "status", "verdict") if move.before.get(name) != move.after.get(name)]
    if move.after.get("status") == "resolved" and move.before.get("status") != "resolved":
        return f"{move.hypothesis_id} resolved {move.after.get('verdict')} ({'; '.join(changes)})"
    return f"{move.hypothesis_id} moved ({'; '.join(changes) or 'text edited'})"


def hypothesis_messages(facts: RowFacts, snapshot: Snapshot) -> list[OutgoingMessage]:
    """Everyone with links or findings on a hypothesis that moved, and every agent of an operator the
    Resolver's credit deltas name; the Resolver's own sentence when it wrote one for the operator."""
    messages = []
    moves = {move.hypothesis_id: move for move in facts.hypotheses}
    for hypothesis_id in facts.hypotheses_touched():
        move = moves.get(hypothesis_id)
        recipients = set(snapshot.lineage.get(hypothesis_id, set()))
        if hypothesis_id == facts.resolved:
            for named in facts.credit_messages:
                recipients |= snapshot.operator_agents.get(named, set())
        for agent in sorted(recipients):
            operator = snapshot.agent_operator.get(agent)
            posted = facts.credit_messages.get(operator) if operator and hypothesis_id == facts.resolved else None
            delta = facts.credit.get(operator, {}) if operator else {}
            if posted is not None:
                body = f"A hypothesis in your lineage moved: {posted.get('message', hypothesis_id + ' resolved')}"
            else:
                what = _describe_move(move) if move is not None else f"{hypothesis_id} was rescored"
                credit = ""
                if delta:
                    credit = " Credit delta for your operator: " + ", ".join(
                        f"{name} {value:+g}" for name, value in sorted(delta.items())) + "."
                body = f"A hypothesis in your lineage moved: {what}.{credit}"
            data = {"hypothesis_id": hypothesis_id, "before": move.before if move else None,
                    "after": move.after if move else None, "credit_delta": posted or delta, "operator": operator}
            messages.append(OutgoingMessage(_key(facts, "hypothesis", hypothesis_id, agent), "hypothesis_moved",
                                            body[:4000], facts.slug, facts.row.leaf_id, agent, data=data))
    return messages


def new_leaf_messages(facts: RowFacts, snapshot: Snapshot) -> list[OutgoingMessage]:
    """Each new leaf, to every agent whose best kind it is; one message per agent and row, naming
    the first such leaf and how many more there are. A review leaf is never offered to its
    object's author."""
    offered: dict[str, list[NewLeaf]] = {}
    for leaf in facts.new_leaves:
        for agent in snapshot.best_kind_agents.get(leaf.kind, {}):
            if leaf.object_id is not None and snapshot.object_authors.get(leaf.object_id) == agent:
                continue
            offered.setdefault(agent, []).append(leaf)
    messages = []
    for agent, leaves in sorted(offered.items()):
        first = leaves[0]
        accepted, attempts = snapshot.best_kind_agents[first.kind][agent]
        more = f" (and {len(leaves) - 1} more of the kinds you do best)" if len(leaves) > 1 else ""
        body = (f"New {first.kind} leaf {first.leaf_id} in {facts.slug}"
                f"{': ' + first.title if first.title else ''}{more}. {first.kind} is the kind you do best "
                f"({accepted}/{attempts} accepted).")
        data: dict[str, Any] = {"leaf_id": first.leaf_id, "kind": first.kind, "accepted": accepted,
                                "attempts": attempts}
        if len(leaves) > 1:
            data["leaf_ids"] = [leaf.leaf_id for leaf in leaves]
        messages.append(OutgoingMessage(_key(facts, "new-leaf", agent), "new_leaf", body[:4000], facts.slug,
                                        first.leaf_id, agent, data=data))
    return messages


def reverted_messages(facts: RowFacts) -> list[OutgoingMessage]:
    """The author of a reverted contribution hears it, with the reason (not only as score deltas)."""
    reverted, row = facts.reverted, facts.row
    if reverted is None or reverted.author is None or row.action != "revert" or row.outcome != "accepted":
        return []
    what = f"leaf {reverted.leaf_id}" if reverted.leaf_id else f"your edit {reverted.commit[:12]}"
    body = f"{what} reverted by {row.actor}: {reverted.reason}"
    return [OutgoingMessage(_key(facts, "reverted", reverted.author), "reverted", body[:4000], facts.slug,
                            reverted.leaf_id, reverted.author,
                            data={"leaf_id": reverted.leaf_id, "commit": reverted.commit, "by": row.actor,
                                  "reason": reverted.reason, "seq": row.seq})]


def best_kinds(stats: dict[tuple[str, str], tuple[int, int]]) -> dict[str, str]:
    """Each agent's kind with the best acceptance rate (ties: more accepted, then the name).

    `stats` maps (agent, kind) to (accepted, attempts); kinds never accepted do not count.
    """
    candidates: dict[str, list[tuple[float, int, str]]] = {}
    for (agent, kind), (accepted, attempts) in sorted(stats.items()):
        if accepted > 0 and attempts > 0:
            candidates.setdefault(agent, []).append((accepted / attempts, accepted, kind))
    # max() keeps the first of equals, and the candidates are in kind order: ties go to the first name.
    return {agent: max(options, key=lambda c: (c[0], c[1]))[2] for agent, options in candidates.items()}


def finding_use(shard: bytes | None) -> dict[str, float]:
    """Finding id -> use, from one scores/use/<ab>/<cd>.json shard (scoring.use): present findings only."""
    if not shard:
        return {}
    try:
        entries = parse_shard(shard, USE_SHARD_ROOT)
    except FormatError:
        return {}  # a message is never worth failing a landing over
    return {object_id: float(entry.u) for object_id, entry in entries.items()
            if entry.type == "finding" and entry.present}


def resolver_deltas(document: bytes | None) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(hypothesis, operator -> its delta with the Resolver's `message`) from the Resolver's
    scores/credit-deltas/<seq>.json (roles.resolver, scoring.resolution.deltas_document)."""
    try:
        value = json.loads(document or b"")
    except ValueError:
        return None, {}
    if not isinstance(value, dict) or not isinstance(value.get("deltas"), list):
        return None, {}
    hypothesis = value.get("hypothesis_id") if isinstance(value.get("hypothesis_id"), str) else None
    deltas = {entry["operator"]: entry for entry in value["deltas"]
              if isinstance(entry, dict) and isinstance(entry.get("operator"), str)}
    return hypothesis, deltas


def credit_by_operator(document: bytes | None) -> dict[str, dict[str, float]]:
    """Operator -> credit components, from scores/resolution.json (scoring.resolution)."""
    if not document:
        return {}
    try:
        value = json.loads(document)
    except ValueError:
        return {}
    out: dict[str, dict[str, float]] = {}
    for entry in value.get("operators", []) if isinstance(value, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("operator"), str):
            out[entry["operator"]] = {name: float(number) for name, number in entry.items()
                                      if name != "operator" and isinstance(number, int | float)}
    return out


def credit_delta(before: bytes | None, after: bytes | None) -> dict[str, dict[str, float]]:
    old, new = credit_by_operator(before), credit_by_operator(after)
    delta: dict[str, dict[str, float]] = {}
    for operator in set(old) | set(new):
        changes = {name: new.get(operator, {}).get(name, 0.0) - old.get(operator, {}).get(name, 0.0)
                   for name in set(old.get(operator, {})) | set(new.get(operator, {}))}
        changes = {name: value for name, value in changes.items() if value}
        if changes:
            delta[operator] = changes
    return delta


def operator_copies(messages: Iterable[OutgoingMessage],
                    operator_of: Callable[[str], str | None]) -> list[OutgoingMessage]:
    """One copy of each message addressed to an agent, for that agent's operator (when the
    operator is someone else than the agent itself). Pure."""
    copies: list[OutgoingMessage] = []
    for message in messages:
        if message.to_agent is None:
            continue
        operator = operator_of(message.to_agent)
        if operator is None or operator == message.to_agent:
            continue
        copies.append(replace(message, key=f"{message.key}:operator", to_agent=operator,
                              body=f"[for your agent {message.to_agent}] {message.body}",
                              data={**message.data, "agent": message.to_agent, "to_operator": operator}))
    return copies

"""Catching Commons up with what landed: ledger rows in, messages out, exactly once.

The ledger is the source of truth for outcomes, so the notifier never hears about verdicts from
the caller: it reads each project's ledger from where it stopped (`notify_cursor`), pairs every
new row with the commit that landed it, reads what that landing changed (findings and links
created, use-score shards, hypotheses, scores/resolution.json, new leaf contracts), asks
`triggers` who should be told what, posts it, and moves its cursor. Verdicts from the service,
from an in-process `rw submit`, the Resolver or a person's edit are all caught the same way.

Exactly once: one catch-up per project at a time (a flock beside the project's writer lock),
messages carry keys derived from the row, and the cursor and what the notifier remembers
(authors, links, firsts, acceptance counts) move in one transaction after posting (on PostgreSQL
scoped by the project, beside the other projects' and the messages' writes). A crash
between posting and that transaction re-posts the same keys, which Commons keeps once.

Besides the return triggers (to agents and operators), each row may tell the project's steward
what waits for them (`steward`: a held object, a verdict proposal, a revoked leaked token), and a
project whose history broke tells its steward and maintainers once (`history_alarm`, run before
each catch-up of `catch_up_checked`: at service start-up and after every `rw` command; and when the
service refuses a submission for it).

A project seen for the first time is read silently: its history fills the memory, nobody is
messaged about the past.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pygit2

from verifier.commons.adapter import Commons, OutgoingMessage
from verifier.commons.db import CommonsDB
from verifier.errors import FormatError, HistoryBrokenError, NotFound
from verifier.formats.hypothesis import parse_hypothesis
from verifier.formats.leaf import LeafContract
from verifier.formats.ledger import LedgerRow, parse_ledger_subject
from verifier.formats.link import parse_link
from verifier.messages import steward, triggers
from verifier.messages.steward import Stewards, stewards_of
from verifier.messages.triggers import (
    HypothesisMove,
    LinkFacts,
    NewLeaf,
    RevertFacts,
    RowFacts,
    Snapshot,
    operator_copies,
)
from verifier.pipeline.digest import Digest
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import (
    FINDINGS_DIR,
    HYPOTHESES_DIR,
    LEAVES_DIR,
    LINKS_DIR,
    PROJECT_FILE,
    RESOLUTION_SCORES,
    SOURCES_DIR,
    USE_SHARD_ROOT,
    classify,
    deltas_path,
    leaf_path,
)
from verifier.state.project import ProjectView, rows_from
from verifier.store.files import exclusive_lock
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Home

DigestOf = Callable[[Home, str, datetime], Digest]

SCHEMA = """
CREATE TABLE IF NOT EXISTS notify_cursor (project TEXT PRIMARY KEY, next_seq INTEGER NOT NULL, tip TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notify_stats (
  project TEXT NOT NULL, agent TEXT NOT NULL, kind TEXT NOT NULL,
  accepted INTEGER NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (project, agent, kind));
CREATE TABLE IF NOT EXISTS notify_authors (
  project TEXT NOT NULL, object_id TEXT NOT NULL, agent TEXT NOT NULL, PRIMARY KEY (project, object_id));
CREATE TABLE IF NOT EXISTS notify_links (
  project TEXT NOT NULL, link_id TEXT NOT NULL, hypothesis_id TEXT NOT NULL, finding_id TEXT NOT NULL,
  PRIMARY KEY (project, link_id));
CREATE INDEX IF NOT EXISTS notify_links_hypothesis ON notify_links (project, hypothesis_id);
CREATE TABLE IF NOT EXISTS notify_firsts (project TEXT NOT NULL, what TEXT NOT NULL, PRIMARY KEY (project, what));
CREATE TABLE IF NOT EXISTS notify_agents (agent TEXT PRIMARY KEY, operator TEXT NOT NULL)
"""

_REVERT_ROW = re.compile(r"^reverted ([0-9a-f]{40}): (.*?)(?:; withdrew \d+ dependent objects?: .*)?$", re.DOTALL)
_LEAF_TRAILER = re.compile(r"^Leaf: (\S+)$", re.MULTILINE)
_CONTRACT = re.compile(rf"^{LEAVES_DIR}/([^/]+)\.yaml$")
MAX_ROWS_PER_PASS = 2000
AUTHORED_ACTIONS = ("submit", "human")


@dataclass
class _Memory:
    """What this pass learned, on top of what the database already holds."""

    db: CommonsDB
    slug: str
    authors: dict[str, str] = field(default_factory=dict)
    links: dict[str, tuple[str, str]] = field(default_factory=dict)  # link -> (hypothesis, finding)
    firsts: set[str] = field(default_factory=set)
    stats: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    agents: dict[str, str] = field(default_factory=dict)

    def first_seen(self, what: str) -> bool:
        """True if `what` was already recorded (before this pass or earlier in it)."""
        if what in self.firsts:
            return True
        return bool(self.db.read("SELECT 1 FROM notify_firsts WHERE project = ? AND what = ?", (self.slug, what)))

    def author(self, object_id: str) -> str | None:
        if object_id in self.authors:
            return self.authors[object_id]
        rows = self.db.read("SELECT agent FROM notify_authors WHERE project = ? AND object_id = ?",
                            (self.slug, object_id))
        return str(rows[0]["agent"]) if rows else None

    def lineage(self, hypothesis_id: str) -> set[str]:
        """Agents with a link on the hypothesis, or a finding linked to it."""
        pairs = {(link, finding) for link, (hyp, finding) in self.links.items() if hyp == hypothesis_id}
        pairs |= {(str(r["link_id"]), str(r["finding_id"])) for r in self.db.read(
            "SELECT link_id, finding_id FROM notify_links WHERE project = ? AND hypothesis_id = ?",
            (self.slug, hypothesis_id))}
        agents = {self.author(object_id) for pair in pairs for object_id in pair}
        return {agent for agent in agents if agent is not None}

    def operator_of(self, agent: str) -> str | None:
        if agent in self.agents:
            return self.agents[agent]
        rows = self.db.read("SELECT operator FROM notify_agents WHERE agent = ?", (agent,))
        return str(rows[0]["operator"]) if rows else None

    def agents_of(self, operator: str) -> set[str]:
        agents = {agent for agent, op in self.agents.items() if op == operator}
        agents |= {str(r["agent"]) for r in self.db.read("SELECT agent FROM notify_agents WHERE operator = ?",
                                                          (operator,))}
        return agents

    def agents_best_at(self, kind: str) -> dict[str, tuple[int, int]]:
        totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        for row in self.db.read("SELECT agent, kind, SUM(accepted) AS a, SUM(attempts) AS n FROM notify_stats "
                                "GROUP BY agent, kind"):
            totals[(str(row["agent"]), str(row["kind"]))] = [int(row["a"]), int(row["n"])]
        for key, (accepted, attempts) in self.stats.items():
            totals[key][0] += accepted
            totals[key][1] += attempts
        stats = {key: (value[0], value[1]) for key, value in totals.items()}
        best = triggers.best_kinds(stats)
        return {agent: stats[(agent, kind)] for agent, best_kind in best.items() if best_kind == kind}


class Notifier:
    def __init__(self, home: Home, commons: Commons, db: CommonsDB, digest: DigestOf) -> None:
        self.home = home
        self.commons = commons
        self.db = db
        self._digest = digest
        self._digests: dict[str, tuple[str | None, Digest]] = {}
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._dirty: set[str] = set()
        db.ensure(SCHEMA)

    def landed(self, slug: str, clock: Callable[[], datetime]) -> int:
        """Catch up after a landing, merging with a catch-up this process is already running for the
        project: that one passes again before it stops, so it sees this landing too. Under load one
        pass then carries several rows, instead of one pass (and its transactions) per verdict."""
        with self._lock:
            self._dirty.add(slug)
            if slug in self._running:
                return 0
            self._running.add(slug)
        posted = 0
        try:
            while True:
                with self._lock:
                    if slug not in self._dirty:
                        return posted
                    self._dirty.discard(slug)
                posted += self.catch_up(slug, now=clock())
        finally:
            with self._lock:
                self._running.discard(slug)

    def digest(self, slug: str, now: datetime) -> Digest:
        """The project's digest as of its tip now, which holds every row being caught up: reused
        while the tip stays, so an onboarding burst (many operators' first acceptances caught up in
        one pass) reads the whole project once, not once per operator; never older than the
        landing it is attached for."""
        tip = self.home.project(slug).tip()
        with self._lock:
            cached = self._digests.get(slug)
        if cached is not None and cached[0] == tip:
            return cached[1]
        value = self._digest(self.home, slug, now)
        with self._lock:
            self._digests[slug] = (tip, value)
        return value

    def leaf(self, repo: ProjectRepo, commit: str, leaf_id: str) -> LeafContract | None:
        """A leaf contract as of `commit` (parsed once per blob: state.contracts)."""
        return _leaf(repo, commit, leaf_id)

    def catch_up(self, slug: str, *, now: datetime) -> int:
        """Post the messages for every row landed since the last pass; returns how many were new."""
        posted = 0
        with exclusive_lock(self.home.layout.commons_lock(slug)):
            while True:
                count, more = self._pass(slug, now)
                posted += count
                if not more:
                    return posted

    def behind(self) -> list[str]:
        """The projects of this home whose tip the notifier has not passed yet (one cursor read)."""
        told = {str(row["project"]): str(row["tip"]) for row in self.db.read("SELECT project, tip FROM notify_cursor")}
        out = []
        for slug in self.home.projects():
            try:
                tip = self.home.project(slug).tip()
            except NotFound:
                continue  # removed since it was listed
            if tip is not None and told.get(slug) != tip:
                out.append(slug)
        return out

    def catch_up_all(self, *, now: datetime) -> int:
        return sum(self.catch_up_checked(slug, now=now) for slug in self.home.projects())

    def catch_up_checked(self, slug: str, *, now: datetime) -> int:
        """The history check, then the catch-up: a project that refuses writes tells its steward and
        maintainers (once per break) and is not caught up, since its rows past the anchor are not
        the verifier's."""
        alarm = self.history_alarm(slug, now=now)
        return alarm if alarm is not None else self.catch_up(slug, now=now)

    def history_alarm(self, slug: str, *, now: datetime) -> int | None:
        """None when the project's history holds; else how many messages were new (0: told before).
        Who is told comes from PROJECT.md at the anchor, the last state the verifier vouches for, so
        a foreign commit cannot name its own steward."""
        try:
            ProjectWriter.refuse_if_broken(self.home, slug)
        except HistoryBrokenError as exc:
            repo = self.home.project(slug)
            anchor = self.home.read_anchor(slug)
            trusted = anchor.commit if anchor is not None and repo.has_object(anchor.commit) else repo.tip()
            who = _stewards(repo, trusted) if trusted is not None else Stewards()
            messages = steward.history_messages(slug, str(exc), who)
            return self.commons.post(messages, now=now) if messages else 0
        return None

    # one pass -----------------------------------------------------------------------------------

    def _pass(self, slug: str, now: datetime) -> tuple[int, bool]:
        repo = self.home.project(slug)
        tip = repo.tip()
        cursor = self.db.read("SELECT next_seq, tip FROM notify_cursor WHERE project = ?", (slug,))
        silent = not cursor
        start = int(cursor[0]["next_seq"]) if cursor else 0
        if tip is None or (cursor and cursor[0]["tip"] == tip):
            return 0, False
        view = repo.view(tip)
        pending = rows_from(view, start)
        rows = pending[:MAX_ROWS_PER_PASS]
        if not rows:
            self._advance(slug, cursor[0] if cursor else None, start, tip, _Memory(self.db, slug))
            return 0, False
        landings = _landings(repo, tip, start)
        memory = _Memory(self.db, slug)
        messages: list[OutgoingMessage] = []
        for row in rows:
            before, after = landings.get(row.seq, (None, None))
            facts = _facts(repo, slug, row, before, after, self.leaf)
            if not silent:
                messages += self._messages(facts, memory, now)
                messages += steward.row_messages(slug, row, _stewards(repo, after or tip))
            _remember(facts, memory)
        last = rows[-1].seq
        end_tip = landings.get(last, (None, tip))[1] or tip
        posted = self.commons.post(messages, now=now) if messages else 0
        self._advance(slug, cursor[0] if cursor else None, last + 1, end_tip, memory)
        return posted, len(pending) > len(rows)

    def _messages(self, facts: RowFacts, memory: _Memory, now: datetime) -> list[OutgoingMessage]:
        row = facts.row
        out: list[OutgoingMessage] = []
        outcome = triggers.outcome_message(facts)
        if outcome is not None:
            out.append(outcome)
        secret = triggers.secret_message(facts)
        if secret is not None:
            out.append(secret)
        out.extend(triggers.revoked_messages(facts))
        needs_digest = triggers.first_minute_applies(facts) and not memory.first_seen(f"operator:{row.operator}")
        lineage = {h: memory.lineage(h) for h in facts.hypotheses_touched()}
        operator_agents = {op: memory.agents_of(op) for op in facts.credit_messages}
        recipients = {a for agents in (*lineage.values(), *operator_agents.values()) for a in agents}
        snapshot = Snapshot(
            operator_has_accepted=not needs_digest,
            source_seen=facts.source_id is not None and memory.first_seen(f"source:{facts.source_id}"),
            finding_authors={f: a for f in {link.finding_id for link in facts.links} | set(facts.use_moves)
                             if (a := memory.author(f)) is not None},
            lineage=lineage,
            agent_operator={agent: op for agent in recipients if (op := memory.operator_of(agent)) is not None},
            operator_agents=operator_agents,
            best_kind_agents={kind: memory.agents_best_at(kind) for kind in {leaf.kind for leaf in facts.new_leaves}},
            object_authors={leaf.object_id: a for leaf in facts.new_leaves
                            if leaf.object_id is not None and (a := memory.author(leaf.object_id)) is not None},
        )
        if needs_digest:
            first = triggers.first_minute_message(facts, snapshot, self.digest(facts.slug, now))
            if first is not None:
                out.append(first)
        out += triggers.linked_messages(facts, snapshot)
        out += triggers.hypothesis_messages(facts, snapshot)
        out += triggers.new_leaf_messages(facts, snapshot)
        out += triggers.reverted_messages(facts)
        # Issue 10: the operator is told too (a copy per message to one of its agents).
        operators = {**snapshot.agent_operator, **({row.actor: row.operator} if row.operator else {})}
        return out + operator_copies(out, lambda agent: operators.get(agent) or memory.operator_of(agent))

    def _advance(self, slug: str, cursor: Any, next_seq: int, tip: str, memory: _Memory) -> None:
        """Move the cursor and store what was learned, in one transaction (compare-and-set),
        scoped by the project: every row it writes is the project's, or an upsert that needs no
        order across projects (notify_agents, in sorted order so two projects never deadlock)."""
        with self.db.write(f"notify:{slug}") as conn:
            current = conn.execute("SELECT next_seq, tip FROM notify_cursor WHERE project = ?", (slug,)).fetchone()
            expected = (cursor["next_seq"], cursor["tip"]) if cursor is not None else None
            if (tuple(current) if current is not None else None) != expected:
                return  # another process moved it; it also stored what we learned
            conn.executemany("INSERT OR IGNORE INTO notify_authors VALUES (?, ?, ?)",
                             [(slug, object_id, agent) for object_id, agent in memory.authors.items()])
            conn.executemany("INSERT OR IGNORE INTO notify_links VALUES (?, ?, ?, ?)",
                             [(slug, link, hyp, finding) for link, (hyp, finding) in memory.links.items()])
            conn.executemany("INSERT OR IGNORE INTO notify_firsts VALUES (?, ?)",
                             [(slug, what) for what in memory.firsts])
            conn.executemany("INSERT INTO notify_agents VALUES (?, ?) ON CONFLICT (agent) DO UPDATE SET "
                             "operator = excluded.operator", sorted(memory.agents.items()))
            conn.executemany(
                "INSERT INTO notify_stats VALUES (?, ?, ?, ?, ?) ON CONFLICT (project, agent, kind) DO UPDATE SET "
                "accepted = notify_stats.accepted + excluded.accepted, "
                "attempts = notify_stats.attempts + excluded.attempts",
                [(slug, agent, kind, a, n) for (agent, kind), (a, n) in memory.stats.items()])
            conn.execute("INSERT INTO notify_cursor VALUES (?, ?, ?) ON CONFLICT (project) DO UPDATE SET "
                         "next_seq = excluded.next_seq, tip = excluded.tip", (slug, next_seq, tip))


def _remember(facts: RowFacts, memory: _Memory) -> None:
    row = facts.row
    if row.operator is not None and row.actor_type in ("agent", "human"):
        memory.agents[row.actor] = row.operator
    accepted = row.outcome in triggers.SUBMIT_ACCEPTED
    if row.action == "submit" and row.kind is not None:
        counts = memory.stats[(row.actor, row.kind)]
        counts[0] += 1 if accepted else 0
        counts[1] += 1
    if row.action in AUTHORED_ACTIONS and accepted:
        for object_type in ("finding", "link", "source"):
            for object_id in facts.created.get(object_type, []):
                memory.authors.setdefault(object_id, row.actor)
        if triggers.first_minute_applies(facts) and row.operator is not None:
            memory.firsts.add(f"operator:{row.operator}")
        if facts.source_id is not None and facts.created.get("finding"):
            memory.firsts.add(f"source:{facts.source_id}")
    for link in facts.links:
        memory.links[link.link_id] = (link.hypothesis_id, link.finding_id)


# reading git --------------------------------------------------------------------------------------


def _landings(repo: ProjectRepo, tip: str, start: int) -> dict[int, tuple[str | None, str]]:
    """seq -> (the commit before that landing, the ledger commit that landed it), for seq >= start."""
    found: list[tuple[int, str]] = []
    commit: pygit2.Commit | None = repo.commit(tip)
    while commit is not None:
        subject = parse_ledger_subject(commit.message)
        if subject is not None and subject.seq is not None:
            found.append((subject.seq, str(commit.id)))
            if subject.seq < start:
                break
        commit = commit.parents[0] if commit.parents else None
    out: dict[int, tuple[str | None, str]] = {}
    for index, (seq, ledger_commit) in enumerate(found):
        if seq >= start:
            out[seq] = (found[index + 1][1] if index + 1 < len(found) else None, ledger_commit)
    return out


def _blob(repo: ProjectRepo, blob_id: str | None) -> bytes | None:
    if blob_id is None:
        return None
    blob = repo.repo[blob_id]
    return blob.data if isinstance(blob, pygit2.Blob) else None


def _file_blob(repo: ProjectRepo, commit: str | None, path: str) -> str | None:
    return repo.view(commit).blob_id(path) if commit is not None else None


def _stewards(repo: ProjectRepo, commit: str) -> Stewards:
    """Who answers for the project as of the landing: the steward and maintainers in its PROJECT.md."""
    return stewards_of(repo.view(commit).read(PROJECT_FILE))


def _leaf(repo: ProjectRepo, commit: str, leaf_id: str) -> LeafContract | None:
    try:
        return ProjectView(repo.view(commit), commit).contract(leaf_id)
    except FormatError:
        return None


def _reverted(repo: ProjectRepo, description: str) -> RevertFacts | None:
    """What a revert row undid: the commit, its author and leaf (from the commit itself), the reason."""
    match = _REVERT_ROW.match(description)
    if match is None or not repo.has_object(match.group(1)):
        return None
    commit = repo.commit(match.group(1))
    leaf = _LEAF_TRAILER.search(commit.message)
    return RevertFacts(match.group(1), commit.author.name or None, leaf.group(1) if leaf else None,
                       match.group(2).strip())


def _hypothesis_state(data: bytes | None, where: str) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        hypothesis, _ = parse_hypothesis(data, where)
    except FormatError:
        return {"revision": None, "status": "unreadable", "verdict": None}
    return {"revision": hypothesis.revision, "status": hypothesis.status,
            "verdict": hypothesis.verdict.current.value}


def _facts(repo: ProjectRepo, slug: str, row: LedgerRow, before: str | None, after: str | None,  # noqa: C901, PLR0912 - one branch per kind of ledger row a message is made from
           leaf_at: Callable[[ProjectRepo, str, str], LeafContract | None]) -> RowFacts:
    facts = RowFacts(slug, row, leaf_kind=row.kind)
    if after is None:
        return facts  # the landing commit could not be found: outcome only
    if row.leaf_id is not None:
        leaf = leaf_at(repo, after, row.leaf_id)
        if leaf is not None:
            facts.leaf_kind, facts.leaf_title, facts.source_id = leaf.kind, leaf.title, leaf.inputs.source_id
            if row.action == "leaf":
                facts.leaf_created = _file_blob(repo, before, leaf_path(row.leaf_id)) is None
    for status, path, _old, _new in repo.changes(before, after, LEAVES_DIR):
        match = _CONTRACT.match(path)
        contract = leaf_at(repo, after, match.group(1)) if match is not None and status == "A" else None
        if contract is not None:
            target = classify(contract.inputs.object_path) if contract.inputs.object_path else None
            facts.new_leaves.append(NewLeaf(contract.leaf_id, contract.kind, contract.title,
                                            target.object_id if target is not None else None))
    if row.action == "revert":
        facts.reverted = _reverted(repo, row.description)
    for top in (FINDINGS_DIR, LINKS_DIR, SOURCES_DIR):
        for status, path, _old, new in repo.changes(before, after, top):
            kind = classify(path)
            if kind is None or status != "A":
                continue
            facts.created.setdefault(kind.type, []).append(kind.object_id)
            if kind.type == "link":
                try:
                    link = parse_link(_blob(repo, new) or b"", path)
                except FormatError:
                    continue
                facts.links.append(LinkFacts(link.link_id, link.finding_id, link.hypothesis_id, link.stance,
                                             link.leaf_id))
    for _status, _path, old, new in repo.changes(before, after, USE_SHARD_ROOT):
        was, now = triggers.finding_use(_blob(repo, old)), triggers.finding_use(_blob(repo, new))
        for finding_id in set(was) | set(now):
            if was.get(finding_id, 0.0) != now.get(finding_id, 0.0):
                facts.use_moves[finding_id] = (was.get(finding_id, 0.0), now.get(finding_id, 0.0))
    for _status, path, old, new in repo.changes(before, after, HYPOTHESES_DIR):
        kind = classify(path)
        if kind is None or kind.type != "hypothesis":
            continue
        facts.hypotheses.append(HypothesisMove(kind.object_id, _hypothesis_state(_blob(repo, old), path),
                                               _hypothesis_state(_blob(repo, new), path)))
    old_resolution = _file_blob(repo, before, RESOLUTION_SCORES)
    new_resolution = _file_blob(repo, after, RESOLUTION_SCORES)
    if old_resolution != new_resolution:
        facts.credit = triggers.credit_delta(_blob(repo, old_resolution), _blob(repo, new_resolution))
    deltas = _file_blob(repo, after, deltas_path(row.seq))
    if deltas is not None and deltas != _file_blob(repo, before, deltas_path(row.seq)):
        facts.resolved, facts.credit_messages = triggers.resolver_deltas(_blob(repo, deltas))
    return facts

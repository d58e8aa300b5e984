"""People contribute with git: the commits of one push to refs/for/main, judged and landed.

The pre-receive hook (verifier.gitdoor) hands this module the pushed commits, oldest first, and a
writer of the project. Before any commit is judged, everything the push brings is put through the
secret gate (pipeline.secrets_gate): every commit's message (subject, body, trailers) and its
author and committer, and every object git received (each blob, each tree's names, any other
commit or tag), code `secret_in_push`; a bearer token of ours in any of it is revoked. Then each
commit becomes a person's edit: its diff against its parent, as the exact bytes git wrote (never a
re-decoded copy), goes through the same steps as `rw submit` (write set, verifier-only paths,
every file held to its format, the revision rule), and lands as one contribution with the person
as author; what landed must be the pushed files byte for byte (`push_not_exact` otherwise). A
commit whose message says `This reverts commit <id>` and carries a `Reason:` line is a revert,
held to the rules of `rw revert` and the one reason rule (verifier.text.visible).

Every commit is held to the authority rule (docs/authority.md) as `rw submit` and `rw revert`
are: a commit that edits PROJECT.md (its `holds:` included) or a hypothesis needs the steward, a
revert the steward or a maintainer. A refusal refuses the whole push with `[not_authorised]`,
lands no ledger row, and is kept in the home's audit log.

The pushed objects wait in git's receive quarantine until the hook says yes. They are read through
a second repository object that sees the quarantine (`PushedObjects`); the writer never sees it,
so every blob, tree and commit a landing refers to is written to the main object store before the
branch moves, and a clone between the landing and git's own migration finds every object.

The whole push is one batch of the writer: one lock, one branch move at the end, and if any commit
is refused none lands (the refused one gets its ledger row). Each commit is judged against the tip
the commits before it left (pipeline.submit's judge and landing), with PROJECT.md parsed once per
content for the whole push (`ProjectMemo`): a commit that changes it is held to its new text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path

import pygit2

from verifier.errors import ConflictError, FormatError, NotAuthorised, NotFound, Rejected, Rejection
from verifier.formats.project import ProjectFile, parse_project
from verifier.patch.parse import parse_patch
from verifier.pipeline.secrets_gate import (
    Revoker,
    describe,
    gate_patch,
    revocation_note,
    revoke_found_tokens,
    scan_blobs,
)
from verifier.pipeline.submit import Attempt, Submission, Tip, judge, land_accepted, land_refusal, read_tip
from verifier.pipeline.verdict import Verdict, verdict_line
from verifier.pipeline.writer import ProjectWriter
from verifier.secrets.tokens import KIND as TOKEN_KIND
from verifier.state.layout import PROJECT_FILE
from verifier.state.view import TreeView
from verifier.store.gitrepo import GitTree
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.text.visible import require_reason
from verifier.writes.authority import denied, enforce_at
from verifier.writes.revert import revert_landing

PUSH_REF = "refs/for/main"
_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{40})\.?\s*$", re.MULTILINE)
_REASON = re.compile(r"^Reason:(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class PushVerdict:
    """One line per pushed commit, for the pusher's terminal."""

    commit: str
    outcome: str  # ACCEPTED, REJECTED, or NOT LANDED (another commit of the push was refused)
    text: str
    rejection: Rejection | None = None  # why REJECTED
    notes: tuple[str, ...] = ()  # what the check said beside an acceptance

    def line(self) -> str:
        return verdict_line(self.outcome, f"{self.commit[:12]} {self.text}", [self.rejection] if self.rejection else [])


@dataclass(frozen=True)
class Change:
    """One path a pushed commit changed: the blob and mode it leaves there (None: deleted)."""

    path: str
    blob: str | None
    mode: int | None


class PushedObjects:
    """What a push brought, read through a repository of its own that also sees git's receive
    quarantine (the writer's repository does not: what it lands is written to the main store)."""

    def __init__(self, repo_path: Path, quarantine: str | None) -> None:
        self.repo = pygit2.Repository(str(repo_path))
        self.quarantine = Path(quarantine) if quarantine else None
        if self.quarantine is not None:
            self.repo.odb.add_disk_alternate(str(self.quarantine))

    def received(self) -> Iterator[pygit2.Oid]:
        """Every object id git received for this push (nothing when there is no quarantine)."""
        if self.quarantine is None:
            return iter(())
        return iter(pygit2.Odb(str(self.quarantine)))

    def commits(self, new: str, tip: str) -> list[pygit2.Commit]:
        return pushed_commits(self.repo, new, tip)

    def changes(self, commit: pygit2.Commit) -> list[Change]:
        """The paths the commit changed against its parent, with what it leaves there."""
        changes = []
        diff = commit.parents[0].tree.diff_to_tree(commit.tree) if commit.parents else commit.tree.diff_to_tree(
            swap=True)  # a root commit: everything in it is new
        for delta in diff.deltas:
            deleted = delta.status == pygit2.enums.DeltaStatus.DELETED
            changes.append(Change(delta.new_file.path, None if deleted else str(delta.new_file.id),
                                  None if deleted else int(delta.new_file.mode)))
        return changes

    def patch(self, commit: pygit2.Commit) -> bytes:
        """The commit's change as `git diff --binary` writes it: git's own bytes, so a file in any
        encoding arrives as it was pushed (a decoded and re-encoded text would not apply)."""
        diff = self.repo.diff(commit.parents[0], commit, flags=pygit2.enums.DiffOption.SHOW_BINARY)
        return b"".join(patch.data for patch in diff if patch is not None)

    def view(self, commit: pygit2.Commit) -> GitTree:
        return GitTree(self.repo, commit.tree)


def pushed_commits(repo: pygit2.Repository, new: str, tip: str) -> list[pygit2.Commit]:
    """The commits of a push that the branch does not have, oldest first."""
    walker = repo.walk(pygit2.Oid(hex=new), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(pygit2.Oid(hex=tip))
    return list(walker)


# the secret gate over everything the push brings -------------------------------------------------


def _person_bytes(signature: pygit2.Signature) -> bytes:
    return signature.raw_name + b" <" + signature.raw_email + b">"


def _commit_texts(commit: pygit2.Commit) -> dict[str, bytes]:
    short = str(commit.id)[:12]
    return {f"commit {short} message": commit.raw_message, f"commit {short} author": _person_bytes(commit.author),
            f"commit {short} committer": _person_bytes(commit.committer)}


def push_texts(pushed: PushedObjects, commits: list[pygit2.Commit]) -> dict[str, bytes]:
    """Every byte string the push brings, by a name that says where it is: each pushed commit's
    message and people, and each object git received (blobs named by their path when a pushed
    commit puts them there). Without a quarantine, the blobs the pushed commits change."""
    texts: dict[str, bytes] = {}
    paths: dict[str, str] = {}
    for commit in commits:
        texts.update(_commit_texts(commit))
        for change in pushed.changes(commit):
            if change.blob is not None:
                paths.setdefault(change.blob, change.path)
    seen = {str(commit.id) for commit in commits}
    received = list(pushed.received()) if pushed.quarantine is not None else [pygit2.Oid(hex=b) for b in paths]
    for oid in received:
        key = str(oid)
        obj = pushed.repo[oid]
        if isinstance(obj, pygit2.Blob):
            texts[f"{paths[key]} (blob {key[:12]})" if key in paths else f"blob {key[:12]}"] = obj.data
        elif isinstance(obj, pygit2.Tree):
            texts[f"tree {key[:12]}"] = b"\n".join(entry.raw_name or b"" for entry in obj)
        elif isinstance(obj, pygit2.Commit) and key not in seen:
            texts.update(_commit_texts(obj))
        elif isinstance(obj, pygit2.Tag):
            texts[f"tag {key[:12]}"] = obj.read_raw()
    return texts


def gate_push(identities: Revoker, texts: dict[str, bytes], now: datetime) -> None:
    """Refuse (secret_in_push) a push carrying a secret anywhere; revoke any token of ours in it."""
    hits = scan_blobs(texts)
    if not hits:
        return
    revoked = []
    if any(hit.kind.startswith(TOKEN_KIND) for hit in hits):
        revoked = revoke_found_tokens(identities, texts.values(), now, "a push")
    raise Rejected(Rejection("secret_in_push", f"{describe(hits)}; nothing was landed. Strip secrets from the commits "
                             f"(messages, author names, files) and push again{revocation_note(revoked)}",
                             hits[0].file))


# judging one commit --------------------------------------------------------------------------


class ProjectMemo:
    """PROJECT.md parsed once per content for a whole push: a hundred commits that leave it
    alone are judged against one parse (its YAML is the costliest read of a person's edit),
    and a commit that changes it is judged against its new text."""

    def __init__(self) -> None:
        self._parsed: dict[str, ProjectFile] = {}

    def project(self, view: TreeView) -> ProjectFile:
        """PROJECT.md in `view`, as Tip.project reads it (raises FormatError the same way)."""
        blob = view.blob_id(PROJECT_FILE)
        if blob is not None and blob in self._parsed:
            return self._parsed[blob]
        project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
        if blob is not None:
            self._parsed[blob] = project
        return project


@dataclass(frozen=True)
class PushTip(Tip):
    """The writer's tip for one pushed commit, its PROJECT.md read through the push's memo."""

    memo: ProjectMemo = field(default_factory=ProjectMemo)

    @cached_property
    def project(self) -> ProjectFile:
        return self.memo.project(self.view)


def _message_parts(message: str) -> tuple[str, str]:
    lines = message.strip().splitlines() or ["(no subject)"]
    return lines[0][:200], "\n".join(lines[1:]).strip()


def _shape(writer: ProjectWriter, commit: pygit2.Commit, first: bool) -> None:
    if len(commit.parents) != 1:
        raise Rejected(Rejection("merge_commit", f"{str(commit.id)[:12]} has {len(commit.parents)} parents; "
                                 "push a linear series (rebase onto the branch)"))
    parent = str(commit.parents[0].id)
    if first and not (writer.tip and writer.repo.is_ancestor(parent, writer.tip)):
        raise Rejected(Rejection("wrong_base", f"{str(commit.id)[:12]} is not on the branch: its parent {parent} "
                                 f"is not a revision of the project; fetch and rebase onto {writer.tip}"))


def _revert_reason(message: str) -> str:
    found = _REASON.search(message)
    if found is None:
        raise Rejected(Rejection("revert_needs_reason", "a pushed revert needs a `Reason:` line in its message"))
    try:
        return require_reason(found.group(1), "a pushed revert", "Reason:")
    except FormatError as exc:
        raise Rejected(Rejection("revert_needs_reason", exc.message, exc.where)) from exc


def _land_revert(writer: ProjectWriter, pushed: PushedObjects, actor: Actor, commit: pygit2.Commit, target: str,
                 now: datetime) -> Verdict:
    reason = _revert_reason(commit.message)
    enforce_at(writer.home, writer.slug, writer.view(), actor, "revert", now=now, door="git")
    try:
        entry, contribution, bookkeeping = revert_landing(writer, actor.handle, actor.operator, "human", target,
                                                          reason=reason, now=now)
    except (ConflictError, NotFound, FormatError) as exc:
        raise Rejected(Rejection("revert_refused", str(exc))) from exc
    view = pushed.view(commit)
    restored = {change.path: view.read(change.path) for change in pushed.changes(commit)}
    if restored != contribution.writes:
        raise Rejected(Rejection("revert_mismatch", f"the pushed revert does not restore exactly what {target[:12]} "
                                 "changed; use `git revert` on the landed commit"))
    landed = writer.land(entry, contribution=contribution, bookkeeping=bookkeeping)
    return Verdict(outcome="accepted", project=writer.slug, leaf_id=None, actor=actor.handle,
                   summary=f"reverted {target}", rejections=[], commit=landed.commit, ledger_seq=landed.row.seq,
                   trace_id=None, tip=landed.tip, holds=[], notes=[])


def _attempt(writer: ProjectWriter, actor: Actor, token: str, commit: pygit2.Commit) -> Attempt:
    subject, body = _message_parts(commit.message)
    return Attempt(actor, Submission(writer.slug, None, b"", {}, token), subject=subject, body=body)


def _exact(writer: ProjectWriter, pushed: PushedObjects, commit: pygit2.Commit, landed: str | None) -> None:
    """What landed is what was pushed, byte for byte and mode for mode, at every path it changed."""
    view = writer.repo.view(landed)
    for change in pushed.changes(commit):
        if (view.blob_id(change.path), view.mode(change.path)) != (change.blob, change.mode):
            raise Rejected(Rejection("push_not_exact", f"{change.path} would land with other bytes or another mode "
                                     f"than {str(commit.id)[:12]} pushed; nothing was landed", change.path))


def _judge(home: Home, writer: ProjectWriter, pushed: PushedObjects, attempt: Attempt, commit: pygit2.Commit,
           first: bool, memo: ProjectMemo, now: datetime) -> Verdict:
    """Judge and stage one pushed commit; raises Rejected when it is refused."""
    _shape(writer, commit, first)
    reverted = _REVERTS.search(commit.message)
    if reverted is not None:
        return _land_revert(writer, pushed, attempt.actor, commit, reverted.group(1), now)
    base = str(commit.parents[0].id) if first else writer.tip
    token = attempt.submission.token
    attempt = replace(attempt, submission=Submission(writer.slug, None, pushed.patch(commit), {}, token, base))
    patch = parse_patch(attempt.submission.patch)
    gate_patch(home.identities, attempt.submission.patch, patch, now)  # a pushed secret never lands
    tip = read_tip(writer)
    judged = judge(PushTip(tip.commit, tip.view, tip.history, tip.admins, tip.handles, memo=memo), attempt, patch, {},
                   home.source_text, now)
    verdict = land_accepted(writer, attempt, judged, now)
    _exact(writer, pushed, commit, verdict.commit)
    return verdict


def land_push(home: Home, writer: ProjectWriter, pushed: PushedObjects, actor: Actor, token: str,
              commits: list[pygit2.Commit], now: datetime) -> tuple[bool, list[PushVerdict]]:
    """Every pushed commit through the person's-edit pipeline in one batch: all land, or none."""
    verdicts: list[PushVerdict] = []
    attempt = _attempt(writer, actor, token, commits[0])
    culprit = 0
    try:
        texts = push_texts(pushed, commits)
        try:
            gate_push(home.identities, texts, now)
        except Rejected as exc:
            where = exc.headline.where or ""
            culprit = next((n for n, c in enumerate(commits) if f"commit {str(c.id)[:12]} " in f"{where} "), 0)
            attempt = replace(_attempt(writer, actor, token, commits[culprit]),
                              subject="(subject not shown: the push carries a secret)", body="")
            raise
        memo = ProjectMemo()
        with writer.batch():
            for number, commit in enumerate(commits):
                culprit = number
                attempt = _attempt(writer, actor, token, commit)
                verdict = _judge(home, writer, pushed, attempt, commit, number == 0, memo, now)
                verdicts.append(PushVerdict(str(commit.id), "ACCEPTED", f"as {verdict.commit} ({verdict.summary})",
                                            notes=tuple(verdict.notes)))
    except Rejected as exc:
        land_refusal(writer, attempt, exc, now)
        return False, _refused(commits, len(verdicts), culprit, attempt.subject, exc)
    except NotAuthorised as exc:  # no ledger row: the audit log keeps it (enforce_at kept a revert's already)
        if exc.action != "revert":
            denied(home, exc, now=now, door="git")
        refusal = Rejected(Rejection(exc.code, str(exc)))
        return False, _refused(commits, len(verdicts), culprit, attempt.subject, refusal)
    return True, verdicts


def _refused(commits: list[pygit2.Commit], judged: int, culprit: int, subject: str,
             exc: Rejected) -> list[PushVerdict]:
    lines: list[PushVerdict] = []
    for number, commit in enumerate(commits):
        if number == culprit:
            lines.append(PushVerdict(str(commit.id), "REJECTED", subject, exc.headline))
        elif number < judged:
            lines.append(PushVerdict(str(commit.id), "NOT LANDED", "(the push is all or nothing)"))
        else:
            later = "an earlier" if number > culprit else "a later"
            lines.append(PushVerdict(str(commit.id), "NOT LANDED", f"(not judged: {later} commit was refused)"))
    return lines

"""People contribute with git: the commits of one push to refs/for/main, judged and landed.

The pre-receive hook (verifier.gitdoor) hands this module the pushed commits, oldest first, and a
writer of the project. Each commit becomes a person's edit: its diff against its parent, as a git
patch, goes through the same steps as `rw submit` (write set, verifier-only paths, every file held
to its format, the revision rule), and lands as one contribution with the person as author; a
commit whose message says `This reverts commit <id>` and carries a `Reason:` line is a revert,
held to the rules of `rw revert`. The whole push is one batch of the writer: one lock, one branch
move at the end, and if any commit is refused none lands (the refused one gets its ledger row).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

import pygit2

from verifier.errors import ConflictError, FormatError, NotFound, Rejected, Rejection
from verifier.patch.parse import parse_patch
from verifier.pipeline.secrets_gate import gate_patch
from verifier.pipeline.submit import Attempt, Submission, accept, land_refusal
from verifier.pipeline.verdict import Verdict, verdict_line
from verifier.pipeline.writer import ProjectWriter
from verifier.store.home import Home
from verifier.store.identities import Actor
from verifier.writes.revert import revert_landing

PUSH_REF = "refs/for/main"
_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{40})\.?\s*$", re.MULTILINE)
_REASON = re.compile(r"^Reason:[ \t]*(\S.*)$", re.MULTILINE)


@dataclass(frozen=True)
class PushVerdict:
    """One line per pushed commit, for the pusher's terminal."""

    commit: str
    outcome: str  # ACCEPTED, REJECTED, or NOT LANDED (another commit of the push was refused)
    text: str
    rejection: Rejection | None = None  # why REJECTED

    def line(self) -> str:
        return verdict_line(self.outcome, f"{self.commit[:12]} {self.text}", [self.rejection] if self.rejection else [])


def pushed_commits(repo: pygit2.Repository, new: str, tip: str) -> list[pygit2.Commit]:
    """The commits of a push that the branch does not have, oldest first."""
    walker = repo.walk(pygit2.Oid(hex=new), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(pygit2.Oid(hex=tip))
    return list(walker)


def _message_parts(message: str) -> tuple[str, str]:
    lines = message.strip().splitlines() or ["(no subject)"]
    return lines[0][:200], "\n".join(lines[1:]).strip()


def _patch_of(repo: pygit2.Repository, commit: pygit2.Commit) -> bytes:
    """The commit's change as `git diff --binary` would write it."""
    diff = repo.diff(commit.parents[0], commit, flags=pygit2.enums.DiffOption.SHOW_BINARY)
    text = diff.patch or ""
    return text.encode("utf-8")


def _shape(writer: ProjectWriter, commit: pygit2.Commit, first: bool) -> None:
    if len(commit.parents) != 1:
        raise Rejected(Rejection("merge_commit", f"{str(commit.id)[:12]} has {len(commit.parents)} parents; "
                                 "push a linear series (rebase onto the branch)"))
    parent = str(commit.parents[0].id)
    if first and not (writer.tip and writer.repo.is_ancestor(parent, writer.tip)):
        raise Rejected(Rejection("wrong_base", f"{str(commit.id)[:12]} is not on the branch: its parent {parent} "
                                 f"is not a revision of the project; fetch and rebase onto {writer.tip}"))


def _land_revert(writer: ProjectWriter, actor: Actor, commit: pygit2.Commit, target: str, now: datetime) -> Verdict:
    reason = _REASON.search(commit.message)
    if reason is None:
        raise Rejected(Rejection("revert_needs_reason", "a pushed revert needs a `Reason:` line in its message"))
    try:
        entry, contribution, bookkeeping = revert_landing(writer, actor.handle, actor.operator, "human", target,
                                                          reason=reason.group(1), now=now)
    except (ConflictError, NotFound, FormatError) as exc:
        raise Rejected(Rejection("revert_refused", str(exc))) from exc
    parent = str(commit.parents[0].id)
    pushed = {path: writer.repo.view(str(commit.id)).read(path) for path in writer.repo.changed_paths(parent,
                                                                                                  str(commit.id))}
    if pushed != contribution.writes:
        raise Rejected(Rejection("revert_mismatch", f"the pushed revert does not restore exactly what {target[:12]} "
                                 "changed; use `git revert` on the landed commit"))
    landed = writer.land(entry, contribution=contribution, bookkeeping=bookkeeping)
    return Verdict(outcome="accepted", project=writer.slug, leaf_id=None, actor=actor.handle,
                   summary=f"reverted {target}", rejections=[], commit=landed.commit, ledger_seq=landed.row.seq,
                   trace_id=None, tip=landed.tip, holds=[], notes=[])


def _attempt(writer: ProjectWriter, actor: Actor, token: str, commit: pygit2.Commit) -> Attempt:
    subject, body = _message_parts(commit.message)
    return Attempt(actor, Submission(writer.slug, None, b"", {}, token), subject=subject, body=body)


def _judge(home: Home, writer: ProjectWriter, attempt: Attempt, commit: pygit2.Commit, first: bool,
           now: datetime) -> Verdict:
    """Judge and stage one pushed commit; raises Rejected when it is refused."""
    _shape(writer, commit, first)
    reverted = _REVERTS.search(commit.message)
    if reverted is not None:
        return _land_revert(writer, attempt.actor, commit, reverted.group(1), now)
    base = str(commit.parents[0].id) if first else writer.tip
    token = attempt.submission.token
    attempt = replace(attempt, submission=Submission(writer.slug, None, _patch_of(writer.repo.repo, commit), {},
                                                     token, base))
    patch = parse_patch(attempt.submission.patch)
    gate_patch(home.identities, attempt.submission.patch, patch, now)  # a pushed secret never lands
    return accept(home, writer, attempt, patch, {}, now)


def land_push(home: Home, writer: ProjectWriter, actor: Actor, token: str, commits: list[pygit2.Commit],
              now: datetime) -> tuple[bool, list[PushVerdict]]:
    """Every pushed commit through the person's-edit pipeline in one batch: all land, or none."""
    verdicts: list[PushVerdict] = []
    attempt = _attempt(writer, actor, token, commits[0])
    try:
        with writer.batch():
            for number, commit in enumerate(commits):
                attempt = _attempt(writer, actor, token, commit)
                verdict = _judge(home, writer, attempt, commit, number == 0, now)
                verdicts.append(PushVerdict(str(commit.id), "ACCEPTED", f"as {verdict.commit} ({verdict.summary})"))
    except Rejected as exc:
        land_refusal(writer, attempt, exc, now)
        return False, _refused(commits, verdicts, attempt, exc)
    return True, verdicts


def _refused(commits: list[pygit2.Commit], judged: list[PushVerdict], attempt: Attempt,
             exc: Rejected) -> list[PushVerdict]:
    lines = [PushVerdict(v.commit, "NOT LANDED", "(the push is all or nothing)") for v in judged]
    lines.append(PushVerdict(str(commits[len(judged)].id), "REJECTED", attempt.subject, exc.headline))
    lines += [PushVerdict(str(c.id), "NOT LANDED", "(not judged: an earlier commit was refused)")
              for c in commits[len(judged) + 1:]]
    return lines

"""The one writer of a project: every change to a project repository goes through `ProjectWriter`.

Opening a writer takes the project's lock (waiting at most settings.lock_wait_s for another live
process to let it go, then BusyError: retry later, never a wait without end), cleans what a
killed writer left behind, reads the tip and refuses (HistoryBrokenError) unless the tip is
exactly what the anchor and the ledger say it is. Under it a caller reads the tip (`view`) and
lands typed ledger entries: the contribution commit (authored by whoever made it, committed by
the verifier, with the trailers), then the verifier's ledger commit holding the row and any
bookkeeping files, then the branch move and the anchor, all or nothing. Inside `batch()` several
landings are staged on one another and published by one branch move at the end, or not at all (a
push of many commits is all-or-nothing); `batch(carry=True)` also leaves the ledger segment, the
scores (but each row's use-score shards) and the leaf results to the batch's last ledger commit
(ADR 0014).

A project on a git host (config.json backends.remotes) publishes differently: under the lock the
writer only stages its landings (refs/rw/staged), and when the block ends, with the lock let go,
it waits until a compare-and-swap push has put them on the host and moved main and the anchor
(the home's `Deployment.publish_staged`, verifier.deploy.publishing's group push, installed by
verifier.wiring). The block returning means published; a block that raises leaves nothing it
staged. With several instances the deployment's lease guard runs under the lock, before anything
is read. The embedded default has neither seam.

A write that fails (a full disk, a failed object write) answers RetryableError, and before the
lock is let go the loose objects it left are pruned (verifier.store.prune.prune_loose), so a
full disk keeps no half of a landing, in the CLI as in the service.

Crash injection is a `crash_point` callable given to the writer (tests pass one that raises or
kills); production passes nothing.

The check is incremental: every landing leaves tip == anchor.commit, so a write only has to compare
the tip, the anchor and the ledger's last row (one segment read), not walk the history. The one
legitimate gap, a writer killed after moving the branch but before writing the anchor, is closed
here: a tip exactly one landing ahead of the anchor, whose ledger row continues the anchor's chain,
is caught up, and so is a tip at the anchor a publish of several landings recorded in
`<slug>.next.json` before it moved the branch. Anything else is a history someone else wrote;
`rw ledger --verify` names it, and `rw repair` (a ledger row itself) is the way out.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from verifier.constants import QUARANTINE_MAX_AGE_S, UPKEEP_TIMEOUT_S
from verifier.errors import ConflictError, FormatError, HistoryBrokenError, LedgerIntegrityError, RetryableError
from verifier.formats.entries import LedgerEntry
from verifier.formats.ledger import LedgerRow, ledger_subject, parse_ledger_subject, row_hash
from verifier.pipeline.landing import Contribution, Landed, message
from verifier.pipeline.ledger import append_row, ledger_head
from verifier.state.layout import LEAVES_DIR, LEDGER_DIR, SCORES_DIR, USE_SHARD_ROOT
from verifier.state.view import Overlay
from verifier.store.files import exclusive_lock
from verifier.store.gitrepo import VERIFIER, VERIFIER_EMAIL, GitTree, ProjectRepo
from verifier.store.home import Anchor, Home
from verifier.store.prune import prune_loose
from verifier.version import verifier_version

log = logging.getLogger(__name__)

CrashPoint = Callable[[str], None]
CRASH_STEPS = ("contribution", "ledger", "branch", "anchor")  # the durable steps of a landing, in order
# Git's own lock files a killed writer can leave; only ever removed under the project's lock.
_GIT_LOCKS = ("HEAD.lock", "config.lock", "packed-refs.lock", "refs/heads/main.lock", "refs/rw/staged.lock")


def _project_lock(home: Home, slug: str) -> contextlib.AbstractContextManager[None]:
    """The project's writer lock, waited on for at most settings.lock_wait_s (BusyError after)."""
    return exclusive_lock(home.lock_path(slug), wait_s=home.settings.lock_wait_s,
                          what=f"project {slug}'s writer lock")


def no_crash(_step: str) -> None:
    """Production's crash point: nothing happens."""


def ledger_commit_row(commit: pygit2.Commit) -> tuple[bytes, LedgerRow] | None:
    """The exact ledger line a verifier's ledger commit carries in its message, and its row;
    None for any other commit."""
    if commit.author.email != VERIFIER_EMAIL or parse_ledger_subject(commit.message) is None:
        return None
    parts = commit.message.split("\n\n")
    if len(parts) < 2:
        return None
    line = parts[1].encode("utf-8") + b"\n"
    try:
        return line, LedgerRow.model_validate_json(line)
    except ValueError:
        return None


def writing_marker(home: Home, slug: str) -> Path:
    """Present while a writer of the project is open: found by the next writer, it says the last
    one was killed, and only then are the object folders swept (listing them costs O(objects))."""
    return home.lock_path(slug).with_name(f"{slug}.writing")


def clean_leftovers(home: Home, slug: str, path: Path, *, sweep_objects: bool = True) -> list[str]:
    """Remove what a killed writer left: git lock files, libgit2's and git's temporary object
    files, half-written anchors, old push quarantines. Call only under the project's lock (no
    writer of ours is running)."""
    removed: list[str] = []
    candidates = [path / name for name in _GIT_LOCKS]
    if sweep_objects:
        candidates += list(path.glob("objects/*/tmp_obj_*"))
    # A packing pass (verifier.store.upkeep) may be writing its pack beside a writer: only a
    # temporary pack older than any pass may live is a leftover.
    candidates += [leftover for pattern in ("objects/pack/tmp_*", "objects/pack/.tmp-*")
                   for leftover in path.glob(pattern) if _older_than(leftover, UPKEEP_TIMEOUT_S)]
    anchor = home.anchor_path(slug)  # (next.json is the publisher's: verifier.deploy.publishing)
    candidates += list(anchor.parent.glob(f".{anchor.name}.*.tmp"))
    for leftover in candidates:
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
            removed.append(str(leftover))
    # git's quarantine of a push killed mid-way; a live push's waits on this lock, so only old ones go.
    # (older gits name it objects/incoming-*, newer ones objects/tmp_objdir-incoming-*.)
    for quarantine in path.glob("objects/*incoming-*"):
        with contextlib.suppress(OSError):
            if _older_than(quarantine, QUARANTINE_MAX_AGE_S):
                shutil.rmtree(quarantine)
                removed.append(str(quarantine))
    return removed


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime > seconds
    except FileNotFoundError:
        return False


def _retryable(exc: Exception) -> RetryableError:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return RetryableError("the disk is full; nothing was kept: free space and try again")
    return RetryableError(f"writing to the project failed ({type(exc).__name__}: {exc}); nothing was kept: "
                          "try again")


def _carried(path: str) -> bool:
    """A bookkeeping file a group of landings leaves to its last ledger commit: the ledger's
    segments, the scores and the leaf results (never a contribution's path). Not the use-score
    shards: the notifier reads each row's use moves from its own ledger commit, to tell each
    finding's operator whose landing moved it."""
    if path.startswith(f"{USE_SHARD_ROOT}/"):
        return False
    return path.startswith((f"{LEDGER_DIR}/", f"{SCORES_DIR}/")) or (
        path.startswith(f"{LEAVES_DIR}/") and path.endswith(".result.json"))


class _CarriedTree(GitTree):
    """The writer's tip as the later landings of a group read it: its tree, with the bookkeeping
    the group's last ledger commit will write laid on top (so a landing sees the rows, scores and
    leaf results of the ones before it exactly as if each had been written)."""

    def __init__(self, base: GitTree, carried: Mapping[str, bytes | None]) -> None:
        super().__init__(base.repo, base.tree)
        self._carried = carried
        self._overlay = Overlay(GitTree(base.repo, base.tree), carried)

    def read(self, path: str) -> bytes | None:
        return self._overlay.read(path)

    def is_dir(self, path: str) -> bool:
        return super().is_dir(path) if not path else self._overlay.is_dir(path)

    def list_dir(self, path: str) -> list[str]:
        return self._overlay.list_dir(path)

    def blob_id(self, path: str) -> str | None:
        return self._overlay.blob_id(path)

    def file_mode(self, path: str) -> int | None:
        if path in self._carried:
            return None if self._carried[path] is None else int(pygit2.enums.FileMode.BLOB)
        return super().file_mode(path)

    def mode(self, path: str) -> int | None:
        return self.file_mode(path)

    def walk(self, prefix: str = "") -> Iterator[str]:
        below = prefix.rstrip("/") + "/" if prefix else ""
        paths = {path for path in super().walk(prefix) if self._carried.get(path, b"") is not None}
        paths.update(path for path, data in self._carried.items() if data is not None and path.startswith(below))
        yield from sorted(paths)


@dataclass
class _Batch:
    start: str | None
    landed: list[Landed]
    # With carry (land_group's batches): the bookkeeping written so far, for the last ledger commit.
    carried: dict[str, bytes | None] | None = None


class ProjectWriter:
    """The lock holder of one project. Get one with `ProjectWriter.open` or `ProjectWriter.create`."""

    def __init__(self, home: Home, slug: str, repo: ProjectRepo, *, crash_point: CrashPoint) -> None:
        self.home = home
        self.slug = slug
        self.repo = repo
        self.crash_point = crash_point
        self.tip: str | None = repo.tip()
        self._published: str | None = self.tip
        self._batch: _Batch | None = None
        self.cleaned: list[str] = []  # what this writer removed that a killed one had left
        self.write_failed = False  # an object or ref write failed (a full disk): prune before unlocking
        # On a git host: landings are staged, and published when the writer's block ends.
        self.hosted = slug in home.deployment.hosted and home.deployment.publish_staged is not None
        self._staged_head: str | None = self.tip  # where refs/rw/staged points
        self._staged_by_me: str | None = None
        self.amended: tuple[str, str] | None = None  # a carrying batch's last ledger commit: (as made, made again)

    # opening --------------------------------------------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def open(cls, home: Home, slug: str, *, crash_point: CrashPoint | None = None) -> Iterator[ProjectWriter]:
        """Lock the project, check its history, and hand out its writer for the block."""
        with _project_lock(home, slug):
            # Several instances: this one writes the project. Taken under the local lock, so the
            # lease is fresh when the writing starts, not when the wait began.
            if home.deployment.lease_guard is not None:
                home.deployment.lease_guard(home, slug)
            repo = home.project(slug)
            marker = writing_marker(home, slug)
            cleaned = clean_leftovers(home, slug, repo.path, sweep_objects=marker.exists())
            writer = cls(home, slug, repo, crash_point=crash_point or home.crash_point)
            writer.cleaned = cleaned
            writer._check_history()
            if writer.hosted:
                writer._adopt_staged()
            opened_at = writer.tip
            marker.touch()
            try:
                yield writer
            except BaseException:
                writer._unstage(opened_at)
                raise
            finally:
                writer._prune_if_failed()
                marker.unlink(missing_ok=True)
        publish = home.deployment.publish_staged
        if writer._staged_by_me is not None and publish is not None:  # the lock is let go: others stage meanwhile
            publish(home, slug, writer._staged_by_me, crash_point=writer.crash_point)
        if writer.tip != opened_at:  # it landed: pack what the landings left loose, past a threshold
            home.upkeep.published(repo.path)

    @classmethod
    @contextlib.contextmanager
    def create(cls, home: Home, slug: str, *, crash_point: CrashPoint | None = None) -> Iterator[ProjectWriter]:
        """Lock the name, make the bare repository, and hand out its writer; the repository is
        removed again if the block fails before its first landing is published."""
        path = home.repo_path(slug)
        with _project_lock(home, slug):
            if path.exists():
                raise ConflictError(f"project {slug} already exists at {path}")
            repo = ProjectRepo.create(path)
            writer = cls(home, slug, repo, crash_point=crash_point or home.crash_point)
            writer.hosted = False  # a new project is put on a git host afterwards (`rw host`)
            try:
                yield writer
            except BaseException:
                shutil.rmtree(path, ignore_errors=True)
                raise
        home.upkeep.published(path)

    # the history check ----------------------------------------------------------------------------

    @classmethod
    def refuse_if_broken(cls, home: Home, slug: str) -> None:
        """The history check without the lock and without writing: for a door to refuse early
        (before a trace is stored) what the writer would refuse anyway."""
        try:
            cls(home, slug, home.project(slug), crash_point=no_crash)._check_history(catch_up=False)
        except HistoryBrokenError:
            # Without the lock, the tip and the anchor can be read either side of another writer's
            # landing (tip before, anchor after: the tip looks behind its anchor). Only a history
            # that is still broken under the lock is refused.
            with _project_lock(home, slug):
                cls(home, slug, home.project(slug), crash_point=no_crash)._check_history(catch_up=False)

    def _check_history(self, *, catch_up: bool = True) -> None:
        anchor = self.home.read_anchor(self.slug)
        tip = self.tip
        if tip is None:
            raise HistoryBrokenError(f"project {self.slug} has no commits; its branch was deleted")
        if anchor is None:
            raise HistoryBrokenError(f"project {self.slug} has no anchor; run `rw ledger {self.slug} --verify`")
        try:
            head_seq, head_hash = ledger_head(self.repo.view(tip))
        except (FormatError, LedgerIntegrityError) as exc:
            raise self._broken(f"its ledger is unreadable at the tip ({exc})") from exc
        if tip == anchor.commit:
            if (head_seq - 1, head_hash) != (anchor.seq, anchor.row_hash):
                raise self._broken(f"its ledger at the tip ends at row {head_seq - 1}, not at the row the anchor "
                                   f"recorded ({anchor.seq}): a ledger row was edited")
            return
        going = self.home.read_next_anchor(self.slug)
        if going is not None and going.commit == tip and (head_seq - 1, head_hash) == (going.seq, going.row_hash) \
                and self.repo.is_ancestor(anchor.commit, tip):
            if catch_up:  # a publish of several landings moved the branch and was stopped before the anchor
                self.home.write_anchor(self.slug, going)
                self.home.write_next_anchor(self.slug, None)
            return
        self._catch_up(anchor, tip, head_seq, head_hash, write=catch_up)

    def _catch_up(self, anchor: Anchor, tip: str, head_seq: int, head_hash: str, *, write: bool) -> None:
        """A writer killed between the branch move and the anchor: accept one landing ahead."""
        commit = self.repo.commit(tip)
        found = ledger_commit_row(commit)
        if found is None or len(commit.parents) != 1:
            raise self._broken(f"its tip {tip[:12]} is not the anchor's commit {anchor.commit[:12]} "
                               f"({_who(commit)})")
        line, row = found
        below = str(commit.parents[0].id)
        if row.commit is not None and below == row.commit:
            contribution = self.repo.commit(below)
            below = str(contribution.parents[0].id) if len(contribution.parents) == 1 else ""
        if (below != anchor.commit or row.seq != anchor.seq + 1 or row.prev != anchor.row_hash
                or (head_seq - 1, head_hash) != (row.seq, row_hash(line))):
            raise self._broken(f"its tip {tip[:12]} is not the anchor's commit {anchor.commit[:12]}, nor one "
                               "landing ahead of it")
        if write:
            self.home.write_anchor(self.slug, Anchor(row.seq, row_hash(line), tip))

    def _broken(self, why: str) -> HistoryBrokenError:
        return HistoryBrokenError(
            f"project {self.slug} refuses writes: {why}. Run `rw ledger {self.slug} --verify` to see what "
            f"changed, then `rw repair {self.slug} --to COMMIT --reason ...` (a person)")

    # reading --------------------------------------------------------------------------------------

    def view(self) -> GitTree:
        """The tree at the writer's tip (including what this writer staged in a batch)."""
        return self._at(self.tip)

    def _at(self, commit: str | None) -> GitTree:
        carried = self._batch.carried if self._batch is not None else None
        view = self.repo.view(commit)
        return _CarriedTree(view, carried) if carried else view

    # landing --------------------------------------------------------------------------------------

    def land(self, entry: LedgerEntry, *, contribution: Contribution | None = None,
             bookkeeping: Mapping[str, bytes | None] | None = None,
             bookkeeping_of: Callable[[str | None], dict[str, bytes | None]] | None = None) -> Landed:
        """Land one entry: the contribution commit (if any), the ledger commit with the row and
        the bookkeeping files, then (outside a batch) the branch move and the anchor.

        `bookkeeping_of(commit)` builds bookkeeping files that must name the contribution commit.
        """
        try:
            landed = self._stage(entry, contribution, bookkeeping, bookkeeping_of)
        except (OSError, pygit2.GitError) as exc:
            self.write_failed = True
            raise _retryable(exc) from exc
        if self._batch is not None:
            self._batch.landed.append(landed)
        else:
            self._publish(landed.row, landed.tip, landed.line)
        self.tip = landed.tip  # only now: a landing that failed to publish leaves the tip as it was
        return landed

    def _stage(self, entry: LedgerEntry, contribution: Contribution | None,
               bookkeeping: Mapping[str, bytes | None] | None,
               bookkeeping_of: Callable[[str | None], dict[str, bytes | None]] | None) -> Landed:
        tip, now = self.tip, entry.at
        parent, commit_id = tip, None
        if contribution is not None:
            self.crash_point("contribution")
            tree = self.repo.build_tree(tip, contribution.writes)
            trailers = {**contribution.trailers, "Verifier-Version": verifier_version()}
            commit_id = parent = self.repo.create_commit(
                tree=tree, parents=[tip] if tip else [], author=contribution.author, committer=VERIFIER,
                message=message(contribution.subject, contribution.body, trailers), when=now)
        row, line, ledger_writes = append_row(
            self._at(parent), {**entry.row_fields(), "commit": commit_id, "verifier_version": verifier_version()})
        writes: dict[str, bytes | None] = dict(bookkeeping or {})
        if bookkeeping_of is not None:
            writes.update(bookkeeping_of(commit_id))
        writes.update(ledger_writes)
        carried = self._batch.carried if self._batch is not None else None
        carrying: dict[str, bytes | None] = {}
        if carried is not None:
            if contribution is not None and any(_carried(path) for path in contribution.writes):
                raise RuntimeError("a contribution cannot write the verifier's bookkeeping")  # refused before here
            carrying = {path: writes.pop(path) for path in [path for path in writes if _carried(path)]}
        self.crash_point("ledger")
        tree = self.repo.build_tree(parent, writes) if writes or parent is None else self.repo.tree_of(parent)
        row_json = line.decode("utf-8").rstrip("\n")  # the exact line, so replay rebuilds it byte for byte
        ledger_commit = self.repo.create_commit(
            tree=tree, parents=[parent] if parent else [], author=VERIFIER, committer=VERIFIER,
            message=message(ledger_subject(row), row_json, {"Verifier-Version": verifier_version()}), when=now)
        if carried is not None:
            carried.update(carrying)  # only now: a landing that failed carries nothing to the last
        return Landed(row, commit_id, ledger_commit, line)

    def _publish(self, row: LedgerRow, tip: str, line: bytes | None, *, several: bool = False) -> None:
        assert line is not None
        anchor = Anchor(row.seq, row_hash(line), tip)
        if self.hosted:  # staged here, pushed when the block ends (the deployment's publisher)
            try:
                self.repo.move_staged(tip, self._staged_head)
            except (OSError, pygit2.GitError) as exc:
                self.write_failed = True
                raise _retryable(exc) from exc
            self._staged_head = self._staged_by_me = tip
            return
        if several:  # the one-landing catch-up cannot see past the first: say where the branch goes
            self.home.write_next_anchor(self.slug, anchor)
        self.crash_point("branch")
        try:
            self.repo.move_branch(tip, self._published)
        except (OSError, pygit2.GitError) as exc:
            self.write_failed = True
            raise _retryable(exc) from exc
        self._published = tip
        self.crash_point("anchor")
        self.home.write_anchor(self.slug, anchor)
        if several:
            self.home.write_next_anchor(self.slug, None)

    def _carry(self, batch: _Batch, carried: Mapping[str, bytes | None]) -> None:
        """The block's last ledger commit made again with the bookkeeping its landings carried."""
        last = batch.landed[-1]
        try:
            tip = self.repo.amend(last.tip, carried)
        except (OSError, pygit2.GitError) as exc:
            self.write_failed = True
            raise _retryable(exc) from exc
        batch.landed[-1] = Landed(last.row, last.commit, tip, last.line)
        self.amended = (last.tip, tip)
        self.tip = tip

    def _prune_if_failed(self) -> None:
        """A failed write (a full disk) left loose objects no ref reaches: remove them while the
        lock is still held, so no copy of the folder carries them and the space comes back."""
        if self.write_failed and (problem := prune_loose(self.repo.path)) is not None:
            log.warning("project %s: after a failed write, %s", self.slug, problem)

    def _adopt_staged(self) -> None:
        """Land on top of what is staged for the host's next push (when it builds on main);
        anything else staged was left behind by a take-over and is dropped."""
        staged, main = self.repo.staged(), self.tip
        if main is None or staged == main:
            return
        if staged is not None and self.repo.is_ancestor(main, staged):
            self.tip = self._staged_head = staged
        else:
            self.repo.move_staged(main, staged)

    def _unstage(self, opened_at: str | None) -> None:
        """The block raised: what this writer staged is not published (nor acknowledged)."""
        if self._staged_by_me is not None and opened_at is not None:
            with contextlib.suppress(ConflictError, OSError, pygit2.GitError):
                self.repo.move_staged(opened_at, self._staged_by_me)
            self._staged_by_me = None

    @contextlib.contextmanager
    def batch(self, *, carry: bool = False) -> Iterator[list[Landed]]:
        """Stage every landing of the block on the previous one; publish them with one branch move
        when the block ends, or none of them when it raises.

        With `carry`, each landing's ledger commit leaves the bookkeeping (the ledger segment, the
        scores but its own use-score shards, the leaf result) to the block's last ledger commit,
        made again at the end with all of it: each landing keeps its own contribution commit and
        its own ledger commit carrying its row, and the group writes the bookkeeping's trees once
        instead of once per landing (ADR 0014). Only the published tip, the last, is read as a
        whole state; the view() of the block reads what is carried as if it were written.
        `amended` then names the ledger commit that was made again, and its replacement."""
        if self._batch is not None:
            raise RuntimeError("batches do not nest")
        self._batch = batch = _Batch(self.tip, [], {} if carry else None)
        self.amended = None
        try:
            yield batch.landed
            self._batch = None
            if batch.landed and batch.carried:
                self._carry(batch, batch.carried)
            if batch.landed:
                last = batch.landed[-1]
                self._publish(last.row, last.tip, last.line, several=len(batch.landed) > 1)
        except BaseException:
            self.tip = batch.start
            raise
        finally:
            self._batch = None


def _who(commit: pygit2.Commit) -> str:
    return f"commit {str(commit.id)[:12]} by {commit.author.name} <{commit.author.email}>"


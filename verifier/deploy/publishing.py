"""Group publishing for a project on a git host (the writer's last step, verifier.pipeline.writer).

A push to a git host costs a network round trip (about 250-300 ms on the loaded machine). Pushed
under the writer's lock, it made every landing of a project wait for every earlier one's push. So
for a project on a host the writer only *stages* under the lock (commits on refs/rw/staged, on top
of whatever is staged already), lets the lock go, and then publishes here, one pusher at a time
(locks/<slug>.publish.lock): whoever pushes carries everything staged so far, so the landings
that queued behind one push go out together in the next, and a landing an earlier push already
carried never makes a round trip of its own. A pusher that finds a landing being judged under the
writer's lock waits for it to be staged (at most PUBLISH_LINGER_S) and carries it too.

The publish lock covers the push only. Moving main and the anchor to what was pushed needs the
writer's lock, which the next landing holds while it is judged; that wait is taken after the
publish lock is let go, so the next group's push runs meanwhile (pushes pipelined with judging
and with catching main up). Measured before this split (scripts/load.py --backends remote, under
load): a publish cost 816 ms, of which the push 274 ms and the wait for the writer's lock, with
the publish lock held, 298 ms.

What keeps "acknowledged means on the host, exactly once" true:
- `publish` returns only when the host's branch contains the landing and main has caught up with
  it; only then is it acknowledged (a read after the answer sees the landing);
- the host's branch moves only by a compare-and-swap push from where this instance last put it
  (`<slug>.pushed.json`, written durably after each push; main until the first), and main and the
  anchor move (under the writer's lock) only to what the host took, so readers and the history
  check never see what the host has not;
- a failed push discards everything staged beyond what the host has (it was built on what did
  not publish): those writers are told to try again, and none of it was acknowledged;
- `<slug>.pushing.json`, written durably before a push, says where an unfinished push was going:
  the next publish asks the host whether it happened (and records it as pushed) or forgets it;
- main moving several landings at once is recorded in `<slug>.next.json` first (under the
  writer's lock), so the history check catches up an anchor a killed publisher did not write
  (one landing it catches up by itself).

`held_back` lets the service's landings (verifier.deploy.pipelined) run a group's publish after
handing the next group the lead: within the block a writer's publish is collected, not run, and
the caller runs it before it answers anyone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from verifier.constants import PUBLISH_LINGER_S
from verifier.errors import HistoryBrokenError, RetryableError
from verifier.pipeline.ledger import ledger_head
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.gitrepo import BRANCH, ProjectRepo
from verifier.store.home import Anchor, Home
from verifier.store.remote import push_branch, remote_tip

_LINGER_POLL_S = 0.01  # how often a lingering push looks whether the judged landing is staged
DISCARDED = ("an earlier landing of this project could not be published to its git host, and this one was "
             "built on it; nothing of this attempt was kept: try again")


def _no_crash(_step: str) -> None:
    """Production's crash point."""


def pushed_path(home: Home, slug: str) -> Path:
    """Where this instance last put the host's branch (an anchor); beside the project's next.json."""
    return home.next_anchor_path(slug).with_name(f"{slug}.pushed.json")


def pushing_path(home: Home, slug: str) -> Path:
    """Where an unfinished push was moving the host's branch (an anchor)."""
    return home.next_anchor_path(slug).with_name(f"{slug}.pushing.json")


def read_record(path: Path) -> Anchor | None:
    """An anchor record of this module (None: none)."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    return Anchor(int(data["seq"]), str(data["row_hash"]), str(data["commit"]))


def write_record(home: Home, path: Path, anchor: Anchor | None) -> None:
    """Write (durably) or, with None, remove an anchor record of this module."""
    if anchor is None:
        path.unlink(missing_ok=True)
        return
    body = {"seq": anchor.seq, "row_hash": anchor.row_hash, "commit": anchor.commit}
    write_atomic(path, json.dumps(body).encode(), durable=home.settings.durable)


def _anchor_at(repo: ProjectRepo, commit: str) -> Anchor:
    head_seq, head_hash = ledger_head(repo.view(commit))
    return Anchor(head_seq - 1, head_hash, commit)


_held_back = threading.local()  # this thread's collected publishes, inside `held_back`


@contextlib.contextmanager
def held_back() -> Iterator[list[Callable[[], None]]]:
    """Within the block, this thread's publishes are collected (in order) instead of run: the
    caller runs every one of them, after the block, before it acknowledges any landing they carry."""
    pending: list[Callable[[], None]] = []
    outer = getattr(_held_back, "pending", None)
    _held_back.pending = pending
    try:
        yield pending
    finally:
        _held_back.pending = outer


def publish(home: Home, slug: str, target: str, *, crash_point: Callable[[str], None] = _no_crash) -> None:
    """Return once the host's branch contains `target` (a staged landing), pushing what is staged,
    and main has caught up with it (inside `held_back`: collect that, to be run by the caller).

    RetryableError when it was discarded or the host could not be reached (nothing acknowledged);
    HistoryBrokenError when the host's branch moved without the verifier."""
    pending: list[Callable[[], None]] | None = getattr(_held_back, "pending", None)
    if pending is not None:
        pending.append(lambda: publish_now(home, slug, target, crash_point=crash_point))
        return
    publish_now(home, slug, target, crash_point=crash_point)


def publish_now(home: Home, slug: str, target: str, *, crash_point: Callable[[str], None] = _no_crash) -> None:
    """`publish`, run now whatever the thread's `held_back`."""
    url = home.settings.backends.remotes.get(slug)
    if url is None:
        return
    crash = crash_point
    repo = home.project(slug)
    # Unbounded: every holder is bounded by its push's own timeout, and a writer giving up here
    # would leave a staged landing's fate unknown to its caller.
    with exclusive_lock(home.publish_lock_path(slug), wait_s=None):
        host = finish_unfinished(home, slug, repo, url)
        there = host.commit if host is not None else repo.tip()
        if there is None or not repo.is_ancestor(target, there):
            _let_the_judged_join(home, slug, repo)
            staged = repo.staged()
            if staged is None or not repo.is_ancestor(target, staged) or (
                    there is not None and not repo.is_ancestor(there, staged)):
                raise RetryableError(DISCARDED)
            going = _anchor_at(repo, staged)
            write_record(home, pushing_path(home, slug), going)
            crash("branch")
            try:
                push_branch(repo.path, url, staged, there, slug=slug)
            except HistoryBrokenError:
                _discard(home, slug, repo, there)
                write_record(home, pushing_path(home, slug), None)  # the host is elsewhere: this push did not happen
                raise
            except RetryableError:
                _discard(home, slug, repo, there)  # whether the host took it is asked by the next publish
                raise
            crash("pushed")
            write_record(home, pushed_path(home, slug), going)
            write_record(home, pushing_path(home, slug), None)
            host = going
    if host is not None:  # the publish lock is let go: the next group is pushed while main catches up
        _advance(home, slug, repo, host, crash)


def _let_the_judged_join(home: Home, slug: str, repo: ProjectRepo) -> None:
    """While a writer holds the project's lock (a landing being judged), wait for it to stage its
    landing, at most PUBLISH_LINGER_S: it then travels in this push, not in a round trip of its
    own after it. An idle project pushes at once."""
    staged = repo.staged()
    deadline = time.monotonic() + PUBLISH_LINGER_S
    while _held(home.lock_path(slug)) and repo.staged() == staged and time.monotonic() < deadline:
        time.sleep(_LINGER_POLL_S)


def _held(path: Path) -> bool:
    """Whether another writer holds the lock at `path` now (never waits)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets go of it, if taken
    return False


def publish_leftovers(home: Home, slug: str) -> None:
    """Publish what a killed writer staged but never pushed, and catch main up with what a killed
    publisher pushed (start-up recovery, before it reads which attempts landed). A failure
    discards it instead: either way, nothing is left between."""
    if slug not in home.settings.backends.remotes:
        return
    repo = home.project(slug)
    staged, main = repo.staged(), repo.tip()
    if staged is None or staged == main:
        return
    with contextlib.suppress(RetryableError):  # discarded: the attempts it held settle as interrupted
        publish_now(home, slug, staged)


def finish_unfinished(home: Home, slug: str, repo: ProjectRepo, url: str) -> Anchor | None:
    """Settle a push that stopped between writing pushing.json and pushed.json (call with the
    publish lock held): ask the host whether it happened. Returns where the host's branch is as
    this instance put it (None: at main, nothing pushed here since the host was attached)."""
    for record in (pushing_path(home, slug), pushed_path(home, slug)):  # a publisher killed mid-write
        for half_written in record.parent.glob(f".{record.name}.*.tmp"):
            half_written.unlink(missing_ok=True)
    pushed = read_record(pushed_path(home, slug))
    going = read_record(pushing_path(home, slug))
    if going is None:
        return pushed
    there = remote_tip(repo.path, url)
    if there == going.commit:
        if not repo.has_object(there):
            _fetch(repo, url, slug)
        write_record(home, pushed_path(home, slug), going)
        pushed = going
    # else never pushed (or the host moved since: the next push's compare-and-swap refuses it)
    write_record(home, pushing_path(home, slug), None)
    return pushed


def _advance(home: Home, slug: str, repo: ProjectRepo, host: Anchor, crash: Callable[[str], None]) -> None:
    """The host has `host.commit`: move main and the anchor there, under the writer's lock (unless
    another publisher already moved them there or beyond)."""
    with exclusive_lock(home.lock_path(slug)):
        now = repo.tip()
        if now is not None and repo.is_ancestor(host.commit, now):
            return  # caught up already (another publisher's catch-up, or a take-over, went as far)
        if now is None or not repo.is_ancestor(now, host.commit):
            # A take-over brought main to another instance's branch meanwhile (verifier.deploy.instances).
            raise RetryableError(f"project {slug} was taken over while it was published; try again")
        anchor = home.read_anchor(slug)
        several = anchor is None or host.seq != anchor.seq + 1  # one landing: the history check catches it up
        if several:
            home.write_next_anchor(slug, host)  # main moves several landings: the history check's record
        repo.move_branch(host.commit, now)
        crash("anchor")
        home.write_anchor(slug, host)
        if several:
            home.write_next_anchor(slug, None)


def _discard(home: Home, slug: str, repo: ProjectRepo, there: str | None) -> None:
    """Drop everything staged beyond `there`, where the host is: it was built on a push that failed."""
    with exclusive_lock(home.lock_path(slug)):
        staged, keep = repo.staged(), there or repo.tip()
        if keep is not None and staged != keep:
            repo.move_staged(keep, staged)


def _fetch(repo: ProjectRepo, url: str, slug: str) -> None:
    """Bring the host's commits here (a crash sweep removed the unpublished ones)."""
    done = subprocess.run(["git", f"--git-dir={repo.path}", "fetch", "--quiet", "--", url, BRANCH],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise RetryableError(f"project {slug}: its git host {url} cannot be fetched ({done.stderr.strip()[:300]}); "
                             "try again")

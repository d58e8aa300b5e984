"""Group publishing for a project on a git host (the writer's last step, verifier.pipeline.writer).

A push to a git host costs a network round trip (about 250 ms on a loaded machine). Pushed under
the writer's lock, it made every landing of a project wait for every earlier one's push. So for a
project on a host the writer only *stages* under the lock (commits on refs/rw/staged, on top of
whatever is staged already), lets the lock go, and then publishes here, one publisher at a time
(locks/<slug>.publish.lock): whoever publishes pushes everything staged so far, so the landings
that queued behind one push go out together in the next, and a landing whose commit an earlier
push already carried returns at once.

What keeps "acknowledged means on the host, exactly once" true:
- `publish` returns only when the host's branch contains the landing; only then is it acknowledged;
- the host's branch moves only by a compare-and-swap push from local main, which is where the host
  was after the last publish; main and the anchor move (under the writer's lock) only after the
  host took the push, so readers and the history check never see what the host has not;
- a failed push discards everything staged (it was built on what did not publish): those writers
  are told to try again, and none of it was acknowledged;
- `<slug>.next.json`, written durably before the push, says where an unfinished publish was going.
  The next publish asks the host whether that push happened and catches main up to it, or forgets
  it; the history check catches up an anchor a killed publisher did not write.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable

from verifier.errors import HistoryBrokenError, RetryableError
from verifier.pipeline.ledger import ledger_head
from verifier.store.files import exclusive_lock
from verifier.store.gitrepo import BRANCH, ProjectRepo
from verifier.store.home import Anchor, Home
from verifier.store.remote import push_branch, remote_tip

DISCARDED = ("an earlier landing of this project could not be published to its git host, and this one was "
             "built on it; nothing of this attempt was kept: try again")


def _no_crash(_step: str) -> None:
    """Production's crash point."""


def publish(home: Home, slug: str, target: str, *, crash_point: Callable[[str], None] = _no_crash) -> None:
    """Return once the host's branch contains `target` (a staged landing), pushing what is staged.

    RetryableError when it was discarded or the host could not be reached (nothing acknowledged);
    HistoryBrokenError when the host's branch moved without the verifier."""
    url = home.settings.backends.remotes.get(slug)
    if url is None:
        return
    crash = crash_point
    repo = home.project(slug)
    # Unbounded: every holder is bounded by its push's own timeout, and a writer giving up here
    # would leave a staged landing's fate unknown to its caller.
    with exclusive_lock(home.publish_lock_path(slug), wait_s=None):
        finish_unfinished(home, slug, repo, url)
        main = repo.tip()
        if main is not None and repo.is_ancestor(target, main):
            return  # an earlier publisher's push carried it
        staged = repo.staged()
        if staged is None or not repo.is_ancestor(target, staged):
            raise RetryableError(DISCARDED)
        head_seq, head_hash = ledger_head(repo.view(staged))
        going = Anchor(head_seq - 1, head_hash, staged)
        home.write_next_anchor(slug, going)
        crash("branch")
        try:
            push_branch(repo.path, url, staged, main, slug=slug)
        except HistoryBrokenError:
            _discard(home, slug, repo)
            home.write_next_anchor(slug, None)  # the host is elsewhere: this push did not happen
            raise
        except RetryableError:
            _discard(home, slug, repo)  # whether the host took it is asked by the next publish
            raise
        crash("pushed")
        _advance(home, slug, repo, main, going, crash)


def publish_leftovers(home: Home, slug: str) -> None:
    """Publish what a killed writer staged but never pushed (start-up recovery, before it reads
    which attempts landed). A failure discards it instead: either way, nothing is left between."""
    if slug not in home.settings.backends.remotes:
        return
    repo = home.project(slug)
    staged, main = repo.staged(), repo.tip()
    if staged is None or staged == main:
        return
    with contextlib.suppress(RetryableError):  # discarded: the attempts it held settle as interrupted
        publish(home, slug, staged)


def finish_unfinished(home: Home, slug: str, repo: ProjectRepo, url: str) -> None:
    """Settle a publish that stopped between writing next.json and writing the anchor (call with
    the publish lock held): ask the host whether the push happened."""
    written = home.next_anchor_path(slug)
    for half_written in written.parent.glob(f".{written.name}.*.tmp"):  # a publisher killed mid-write
        half_written.unlink(missing_ok=True)
    going = home.read_next_anchor(slug)
    if going is None:
        return
    main = repo.tip()
    if main == going.commit:  # main moved, the anchor did not: finish under the writer's lock
        with exclusive_lock(home.lock_path(slug)):
            if home.read_next_anchor(slug) == going and repo.tip() == going.commit:
                home.write_anchor(slug, going)
                home.write_next_anchor(slug, None)
        return
    there = remote_tip(repo.path, url)
    if there == going.commit:
        if not repo.has_object(there):
            _fetch(repo, url, slug)
        _advance(home, slug, repo, main, going, _no_crash)
    else:  # never pushed (or the host moved since: the next push's compare-and-swap refuses it)
        home.write_next_anchor(slug, None)


def _advance(home: Home, slug: str, repo: ProjectRepo, main: str | None, going: Anchor,
             crash: Callable[[str], None]) -> None:
    """The host has `going.commit`: move main and the anchor there, under the writer's lock."""
    with exclusive_lock(home.lock_path(slug)):
        now = repo.tip()
        if now != main:
            # A take-over brought main to the host's branch meanwhile (verifier.deploy.instances).
            home.write_next_anchor(slug, None)
            if now is not None and repo.is_ancestor(going.commit, now):
                return
            raise RetryableError(f"project {slug} was taken over while it was published; try again")
        repo.move_branch(going.commit, main)
        crash("anchor")
        home.write_anchor(slug, going)
        home.write_next_anchor(slug, None)


def _discard(home: Home, slug: str, repo: ProjectRepo) -> None:
    """Drop everything staged: it was built on a push that failed."""
    with exclusive_lock(home.lock_path(slug)):
        staged, main = repo.staged(), repo.tip()
        if main is not None and staged != main:
            repo.move_staged(main, staged)


def _fetch(repo: ProjectRepo, url: str, slug: str) -> None:
    """Bring the host's commits here (a crash sweep removed the unpublished ones)."""
    done = subprocess.run(["git", f"--git-dir={repo.path}", "fetch", "--quiet", "--", url, BRANCH],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise RetryableError(f"project {slug}: its git host {url} cannot be fetched ({done.stderr.strip()[:300]}); "
                             "try again")

"""Several verifier instances on one PostgreSQL Commons and one git host: before an instance writes
a project it holds the project's lease (verifier.commons.leases); when it takes a project over
from another instance (a new fence), it first brings its local cache to the host's branch.

A lease is renewed by the writes themselves (at most every third of its length) and, between
them, by `renew_held` (run by a thread in each service worker), so a busy holder never loses a
project while it lives; a project nobody wrote here for IDLE_S is let go, and `let_go` gives one
back on purpose (verifier.deploy.spreading places projects on the instances). An instance that
does not hold a project's lease reads it from a cache refreshed from the host at most every
READ_FRESH_S (`fresh_for_reading`), and the service forwards its writes to the holder
(verifier.deploy.forwarding).

Nothing happens without `backends.instance` in config.json (the embedded default: one instance).
Trusting the host's branch on take-over is sound because only verifiers move it, each by a
compare-and-swap push from the tip it last published; the anchor is rebuilt from the ledger there.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from typing import TYPE_CHECKING

from verifier.constants import LEASE_IDLE_S as IDLE_S
from verifier.errors import HistoryBrokenError, RetryableError
from verifier.pipeline.ledger import ledger_head
from verifier.store.backends import commons_dsn
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Anchor, Home
from verifier.store.remote import BRANCH_REF

if TYPE_CHECKING:
    from verifier.commons.leases import Lease
    from verifier.commons.pgdb import PgDatabase

log = logging.getLogger("rw.service")
# A lease renewed less than this share of its length ago is not renewed again: the writer's lock
# is held while the lease is checked, and a round trip per landing would be paid under it.
RENEW_AFTER = 1 / 3
READ_FRESH_S = 1.0  # how stale a non-holder's cache may be when it answers a read
HOLDER_FRESH_S = 0.5  # how long a read of who holds a lease is trusted (routing, reads)
_renewed: dict[tuple[str, str, str], tuple[int, float]] = {}  # (home, slug, instance) -> fence, when
_written: dict[tuple[str, str, str], float] = {}  # (home, slug, instance) -> last write here
_holders: dict[tuple[str, str], tuple[float, Lease | None]] = {}  # (home, slug) -> read at, lease
_refreshed: dict[tuple[str, str], float] = {}  # (home, slug) -> last refresh from the host


def _forget_in_child() -> None:
    """A forked service worker starts with no leases, no connections, nothing read: what its
    parent (start-up recovery) held is not its to renew."""
    for state in (_renewed, _written, _holders, _refreshed):
        state.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def database(home: Home) -> PgDatabase:
    """This process's PostgreSQL Commons (verifier.commons.pgdb.shared_database)."""
    from verifier.commons.pgdb import shared_database  # noqa: PLC0415 - psycopg only for several instances

    return shared_database(commons_dsn(home.settings.backends.commons))


def hold_lease(home: Home, slug: str) -> None:
    """Take or renew this instance's lease on `slug`; on a take-over, resync the cache first.

    RetryableError naming the holder when another instance writes the project."""
    backends = home.settings.backends
    if backends.instance is None:
        return
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    key = (str(home.root), slug, backends.instance)
    _written[key] = time.monotonic()
    fresh = _renewed.get(key)
    if fresh is not None and time.monotonic() - fresh[1] < backends.lease_s * RENEW_AFTER:
        return  # held, and for at least two thirds of its length still
    db = database(home)
    lease = leases.acquire(db, slug, backends.instance, backends.instance_address, ttl_s=backends.lease_s)
    if lease is None:
        _renewed.pop(key, None)
        other = leases.holder(db, slug)
        where = f"{other.holder} ({other.address})" if other else "another instance"
        raise RetryableError(f"project {slug} is written by {where} now; send the write there or try again")
    renewed_at = time.monotonic()
    fence_file = home.lock_path(slug).with_name(f"{slug}.fence")
    known = fence_file.read_text().strip() if fence_file.exists() else ""
    if known != str(lease.fencing):
        resync(home, slug)
        write_atomic(fence_file, f"{lease.fencing}\n".encode(), durable=home.settings.durable)
    _renewed[key] = (lease.fencing, renewed_at)  # only once the cache is the host's


def renew_held(home: Home) -> None:
    """One pass of the lease keeper (verifier.deploy.spreading.keep_instance, a thread in each
    service worker): renew the leases this process holds on projects it wrote in the last IDLE_S;
    forget the others."""
    backends = home.settings.backends
    if backends.instance is None:
        return
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    for key, (fence, _at) in list(_renewed.items()):
        if key[0] != str(home.root) or key[2] != backends.instance:
            continue
        if time.monotonic() - _written.get(key, 0.0) > IDLE_S:
            _renewed.pop(key, None)  # let go: whoever writes it next takes it
            continue
        try:
            lease = leases.acquire(database(home), key[1], backends.instance, backends.instance_address,
                                   ttl_s=backends.lease_s)
        except Exception as exc:  # the database is away: the next write renews the lease, or fails
            log.warning("renewing the lease of %s failed: %s", key[1], exc)
            continue
        if lease is None or lease.fencing != fence:
            _renewed.pop(key, None)  # lost it meanwhile: the next write here resyncs first
        else:
            _renewed[key] = (fence, time.monotonic())


def holds(home: Home, slug: str) -> bool:
    """Whether this process holds `slug`'s lease (renewed within its length)."""
    mine = _renewed.get((str(home.root), slug, home.settings.backends.instance or ""))
    return mine is not None and time.monotonic() - mine[1] < home.settings.backends.lease_s


def held_here(home: Home) -> list[tuple[str, float]]:
    """The projects this process holds the lease of, each with when it last wrote it here."""
    instance = home.settings.backends.instance
    return [(key[1], _written.get(key, 0.0)) for key in list(_renewed)
            if key[0] == str(home.root) and key[2] == instance]


def let_go(home: Home, slug: str) -> bool:
    """Give `slug`'s lease back, when nothing of it is being published here (under the publish lock
    and the writer's lock, in that order, as a publisher takes them): the next write of it is placed
    afresh. False when a landing is staged or the lease is not held here."""
    backends = home.settings.backends
    if backends.instance is None:
        return False
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    with exclusive_lock(home.publish_lock_path(slug)), exclusive_lock(home.lock_path(slug)):
        repo = home.project(slug)
        if repo.staged() not in (None, repo.tip()):
            return False
        _renewed.pop((str(home.root), slug, backends.instance), None)
        _holders.pop((str(home.root), slug), None)
        return leases.release(database(home), slug, backends.instance)


def lease_of(home: Home, slug: str) -> Lease | None:
    """`slug`'s live lease, whoever holds it (read at most every HOLDER_FRESH_S); None: nobody."""
    return _holder(home, slug, fresh_s=HOLDER_FRESH_S)


def _holder(home: Home, slug: str, *, fresh_s: float) -> Lease | None:
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    key = (str(home.root), slug)
    seen = _holders.get(key)
    if seen is None or time.monotonic() - seen[0] > fresh_s:
        seen = (time.monotonic(), leases.holder(database(home), slug))
        _holders[key] = seen
    return seen[1]


def fresh_for_reading(home: Home, slug: str) -> None:
    """Before a read of a project on a git host that this instance does not write: bring the
    cache to the host's branch, at most every READ_FRESH_S (the holder's own cache is the truth:
    it may be ahead of the host, by what it is publishing, never behind)."""
    backends = home.settings.backends
    if backends.instance is None or slug not in backends.remotes:
        return
    key = (str(home.root), slug)
    if time.monotonic() - _refreshed.get(key, 0.0) < READ_FRESH_S:
        return
    try:
        held = lease_of(home, slug)
        if held is not None and held.holder == backends.instance:
            return
        with exclusive_lock(home.lock_path(slug)):
            held = _holder(home, slug, fresh_s=0.0)  # under the lock, as the writers see it
            if held is not None and held.holder == backends.instance:
                return
            resync(home, slug)
    except Exception as exc:  # the Commons or the host is away: the read is answered from the cache as it is
        log.warning("refreshing %s from its git host failed: %s", slug, exc)
    _refreshed[key] = time.monotonic()


def resync(home: Home, slug: str) -> None:
    """Bring the local cache of `slug` to the host's branch (clone it when missing) and rebuild the
    anchor from the ledger there. Without a host, the local copy is all there is."""
    url = home.settings.backends.remotes.get(slug)
    if url is None:
        return
    path = home.repo_path(slug)
    if not path.exists():
        ProjectRepo.create(path)
    done = subprocess.run(["git", f"--git-dir={path}", "fetch", "--quiet", "--", url, f"+{BRANCH_REF}:{BRANCH_REF}"],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise RetryableError(f"taking project {slug} over: its git host {url} cannot be fetched "
                             f"({done.stderr.strip()[:300]}); try again")
    repo = ProjectRepo(path)
    tip = repo.tip()
    if tip is None:
        raise HistoryBrokenError(f"project {slug}: its git host {url} has no branch to take over")
    head_seq, head_hash = ledger_head(repo.view(tip))
    home.write_anchor(slug, Anchor(head_seq - 1, head_hash, tip))
    home.write_next_anchor(slug, None)  # whatever this cache was publishing, the host now says
    repo.move_staged(tip, repo.staged())  # and what it had staged on an older main is dropped

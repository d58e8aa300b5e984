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

What a process knows of its leases (which it holds, since when, who holds the others, the live
instances' load) is owned by one `Instance` object per home, the lease guard `verifier.wiring`
hands the writer; the functions here find it on the home's deployment.

Nothing happens without `backends.instance` in config.json (the embedded default: one instance).
Trusting the host's branch on take-over is sound because only verifiers move it, each by a
compare-and-swap push from the tip it last published; the anchor is rebuilt from the ledger there.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from verifier.constants import LEASE_IDLE_S as IDLE_S
from verifier.constants import RECENT_LANDINGS_S, WARM_START_S
from verifier.deploy import publishing
from verifier.errors import HistoryBrokenError, RetryableError
from verifier.pipeline.digest import digest
from verifier.pipeline.ledger import ledger_head
from verifier.store.backends import commons_dsn
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Anchor, Home
from verifier.store.remote import BRANCH_REF

if TYPE_CHECKING:
    from verifier.commons.leases import InstanceLoad, Lease
    from verifier.commons.pgdb import PgDatabase

log = logging.getLogger("rw.service")
# A lease renewed less than this share of its length ago is not renewed again: the writer's lock
# is held while the lease is checked, and a round trip per landing would be paid under it.
RENEW_AFTER = 1 / 3
READ_FRESH_S = 1.0  # how stale a non-holder's cache may be when it answers a read
HOLDER_FRESH_S = 0.5  # how long a read of who holds a lease is trusted (routing, reads)


@dataclass
class _Held:
    fence: int
    renewed_at: float  # monotonic


class Instance:
    """What one process of an instance knows of its leases: the lease guard the wiring hands the
    writer (`Deployment.lease_guard`), owning the state the guard, the lease keeper, the router
    and the readers share. Nothing of it is module-level: each home wired for several instances
    has its own, and a forked service worker starts with none of its parent's (what start-up
    recovery held is not the worker's to renew)."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._guard = threading.Lock()
        self.renewed: dict[str, _Held] = {}  # slug -> the fence held here, when renewed
        self.written: dict[str, float] = {}  # slug -> last write here (monotonic)
        self.holders: dict[str, tuple[float, Lease | None]] = {}  # slug -> read at, lease
        self.refreshed: dict[str, float] = {}  # slug -> last refresh from the host
        self.load: tuple[float, dict[str, InstanceLoad]] | None = None  # read at, the live instances' load

    def _mine(self) -> Instance:
        """This process's state: a fork forgets the parent's."""
        if self._pid != os.getpid():
            with self._guard:
                if self._pid != os.getpid():
                    self._pid = os.getpid()
                    self.renewed, self.written, self.holders, self.refreshed, self.load = {}, {}, {}, {}, None
        return self

    def __call__(self, home: Home, slug: str, /) -> None:
        """The lease guard: take or renew this instance's lease on `slug`; on a take-over, resync
        the cache first. RetryableError naming the holder when another instance writes the project."""
        backends = home.settings.backends
        if backends.instance is None:
            return
        from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

        me = self._mine()
        me.written[slug] = time.monotonic()
        fresh = me.renewed.get(slug)
        if fresh is not None and time.monotonic() - fresh.renewed_at < backends.lease_s * RENEW_AFTER:
            return  # held, and for at least two thirds of its length still
        db = database(home)
        lease = leases.acquire(db, slug, backends.instance, backends.instance_address, ttl_s=backends.lease_s)
        if lease is None:
            me.renewed.pop(slug, None)
            other = leases.holder(db, slug)
            where = f"{other.holder} ({other.address})" if other else "another instance"
            raise RetryableError(f"project {slug} is written by {where} now; send the write there or try again")
        renewed_at = time.monotonic()
        fence_file = home.lock_path(slug).with_name(f"{slug}.fence")
        known = fence_file.read_text().strip() if fence_file.exists() else ""
        if known != str(lease.fencing):
            resync(home, slug)
            write_atomic(fence_file, f"{lease.fencing}\n".encode(), durable=home.settings.durable)
        me.renewed[slug] = _Held(lease.fencing, renewed_at)  # only once the cache is the host's

    def renew_held(self, home: Home) -> None:
        """One pass of the lease keeper: renew the leases this process holds on projects it wrote
        in the last IDLE_S; forget the others."""
        backends = home.settings.backends
        if backends.instance is None:
            return
        from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

        me = self._mine()
        for slug, held in list(me.renewed.items()):
            if time.monotonic() - me.written.get(slug, 0.0) > IDLE_S:
                me.renewed.pop(slug, None)  # let go: whoever writes it next takes it
                continue
            try:
                lease = leases.acquire(database(home), slug, backends.instance, backends.instance_address,
                                       ttl_s=backends.lease_s)
            except Exception as exc:  # the database is away: the next write renews the lease, or fails
                log.warning("renewing the lease of %s failed: %s", slug, exc)
                continue
            if lease is None or lease.fencing != held.fence:
                me.renewed.pop(slug, None)  # lost it meanwhile: the next write here resyncs first
            else:
                me.renewed[slug] = _Held(held.fence, time.monotonic())

    def holds(self, home: Home, slug: str) -> bool:
        """Whether this process holds `slug`'s lease (renewed within its length)."""
        mine = self._mine().renewed.get(slug)
        return mine is not None and time.monotonic() - mine.renewed_at < home.settings.backends.lease_s

    def held_here(self) -> list[tuple[str, float]]:
        """The projects this process holds the lease of, each with when it last wrote it here."""
        me = self._mine()
        return [(slug, me.written.get(slug, 0.0)) for slug in list(me.renewed)]

    def forget(self, slug: str) -> None:
        """`slug`'s lease is not held here any more (given back)."""
        me = self._mine()
        me.renewed.pop(slug, None)
        me.holders.pop(slug, None)

    def holder(self, home: Home, slug: str, *, fresh_s: float) -> Lease | None:
        """`slug`'s live lease, whoever holds it, read at most every `fresh_s`; None: nobody."""
        from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

        me = self._mine()
        seen = me.holders.get(slug)
        if seen is None or time.monotonic() - seen[0] > fresh_s:
            seen = (time.monotonic(), leases.holder(database(home), slug))
            me.holders[slug] = seen
        return seen[1]

    def live_load(self, home: Home, *, fresh_s: float) -> dict[str, InstanceLoad]:
        """Every live instance's address, leases and recent landings, read at most every `fresh_s`."""
        from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

        me = self._mine()
        seen = me.load
        if seen is None or time.monotonic() - seen[0] > fresh_s:
            backends = home.settings.backends
            seen = (time.monotonic(), leases.live_work(database(home), live_s=backends.lease_s,
                                                       window_s=RECENT_LANDINGS_S))
            me.load = seen
        return seen[1]


def of(home: Home) -> Instance | None:
    """The home's instance state (its lease guard); None for a home of one instance."""
    guard = home.deployment.lease_guard
    return guard if isinstance(guard, Instance) else None


def database(home: Home) -> PgDatabase:
    """This process's PostgreSQL Commons (verifier.commons.pgdb.shared_database), its pool sized
    by backends.commons.pool_size."""
    from verifier.commons.pgdb import shared_database  # noqa: PLC0415 - psycopg only for several instances

    commons = home.settings.backends.commons
    return shared_database(commons_dsn(commons), pool_size=commons.pool_size)


def hold_lease(home: Home, slug: str) -> None:
    """The home's lease guard on `slug` (nothing for a home of one instance)."""
    state = of(home)
    if state is not None:
        state(home, slug)


def renew_held(home: Home) -> None:
    """One pass of the lease keeper (verifier.deploy.spreading.keep_instance, a thread in each
    service worker): see `Instance.renew_held`."""
    state = of(home)
    if state is not None:
        state.renew_held(home)


def holds(home: Home, slug: str) -> bool:
    """Whether this process holds `slug`'s lease (renewed within its length)."""
    state = of(home)
    return state is not None and state.holds(home, slug)


def held_here(home: Home) -> list[tuple[str, float]]:
    """The projects this process holds the lease of, each with when it last wrote it here."""
    state = of(home)
    return state.held_here() if state is not None else []


def let_go(home: Home, slug: str) -> bool:
    """Give `slug`'s lease back, when nothing of it is being published here (under the publish lock
    and the writer's lock, in that order, as a publisher takes them): the next write of it is placed
    afresh. False when a landing is staged or the lease is not held here."""
    backends = home.settings.backends
    state = of(home)
    if backends.instance is None or state is None:
        return False
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    with exclusive_lock(home.publish_lock_path(slug)), exclusive_lock(home.lock_path(slug)):
        repo = home.project(slug)
        if repo.staged() not in (None, repo.tip()):
            return False
        state.forget(slug)
        return leases.release(database(home), slug, backends.instance)


def lease_of(home: Home, slug: str) -> Lease | None:
    """`slug`'s live lease, whoever holds it (read at most every HOLDER_FRESH_S); None: nobody."""
    state = of(home)
    return state.holder(home, slug, fresh_s=HOLDER_FRESH_S) if state is not None else None


def fresh_for_reading(home: Home, slug: str) -> None:
    """Before a read of a project on a git host that this instance does not write: bring the
    cache to the host's branch, at most every READ_FRESH_S (the holder's own cache is the truth:
    it may be ahead of the host, by what it is publishing, never behind)."""
    backends = home.settings.backends
    state = of(home)
    if backends.instance is None or state is None or slug not in backends.remotes:
        return
    asked = time.monotonic()
    if asked - state.refreshed.get(slug, 0.0) < READ_FRESH_S:
        return
    try:
        held = state.holder(home, slug, fresh_s=HOLDER_FRESH_S)
        if held is not None and held.holder == backends.instance:
            return
        with exclusive_lock(home.lock_path(slug)):
            if state.refreshed.get(slug, 0.0) >= asked:
                return  # refreshed by another thread while this one waited: one fetch for a burst of reads
            held = state.holder(home, slug, fresh_s=0.0)  # under the lock, as the writers see it
            if held is not None and held.holder == backends.instance:
                return
            resync(home, slug)
            state.refreshed[slug] = time.monotonic()  # under the lock: a reader waiting on it sees it
    except Exception as exc:  # the Commons or the host is away: the read is answered from the cache as it is
        log.warning("refreshing %s from its git host failed: %s", slug, exc)
        state.refreshed[slug] = time.monotonic()


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
    publishing.write_record(home, publishing.pushing_path(home, slug), None)
    publishing.write_record(home, publishing.pushed_path(home, slug), Anchor(head_seq - 1, head_hash, tip))
    repo.move_staged(tip, repo.staged())  # and what it had staged on an older main is dropped


def warm(home: Home, now: datetime, *, budget_s: float = WARM_START_S) -> int:
    """Before the workers fork (the service's start-up): read each project's digest, so every
    worker starts with its leaf contracts, PROJECT.md and ledger rows parsed (per-process caches,
    inherited by the fork), for the projects it writes and for those a failover may hand it; at
    most `budget_s` in all. The embedded instance gets the same from its notifier's start-up pass;
    an instance on a shared Commons whose peer already passed the rows does not. Returns how many
    projects were read; a project that cannot be read is skipped (its first request reads it)."""
    if home.settings.backends.instance is None:
        return 0
    deadline = time.monotonic() + budget_s
    done = 0
    for slug in home.projects():
        if time.monotonic() >= deadline:
            break
        try:
            digest(home, slug, now)
        except Exception as exc:  # a broken project is the writer's to refuse, not start-up's
            log.warning("warming %s failed: %s", slug, exc)
            continue
        done += 1
    return done

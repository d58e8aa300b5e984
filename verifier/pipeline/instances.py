"""Several verifier instances on one PostgreSQL Commons and one git host: before an instance writes
a project it holds the project's lease (verifier.commons.leases); when it takes a project over
from another instance (a new fence), it first brings its local cache to the host's branch.

Nothing happens without `backends.instance` in config.json (the embedded default: one instance).
Trusting the host's branch on take-over is sound because only verifiers move it, each by a
compare-and-swap push from the tip it last published; the anchor is rebuilt from the ledger there.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import TYPE_CHECKING

from verifier.errors import HistoryBrokenError, RetryableError
from verifier.pipeline.ledger import ledger_head
from verifier.store.backends import commons_dsn
from verifier.store.files import write_atomic
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Anchor, Home
from verifier.store.remote import BRANCH_REF

if TYPE_CHECKING:
    from verifier.commons.pgdb import PgDatabase

# A lease renewed less than this share of its length ago is not renewed again: the writer's lock
# is held while the lease is checked, and a round trip per landing would be paid under it.
RENEW_AFTER = 1 / 3
_databases: dict[tuple[int, str], PgDatabase] = {}  # one per process (a fork gets its own) and DSN
_renewed: dict[tuple[str, str, str], tuple[int, float]] = {}  # (home, slug, instance) -> fence, when
_guard = threading.Lock()


def _database(dsn: str) -> PgDatabase:
    from verifier.commons.pgdb import PgDatabase  # noqa: PLC0415 - psycopg only for several instances

    with _guard:
        key = (os.getpid(), dsn)
        if key not in _databases:
            _databases[key] = PgDatabase(dsn)
        return _databases[key]


def hold_lease(home: Home, slug: str) -> None:
    """Take or renew this instance's lease on `slug`; on a take-over, resync the cache first.

    RetryableError naming the holder when another instance writes the project."""
    backends = home.settings.backends
    if backends.instance is None:
        return
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    key = (str(home.root), slug, backends.instance)
    fresh = _renewed.get(key)
    if fresh is not None and time.monotonic() - fresh[1] < backends.lease_s * RENEW_AFTER:
        return  # held, and for at least two thirds of its length still
    db = _database(commons_dsn(backends.commons))
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

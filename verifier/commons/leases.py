"""Project leases in the PostgreSQL Commons: which verifier instance may write a project.

One row per project (migration 0002); one row per instance that beats (migration 0005), read with
the journal's recent rows of the projects each holds to place a project nobody holds
(verifier.deploy.placement). Taking and renewing are one statement each, so two instances
can never both hold a lease: a row is taken over only when it expired, and `fencing` grows by one
on every change of holder (a writer can stamp its work with it). Expiry uses the database's clock,
the one clock every instance shares. The git host's compare-and-swap push is the second fence: an
instance that lost its lease while paused pushes from an old tip and is refused.

Taken and renewed by verifier.deploy.instances (docs/deploy.md, "Several verifier instances").
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.commons.pgdb import PgDatabase

# EXTRACT(EPOCH FROM clock_timestamp()): the database's clock, spelled out in each statement.
_TAKE = (
    "INSERT INTO project_leases (project, holder, address, fencing, expires_at) "
    "VALUES (?, ?, ?, 1, EXTRACT(EPOCH FROM clock_timestamp()) + ?) ON CONFLICT (project) DO UPDATE SET "
    "fencing = project_leases.fencing + CASE WHEN project_leases.holder = excluded.holder THEN 0 ELSE 1 END, "
    "holder = excluded.holder, address = excluded.address, expires_at = excluded.expires_at "
    "WHERE project_leases.holder = excluded.holder "
    "OR project_leases.expires_at <= EXTRACT(EPOCH FROM clock_timestamp()) RETURNING fencing")
_HELD = ("SELECT holder, address, fencing FROM project_leases WHERE project = ? "
         "AND expires_at > EXTRACT(EPOCH FROM clock_timestamp())")


@dataclass(frozen=True)
class Lease:
    project: str
    holder: str
    address: str
    fencing: int


def acquire(db: PgDatabase, project: str, holder: str, address: str, *, ttl_s: float) -> Lease | None:
    """Take or renew `project`'s lease for `ttl_s` seconds; None when another instance holds it."""
    db.ensure("")
    with db.write(f"lease:{project}") as conn:
        row = conn.execute(_TAKE, (project, holder, address, ttl_s)).fetchone()
    return Lease(project, holder, address, int(row["fencing"])) if row is not None else None


def holder(db: PgDatabase, project: str) -> Lease | None:
    """Who holds `project`'s lease now (where a write is forwarded); None when nobody does."""
    db.ensure("")
    rows = db.read(_HELD, (project,))
    return Lease(project, str(rows[0]["holder"]), str(rows[0]["address"]), int(rows[0]["fencing"])) if rows else None


def release(db: PgDatabase, project: str, holder_id: str) -> bool:
    """Give a lease back (a clean shutdown), so another instance need not wait for its expiry. The
    row stays, expired, so the next holder's fence is still higher than every earlier one."""
    db.ensure("")
    with db.write(f"lease:{project}") as conn:
        return bool(conn.execute("UPDATE project_leases SET expires_at = 0 WHERE project = ? AND holder = ? "
                                 "AND expires_at > 0", (project, holder_id)).rowcount > 0)


_BEAT = ("INSERT INTO instances (name, address, beat_at) VALUES (?, ?, EXTRACT(EPOCH FROM clock_timestamp())) "
         "ON CONFLICT (name) DO UPDATE SET address = excluded.address, beat_at = excluded.beat_at")
_LIVE = "SELECT name, address FROM instances WHERE beat_at > EXTRACT(EPOCH FROM clock_timestamp()) - ?"
_HELD_BY = ("SELECT holder, count(*) AS held FROM project_leases "
            "WHERE expires_at > EXTRACT(EPOCH FROM clock_timestamp()) GROUP BY holder")


def beat(db: PgDatabase, name: str, address: str) -> None:
    """Say that instance `name` (answering at `address`) is alive now (migration 0005)."""
    db.ensure("")
    with db.write(f"instance:{name}") as conn:
        conn.execute(_BEAT, (name, address))


def live_load(db: PgDatabase, *, live_s: float) -> dict[str, tuple[str, int]]:
    """Every instance that beat within `live_s` seconds: its address and how many live leases it holds."""
    db.ensure("")
    held = {str(row["holder"]): int(row["held"]) for row in db.read(_HELD_BY)}
    return {str(row["name"]): (str(row["address"]), held.get(str(row["name"]), 0))
            for row in db.read(_LIVE, (live_s,))}


@dataclass(frozen=True)
class InstanceLoad:
    """A live instance as placement weighs it (verifier.deploy.placement)."""

    address: str
    held: int  # the project leases it holds
    landings: int  # the submissions to those projects within the window (the journal's rows)


# Per live holder: its leases, and the journal's rows of those projects within the window
# (index submissions_recent, migration 0007).
_WORK = ("SELECT l.holder, count(*) AS held, coalesce(sum(r.n), 0) AS landings FROM project_leases l "
         "LEFT JOIN (SELECT project, count(*) AS n FROM submissions "
         "WHERE started_at > EXTRACT(EPOCH FROM clock_timestamp()) - ? GROUP BY project) r ON r.project = l.project "
         "WHERE l.expires_at > EXTRACT(EPOCH FROM clock_timestamp()) GROUP BY l.holder")


def live_work(db: PgDatabase, *, live_s: float, window_s: float) -> dict[str, InstanceLoad]:
    """Every instance that beat within `live_s` seconds: its address, its live leases and the
    submissions to the projects it holds in the last `window_s` seconds."""
    db.ensure("")
    work = {str(row["holder"]): (int(row["held"]), int(row["landings"])) for row in db.read(_WORK, (window_s,))}
    return {str(row["name"]): InstanceLoad(str(row["address"]), *work.get(str(row["name"]), (0, 0)))
            for row in db.read(_LIVE, (live_s,))}


def recent_landings(db: PgDatabase, projects: list[str], *, window_s: float) -> dict[str, int]:
    """The submissions to each of `projects` in the last `window_s` seconds (the journal's rows)."""
    db.ensure("")
    found = {str(row["project"]): int(row["n"]) for row in db.read(
        "SELECT project, count(*) AS n FROM submissions WHERE started_at > EXTRACT(EPOCH FROM clock_timestamp()) - ? "
        "AND project = ANY(?) GROUP BY project", (window_s, projects))}
    return {project: found.get(project, 0) for project in projects}


def held_by(db: PgDatabase, holder_id: str) -> list[str]:
    """The projects whose live lease `holder_id` holds."""
    db.ensure("")
    return [str(row["project"]) for row in db.read(
        "SELECT project FROM project_leases WHERE holder = ? AND expires_at > EXTRACT(EPOCH FROM clock_timestamp()) "
        "ORDER BY project", (holder_id,))]

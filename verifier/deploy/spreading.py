"""Several instances: where a project's write goes, and how the projects are spread (the shell
around verifier.deploy.placement; docs/deploy.md).

- `route`: the instance a write should be sent to. The live lease holder, if another instance
  holds the project; if nobody holds it, the instance `placement.place` names (the least-loaded
  live one, this one on a tie); None when this instance should write it itself.
- `keep_instance`: a thread in each service worker. Every third of a lease it says this instance
  is alive (the `instances` table), renews the leases this process holds, and, when this instance
  holds two more projects than the least-loaded live one, lets its quietest project go, so the
  next write of it lands on an instance with room (a joining instance gets its share this way).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from verifier.deploy import instances, placement
from verifier.store.home import Home

LOAD_FRESH_S = 0.5  # how long a read of the instances' load is trusted when placing a project
log = logging.getLogger("rw.service")
_load: dict[str, tuple[float, dict[str, tuple[str, int]]]] = {}  # home -> read at, name -> (address, held)


@dataclass(frozen=True)
class Route:
    instance: str
    address: str
    holds: bool  # the instance holds the project's lease (else: it is where the project is placed)


def _live_load(home: Home) -> dict[str, tuple[str, int]]:
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    seen = _load.get(str(home.root))
    if seen is None or time.monotonic() - seen[0] > LOAD_FRESH_S:
        seen = (time.monotonic(), leases.live_load(instances.database(home), live_s=home.settings.backends.lease_s))
        _load[str(home.root)] = seen
    return seen[1]


def route(home: Home, slug: str) -> Route | None:
    """Where a write of `slug` should go; None: here."""
    backends = home.settings.backends
    me = backends.instance
    if me is None:
        return None
    lease = instances.lease_of(home, slug)
    if lease is not None:  # held: by this instance (any of its workers), or by the one to send it to
        return None if lease.holder == me else Route(lease.holder, lease.address, holds=True)
    if instances.holds(home, slug):
        return None
    load = _live_load(home)
    counts = {name: held for name, (_, held) in load.items()}
    counts.setdefault(me, len(instances.held_here(home)))  # this instance is live, beat or not
    target = placement.place(slug, counts, here=me)
    if target is None or target == me or target not in load:
        return None
    return Route(target, load[target][0], holds=False)


def keep_instance(home: Home, stop: threading.Event) -> None:
    """Beat, renew and rebalance every third of a lease until `stop` (see the module docstring)."""
    backends = home.settings.backends
    if backends.instance is None:
        return
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    every = backends.lease_s * instances.RENEW_AFTER
    while True:
        try:
            leases.beat(instances.database(home), backends.instance, backends.instance_address)
            instances.renew_held(home)
            rebalance(home)
        except Exception as exc:  # the database is away: beats and renewals resume when it is back
            log.warning("keeping instance %s: %s", backends.instance, exc)
        if stop.wait(every):
            return


def rebalance(home: Home) -> None:
    """Let the quietest project held here go when this instance holds two more than the least-loaded."""
    me = home.settings.backends.instance
    assert me is not None
    _load.pop(str(home.root), None)
    load = {name: held for name, (_, held) in _live_load(home).items()}
    if not placement.surplus(me, load):
        return
    mine = sorted(instances.held_here(home), key=lambda item: item[1])
    for slug, _last in mine:
        if instances.let_go(home, slug):
            log.info("instance %s let project %s go (holding %d, least-loaded %d)", me, slug, load[me],
                     min(load.values()))
            return

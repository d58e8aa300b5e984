"""Several instances: where a project's write goes, and how the projects are spread (the shell
around verifier.deploy.placement; docs/deploy.md).

- `route`: the instance a write should be sent to. The live lease holder, if another instance
  holds the project; if nobody holds it, the instance `placement.place` names (the live one with
  the fewest recent landings, this one on a tie); None when this instance should write it itself.
- `keep_instance`: a thread in each service worker. Every third of a lease it says this instance
  is alive (the `instances` table), renews the leases this process holds, and, when the work is
  uneven (`placement.to_let_go`, weighed by each project's recent landings), lets one project
  go, so the next write of it lands on an instance with room (a joining instance gets its share
  this way). The loads read are the home's `instances.Instance` state, not module-level.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from verifier.constants import RECENT_LANDINGS_S
from verifier.deploy import instances, placement
from verifier.store.home import Home

LOAD_FRESH_S = 0.5  # how long a read of the instances' load is trusted when placing a project
log = logging.getLogger("rw.service")


@dataclass(frozen=True)
class Route:
    instance: str
    address: str
    holds: bool  # the instance holds the project's lease (else: it is where the project is placed)


def route(home: Home, slug: str) -> Route | None:
    """Where a write of `slug` should go; None: here."""
    backends = home.settings.backends
    me = backends.instance
    state = instances.of(home)
    if me is None or state is None:
        return None
    lease = instances.lease_of(home, slug)
    if lease is not None:  # held: by this instance (any of its workers), or by the one to send it to
        return None if lease.holder == me else Route(lease.holder, lease.address, holds=True)
    if state.holds(home, slug):
        return None
    load = state.live_load(home, fresh_s=LOAD_FRESH_S)
    weighed = {name: placement.Load(seen.landings, seen.held) for name, seen in load.items()}
    weighed.setdefault(me, placement.Load(0, len(state.held_here())))  # this instance is live, beat or not
    target = placement.place(slug, weighed, here=me)
    if target is None or target == me or target not in load:
        return None
    return Route(target, load[target].address, holds=False)


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
    """Let one project held here go when the work is uneven (verifier.deploy.placement.to_let_go)."""
    from verifier.commons import leases  # noqa: PLC0415 - psycopg only for several instances

    me = home.settings.backends.instance
    state = instances.of(home)
    if me is None or state is None:
        return
    load = {name: placement.Load(seen.landings, seen.held)
            for name, seen in state.live_load(home, fresh_s=0.0).items()}
    mine = [slug for slug, _last in sorted(state.held_here(), key=lambda item: item[1])]
    if me not in load or len(load) < 2 or not mine:
        return
    weights = leases.recent_landings(instances.database(home), mine, window_s=RECENT_LANDINGS_S)
    slug = placement.to_let_go(me, load, {slug: weights[slug] for slug in mine})
    if slug is not None and instances.let_go(home, slug):
        log.info("instance %s let project %s go (%d recent landings of its %d; the least-loaded live instance "
                 "has %d)", me, slug, weights[slug], load[me].landings, min(x.landings for x in load.values()))

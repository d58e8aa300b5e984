"""Which live verifier instance should write a project (several instances, docs/deploy.md). Pure:
the rules see the live instances, each with its recent landings (the submissions to the projects
it holds within RECENT_LANDINGS_S) and its lease count, and the projects' own recent landings.
Work is weighed, not projects: one busy project weighs more than ten quiet ones.

- A project nobody holds goes to the live instance with the fewest recent landings (then the
  fewest leases). Among those, the instance that received the write keeps it (no forward);
  otherwise ties are broken by rendezvous hashing (the highest sha256 of instance and project),
  so instances name the same one without talking to each other. Two instances that receive the
  first writes of one project at once may both keep it: the lease lets one write it, and the
  other's writer answers 503 (the retry is forwarded to the holder).
- An instance with more recent landings than the least-loaded live one lets go of the project
  whose landings come closest to half the gap, and only one no larger than half of it, so the
  move never overshoots: afterwards the receiver still has no more than the giver, and nothing
  moves back. A gap under MIN_GAP landings moves nothing (a take-over costs a fetch from the host).
- With no recent landings to weigh (quiet projects), an instance holding at least two leases more
  than the least-loaded live one lets its quietest project go, one at a time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

MIN_GAP = 4  # recent landings: a smaller difference between two instances is noise, not a reason to move


@dataclass(frozen=True)
class Load:
    """A live instance's load: the recent landings of the projects it holds, and how many it holds."""

    landings: int
    held: int


def _weight(instance: str, project: str) -> bytes:
    return hashlib.sha256(f"{instance}\x00{project}".encode()).digest()


def place(project: str, load: Mapping[str, Load], *, here: str | None = None) -> str | None:
    """The instance that should take `project`: `load` maps every live instance to its load;
    `here` is the instance asking (it keeps a tie). None when no instance is live."""
    if not load:
        return None
    return min(load, key=lambda name: (load[name].landings, load[name].held, name != here,
                                       tuple(-byte for byte in _weight(name, project))))


def to_let_go(instance: str, load: Mapping[str, Load], mine: Mapping[str, int]) -> str | None:
    """The project `instance` should let go so the least-loaded live instance takes it, or None.
    `mine` maps each project `instance` holds to its recent landings, quietest (least recently
    written) first."""
    if instance not in load or len(load) < 2 or not mine:
        return None
    least = min(load[name].landings for name in load if name != instance)
    gap = load[instance].landings - least
    movable = [(abs(gap - 2 * weight), n, slug) for n, (slug, weight) in enumerate(mine.items())
               if weight > 0 and 2 * weight <= gap]
    if gap >= MIN_GAP and movable:
        return min(movable)[2]
    if any(mine.values()):
        return None  # busy projects, none of which would even out the work: they stay
    fewest = min(load[name].held for name in load if name != instance)
    return next(iter(mine)) if load[instance].held - fewest >= 2 else None

"""Which live verifier instance should write a project (several instances, docs/deploy.md). Pure:
the rules see the live instances and how many project leases each holds, nothing else.

- A project nobody holds goes to the live instance holding the fewest leases. Among those, the
  instance that received the write keeps it (no forward); otherwise ties are broken by rendezvous
  hashing (the highest sha256 of instance and project), so instances that do not hold the least
  name the same one without talking to each other. Two least-loaded instances that receive the
  first writes of one project at once both keep it: the lease lets one write it, and the other's
  writer answers 503 (the retry is forwarded to the holder).
- An instance holding at least two leases more than the least-loaded live instance has a
  surplus: it lets one quiet project go at a time (verifier.deploy.instances), and the next
  write of that project is placed by the first rule. Two more, not one: moving a project costs a
  take-over (a fetch from the host), and a difference of one is as balanced as an odd count gets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping


def _weight(instance: str, project: str) -> bytes:
    return hashlib.sha256(f"{instance}\x00{project}".encode()).digest()


def place(project: str, load: Mapping[str, int], *, here: str | None = None) -> str | None:
    """The instance that should take `project`: `load` maps every live instance to the number of
    leases it holds; `here` is the instance asking (it keeps a tie). None when no instance is live."""
    if not load:
        return None
    return min(load, key=lambda name: (load[name], name != here, tuple(-byte for byte in _weight(name, project))))


def surplus(instance: str, load: Mapping[str, int]) -> bool:
    """Whether `instance` should let one of its projects go, so the least-loaded live instance takes it."""
    if instance not in load or len(load) < 2:
        return False
    return load[instance] - min(load.values()) >= 2

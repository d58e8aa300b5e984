"""Which leaf `rw claim SLUG --warm` takes: the agent's loop's one choice (verifier.agentkit.loop.pick_warm),
so the Planner's warm-leaf pool can replace it in one place.

Until the pool serves warm leaves itself, a warm leaf is an open extract leaf on the board; one the
board marks `warm` comes first, then the one that expires soonest (it is the one most likely to be
wasted), then by id so the choice is repeatable.
"""

from __future__ import annotations

from verifier.agentkit.loop import pick_warm

__all__ = ["pick_warm"]

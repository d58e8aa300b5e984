"""PROJECT.md's `budget_per_loop` held to what the agents disclosed (design §5.1, issue 24). Pure.

A loop is the last `loop_cadence` before `now`: what the attempts of that window (ledger rows of
action `submit` for a leaf, any outcome: a rejected attempt cost as much as an accepted one)
disclosed in their manifests is the loop's spending. Nothing is guessed for an attempt that did
not disclose: it counts against `leaves_max` as every leaf does, and against tokens and usd not
at all, and the note says how many did not disclose.

`room` is how many more leaves the loop may start:
- none once disclosed usd or tokens reach the budget ("plans no further leaves", and says so);
- otherwise, when attempts disclosed a cost, as many as the rest of the budget pays for at the
  loop's average cost per disclosing attempt (at least one: the average is an estimate);
- otherwise no limit from cost (`leaves_max` still holds).
The Planner takes min(leaves_max, room) for a wake; the runner claims no leaf of a project with
room 0, nor once the loop's attempts reach `leaves_max` (`worker_stop`): the Planner makes at
most leaves_max leaves a wake, and the runner works at most that many a loop.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from verifier.formats.ledger import LedgerRow
from verifier.formats.project import Budget


@dataclass(frozen=True)
class LoopSpend:
    """What the loop's attempts disclosed."""

    attempts: int = 0
    tokens: int = 0  # summed over the attempts that disclosed tokens
    tokens_attempts: int = 0
    usd: float = 0.0  # summed over the attempts that disclosed usd
    usd_attempts: int = 0


@dataclass(frozen=True)
class BudgetRoom:
    room: int | None  # more leaves the loop may start; None: no limit from cost
    note: str  # what the budget did, for the plan's decisions and the runner's report ("" when nothing)

    @property
    def spent(self) -> bool:
        return self.room == 0


def loop_spend(rows: Iterable[LedgerRow], now: datetime, window: timedelta) -> LoopSpend:
    """The disclosed spending of the agents' attempts at times in (now - window, now]."""
    attempts = tokens = tokens_attempts = usd_attempts = 0
    usd = 0.0
    for row in rows:
        if row.action != "submit" or row.leaf_id is None or not now - window < row.at <= now:
            continue
        attempts += 1
        if row.cost.tokens is not None:
            tokens, tokens_attempts = tokens + row.cost.tokens, tokens_attempts + 1
        if row.cost.usd is not None:
            usd, usd_attempts = usd + row.cost.usd, usd_attempts + 1
    return LoopSpend(attempts, tokens, tokens_attempts, round(usd, 6), usd_attempts)


def _what(spend: LoopSpend, window: str) -> str:
    undisclosed = spend.attempts - max(spend.usd_attempts, spend.tokens_attempts)
    told = f"{spend.usd:g} usd and {spend.tokens} tokens disclosed by {spend.attempts} attempts in the last {window}"
    return told + (f" ({undisclosed} disclosed nothing and count only against leaves_max)" if undisclosed else "")


def budget_room(budget: Budget, spend: LoopSpend, window: str) -> BudgetRoom:
    """How many more leaves the loop's disclosed spending leaves room for (module docstring)."""
    if spend.usd_attempts and spend.usd >= budget.usd:
        return BudgetRoom(0, f"budget_per_loop.usd is {budget.usd:g} and {_what(spend, window)}: no further "
                             "leaves this loop")
    if spend.tokens_attempts and spend.tokens >= budget.tokens:
        return BudgetRoom(0, f"budget_per_loop.tokens is {budget.tokens} and {_what(spend, window)}: no further "
                             "leaves this loop")
    rooms: list[tuple[int, str]] = []
    if spend.usd_attempts and spend.usd > 0:
        each = spend.usd / spend.usd_attempts
        rooms.append((max(1, math.floor((budget.usd - spend.usd) / each)), f"{budget.usd - spend.usd:g} usd"
                                                                           f" left at {each:.4g} usd an attempt"))
    if spend.tokens_attempts and spend.tokens > 0:
        each_tokens = spend.tokens / spend.tokens_attempts
        rooms.append((max(1, math.floor((budget.tokens - spend.tokens) / each_tokens)),
                      f"{budget.tokens - spend.tokens} tokens left at {each_tokens:.0f} an attempt"))
    if not rooms:
        return BudgetRoom(None, "")
    room, why = min(rooms)
    return BudgetRoom(room, f"{_what(spend, window)}; {why} pays for about {room} more leaves")


def worker_stop(budget: Budget, spend: LoopSpend, window: str) -> str | None:
    """Why a runner starts no more workers on the project this loop, or None (module docstring)."""
    room = budget_room(budget, spend, window)
    if room.spent:
        return room.note
    if spend.attempts >= budget.leaves_max:
        return (f"budget_per_loop.leaves_max is {budget.leaves_max} and {spend.attempts} leaf attempts were made "
                f"in the last {window}: no further workers this loop")
    return None

"""Ledger rows of agents' attempts with what they disclosed, for the budget rules' tests."""

from __future__ import annotations

from datetime import UTC, datetime

from verifier.formats.ledger import Cost, LedgerRow
from verifier.roles.planning import HypothesisFacts, ProjectState, SourceFacts


def attempt(seq: int, at: datetime, *, usd: float | None = None, tokens: int | None = None,
            outcome: str = "accepted", action: str = "submit",
            leaf_id: str | None = "extract-aaaaaaaaaaaa") -> LedgerRow:
    return LedgerRow.model_validate({
        "seq": seq, "prev": "0" * 64, "at": at, "action": action, "outcome": outcome, "leaf_id": leaf_id,
        "kind": "extract", "actor": "agent-a", "actor_type": "agent", "operator": "op-a",
        "verifier_version": "test", "cost": Cost(tokens=tokens, usd=usd)})


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def project_state() -> ProjectState:
    """A project with warm, plain and extracted sources and two ready hypotheses: several leaves to plan."""
    sources = [SourceFacts(f"src_{n:016x}", "included", 900 * n, warm=n == 1, extracted=n == 4) for n in range(1, 6)]
    return ProjectState(slug="demo", tip="a" * 40, steward="stew", hold_plans=False, leaves_max=40,
                        hypotheses=[HypothesisFacts("H1", 2, "active", True), HypothesisFacts("H3", 1, "active", True)],
                        sources=sources, open_leaves=[], findings=5)

"""The task board: a project's leaves as the repository says they are, with Commons' claims on top.

A leaf is `accepted` or `held` once its result file landed (then `rejected` when a person rejected
what it held, `reverted` when its objects were reverted: service.leaf_fate), `expired` once its
contract's expiry passed, `claimed` while an agent's claim is live, and `open` otherwise. Contracts are parsed once
per blob and kept (state.contracts: a worker sees the same leaves over and over as the tip moves).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from verifier.commons.adapter import Claim
from verifier.errors import FormatError
from verifier.formats.base import iso
from verifier.formats.leaf import LeafContract
from verifier.state.contracts import contract_in
from verifier.state.project import ProjectView
from verifier.store.gitrepo import GitTree
from verifier.ui.leaf_fate import LandedObjects, fate

LeafState = Literal["open", "claimed", "expired", "accepted", "held", "rejected", "reverted"]


@dataclass(frozen=True)
class BoardLeaf:
    contract: LeafContract
    state: LeafState
    claim: Claim | None

    def to_json(self) -> dict[str, Any]:
        contract = self.contract
        return {
            "leaf_id": contract.leaf_id, "kind": contract.kind, "title": contract.title,
            "inputs": contract.inputs.model_dump(mode="json", exclude_none=True),
            "base_revision": contract.base_revision, "expires_at": iso(contract.expires_at), "state": self.state,
            "claimed_by": self.claim.agent if self.claim else None,
            "claim_expires_at": iso(self.claim.expires_at) if self.claim else None,
            "warm": bool(contract.warm),  # a warm leaf (design §9.1): claim one with POST .../leaves/warm/claim
        }


def readable_contract(view: GitTree, leaf_id: str) -> LeafContract | None:
    """The leaf's contract, or None when it has none or it does not parse (no leaf to offer);
    parsed once per blob for the whole process (state.contracts)."""
    try:
        return contract_in(view, leaf_id)
    except FormatError:
        return None


LANDED = LandedObjects()  # what each contribution commit added; commits never change


def leaf_state(view: GitTree, contract: LeafContract, claim: Claim | None, now: datetime) -> LeafState:
    landed = ProjectView(view).result(contract.leaf_id)
    if landed is not None:  # the state now, after holds and reverts
        return fate(view, contract.leaf_id, landed.outcome, landed.commit, LANDED)
    if now >= contract.expires_at:
        return "expired"
    return "claimed" if claim is not None else "open"


def board(view: GitTree, claims: dict[str, Claim], now: datetime) -> list[BoardLeaf]:
    leaves = []
    for leaf_id in ProjectView(view).leaf_ids:
        contract = readable_contract(view, leaf_id)
        if contract is None:
            continue
        claim = claims.get(contract.leaf_id)
        leaves.append(BoardLeaf(contract, leaf_state(view, contract, claim, now), claim))
    return leaves

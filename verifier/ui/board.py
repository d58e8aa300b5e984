"""The task board: a project's leaves as the repository says they are, with Commons' claims on top.

A leaf is `accepted` or `held` once its result file landed (then `rejected` when a person rejected
what it held, `reverted` when its objects were reverted: service.leaf_fate), `expired` once its
contract's expiry passed, `claimed` while an agent's claim is live, and `open` otherwise. Contracts are parsed once
per blob and kept (a worker sees the same leaves over and over as the tip moves).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from verifier.commons.adapter import Claim
from verifier.errors import FormatError
from verifier.formats.base import iso
from verifier.formats.leaf import LeafContract, parse_leaf
from verifier.state.layout import leaf_path
from verifier.state.project import ProjectView
from verifier.store.gitrepo import GitTree
from verifier.ui.leaf_fate import LandedObjects, fate

LeafState = Literal["open", "claimed", "expired", "accepted", "held", "rejected", "reverted"]
_CACHE_LIMIT = 100_000


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


class ContractCache:
    """Parsed leaf contracts by blob id, shared by a worker's threads."""

    def __init__(self) -> None:
        self._by_blob: dict[str, LeafContract] = {}
        self._lock = threading.Lock()

    def contract(self, view: GitTree, leaf_id: str) -> LeafContract | None:
        path = leaf_path(leaf_id)
        blob = view.blob_id(path)
        if blob is None:
            return None
        with self._lock:
            cached = self._by_blob.get(blob)
        if cached is not None:
            return cached
        try:
            contract = parse_leaf(view.read(path) or b"", path)
        except FormatError:
            return None
        with self._lock:
            if len(self._by_blob) >= _CACHE_LIMIT:
                self._by_blob.clear()
            self._by_blob[blob] = contract
        return contract


LANDED = LandedObjects()  # what each contribution commit added; commits never change


def leaf_state(view: GitTree, contract: LeafContract, claim: Claim | None, now: datetime) -> LeafState:
    landed = ProjectView(view).result(contract.leaf_id)
    if landed is not None:  # the state now, after holds and reverts
        return fate(view, contract.leaf_id, landed.outcome, landed.commit, LANDED)
    if now >= contract.expires_at:
        return "expired"
    return "claimed" if claim is not None else "open"


def board(view: GitTree, cache: ContractCache, claims: dict[str, Claim], now: datetime) -> list[BoardLeaf]:
    leaves = []
    for leaf_id in ProjectView(view).leaf_ids:
        contract = cache.contract(view, leaf_id)
        if contract is None:
            continue
        claim = claims.get(contract.leaf_id)
        leaves.append(BoardLeaf(contract, leaf_state(view, contract, claim, now), claim))
    return leaves

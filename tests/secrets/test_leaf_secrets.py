"""What the verifier's own roles write is scanned like what agents send: a leaf contract holding a
secret is refused before anything lands (every agent reads leaves)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.support.secret_cases import make_cases
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.errors import FormatError
from verifier.formats.leaf import LeafContract
from verifier.state.layout import default_write_rules
from verifier.writes.project import add_leaf


def contract(world: World, title: str) -> LeafContract:
    return LeafContract.model_validate({
        "leaf_id": "extract-secret", "kind": "extract", "title": title, "inputs": {"source_id": NOTE_ID},
        "base_revision": world.tip(), "may_write": [r.model_dump() for r in default_write_rules("extract")],
        "check": "extract", "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=1)})


def test_a_leaf_whose_title_holds_a_secret_is_refused_and_nothing_lands(world: World) -> None:
    secret = make_cases(7)[0]
    tip = world.tip()
    with pytest.raises(FormatError, match="secret") as refused:
        add_leaf(world.home, SLUG, contract(world, f"Extract it; the key is {secret.context}"), now=NOW,
                 actor="planner")
    assert secret.value not in str(refused.value)  # the refusal names the detector, never the secret
    assert world.tip() == tip


def test_an_honest_leaf_title_lands(world: World) -> None:
    landed = add_leaf(world.home, SLUG, contract(world, "Extract the customer counts (sha 3f9c0a1b2d4e)"), now=NOW,
                      actor="planner")
    assert landed.row.leaf_id == "extract-secret"

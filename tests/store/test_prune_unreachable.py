"""Clones carry only what is reachable: recovery prunes the objects refused and crashed attempts
left in a project repository, and the agent kit clones through git's protocol."""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.support.world import World
from verifier.agentkit.workspace import clone
from verifier.store.prune import prune_unreachable


def test_unreachable_objects_are_pruned_and_reachable_ones_kept(world: World, tmp_path: Path) -> None:
    repo = world.repo
    leftover = repo.repo.create_blob(b"a crashed attempt's blob that never landed\n")
    tip = world.tip()
    assert leftover in repo.repo.odb
    assert prune_unreachable(repo.path) is None
    fresh = pygit2.Repository(str(repo.path))
    assert leftover not in fresh.odb
    assert str(fresh.head.target) == tip and fresh[tip].tree is not None
    assert world.home.project("world-model-eval").view(tip).read("PROJECT.md") is not None


def test_a_clone_through_git_protocol_carries_no_unreachable_object(world: World, tmp_path: Path) -> None:
    leftover = world.repo.repo.create_blob(b"never landed either\n")
    checkout = clone(world.repo.path, tmp_path / "clone")
    assert leftover not in checkout.odb
    assert str(checkout.head.target) == world.tip()

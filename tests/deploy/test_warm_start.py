"""An instance's start-up reads every project before its workers fork (verifier.deploy.instances.warm),
so each worker starts with the projects' leaf contracts parsed: those it writes and those a
failover may hand it. A home of one instance is left to its notifier's start-up pass."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.support.world import NOW, SLUG, World
from verifier.deploy.instances import warm
from verifier.state import contracts
from verifier.state.layout import leaf_path
from verifier.wiring import open_home


def _as_instance(world: World) -> World:
    config = json.loads((world.home.root / "config.json").read_text())
    config.setdefault("backends", {}).update({"instance": "a", "instance_address": "http://a.internal"})
    (world.home.root / "config.json").write_text(json.dumps(config))
    world.home = open_home(world.home.root)
    return world


def _parsed(world: World, leaf_id: str) -> bool:
    view = world.repo.view(world.tip())
    blob = view.blob_id(leaf_path(leaf_id))
    return (blob, leaf_path(leaf_id)) in contracts._parsed  # the memo the workers inherit


def test_an_instance_starts_with_its_projects_open_leaves_parsed(world: World) -> None:
    world.leaf("extract-warm-1")
    world.leaf("extract-warm-2")
    instance = _as_instance(world)
    contracts._parsed.clear()  # a fresh process, as far as the memo goes
    assert warm(instance.home, NOW + timedelta(minutes=1)) == len(instance.home.projects())
    assert _parsed(instance, "extract-warm-1") and _parsed(instance, "extract-warm-2")


def test_an_instance_stops_warming_when_its_budget_is_spent(world: World) -> None:
    instance = _as_instance(world)
    assert SLUG in instance.home.projects()
    assert warm(instance.home, NOW, budget_s=0.0) == 0


def test_a_home_of_one_instance_is_not_warmed_here(world: World) -> None:
    world.leaf("extract-warm-3")
    contracts._parsed.clear()  # a fresh process, as far as the memo goes
    assert warm(world.home, NOW) == 0
    assert not _parsed(world, "extract-warm-3")

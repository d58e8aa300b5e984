"""Shared fixtures only (helpers live in tests/support/): a throwaway verifier home with the fixture
project and an agent (built once per worker, copied for each test), a second agent, the resolution
fixture built once per session (each test gets a copy), and the servers of a two-instance
deployment."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.resolution import BuiltScenarios
from tests.support.templates import built
from tests.support.world import NOW, World, copied_world, make_world
from verifier.agentkit.scripted import ScriptedAgent


@pytest.fixture
def world(tmp_path: Path) -> World:
    """A home of its own under tmp_path/home: a copy of the one make_world built for this worker."""
    return copied_world(built("world", make_world), tmp_path)


@pytest.fixture(scope="session")
def built_scenarios(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenarios:
    """The resolution fixture (tests.support.resolution.build), built on first use and copied per test."""
    return BuiltScenarios(tmp_path_factory.mktemp("resolution-fixture"))


@pytest.fixture
def second_agent(world: World) -> Callable[[], ScriptedAgent]:
    def make() -> ScriptedAgent:
        token = world.home.identities.add("agent-b", "op-b", "agent", NOW)
        return ScriptedAgent(world.home, "agent-b", "op-b", token)

    return make


@pytest.fixture
def instance_servers(tmp_path: Path) -> Iterator[tuple[str, str, Path, str]]:
    """PostgreSQL, an S3-compatible server and a git daemon on loopback, for two instances of one
    deployment (tests.support.instances): (DSN, S3 endpoint, host repository, its git:// URL)."""
    from tests.support.instances import served_backends  # noqa: PLC0415 - the servers only where used

    yield from served_backends(tmp_path)

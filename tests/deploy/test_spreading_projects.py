"""Several instances spread the projects (verifier.deploy.spreading): a project nobody holds is
routed to the least-loaded live instance, a project another instance holds to its holder, and an
instance holding two more projects than another live one lets its quietest go, so the next write
of it is placed on the instance with room. In process, on a throwaway PostgreSQL cluster and bare
repositories reached by git over file://."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.servers import postgres_cluster
from tests.support.world import FIXTURES, NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.commons import leases
from verifier.commons.pgdb import PgDatabase
from verifier.deploy.hosting import attach_remote
from verifier.deploy.instances import HOLDER_FRESH_S, resync
from verifier.deploy.spreading import Route, rebalance, route
from verifier.pipeline.writer import ProjectWriter
from verifier.store.home import Home
from verifier.wiring import open_home
from verifier.writes.project import init_project

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # a throwaway PostgreSQL cluster

assert COMMAND_MODULES  # every command registered on `cli`
SECOND = "grid-storage"  # fixtures/seed-grid-storage


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def _configure(home_root: Path, *, instance: str) -> Home:
    config = json.loads((home_root / "config.json").read_text())
    backends = config.setdefault("backends", {})
    backends["commons"] = {"kind": "postgres", "dsn_env": "RW_TEST_COMMONS_DSN"}
    backends.update({"instance": instance, "instance_address": f"http://{instance}.internal", "lease_s": 30.0})
    (home_root / "config.json").write_text(json.dumps(config))
    return open_home(home_root)


def test_projects_are_routed_to_their_writer_and_spread_to_an_instance_with_room(
        dsn: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RW_TEST_COMMONS_DSN", dsn)
    init_project(world.home, SECOND, now=NOW, template=FIXTURES / f"seed-{SECOND}")
    for slug in (SLUG, SECOND):
        bare = tmp_path / f"{slug}.git"
        subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
        attach_remote(world.home, slug, f"file://{bare}")
    b_root = tmp_path / "instance-b"
    b_root.mkdir()
    shutil.copy(world.home.root / "config.json", b_root / "config.json")
    a = replace(world, home=_configure(world.home.root, instance="a"))
    b_home = _configure(b_root, instance="b")
    for slug in (SLUG, SECOND):
        resync(b_home, slug)
    db = PgDatabase(dsn)
    try:
        a.leaf("extract-spread-1")  # a writes both projects: it holds both leases
        with ProjectWriter.open(a.home, SECOND):  # opening a writer takes the lease
            pass
        leases.beat(db, "a", "http://a.internal")
        assert route(b_home, SLUG) == Route("a", "http://a.internal", holds=True)  # b sends a's writes to a
        assert route(a.home, SLUG) is None

        rebalance(a.home)  # b is not live: nowhere to send a project
        assert sorted(leases.held_by(db, "a")) == sorted([SLUG, SECOND])

        leases.beat(db, "b", "http://b.internal")  # b joins: a holds two more than b
        rebalance(a.home)
        kept = leases.held_by(db, "a")
        assert len(kept) == 1
        released = SECOND if kept == [SLUG] else SLUG
        assert leases.holder(db, released) is None
        # The next write of it, wherever it arrives, is placed on b, the instance with room.
        assert route(a.home, released) == Route("b", "http://b.internal", holds=False)
        time.sleep(HOLDER_FRESH_S + 0.1)  # b read the lease as a's a moment ago; it reads it again
        assert route(b_home, released) is None
        rebalance(a.home)  # one apart now: balanced, nothing more moves
        assert leases.held_by(db, "a") == kept
        shown = CliRunner().invoke(cli, ["instances"], env={"RW_HOME": str(a.home.root)})
        assert shown.exit_code == 0, shown.output
        assert f"a (this home)  http://a.internal  1 project(s): {kept[0]}" in shown.output
        assert "b  http://b.internal  0 project(s): -" in shown.output
        # A project another worker of a holds stays with a, though b has more room.
        assert leases.acquire(db, "third-project", "a", "http://a.internal", ttl_s=30) is not None
        assert route(a.home, "third-project") is None
        assert route(b_home, "third-project") == Route("a", "http://a.internal", holds=True)
    finally:
        db.close()


def test_rw_instances_on_one_machine_says_there_is_one(world: World) -> None:
    shown = CliRunner().invoke(cli, ["instances"], env={"RW_HOME": str(world.home.root)})
    assert shown.exit_code == 0 and shown.output.startswith("one instance")

"""Two verifier instances on one PostgreSQL Commons and one git host: exactly one writes a project
at a time (its lease); when the holder stops, the other takes the project over from the host's
branch after the lease runs out, and every landing is on the host once, in order. Real servers:
a throwaway PostgreSQL cluster and a bare repository reached by git over file://."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.git_hosts import host_tip
from tests.support.servers import postgres_cluster
from tests.support.world import SLUG, World
from verifier.deploy.hosting import attach_remote
from verifier.errors import RetryableError
from verifier.store.home import Home
from verifier.wiring import open_home

pytestmark = [pytest.mark.slow, pytest.mark.postgres]  # a throwaway PostgreSQL cluster


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def _configure(home_root: Path, *, instance: str, lease_s: float) -> Home:
    config = json.loads((home_root / "config.json").read_text())
    backends = config.setdefault("backends", {})
    backends["commons"] = {"kind": "postgres", "dsn_env": "RW_TEST_COMMONS_DSN"}
    backends.update({"instance": instance, "instance_address": f"http://{instance}.internal", "lease_s": lease_s})
    (home_root / "config.json").write_text(json.dumps(config))
    return open_home(home_root)



def test_the_survivor_takes_a_project_over_from_the_host(dsn: str, world: World, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RW_TEST_COMMONS_DSN", dsn)
    bare = tmp_path / "host.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    attach_remote(world.home, SLUG, f"file://{bare}")
    b_root = tmp_path / "instance-b"
    b_root.mkdir()
    for name in ("config.json", "identities.json"):  # the same settings; identity is shared in a deployment
        shutil.copy(world.home.root / name, b_root / name)
    a = replace(world, home=_configure(world.home.root, instance="a", lease_s=1.0))
    b = replace(world, home=_configure(b_root, instance="b", lease_s=30.0))

    a.leaf("extract-1")  # instance a writes the project and holds its lease
    landed_by_a = host_tip(bare)
    assert landed_by_a == a.tip()
    with pytest.raises(RetryableError, match=r"written by a \(http://a.internal\)"):
        b.leaf("extract-2", base=landed_by_a)
    assert not b.home.repo_path(SLUG).exists()  # b wrote nothing

    time.sleep(1.3)  # a stops (killed): its lease runs out
    b.leaf("extract-2", base=landed_by_a)  # b takes the project over from the host's branch
    assert host_tip(bare) == b.tip()
    assert str(b.repo.commit(b.tip()).parents[0].id) == landed_by_a  # on top of a's landing, once

    with pytest.raises(RetryableError, match=r"written by b"):  # a comes back: b holds the project now
        a.leaf("extract-3")
    assert host_tip(bare) == b.tip()

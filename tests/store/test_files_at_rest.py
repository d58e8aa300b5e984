"""Files at rest (issue 21, point 7): the home's secrets and databases are 0600 and its private
folders 0700 from creation, and `rw` tightens them when it finds them looser; a steward reads
only their own projects' traces; the hooks find their home from the repository, so a copied or
restored home takes pushes at once."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.git import clone, commit_file, push_for_review
from tests.support.world import FIXTURES, NOW, SLUG, ScriptedAgent, World
from verifier.agentkit.scripted import load_script
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.commons.db import Database
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import submit
from verifier.roles.opswiki import OpsWiki
from verifier.seal.status import NOT_SEALED
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import COMMONS_FILE, Home, Settings
from verifier.writes.project import add_leaf, init_project

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

assert COMMAND_MODULES  # the commands register on import

OTHER = "other-project"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@contextmanager
def umask(value: int) -> Iterator[None]:
    """The most permissive umask a careless shell might have: only our own modes protect files."""
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def rw(home: Path, token: str, *args: str) -> tuple[int, str]:
    env = {"RW_HOME": str(home), "RW_TOKEN": token, "RW_NOW": "2026-11-30T12:00:00Z"}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_the_homes_secrets_and_private_folders_are_private_from_creation(tmp_path: Path) -> None:
    with umask(0):
        home = Home(tmp_path / "home")
        home.save_settings(Settings(durable=False, fetch="offline"))
        init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
        token = home.identities.add("agent-a", "op-a", "agent", NOW)
        world = World(Home(home.root), ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
        world.leaf("extract-good")
        assert world.submit(world.extract("extract-good")).outcome == "accepted"
        Database(home.root / COMMONS_FILE).connection().execute("CREATE TABLE t (x)")
        OpsWiki(home)
    for name in ("identities.json", "config.json", COMMONS_FILE, f"{COMMONS_FILE}-wal"):
        assert mode(home.root / name) == 0o600, name
    for name in ("traces", "ops-wiki.git"):
        assert mode(home.root / name) == 0o700, name


def test_rw_tightens_a_home_found_looser(world: World) -> None:
    root = world.home.root
    Database(root / COMMONS_FILE).connection().execute("CREATE TABLE IF NOT EXISTS t (x)")
    OpsWiki(world.home)
    world.leaf("extract-good")
    world.submit(world.extract("extract-good"))
    loose = {"identities.json": 0o644, "config.json": 0o666, COMMONS_FILE: 0o644, "traces": 0o755,
             "ops-wiki.git": 0o755}
    for name, looser in loose.items():
        (root / name).chmod(looser)
    contents = {name: (root / name).read_bytes() for name in ("identities.json", "config.json")}
    projects_mode = mode(root / "projects")
    code, out = rw(root, "", "ledger", SLUG)
    assert code == 0, out
    assert {name: mode(root / name) for name in loose} == {"identities.json": 0o600, "config.json": 0o600,
                                                           COMMONS_FILE: 0o600, "traces": 0o700,
                                                           "ops-wiki.git": 0o700}
    assert {name: (root / name).read_bytes() for name in contents} == contents  # modes only
    assert mode(root / "projects") == projects_mode  # agents clone these: not the home's secrets


def test_a_private_name_that_is_a_link_is_never_chmodded_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    outside.chmod(0o644)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "identities.json").symlink_to(outside)
    assert Home(tmp_path / "home").tightened == []
    assert mode(outside) == 0o644


def stewarded_by(tmp_path: Path, handle: str) -> Path:
    """The fixture project's template with another steward."""
    template = tmp_path / "template"
    shutil.copytree(FIXTURES / "demo-project", template)
    project = template / "PROJECT.md"
    text = project.read_text().replace("steward: ericxtang", f"steward: {handle}", 1)
    project.write_text(text.replace(f"project: {SLUG}", f"project: {OTHER}", 1))
    return template


def traced_in_both(world: World, tmp_path: Path) -> tuple[str, str]:
    """One accepted trace in the fixture project (steward ericxtang) and one in OTHER (alice)."""
    init_project(world.home, OTHER, now=NOW, template=stewarded_by(tmp_path, "alice"))
    mine_leaf = world.leaf("extract-good")
    mine = world.submit(world.extract("extract-good"))
    theirs_leaf = mine_leaf.model_copy(update={"base_revision": world.home.project(OTHER).tip()})
    add_leaf(world.home, OTHER, theirs_leaf, now=NOW, actor="planner")
    script = load_script(FIXTURES / "submissions" / "extract-good.yaml")
    theirs = submit(world.home, world.agent.extract(OTHER, "extract-good", script, now=NOW), now=NOW,
                    fetcher=OfflineFetcher())
    assert mine.outcome == theirs.outcome == "accepted"
    assert mine.trace_id and theirs.trace_id and mine.trace_id != theirs.trace_id
    return mine.trace_id, theirs.trace_id


def test_a_steward_reads_only_their_own_projects_traces(world: World, tmp_path: Path) -> None:
    mine, theirs = traced_in_both(world, tmp_path)
    eric = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    alice = world.home.identities.add("alice", "alice", "human", NOW)
    code, out = rw(world.home.root, eric, "trace", "list")
    assert code == 0 and mine in out and theirs not in out
    code, out = rw(world.home.root, alice, "trace", "list", "--json")
    assert code == 0 and [row["trace_id"] for row in json.loads(out)] == [theirs]
    code, out = rw(world.home.root, eric, "trace", "show", theirs, "--file", "events.jsonl")
    assert code == 2 and f"no trace {theirs!r} among the traces of the projects you steward ({SLUG})" in out
    assert '"type"' not in out
    missing = "trc_" + "0" * 16
    code, refused_missing = rw(world.home.root, eric, "trace", "show", missing)
    assert code == 2 and refused_missing.replace(missing, theirs) == out  # a foreign id is no oracle
    code, out = rw(world.home.root, eric, "trace", "show", mine, "--json")
    assert code == 0 and {row["project"] for row in json.loads(out)["outcomes"]} == {SLUG}


def test_a_copied_home_takes_pushes_at_once(world: World, tmp_path: Path) -> None:
    person = world.home.identities.add("ericxtang", "stew-op", "human", NOW)
    restored = tmp_path / "restored-home"
    shutil.copytree(world.home.root, restored, symlinks=True)
    hook = restored / "projects" / f"{SLUG}.git" / "hooks" / "pre-receive"
    assert str(world.home.root) not in hook.read_text()  # nothing names the original home
    original_tip = world.tip()
    work = clone(restored / "projects" / f"{SLUG}.git", tmp_path / "work")
    text = (work / "PROJECT.md").read_text()
    pushed = commit_file(work, "PROJECT.md", text + "\nA steward's clarification.\n", "PROJECT.md: clarify")
    result = push_for_review(work, person)  # no `rw` command ran on the restored home first
    assert result.returncode == 0, result.stderr
    assert f"remote: ACCEPTED {pushed[:12]}" in result.stderr
    copy = Home(restored).project(SLUG)
    actions = [row.action for _, row in read_chain(copy.view(copy.tip() or "")) if row.reason_code != NOT_SEALED]
    assert actions[-1] == "human"
    assert world.tip() == original_tip  # the original home saw nothing

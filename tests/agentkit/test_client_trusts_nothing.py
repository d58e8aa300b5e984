"""The agent's client trusts nothing it is served (issue 21, point 6): a hostile service on loopback
(tests/support/hostile_server.py) serves crafted ids, payloads and a crafted git repository to `rw`
run as its own process. Each refusal exits 8 with `[untrusted_reply]` naming what was wrong, and
nothing outside the working folder changes; a served repository without links works as before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent, Ran
from tests.support.hostile import FAKE_AWS_KEY
from tests.support.hostile_server import (
    LEAF,
    SLUG,
    SOURCE,
    SOURCE_TEXT,
    Hostile,
    fresh_payload,
    hostile_service,
    snapshot,
)
from verifier.agentkit.safefiles import LinkRefused, write_bytes
from verifier.agentkit.tracing import TraceLog

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

EXIT_UNTRUSTED = 8


@dataclass
class Scene:
    root: Path  # everything the test made: the served repository, the outside folder, the cwd
    cwd: Path  # the agent's current folder
    outside: Path  # a folder the client must never write into
    agent: OutsideAgent

    def rw(self, *args: str, cwd: Path | None = None, ok: bool = True) -> Ran:
        return self.agent.rw(*args, cwd=cwd or self.cwd, ok=ok)


def scene_for(tmp_path: Path, service: Hostile) -> Scene:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "keep.txt").write_text("the person's own file\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    return Scene(tmp_path, cwd, outside, OutsideAgent(cwd, service.url, "rwt_" + "x" * 43))


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[tuple[Hostile, Scene]]:
    """A hostile service whose repository holds no links (its answers are edited per test)."""
    with hostile_service(tmp_path / "served") as service:
        yield service, scene_for(tmp_path, service)


def assert_refused(scene: Scene, ran: Ran, *words: str) -> None:
    assert ran.code == EXIT_UNTRUSTED, (ran.code, ran.out, ran.err)
    assert "[untrusted_reply]" in ran.err, ran.err
    for word in words:
        assert word in ran.err, (word, ran.err)


def refused_work(scene: Scene, *args: str) -> Ran:
    """`rw work` refused: the current folder stays empty and nothing outside it changes."""
    before = snapshot(scene.root, skip=scene.cwd)
    ran = scene.rw("work", SLUG, *args, ok=False)
    assert snapshot(scene.root, skip=scene.cwd) == before
    assert sorted(scene.cwd.iterdir()) == []
    return ran


def test_a_served_repository_without_links_works_as_before(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    before = snapshot(scene.root, skip=scene.cwd)
    scene.rw("work", SLUG, LEAF)
    work = scene.cwd / LEAF
    assert json.loads((work / ".rw" / "work.json").read_text())["base_revision"] == service.base
    assert (work / ".rw" / "sources" / f"{SOURCE}.txt").read_text() == SOURCE_TEXT
    made = scene.rw("new", "finding", "--excerpt", "bought by seven of eleven teams", "--statement", "Seven of eleven.",
                    "--limitation", "Interviews only.", cwd=work)
    assert (work / made.out.strip()).is_file()
    assert snapshot(scene.root, skip=scene.cwd) == before


def test_a_warm_leaf_id_that_climbs_out_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    service.answers.board = {"leaves": [{"leaf_id": "../../outside/pwn", "kind": "extract", "state": "open"}]}
    assert_refused(scene, refused_work(scene, "--warm"), "the board's warm leaf", "'../../outside/pwn'")


def test_an_absolute_warm_leaf_id_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    service.answers.board = {"leaves": [{"leaf_id": str(scene.outside / "x"), "kind": "extract", "state": "open"}]}
    assert_refused(scene, refused_work(scene, "--warm"), "is not a leaf id")


def test_a_served_source_id_that_climbs_out_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    payload = fresh_payload(service)
    payload["contract"]["inputs"]["source_id"] = "../../../outside/keep"
    service.answers.payload = payload
    assert_refused(scene, refused_work(scene, LEAF), "contract.inputs.source_id")


def test_a_nested_served_source_id_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    payload = fresh_payload(service)
    payload["inputs"] = {"object": {"finding": {"source_id": "/tmp/elsewhere"}}}
    service.answers.payload = payload
    assert_refused(scene, refused_work(scene, LEAF), "payload inputs.object.finding.source_id")


def test_a_payload_for_another_leaf_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    payload = fresh_payload(service)
    payload["contract"]["leaf_id"] = "other-leaf"
    service.answers.payload = payload
    assert_refused(scene, refused_work(scene, LEAF), "is not the leaf claimed")


def test_a_base_revision_that_is_a_git_option_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    payload = fresh_payload(service)
    payload["contract"]["base_revision"] = f"--output={scene.outside / 'pwn'}"
    service.answers.payload = payload
    assert_refused(scene, refused_work(scene, LEAF), "contract.base_revision")


def test_a_reviewed_object_path_that_climbs_out_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    payload = fresh_payload(service)
    payload["contract"].update(kind="review", check="review", inputs={"object_path": "../outside/keep.txt"},
                               may_write=[{"op": "create", "path": "reviews/*/rev_*.yaml"}])
    service.answers.payload = payload
    assert_refused(scene, refused_work(scene, LEAF), "object path", "steps out")


def test_a_served_handle_that_is_a_path_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    service.answers.whoami = {"agent": "../../outside", "operator": "op", "type": "agent"}
    assert_refused(scene, refused_work(scene, LEAF), "/whoami agent")


@pytest.mark.parametrize("link", [".rw", "findings"])
def test_a_served_repository_with_a_link_where_rw_writes_is_refused(tmp_path: Path, link: str) -> None:
    outside = tmp_path / "outside"
    with hostile_service(tmp_path / "served", {"README.md": b"# a project\n"}, {link: str(outside)}) as service:
        scene = scene_for(tmp_path, service)
        ran = refused_work(scene, LEAF)
    assert_refused(scene, ran, f"{link} is a symbolic link", "nothing was checked out")
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_a_link_made_in_the_folder_after_rw_work_is_refused_by_rw_new(plain: tuple[Hostile, Scene]) -> None:
    _service, scene = plain
    scene.rw("work", SLUG, LEAF)
    work = scene.cwd / LEAF
    (work / "findings").rename(work / "findings-was")
    (work / "findings").symlink_to(scene.outside)
    before = snapshot(scene.root, skip=scene.cwd)
    ran = scene.rw("new", "finding", "--excerpt", "bought by seven of eleven teams", "--statement", "s",
                   "--limitation", "l", cwd=work, ok=False)
    assert_refused(scene, ran, "findings is a link")
    assert snapshot(scene.root, skip=scene.cwd) == before


def test_a_linked_trace_folder_is_refused_by_rw_trace_add(plain: tuple[Hostile, Scene]) -> None:
    _service, scene = plain
    scene.rw("work", SLUG, LEAF)
    work = scene.cwd / LEAF
    (work / ".rw" / "trace").rename(work / ".rw" / "trace-was")
    (work / ".rw" / "trace").symlink_to(scene.outside)
    before = snapshot(scene.root, skip=scene.cwd)
    ran = scene.rw("trace", "add", "reasoning", "thinking", cwd=work, ok=False)
    assert_refused(scene, ran, ".rw/trace is a link")
    assert snapshot(scene.root, skip=scene.cwd) == before


def test_a_linked_state_folder_is_refused_by_every_command_in_it(plain: tuple[Hostile, Scene]) -> None:
    _service, scene = plain
    scene.rw("work", SLUG, LEAF)
    work = scene.cwd / LEAF
    (work / ".rw").rename(scene.cwd / "state-was")
    (work / ".rw").symlink_to(scene.cwd / "state-was")
    for args in (("trace", "add", "reasoning", "x"), ("check",), ("submit",)):
        assert_refused(scene, scene.rw(*args, cwd=work, ok=False), ".rw is a link")


def test_a_secret_in_the_submit_summary_is_never_sent(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    scene.rw("work", SLUG, LEAF)
    work = scene.cwd / LEAF
    scene.rw("new", "finding", "--excerpt", "bought by seven of eleven teams", "--statement", "Seven of eleven.",
             "--limitation", "Interviews only.", cwd=work)
    ran = scene.rw("submit", "--summary", f"one finding; key {FAKE_AWS_KEY} for later", cwd=work)
    assert ran.out.startswith("ACCEPTED"), ran.out
    assert "stripped 1 secret(s): AWS Access Key" in ran.err
    sent = service.submissions[-1]
    assert FAKE_AWS_KEY.encode() not in sent
    assert b'"summary": "one finding; key [secret stripped: AWS Access Key] for later"' in sent


def test_an_honest_summary_is_sent_as_written(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    scene.rw("work", SLUG, LEAF)
    work = scene.cwd / LEAF
    scene.rw("submit", "--summary", "one finding, quoted exactly", cwd=work)
    assert b'"summary": "one finding, quoted exactly"' in service.submissions[-1]


def test_a_served_repository_that_plants_its_own_state_folder_is_refused(tmp_path: Path) -> None:
    planted = json.dumps({"server": "http://127.0.0.1:9", "project": SLUG, "leaf_id": LEAF}).encode()
    with hostile_service(tmp_path / "served", {"README.md": b"# a project\n", ".rw/work.json": planted}) as service:
        scene = scene_for(tmp_path, service)
        ran = refused_work(scene, LEAF)
    assert_refused(scene, ran, ".rw/work.json is inside .rw/")


def test_a_source_text_that_is_not_text_is_refused(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    service.answers.texts = {SOURCE: {"not": "text"}}  # type: ignore[dict-item]
    ran = refused_work(scene, LEAF)  # after the clone: the clone is removed again
    assert_refused(scene, ran, f"the text of {SOURCE} is not a string")


def test_a_link_where_the_working_folder_would_go_is_refused(plain: tuple[Hostile, Scene]) -> None:
    _service, scene = plain
    (scene.cwd / LEAF).symlink_to(scene.outside)
    before = snapshot(scene.root)
    ran = scene.rw("work", SLUG, LEAF, ok=False)
    assert_refused(scene, ran, f"{LEAF} is a link")
    assert snapshot(scene.root) == before


def test_a_base_revision_the_served_repository_lacks_leaves_no_clone(plain: tuple[Hostile, Scene]) -> None:
    service, scene = plain
    payload = fresh_payload(service)
    payload["contract"]["base_revision"] = "0123456789abcdef0123456789abcdef01234567"
    service.answers.payload = payload
    ran = refused_work(scene, LEAF)
    assert ran.code == 2 and "cannot clone" in ran.err, ran.err


def test_every_manifest_field_is_stripped_like_the_events(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "w" / ".rw" / "trace", "L1", root=tmp_path / "w")
    log.add("2026-11-30T12:00:00Z", "final", "done")
    bundle = log.bundle({"leaf_id": LEAF, "model": f"model {FAKE_AWS_KEY}", "summary": "honest words"}, b"")
    manifest = json.loads(bundle["manifest.json"])
    assert manifest["model"] == "model [secret stripped: AWS Access Key]"
    assert manifest["summary"] == "honest words" and manifest["leaf_id"] == LEAF


@pytest.mark.parametrize("relative", ["../outside/x", "/tmp/x", "findings/../../x", "a//b"])
def test_a_path_that_leaves_the_folder_is_refused_by_the_writer(tmp_path: Path, relative: str) -> None:
    (tmp_path / "w").mkdir()
    before = snapshot(tmp_path)
    with pytest.raises(LinkRefused, match="not a plain path below the working folder"):
        write_bytes(tmp_path / "w", relative, b"x")
    assert snapshot(tmp_path) == before

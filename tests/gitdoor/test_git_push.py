"""People contribute with git: the pre-receive hook refuses direct pushes and lands a person's push
to refs/for/main through the writer, commit by commit, all or nothing, with verdicts on the
pusher's terminal. Real git, real hooks, on the local path with the token as a push option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.git import clone, commit_file, git, plant_commit, push_for_review
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.objects import link_file
from verifier.audits.audit import verify_ledger
from verifier.audits.replay import replay
from verifier.gitdoor.receive import push_token
from verifier.pipeline.ledger import read_chain
from verifier.state.layout import use_shard_path
from verifier.store.hooks import ensure_hooks, pre_receive

pytestmark = pytest.mark.slow  # real git pushes through the hooks, each landing in its own python process


def person(world: World) -> str:
    return world.home.identities.add("ericxtang", "stew-op", "human", NOW)


def rows(world: World) -> list[tuple[str, str, str | None]]:
    return [(row.action, row.outcome, row.actor) for _, row in read_chain(world.repo.view(world.tip()))]


def test_a_direct_push_is_refused(world: World, tmp_path: Path) -> None:
    tip = world.tip()
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "NOTES.md", "# notes\n", "notes")
    result = git(work, "push", "-o", f"token={person(world)}", "origin", "HEAD:main", check=False)
    assert result.returncode != 0
    assert "direct pushes are refused" in result.stderr and "refs/for/main" in result.stderr
    assert world.tip() == tip
    other = git(work, "push", "origin", "HEAD:refs/heads/feature", check=False)
    assert other.returncode != 0 and "direct pushes are refused" in other.stderr
    assert git(world.repo.path, "for-each-ref", "--format=%(refname)").stdout.split() == ["refs/heads/main"]


def test_a_push_without_a_persons_token_is_refused(world: World, tmp_path: Path) -> None:
    tip = world.tip()
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "NOTES.md", "# notes\n", "notes")
    nobody = push_for_review(work, None)
    assert nobody.returncode != 0 and "REFUSED" in nobody.stderr and "token" in nobody.stderr
    agent = push_for_review(work, world.agent.token)
    assert agent.returncode != 0 and "is an agent" in agent.stderr
    assert world.tip() == tip


def test_a_stewards_push_of_project_md_lands_as_a_human_row(world: World, tmp_path: Path) -> None:
    work = clone(world.repo.path, tmp_path / "work")
    text = (work / "PROJECT.md").read_text()
    pushed = commit_file(work, "PROJECT.md", text + "\nA steward's clarification.\n", "PROJECT.md: clarify scope")
    result = push_for_review(work, person(world))
    assert result.returncode == 0, result.stderr
    assert f"remote: ACCEPTED {pushed[:12]}" in result.stderr
    last = [row for _, row in read_chain(world.repo.view(world.tip())) if row.action != "resolve"][-1]
    assert (last.action, last.outcome, last.actor, last.actor_type) == ("human", "accepted", "ericxtang", "human")
    landed = world.repo.commit(last.commit or "")
    assert landed.message.startswith("PROJECT.md: clarify scope") and "Operator: stew-op" in landed.message
    assert b"A steward's clarification." in (world.repo.view(world.tip()).read("PROJECT.md") or b"")
    assert git(world.repo.path, "for-each-ref", "--format=%(refname)").stdout.split() == ["refs/heads/main"]
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok
    assert replay(world.repo, world.home.read_anchor(SLUG), check_anchor=True).ok
    git(work, "pull", "-q", "--rebase", "origin", "main")  # the person's clone takes the landed commit
    assert git(work, "rev-parse", "HEAD").stdout.strip() == world.tip()


def test_a_push_with_one_bad_commit_of_three_lands_nothing(world: World, tmp_path: Path) -> None:
    tip = world.tip()
    before = rows(world)
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "notes/one.md", "one\n", "first note")
    bad = commit_file(work, "scores/use.json", "{}\n", "touch the scores")
    commit_file(work, "notes/three.md", "three\n", "third note")
    result = push_for_review(work, person(world))
    assert result.returncode != 0
    assert f"remote: REJECTED {bad[:12]} touch the scores: [" in result.stderr
    assert "scores/use.json" in result.stderr and "NOT LANDED" in result.stderr
    after = rows(world)
    assert after[:len(before)] == before and after[len(before):] == [("human", "rejected", "ericxtang")]
    assert world.repo.changed_paths(tip, world.tip()) == ["ledger/000000.jsonl"]
    assert git(world.repo.path, "for-each-ref", "--format=%(refname)").stdout.split() == ["refs/heads/main"]


def test_a_pushed_revert_with_a_reason_withdraws_what_it_cited(world: World, tmp_path: Path) -> None:
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    finding = sorted(path.rsplit("/", 1)[1][:-5] for path in world.findings("extract-1"))[0]
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    path, data = link_file(finding_id=finding, hypothesis_id="H1", revision=1, stance="contradicts",
                           rationale="contradicts because the figures say so", leaf_kind="link", leaf_id="link-1")
    linked = world.submit(world.creation("link-1", {path: data}))
    assert linked.outcome == "accepted" and linked.commit

    def use() -> float:
        shard = json.loads(world.repo.view(world.tip()).read(use_shard_path(finding)) or b"{}")
        return float(shard[finding]["u"])

    assert use() == 0.25
    work = clone(world.repo.path, tmp_path / "work")
    git(work, "revert", "--no-edit", linked.commit)
    message = git(work, "log", "-1", "--format=%B").stdout.strip()
    git(work, "commit", "-q", "--amend", "-m", f"{message}\n\nReason: Misread the figure.")
    result = push_for_review(work, person(world))
    assert result.returncode == 0, result.stderr
    assert use() == 0.0
    last = [row for _, row in read_chain(world.repo.view(world.tip())) if row.action != "resolve"][-1]
    assert (last.action, last.actor) == ("revert", "ericxtang") and "Misread the figure." in last.description
    assert replay(world.repo).ok


def test_a_removed_hook_is_put_back_by_rw(world: World) -> None:
    hook = world.repo.path / "hooks" / "pre-receive"
    hook.unlink()
    ensure_hooks(world.home.root, [world.repo.path])  # what every `rw` command does with its home
    assert hook.read_text() == pre_receive()


def test_the_token_comes_from_the_service_or_a_push_option() -> None:
    assert push_token({"RW_PUSH_TOKEN": "rwt_service", "GIT_PUSH_OPTION_COUNT": "1",
                       "GIT_PUSH_OPTION_0": "token=rwt_option"}) == "rwt_service"
    assert push_token({"GIT_PUSH_OPTION_COUNT": "2", "GIT_PUSH_OPTION_0": "ci.skip",
                       "GIT_PUSH_OPTION_1": "token=rwt_option"}) == "rwt_option"
    assert push_token({}) == ""


def test_a_push_carrying_the_token_in_the_environment_lands(world: World, tmp_path: Path) -> None:
    """What the service's git endpoint does: RW_PUSH_TOKEN in receive-pack's environment."""
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "notes/env.md", "# by env\n", "a note")
    result = git(work, "push", "origin", "HEAD:refs/for/main", check=False, env={"RW_PUSH_TOKEN": person(world)})
    assert result.returncode == 0, result.stderr
    assert world.repo.view(world.tip()).read("notes/env.md") == b"# by env\n"


def test_a_push_to_a_project_with_a_broken_history_is_refused(world: World, tmp_path: Path) -> None:
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "notes/late.md", "late\n", "a late note")
    planted = plant_commit(world.repo.path, "notes/planted.md", "planted\n")
    result = push_for_review(work, person(world))
    assert result.returncode != 0 and "refuses writes" in result.stderr and "rw repair" in result.stderr
    assert world.tip() == planted

"""End-to-end submissions against real repositories on disk: the pipeline's golden paths."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pygit2
import pytest

from tests.support.world import FIXTURES, NOW, SLUG, World
from verifier.agentkit.scripted import ScriptedAgent, load_script
from verifier.audits.audit import verify_ledger
from verifier.errors import AuthError
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission
from verifier.state.layout import leaf_result_path
from verifier.version import verifier_version


def first_commit(world: World) -> str:
    commit = world.repo.commit(world.tip())
    while commit.parents:
        commit = commit.parents[0]
    return str(commit.id)


def rows(world: World) -> list:  # type: ignore[type-arg]
    return [row for _, row in read_chain(world.repo.view(world.tip()))]


def test_good_extract_is_accepted_and_committed(world: World) -> None:
    world.leaf("extract-1")
    verdict = world.submit(world.extract("extract-1"))
    assert verdict.outcome == "accepted", verdict.line()
    assert verdict.commit is not None
    commit = world.repo.commit(verdict.commit)
    assert commit.author.name == "agent-a"
    assert commit.committer.name == "ResearchWiki Verifier"
    trailers = dict(line.split(": ", 1) for line in commit.message.strip().splitlines()[-4:])
    assert trailers == {"Operator": "op-a", "Leaf": "extract-1", "Trace": verdict.trace_id,
                        "Verifier-Version": verifier_version()}
    changed = world.repo.changed_paths(str(commit.parents[0].id), verdict.commit)
    assert len(changed) == 4 and all(path.startswith("findings/") for path in changed)
    last = rows(world)[-1]
    assert (last.outcome, last.commit, last.actor, last.operator, last.trace_id) == (
        "accepted", verdict.commit, "agent-a", "op-a", verdict.trace_id)
    assert world.repo.view(world.tip()).read(leaf_result_path("extract-1")) is not None
    assert verify_ledger(world.repo, world.home.read_anchor(SLUG)).ok


def test_misquoted_excerpt_names_the_closest_offset(world: World) -> None:
    world.leaf("extract-1")
    before_tip = world.tip()
    verdict = world.submit(world.extract("extract-1", "extract-bad-excerpt.yaml"))
    assert verdict.outcome == "rejected"
    first = verdict.rejections[0]
    assert first.code == "excerpt_not_found"
    assert "closest match at offset" in first.message
    offset = int(first.message.split("closest match at offset ")[1].split(" ")[0])
    source_text = world.agent.source_text(SLUG, "src_5a8990e88a960b49", before_tip)
    assert source_text[offset:].startswith("Tessellate says RolloutGuard rejected 18.4%")
    assert rows(world)[-1].reason_code == "excerpt_not_found"
    # A rejection moves the branch by the ledger row only.
    assert world.repo.changed_paths(before_tip, world.tip()) == ["ledger/000000.jsonl"]


def test_too_few_findings(world: World) -> None:
    world.leaf("extract-1")
    verdict = world.submit(world.extract("extract-1", "extract-too-few.yaml"))
    assert [r.code for r in verdict.rejections] == ["finding_count"]


def test_duplicate_finding_is_rejected_by_id(world: World) -> None:
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    world.leaf("extract-2")
    verdict = world.submit(world.creation("extract-2", world.findings("extract-2")))
    assert verdict.outcome == "rejected"
    assert verdict.rejections[0].code == "duplicate_id"
    assert "duplicate finding_id: fnd_" in verdict.rejections[0].message


def test_leaf_closes_after_acceptance(world: World) -> None:
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    again = world.submit(world.extract("extract-1"))
    assert again.rejections[0].code == "leaf_closed"


def test_expired_leaf(world: World) -> None:
    world.leaf("extract-1", expires=timedelta(hours=1))
    verdict = world.submit(world.extract("extract-1"), now=NOW + timedelta(hours=2))
    assert verdict.rejections[0].code == "leaf_expired"


def test_unknown_leaf(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    verdict = world.submit(Submission(SLUG, "no-such-leaf", submission.patch, submission.bundle, submission.token))
    assert verdict.rejections[0].code in ("leaf_mismatch", "unknown_leaf")


def test_bad_token_writes_nothing(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    tip = world.tip()
    for token in ("", "rwt_" + "A" * 43, "not-a-token"):
        with pytest.raises(AuthError):
            world.submit(Submission(SLUG, "extract-1", submission.patch, submission.bundle, token))
    assert world.tip() == tip


def test_actor_comes_from_the_token_not_the_manifest(world: World,
                                                     second_agent: Callable[[], ScriptedAgent]) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")  # manifest says agent-a / op-a
    other = second_agent()
    verdict = world.submit(Submission(SLUG, "extract-1", submission.patch, submission.bundle, other.token))
    assert verdict.outcome == "rejected"
    assert verdict.actor == "agent-b"
    assert verdict.rejections[0].code == "actor_mismatch"
    assert rows(world)[-1].actor == "agent-b"


def _base_moving_commit(world: World) -> None:
    """Land something unrelated so the branch moves past the leaf's base."""
    world.leaf("extract-other", source_id="src_6bbf07185db03da1")


def test_disjoint_patch_lands_on_moved_tip(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    _base_moving_commit(world)
    verdict = world.submit(submission)
    assert verdict.outcome == "accepted", verdict.line()
    parent = world.repo.commit(verdict.commit or "").parents[0]
    assert world.repo.view(str(parent.id)).read("leaves/extract-other.yaml") is not None


def test_overlapping_patch_is_stale(world: World, second_agent: Callable[[], ScriptedAgent]) -> None:
    world.leaf("extract-1")
    world.leaf("extract-2")
    first = world.extract("extract-1")
    other = second_agent()
    second = other.extract(SLUG, "extract-2", load_script(FIXTURES / "submissions" / "extract-good.yaml"), now=NOW)
    assert world.submit(first).outcome == "accepted"
    tip = world.tip()
    verdict = world.submit(second)
    assert verdict.outcome == "rejected"
    assert verdict.rejections[0].code == "stale"
    assert f"the current revision is {tip}" in verdict.rejections[0].message


@pytest.mark.parametrize("which", ["older", "unknown"])
def test_patch_against_another_revision_is_refused_with_rebase_instruction(world: World, which: str) -> None:
    world.leaf("extract-other", source_id="src_6bbf07185db03da1")
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    manifest = json.loads(submission.bundle["manifest.json"])
    manifest["base_revision"] = first_commit(world) if which == "older" else "0123456789" * 4
    bundle = {**submission.bundle, "manifest.json": json.dumps(manifest).encode()}
    tip = world.tip()
    verdict = world.submit(Submission(SLUG, "extract-1", submission.patch, bundle, submission.token))
    assert verdict.rejections[0].code == "wrong_base"
    assert f"the current revision is {tip}; rebase" in verdict.rejections[0].message


def test_replayed_ledger_matches_commit_messages(world: World) -> None:
    world.leaf("extract-1")
    world.submit(world.extract("extract-1", "extract-bad-excerpt.yaml"))
    world.submit(world.extract("extract-1"))
    ledger_rows = rows(world)
    messages = []
    for commit in world.repo.repo.walk(world.tip(), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE):
        if commit.message.startswith("ledger: "):
            messages.append(json.loads(commit.message.split("\n\n")[1]))
    assert [row.model_dump(mode="json")["seq"] for row in ledger_rows] == [m["seq"] for m in messages]

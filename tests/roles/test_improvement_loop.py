"""The improvement loop end to end on recorded traces (design §5.1, §6.1): rejections → pattern page
→ proposal → gate → a new skill_version in the next worker's manifest."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.loop import SEED_SKILL, skill_following_worker, work
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.model.adapter import ModelConfig, RecordedBackend
from verifier.pipeline.submit import Submission, Verdict
from verifier.roles.liveskill import install_skill, live_skill_version, read_live_skill
from verifier.roles.loopmodel import record_loop_answer
from verifier.roles.maintainer import configured_backend, due_for_maintenance, pending_diagnoses, run_pass
from verifier.roles.opswiki import OpsWiki
from verifier.roles.proposer import build_request, run_proposer
from verifier.roles.runner import maintain_if_due
from verifier.roles.traceindex import TraceIndex
from verifier.store.home import Settings

VERBATIM = "## Extract\n\nQuote every excerpt verbatim: copy it from `rw source text`, never retype or tidy it.\n"
PAGE = "patterns/extract/excerpt-not-found-after-write.md"


def do_extract(world: World, leaf_id: str) -> tuple[Verdict, dict[str, object]]:
    """A worker does one extract leaf with the live skill, as the platform serves it now."""
    contract = world.leaf(leaf_id, source_id=NOTE_ID)
    result = work(world.home, project=SLUG, leaf_id=leaf_id, kind="extract", base=contract.base_revision,
                  inputs={"source_id": NOTE_ID}, hints=[], skill=read_live_skill(world.home).decode(),
                  agent=world.agent.handle, operator=world.agent.operator, now=NOW)
    manifest = json.loads(result.trace["manifest.json"])
    verdict = world.submit(Submission(SLUG, leaf_id, result.patch, result.trace, world.agent.token))
    return verdict, manifest


def test_a_recurring_rejection_ends_as_a_kept_skill_change(world: World, tmp_path: Path) -> None:
    home = world.home
    install_skill(home, SEED_SKILL)
    rejected = []
    for number in range(4):
        verdict, _ = do_extract(world, f"extract-tidy-{number}")
        assert verdict.outcome == "rejected" and verdict.rejections[0].code == "excerpt_not_found"
        rejected.append(verdict.trace_id)

    report = run_pass(home, now=NOW)
    wiki = OpsWiki(home)
    page = wiki.read(PAGE)
    assert page is not None and PAGE in report.written
    assert all(trace_id in page for trace_id in rejected if trace_id)
    assert "excerpt_not_found" in page and "seen: 4" in page
    assert PAGE in (wiki.read("index.md") or "")
    assert "sampled 4 traces (extract/rejected 4); deterministic pass only" in (wiki.read("logs.md") or "")

    recordings = tmp_path / "recorded"
    request = build_request(home)
    assert PAGE in request.pages and len(request.traces) == 2 and set(request.traces) <= set(rejected)
    assert request.outcome_summary == {"extract": {"rejected": 4}}
    record_loop_answer(recordings, request, {
        "kind": "propose", "section": "extract", "body": VERBATIM, "rationale": f"answers {PAGE}", "model": "m-1"})
    before = live_skill_version(home)
    decision = run_proposer(home, backend=RecordedBackend(recordings), worker=skill_following_worker, now=NOW)
    assert decision.outcome == "kept", decision
    after = live_skill_version(home)
    assert after != before and decision.skill_version == after
    assert "recorded:m-1" in (wiki.read("skill-impact.md") or "")

    verdict, manifest = do_extract(world, "extract-next")
    assert manifest["skill_version"] == after
    assert verdict.outcome == "accepted", verdict.line()
    index = TraceIndex(home)
    index.refresh()
    newest = index.recent("extract", "accepted", 1)
    assert newest[0].trace_id == verdict.trace_id and newest[0].skill_version == after


def test_a_pass_patches_pages_and_asks_the_model_for_root_causes(world: World, tmp_path: Path) -> None:
    home = world.home
    install_skill(home, SEED_SKILL)
    first, _ = do_extract(world, "extract-tidy-a")
    run_pass(home, now=NOW)
    second, _ = do_extract(world, "extract-tidy-b")
    recordings = tmp_path / "recorded"
    home.save_settings(Settings(durable=False, fetch="offline",
                                model=ModelConfig(backend="recorded", recordings=str(recordings))))
    backend = configured_backend(home)
    assert backend is not None
    # The deterministic pass runs even when the model has no answer: the page is still patched.
    missing = run_pass(home, now=NOW, backend=backend)
    assert missing.notes and "no recorded answer" in missing.notes[0]
    page = OpsWiki(home).read(PAGE) or ""
    assert first.trace_id and second.trace_id
    assert first.trace_id in page and second.trace_id in page and "seen: 2" in page
    assert not due_for_maintenance(home)


def test_the_runner_hook_counts_ended_leaves_per_kind(world: World) -> None:
    home = world.home
    home.save_settings(Settings(durable=False, fetch="offline", maintainer_every={"extract": 2}))
    install_skill(home, SEED_SKILL)
    do_extract(world, "extract-tidy-a")
    assert not due_for_maintenance(home)
    do_extract(world, "extract-tidy-b")
    assert due_for_maintenance(home)
    run_pass(home, now=NOW)
    assert not due_for_maintenance(home)


def test_recorded_diagnoses_land_on_the_page(world: World, tmp_path: Path) -> None:
    home = world.home
    install_skill(home, SEED_SKILL)
    verdict, _ = do_extract(world, "extract-tidy-a")
    recordings = tmp_path / "recorded"
    request = pending_diagnoses(home)[0]  # what the pass will ask, the failing trace's events included
    assert request.evidence == [verdict.trace_id] and request.events
    record_loop_answer(recordings, request, {"kind": "diagnose", "root_cause": "The agent retyped quotes.",
                                             "advice": "Copy excerpts from the source text.", "model": "m-2"})
    run_pass(home, now=NOW, backend=RecordedBackend(recordings))
    page = OpsWiki(home).read(PAGE) or ""
    assert "The agent retyped quotes." in page and "recorded:m-2" in page


def test_the_runner_runs_a_maintainer_pass_when_one_is_due_and_not_before(world: World) -> None:
    home = world.home
    home.save_settings(Settings(durable=False, fetch="offline", maintainer_every={"extract": 2}))
    install_skill(home, SEED_SKILL)
    do_extract(world, "extract-tidy-a")
    assert maintain_if_due(home, NOW) is None
    do_extract(world, "extract-tidy-b")
    done = maintain_if_due(home, NOW)
    assert done is not None and done.startswith("maintainer pass:") and "no proposer run" in done
    assert maintain_if_due(home, NOW) is None  # the pass reset the counts

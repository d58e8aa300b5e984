"""The skill gate (design §6.1, §13): keep only a strictly better skill, record every proposal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.loop import SEED_SKILL, skill_following_worker, with_extract
from tests.support.world import NOW, make_home
from verifier.errors import FormatError
from verifier.roles.liveskill import install_skill, live_skill_version, read_live_skill
from verifier.roles.opswiki import OpsWiki
from verifier.roles.skillgate import best_so_far, gate
from verifier.roles.validation import CommandWorker, LoadedSet, load_validation_set, replay
from verifier.store.home import Home

VERBATIM = "## Extract\n\nQuote every excerpt verbatim: copy it from `rw source text`, never retype it.\n"
FIVE = VERBATIM + "Write five findings when the source has them.\n"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = make_home(tmp_path / "home")
    install_skill(home, SEED_SKILL)
    return home


def impact(home: Home) -> str:
    return OpsWiki(home).read("skill-impact.md") or ""


def test_the_replay_scores_with_the_real_verifier() -> None:
    validation = load_validation_set()
    seed = [(r.kind, r.outcome, r.objects, r.code) for r in replay(validation, SEED_SKILL, skill_following_worker,
                                                                   now=NOW)]
    assert seed == [("extract", "rejected", 0, "excerpt_not_found"), ("extract", "rejected", 0, "excerpt_not_found"),
                    ("scout", "accepted", 1, None)]
    verbatim = replay(validation, with_extract(SEED_SKILL, VERBATIM), skill_following_worker, now=NOW)
    assert [(r.outcome, r.objects) for r in verbatim] == [("accepted", 3), ("accepted", 3), ("accepted", 1)]


def test_a_better_proposal_is_kept_and_bumps_the_skill_version(home: Home) -> None:
    before = live_skill_version(home)
    decision = gate(home, "extract", with_extract(SEED_SKILL, VERBATIM), worker=skill_following_worker, now=NOW)
    assert decision.outcome == "kept", decision
    assert decision.candidate is not None and decision.best is not None
    assert decision.candidate.value > decision.best
    assert live_skill_version(home) != before
    assert decision.skill_version == live_skill_version(home)
    assert "verbatim" in read_live_skill(home).decode()
    assert f"| {decision.proposal_id} | extract | v1 | {decision.candidate.value:.3f}" in impact(home)
    assert "| kept |" in impact(home)
    assert (home.root / "skill" / "history" / f"{before}.md").exists()


def test_a_worse_proposal_rolls_back_and_is_recorded_with_its_score(home: Home) -> None:
    gate(home, "extract", with_extract(SEED_SKILL, FIVE), worker=skill_following_worker, now=NOW)
    kept = live_skill_version(home)
    best = best_so_far(home, "v1")
    worse = with_extract(read_live_skill(home).decode(), "## Extract\n\nTidy each quote before you write it.\n")
    decision = gate(home, "extract", worse, worker=skill_following_worker, now=NOW)
    assert decision.outcome == "rolled back"
    assert decision.candidate is not None and best is not None and decision.candidate.value < best
    assert live_skill_version(home) == kept
    assert f"| {decision.proposal_id} | extract | v1 | {decision.candidate.value:.3f} | {best:.3f} | rolled back |" \
        in impact(home)
    assert "-Write five findings" in impact(home)  # the diff is recorded


def test_a_tie_rolls_back(home: Home) -> None:
    gate(home, "extract", with_extract(SEED_SKILL, VERBATIM), worker=skill_following_worker, now=NOW)
    kept = live_skill_version(home)
    same_score = with_extract(read_live_skill(home).decode(), VERBATIM + "Be careful.\n")
    decision = gate(home, "extract", same_score, worker=skill_following_worker, now=NOW)
    assert decision.candidate is not None and decision.candidate.value == decision.best
    assert decision.outcome == "rolled back"
    assert live_skill_version(home) == kept


def test_a_new_validation_set_version_resets_the_best(home: Home, tmp_path: Path) -> None:
    gate(home, "extract", with_extract(SEED_SKILL, FIVE), worker=skill_following_worker, now=NOW)
    old_best = best_so_far(home, "v1")
    assert old_best is not None
    v1 = load_validation_set()
    only_extract = json.loads((v1.folder / "validation.json").read_text())
    only_extract["version"] = "v2"
    only_extract["leaves"] = only_extract["leaves"][:1]
    v2 = LoadedSet(v1.spec.model_validate(only_extract), v1.folder)
    # On v2 the live skill scores 1 + 5 = 6; adding a note that changes nothing ties that fresh best.
    # Had v1's best carried over, any score above it would have decided instead.
    candidate = with_extract(read_live_skill(home).decode(), FIVE + "Check each figure twice.\n")
    decision = gate(home, "extract", candidate, worker=skill_following_worker, now=NOW, validation=v2)
    assert best_so_far(home, "v2") == decision.best == 6.0 != old_best
    assert decision.outcome == "rolled back"
    assert "| v2 |" in impact(home)


def test_a_changed_set_under_the_same_version_is_refused(home: Home) -> None:
    gate(home, "extract", with_extract(SEED_SKILL, VERBATIM), worker=skill_following_worker, now=NOW)
    v1 = load_validation_set()
    changed = json.loads((v1.folder / "validation.json").read_text())
    changed["leaves"] = changed["leaves"][:1]
    quietly_changed = LoadedSet(v1.spec.model_validate(changed), v1.folder)
    with pytest.raises(FormatError, match="changed but its version is still 'v1'"):
        gate(home, "extract", with_extract(SEED_SKILL, FIVE), worker=skill_following_worker, now=NOW,
             validation=quietly_changed)


def test_a_worker_that_fails_scores_its_leaves_as_not_accepted() -> None:
    failing = CommandWorker((sys.executable, "-c", "import sys; sys.stderr.write('no model'); sys.exit(3)"))
    results = replay(load_validation_set(), SEED_SKILL, failing, now=NOW)
    assert {(r.outcome, r.objects, r.code) for r in results} == {("rejected", 0, "worker_failed")}
    silent = CommandWorker((sys.executable, "-c", "print('{}')"))
    assert replay(load_validation_set(), SEED_SKILL, silent, now=NOW)[0].code == "worker_failed"

"""`rw eval` over a real project history (tests/support/eval_history.py): the numbers the
repository and its ledger give, the same numbers from `rw replay`'s rebuilt state, undisclosed
cost kept unknown in the use scores and `rw scores`, and the HTML report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.eval_history import AFTER_H1, PLAN_ID, build_history
from tests.support.world import SLUG, World, copied_world, make_world
from verifier.audits.replay import replay
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.evaluation.history import read_history
from verifier.evaluation.report import EvalOptions, evaluate
from verifier.pipeline.ledger import read_chain
from verifier.scoring.useindex import is_live
from verifier.state.layout import USE_INDEX, USE_INDEX_ROOT, USE_SCORES, USE_SHARD_ROOT
from verifier.state.view import Overlay
from verifier.store.home import Settings

assert COMMAND_MODULES  # the commands are registered on `cli`


@pytest.fixture(scope="module")
def built_history(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The history, built once for the module; each test gets a copy (`history`)."""
    world = make_world(tmp_path_factory.mktemp("eval-history"))
    outcomes = build_history(world)
    assert outcomes == {"extract-bad": "rejected finding_count", "extract-good": "accepted", "plan": "accepted",
                        "link-1": "accepted",
                        "link-2-stale": "rejected stale", "link-2": "accepted", "link-3": "accepted",
                        "skeptic-1": "accepted",
                        "review-1": "accepted", "resolve": "H1 resolved"}
    return world


@pytest.fixture
def history(built_history: World, tmp_path: Path) -> World:
    return copied_world(built_history, tmp_path / "copy")


def run(world: World, *args: str) -> tuple[int, str]:
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2027-07-02T00:00:00Z"}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_ledger_rows_name_model_skill_version_cost_and_objects(history: World) -> None:
    rows = {row.seq: row for _, row in read_chain(history.repo.view(history.tip()))}
    submitted = [row for row in rows.values() if row.action == "submit"]
    good = next(row for row in submitted if row.outcome == "accepted" and row.kind == "extract")
    assert (good.model, good.skill_version, good.cost.usd, good.cost.tokens) == ("m-large", "sk-1", 0.30, 1000)
    assert good.objects is not None and len(good.objects) == 4 and all(o.startswith("fnd_") for o in good.objects)
    bad = next(row for row in submitted if row.outcome == "rejected" and row.kind == "extract")
    assert bad.cost.usd is None and bad.objects is None  # not disclosed: unknown, and nothing was brought
    skeptic = next(row for row in submitted if row.kind == "skeptic")
    assert skeptic.model is None and skeptic.skill_version == "sk-2"


def test_undisclosed_cost_stays_unknown_in_the_scores(history: World) -> None:
    summary = json.loads(history.repo.view(history.tip()).read(USE_SCORES) or b"")
    op_a = summary["operators"]["op-a"]
    # op-a's accepted leaves disclosed 0.30 usd for 4 findings and 0.05 for a link (the rejected
    # attempt, which kept its cost back, is no accepted leaf).
    assert (op_a["usd"], op_a["usd_objects"], op_a["usd_per_accepted_object"]) == (0.35, 5, 0.07)
    code, out = run(history, "scores", SLUG)
    assert code == 0 and "op-a\t2\t" in out
    # op-c's leaves all disclosed; nobody's unknown cost is shown as 0.
    assert all(row["usd"] is None or row["usd"] > 0 for row in summary["operators"].values())


def test_rw_eval_reports_the_history(history: World) -> None:
    code, out = run(history, "eval", SLUG, "--json")
    assert code == 0, out
    document = json.loads(out)
    kinds = document["projects"][SLUG]["by_kind"]
    assert (kinds["extract"]["attempts"], kinds["extract"]["accepted"]) == (2, 1)
    assert kinds["extract"]["cost_per_accepted_object_usd"]["value"] == 0.075  # 0.30 usd / 4 findings
    assert kinds["extract"]["cost_per_accepted_object_usd"]["excluded"] == 1  # the undisclosed attempt
    assert kinds["extract"]["time_to_accept_s"]["value"] == 600.0  # leaf at NOW, accepted 10 minutes later
    assert (kinds["link"]["attempts"], kinds["link"]["accepted"]) == (4, 3)
    # H1 resolved true: the teams and quillmark links were right; northgate's (reviewed out) would have lost.
    assert kinds["link"]["resolution_accuracy"]["value"] == pytest.approx(2 / 3)
    project = document["projects"][SLUG]["project"]
    assert project["conflict_rate"]["value"] == pytest.approx(1 / 9) and project["conflict_rate"]["n"] == 9
    assert project["reviewer_catch_rate"]["value"] == 1.0 and project["reviewer_catch_rate"]["n"] == 1
    assert document["lift"]["overall"]["n"] == 1 and document["lift"]["overall"]["lift"] == 1.0
    assert document["twelve_month_signal"]["recruited_by_steward"] == ["op-a"]
    code, text = run(history, "eval", "--all")
    assert code == 0 and text.startswith("No kill signal yet: lift +1.000 across 1 resolved hypotheses")
    assert run(history, "eval")[0] == 2 and run(history, "eval", "nope")[0] == 2


def _numbers(view: Any) -> dict[str, Any]:
    return evaluate([read_history(view, SLUG)], EvalOptions(now=AFTER_H1))


def test_replay_rebuilt_state_gives_the_same_numbers(history: World) -> None:
    report = replay(history.repo)
    assert report.ok, report.differences
    tip = history.repo.view(history.tip())
    assert any(path.startswith("ledger/") for path in report.rebuilt)
    assert _numbers(Overlay(tip, report.rebuilt)) == _numbers(tip)
    # ...and the rebuild is what the numbers rest on: use scores emptied give other numbers.
    emptied = {path: None for path in report.rebuilt if path.startswith((f"{USE_SHARD_ROOT}/", f"{USE_INDEX_ROOT}/"))}
    assert _numbers(Overlay(tip, emptied)) != _numbers(tip)


def test_eval_numbers_from_the_use_index_equal_those_from_the_shards(history: World) -> None:
    tip = history.repo.view(history.tip())
    assert is_live(tip.read), "the landings kept a use index beside the shards"
    assert _numbers(Overlay(tip, {USE_INDEX: None})) == _numbers(tip)
    # ...and without its marker the index is not read: a damaged index file changes nothing.
    index_files = [f"{USE_INDEX_ROOT}/{name}" for name in tip.list_dir(USE_INDEX_ROOT)]
    assert index_files
    emptied: dict[str, bytes | None] = dict.fromkeys(index_files, b"{}\n")
    assert _numbers(Overlay(tip, emptied)) != _numbers(tip)  # under its marker, the index is what is read
    assert _numbers(Overlay(tip, {**emptied, USE_INDEX: None})) == _numbers(tip)


def test_html_report_is_self_contained_with_its_plots(history: World, tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    code, _ = run(history, "eval", "--all", "--html", str(target))
    assert code == 0
    page = target.read_text()
    assert page.count("<svg") == 4 and "No kill signal yet" in page and "<script" not in page
    assert " src=" not in page and "<link" not in page and "@import" not in page  # nothing fetched from elsewhere
    again = tmp_path / "again.html"
    run(history, "eval", "--all", "--html", str(again))
    assert again.read_bytes() == target.read_bytes()  # reproducible: no dates or random ids


# --- the controlled arm, on recorded workers ------------------------------------------------------


def _arm_settings(world: World, recorded: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(recorded))
    worker = [sys.executable, str(Path(__file__).parents[1] / "support" / "arm_worker.py"), str(path)]
    settings = world.home.settings.model_dump()
    world.home.save_settings(Settings.model_validate({**settings, "eval_arm": {"single": worker, "swarm": worker}}))


@pytest.mark.slow  # real arm worker processes
def test_controlled_arm_reports_both_arms_the_difference_and_n(history: World, tmp_path: Path) -> None:
    findings = sorted(path.rsplit("/", 1)[1][:-5] for path in history.repo.view(history.tip()).walk("findings"))
    single = [{"leaf_id": "arm-link-1", "hypothesis": "H1", "links": [[findings[0], "supports"]]}]
    swarm = [{"leaf_id": "arm-link-1", "hypothesis": "H1", "links": [[findings[0], "supports"]]},
             {"leaf_id": "arm-link-2", "hypothesis": "H1",
              "links": [[findings[1], "supports"], [findings[2], "contradicts"]]}]
    _arm_settings(history, {"single": single, "swarm": swarm}, tmp_path)
    code, out = run(history, "eval-arm", SLUG, "--plan", PLAN_ID, "--json")
    assert code == 0, out
    report = json.loads(out)
    assert report["unfinished"] == [] and (report["plans"], report["n"]) == (1, 1)
    # A link's own use starts at the weight it lends its finding: 1.0 across operators.
    assert report["runs"] == [
        {"plan": PLAN_ID, "arm": "single", "use_score": 1.0, "resolution_credit": 1.0},
        {"plan": PLAN_ID, "arm": "swarm", "use_score": 3.0, "resolution_credit": 1.0},  # +1 +1 -1 (H1 was true)
    ]
    assert report["use_score"]["difference"]["value"] == 2.0 and report["use_score"]["difference"]["n"] == 1
    assert report["resolution_credit"]["difference"]["value"] == 0.0
    code, text = run(history, "eval-arm", SLUG, "--plan", PLAN_ID)
    assert "use_score: single 1.0, swarm 3.0, swarm - single 2.0 n=1" in text
    # The source project is untouched: the arms ran in scratch copies.
    assert not any("arm-link" in path for path in history.repo.view(history.tip()).walk("leaves"))


@pytest.mark.slow  # real arm worker processes
def test_controlled_arm_names_what_did_not_finish(history: World, tmp_path: Path) -> None:
    _arm_settings(history, {"single": [], "swarm": {"fail": True}}, tmp_path)
    code, out = run(history, "eval-arm", SLUG, "--plan", PLAN_ID, "--json")
    report = json.loads(out)
    assert code == 0 and report["n"] == 0
    assert report["unfinished"] == [f"{PLAN_ID} swarm: the worker command exited 3: this recorded run failed"]
    assert run(history, "eval-arm", SLUG, "--plan", "no-such-plan")[0] == 2

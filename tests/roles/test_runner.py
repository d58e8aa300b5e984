"""`rw runner`: wakes each project's Planner on its cadence, and runs a worker command per claimed
leaf with the leaf, server and token in its environment, a wall-clock limit and its output kept."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support.world import FIXTURES, make_home
from verifier.roles.planner import local_commons
from verifier.roles.runner import WorkerConfig, tick
from verifier.state.project import rows_from
from verifier.store.home import Home
from verifier.writes.project import init_project

SLUG = "grid-storage"
NOW = datetime.now(UTC).replace(microsecond=0)  # claims and leaf expiry are compared with real time here


def seeded(tmp_path: Path) -> tuple[Home, str]:
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / f"seed-{SLUG}")
    return home, home.identities.add("worker", "op-w", "agent", NOW)


def test_a_tick_wakes_a_due_planner_once_per_cadence(tmp_path: Path) -> None:
    home, _token = seeded(tmp_path)
    commons = local_commons(home)
    assert tick(home, [SLUG], NOW, commons).woke[SLUG].startswith("plan landed with 3 leaves")
    assert tick(home, [SLUG], NOW + timedelta(minutes=5), commons).woke[SLUG].startswith("not due")
    assert tick(home, [SLUG], NOW + timedelta(minutes=25), commons).woke[SLUG] == "nothing new"


def test_workers_get_the_leaf_in_their_environment_and_their_output_is_kept(tmp_path: Path) -> None:
    home, token = seeded(tmp_path)
    commons = local_commons(home)
    script = ("import json, os; print(json.dumps({k: os.environ[k] for k in "
              "('RW_PROJECT', 'RW_LEAF', 'RW_SERVER', 'RW_TOKEN')}))")
    config = WorkerConfig(f"{sys.executable} -c \"{script}\"", token, workers=2, limit_s=30)
    report = tick(home, [SLUG], NOW, commons, config)
    assert len(report.runs) == 2 and all(run.exit_code == 0 for run in report.runs)
    claims = commons.claims(SLUG, now=NOW)
    for run in report.runs:
        seen = json.loads(run.log.read_text())
        assert seen == {"RW_PROJECT": SLUG, "RW_LEAF": run.leaf_id, "RW_SERVER": "", "RW_TOKEN": token}
        assert claims[run.leaf_id].agent == "worker"  # claimed before the worker started
    again = tick(home, [SLUG], NOW + timedelta(seconds=10), commons, config)
    assert len(again.runs) == 1  # two of the three leaves are claimed: only one is left to run
    assert again.runs[0].leaf_id not in {run.leaf_id for run in report.runs}


def test_a_worker_past_its_limit_is_stopped(tmp_path: Path) -> None:
    home, token = seeded(tmp_path)
    config = WorkerConfig(f"{sys.executable} -c \"import time; print('working', flush=True); time.sleep(60)\"",
                          token, workers=1, limit_s=1)
    report = tick(home, [SLUG], NOW, local_commons(home), config)
    assert [run.exit_code for run in report.runs] == [None]
    assert report.runs[0].seconds < 10
    text = report.runs[0].log.read_text()
    assert "working" in text and "stopped at the wall-clock limit" in text


def test_a_worker_that_exits_non_zero_is_a_crash_row_and_its_leaf_is_claimable_again(tmp_path: Path) -> None:
    home, token = seeded(tmp_path)
    commons = local_commons(home)
    config = WorkerConfig(f"{sys.executable} -c \"import sys; sys.exit(3)\"", token, workers=1, limit_s=30)
    report = tick(home, [SLUG], NOW, commons, config)
    [run] = report.runs
    assert run.exit_code == 3 and run.crash_seq is not None
    repo = home.project(SLUG)
    row = rows_from(repo.view(repo.tip()), run.crash_seq)[0]
    assert (row.outcome, row.reason_code, row.leaf_id, row.actor) == ("crash", "agent_crash", run.leaf_id, "worker")
    assert row.description.startswith("worker exited with code 3")
    assert run.leaf_id not in commons.claims(SLUG, now=NOW)  # released: back in the pool at once
    again = tick(home, [SLUG], NOW + timedelta(seconds=5), commons, config)
    assert run.leaf_id in {r.leaf_id for r in again.runs}


def test_a_worker_stopped_at_its_limit_is_a_crash_row_naming_the_limit(tmp_path: Path) -> None:
    home, token = seeded(tmp_path)
    config = WorkerConfig(f"{sys.executable} -c \"import time; time.sleep(60)\"", token, workers=1, limit_s=1)
    [run] = tick(home, [SLUG], NOW, local_commons(home), config).runs
    assert run.exit_code is None and run.crash_seq is not None
    repo = home.project(SLUG)
    row = rows_from(repo.view(repo.tip()), run.crash_seq)[0]
    assert row.outcome == "crash" and "stopped at the wall-clock limit of 1s" in row.description

"""A process killed at any durable step of landing a group of several leaves the project
consistent: before the branch moves nothing of the group is kept, after it the whole group is,
and the next writer finds a history it can prove (branch, ledger and anchor agree)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.service_harness import distinct_findings
from tests.support.world import NOW, ROOT, SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.pipeline.ledger import ledger_head, read_chain
from verifier.pipeline.writer import ProjectWriter

pytestmark = pytest.mark.slow  # a process per step, killed

# (step, which time it is reached, whether the group had landed when the process died)
KILLS = [("contribution", 2, False), ("ledger", 3, False), ("branch", 1, False), ("anchor", 1, True)]


@pytest.mark.parametrize(("step", "nth", "landed"), KILLS)
def test_kill_during_a_group_keeps_all_of_it_or_none(world: World, tmp_path: Path, step: str, nth: int,
                                                      landed: bool) -> None:
    leaves = ["kill-a", "kill-b", "kill-c"]
    for leaf_id in leaves:
        world.leaf(leaf_id)
    submissions = [world.creation(leaf_id, distinct_findings(world.agent, leaf_id, 3 * number))
                   for number, leaf_id in enumerate(leaves)]
    pickled = tmp_path / "submissions.pickle"
    pickled.write_bytes(pickle.dumps(submissions))
    tip = world.tip()
    done = subprocess.run([sys.executable, "-m", "tests.support.group_kill", str(world.home.root), str(pickled),
                           step, str(nth)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 137, done.stderr

    with ProjectWriter.open(world.home, SLUG):  # the next writer cleans up and proves the history
        pass
    repo = world.home.project(SLUG)
    anchor = world.home.read_anchor(SLUG)
    assert anchor is not None and anchor.commit == repo.tip()
    assert (ledger_head(repo.view(repo.tip()))[0] - 1) == anchor.seq
    assert verify_ledger(repo, anchor).ok
    rows = [row for _, row in read_chain(repo.view(repo.tip())) if row.action == "submit" and row.leaf_id in leaves]
    if landed:
        assert [(row.leaf_id, row.outcome) for row in rows] == [(leaf, "accepted") for leaf in leaves]
    else:
        assert rows == [] and repo.tip() == tip
    outcomes = [world.submit(submission, now=NOW) for submission in submissions]
    expected = "rejected" if landed else "accepted"  # landed: each leaf is closed; else each lands now
    assert [verdict.outcome for verdict in outcomes] == [expected] * 3

"""An agent's first hour on a project a steward just made with `rw init` alone (issue 23 point 7),
and the time to accept of its Planner leaves (point 3), through the real paths: `rw` processes
and a real `rw serve` on loopback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent, sentences
from tests.support.first_hour import agent_token, initialised, serving

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

SEEDS = [("world-model-eval", "demo-project"), ("open-weights", "seed-open-weights"),
         ("grid-storage", "seed-grid-storage"), ("edge-inference", "seed-edge-inference")]


def _extract(agent: OutsideAgent, work: Path) -> None:
    text = next((work / ".rw" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    for number, sentence in enumerate(sentences(text, 3)):
        agent.rw("new", "finding", "--excerpt", sentence, "--statement", f"Claim {number} of the source.",
                 "--limitation", "One source; not audited.", cwd=work)
    agent.rw("trace", "add", "reasoning", "Three sentences that carry the claims, quoted exactly.", cwd=work)


@pytest.mark.parametrize(("slug", "template"), SEEDS)
def test_rw_init_alone_leaves_a_warm_pool_that_work_warm_takes_at_once(tmp_path: Path, slug: str,
                                                                         template: str) -> None:
    steward = initialised(tmp_path, slug, template)
    assert "first Planner wake" in steward.init_out and "warm)" in steward.init_out
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        board = agent.rw("board", slug).out.splitlines()
        assert board[0].startswith("LEAF\tKIND\tSTATE")
        assert any("extract (warm)" in line for line in board[1:]), board
        made = agent.rw("work", slug, "--warm")
        folder = Path(made.out.strip())  # stdout is the folder alone
        assert made.out.count("\n") == 1 and folder.is_dir() and (folder / ".rw" / "work.json").exists()
        payload = json.loads((folder / ".rw" / "payload.json").read_text(encoding="utf-8"))
        assert payload["contract"]["warm"] is True  # a warm leaf, not the silent fallback to any extract


def test_an_empty_board_says_so_and_what_to_do(tmp_path: Path) -> None:
    steward = initialised(tmp_path, "world-model-eval", "demo-project", no_wake=True)
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        empty = agent.rw("board", "world-model-eval")
        assert empty.out.strip() == ("world-model-eval: no open leaves; ask the steward to run "
                                     "`rw planner wake world-model-eval`")
        assert agent.rw("board", "world-model-eval", "--state", "accepted").out.strip() == \
            "world-model-eval: no accepted leaves"


def test_the_board_shows_each_leafs_title_and_input(tmp_path: Path) -> None:
    steward = initialised(tmp_path, "world-model-eval", "demo-project")
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        leaves = json.loads(agent.rw("board", "world-model-eval", "--json").out)["leaves"]
        lines = agent.rw("board", "world-model-eval").out.splitlines()[1:]
    assert len(lines) == len(leaves) > 0
    for leaf, line in zip(leaves, lines, strict=True):
        columns = line.split("\t")
        assert columns[0] == leaf["leaf_id"]
        assert columns[4] == leaf["title"] and columns[5] == leaf["inputs"]["source_id"]


def test_two_working_folders_side_by_side_each_printed_by_rw_work(tmp_path: Path) -> None:
    steward = initialised(tmp_path, "world-model-eval", "demo-project")
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        first = Path(agent.rw("work", "world-model-eval", "--warm").out.strip())
        second = Path(agent.rw("work", "world-model-eval", "--warm").out.strip())
    assert first != second and first.is_dir() and second.is_dir()  # `cd extract-*` would match two


def test_eval_reports_time_to_accept_for_planner_leaves_from_the_claim_or_the_opening(tmp_path: Path) -> None:
    steward = initialised(tmp_path, "world-model-eval", "demo-project")
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        claimed = Path(agent.rw("work", "world-model-eval", "--warm").out.strip())
        _extract(agent, claimed)
        assert agent.rw("submit", cwd=claimed).out.startswith("ACCEPTED")
        unclaimed = Path(agent.rw("work", "world-model-eval", "--warm").out.strip())
        agent.rw("release", "world-model-eval", unclaimed.name)  # submitted with no claim: timed from its opening
        _extract(agent, unclaimed)
        assert agent.rw("submit", cwd=unclaimed).out.startswith("ACCEPTED")
    rows = [json.loads(line) for line in steward.rw("ledger", "world-model-eval", "--json").stdout.splitlines()]
    submits = {row["leaf_id"]: row for row in rows if row["action"] == "submit"}
    assert "claimed_at" in submits[claimed.name] and "claimed_at" not in submits[unclaimed.name]
    assert all(row["action"] != "leaf" for row in rows)  # Planner leaves: no `leaf` row to time from
    document = json.loads(steward.rw("eval", "world-model-eval", "--json").stdout)
    extract = document["projects"]["world-model-eval"]["by_kind"]["extract"]
    timed = extract["time_to_accept_s"]
    assert timed["n"] == 2 and timed["from_claim"] == 1 and timed["from_opening"] == 1, timed
    assert timed["value"] is not None and timed["excluded"] == 0
    crossed = document["projects"]["world-model-eval"]["by_kind_and_model"]["extract"]
    assert sum(cell["attempts"] for cell in crossed.values()) == 2


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True).stdout


def test_rw_check_and_submit_change_nothing_git_shows_the_agent(tmp_path: Path) -> None:
    steward = initialised(tmp_path, "world-model-eval", "demo-project")
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        work = Path(agent.rw("work", "world-model-eval", "--warm").out.strip())
        _extract(agent, work)
        (work / "README.md").write_text("an edit the agent will undo\n", encoding="utf-8")
        before = _git(work, "status", "--porcelain")
        assert " M README.md" in before and "?? findings/" in before
        agent.rw("check", cwd=work, ok=False)  # the README edit is outside the leaf's write set
        assert _git(work, "status", "--porcelain") == before  # nothing staged behind the agent's back
        _git(work, "checkout", "README.md")  # so this undoes the edit
        assert " M README.md" not in _git(work, "status", "--porcelain")
        assert agent.rw("check", cwd=work).out.startswith("OK")
        after_check = _git(work, "status", "--porcelain")
        assert agent.rw("submit", cwd=work).out.startswith("ACCEPTED")
        assert _git(work, "status", "--porcelain") == after_check
        again = agent.rw("submit", cwd=work)  # the same bundle: the same attempt, and it says so
        assert again.out.startswith("ACCEPTED")
        rows = [json.loads(line) for line in steward.rw("ledger", "world-model-eval", "--json").stdout.splitlines()]
        seq = next(row["seq"] for row in rows if row["action"] == "submit")
        assert f"same attempt as #{seq}" in again.err
        assert sum(1 for row in rows if row["action"] == "submit") == 1

"""Disclosure on the skill's path, end to end (issue 24 point 2): an agent imports its CLI's
transcript and submits with a flag; the ledger row carries model, tokens, usd and duration; the
scores and the evaluation read them; and a loop whose disclosed usd passed its budget plans no
further leaves and says so. Real `rw` processes and a real `rw serve` on loopback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent, sentences
from tests.support.first_hour import ROOT, agent_token, initialised, serving
from tests.support.transcripts import fixture

pytestmark = pytest.mark.slow

SLUG = "world-model-eval"


def _cheap_project(tmp_path: Path, usd: float) -> Path:
    """The demo project with budget_per_loop.usd set to `usd`."""
    folder = tmp_path / "template"
    shutil.copytree(ROOT / "fixtures" / "demo-project", folder)
    project = folder / "PROJECT.md"
    text = project.read_text(encoding="utf-8")
    assert "usd: 20," in text
    project.write_text(text.replace("usd: 20,", f"usd: {usd},"), encoding="utf-8")
    return folder


def _extract(agent: OutsideAgent, work: Path) -> None:
    text = next((work / ".rw" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    for number, sentence in enumerate(sentences(text, 3)):
        agent.rw("new", "finding", "--excerpt", sentence, "--statement", f"Claim {number} of the source.",
                 "--limitation", "One source; not audited.", cwd=work)


def test_a_disclosed_run_lands_in_the_ledger_the_scores_and_eval_and_spends_the_loops_budget(tmp_path: Path) -> None:
    steward = initialised(tmp_path, SLUG, _cheap_project(tmp_path, 0.05))
    with serving(steward.home) as server:
        agent = OutsideAgent(tmp_path, server.url, agent_token(steward.home))
        work = Path(agent.rw("work", SLUG, "--warm").out.strip())
        _extract(agent, work)
        agent.rw("trace", "import", "--from", "claude-stream-json", str(fixture("claude-stream-extract")), cwd=work)
        assert agent.rw("submit", "--duration", "60s", cwd=work).out.startswith("ACCEPTED")
    rows = [json.loads(line) for line in steward.rw("ledger", SLUG, "--json").stdout.splitlines()]
    row = next(r for r in rows if r["action"] == "submit")
    assert row["model"] == "claude-sonnet-4-5-20250929"
    assert row["cost"] == {"tokens": 83798 + 860, "usd": 0.0831275, "duration_s": 60.0}  # the flag won on duration
    person = {"RW_TOKEN": agent_token(steward.home, "ericxtang", human=True)}  # the demo project's steward
    trace = json.loads(steward.rw("trace", "show", row["trace_id"], "--json", env=person).stdout)
    manifest = trace["manifest"]
    assert (manifest["tokens_in"], manifest["tokens_out"], manifest["tokens_cached"]) == (83798, 860, 72304)

    scores = json.loads(steward.rw("scores", SLUG, "--json").stdout)
    operator = scores["operators"]["first-timer-op"]
    assert (operator["usd"], operator["usd_objects"], operator["usd_undisclosed"]) == (0.0831275, 3, 0)
    assert operator["usd_per_accepted_object"] == pytest.approx(0.0831275 / 3, abs=1e-6)
    document = json.loads(steward.rw("eval", SLUG, "--json").stdout)
    crossed = document["projects"][SLUG]["by_kind_and_model"]["extract"]
    assert "claude-sonnet-4-5-20250929" in crossed, crossed
    cost = document["projects"][SLUG]["by_kind"]["extract"]["cost_per_accepted_object_usd"]
    assert cost["value"] == pytest.approx(0.0831275 / 3, abs=1e-6), cost

    woke = steward.rw("planner", "wake", SLUG, "--force")
    assert "Budget: budget_per_loop.usd is 0.05" in woke.stdout and "no further leaves this loop" in woke.stdout
    planned = json.loads(steward.rw("planner", "wake", SLUG, "--force", "--json").stdout)
    assert planned["leaves"] == []
    marker_file = tmp_path / "worker-ran"
    ran = steward.rw("runner", "--once", "--worker-command", f"touch {marker_file}", "--json", "--project", SLUG,
                     env={"RW_WORKER_TOKEN": agent_token(steward.home, "worker")})
    report = json.loads(ran.stdout)
    assert "no workers: budget_per_loop.usd is 0.05" in report["woke"][SLUG] and report["runs"] == []
    assert not marker_file.exists()  # the open warm leaves were left alone

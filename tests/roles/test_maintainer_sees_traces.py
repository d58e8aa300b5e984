"""The Maintainer reads the traces it writes about (issue 23 point 5): its diagnosis request
carries the failing trace's last events, bounded, and its pages name the tool calls that mattered
by the command they ran (`rw work`, `rw check`), never a generic `rw -> rw`."""

from __future__ import annotations

from datetime import timedelta

from tests.support.world import NOW, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.workspace import creation_patch
from verifier.constants import DIAGNOSE_EVENT_CHARS, DIAGNOSE_EVENTS_MAX
from verifier.pipeline.submit import Submission, Verdict
from verifier.roles.maintainer import pending_diagnoses, run_pass
from verifier.roles.opswiki import OpsWiki


def calls(leaf_id: str) -> list[dict[str, object]]:
    """The agent's steps, as the agent kit and a Claude transcript record them."""
    return [{"tool": "rw", "command": f"rw work {SLUG} {leaf_id}"}, {"tool": "rw", "command": "rw source text"},
            {"tool": "Bash", "id": "t1", "input": {"command": "rw check --json"}},
            {"tool": "rw", "command": "rw new finding"}]


def extract_with_trace(world: World, leaf_id: str, *, retyped: bool = False, padding: int = 0) -> Verdict:
    """An extract leaf done as the agent kit records it: each step a tool call naming its command;
    `retyped` tidies one excerpt (the verifier rejects it), `padding` long reasoning events come
    first, to make a trace bigger than a diagnosis may carry."""
    world.leaf(leaf_id)
    files = world.findings(leaf_id)
    if retyped:
        first = sorted(files)[0]
        files[first] = files[first].replace(b"robotics teams", b"robotics-teams", 1)
        assert b"robotics-teams" in files[first]
    patch = creation_patch(files)
    trace = TraceRecorder()
    start = NOW - timedelta(seconds=padding + 20)
    for number in range(padding):
        trace.add(start + timedelta(seconds=number), "reasoning", f"step {number}: " + "thinking " * 80)
    for number, call in enumerate(calls(leaf_id)):
        trace.add(NOW - timedelta(seconds=10 - number), "tool_call", call)
        trace.add(NOW - timedelta(seconds=9 - number), "tool_result", "ok")
    trace.add(NOW - timedelta(seconds=1), "final", f"Wrote {len(files)} findings.")
    bundle = trace.bundle(leaf_id=leaf_id, agent=world.agent.handle, operator=world.agent.operator,
                          base_revision=world.tip(), patch=patch, level="L1")
    return world.submit(Submission(SLUG, leaf_id, patch, bundle, world.agent.token))


def test_a_pass_names_the_tool_calls_that_mattered_and_bounds_the_failing_traces_events(world: World) -> None:
    accepted = extract_with_trace(world, "extract-good-1")
    assert accepted.outcome == "accepted", accepted.line()
    rejected = extract_with_trace(world, "extract-bad-1", retyped=True, padding=DIAGNOSE_EVENTS_MAX * 2)
    assert rejected.outcome == "rejected", rejected.line()

    [request] = pending_diagnoses(world.home)
    assert request.evidence == [rejected.trace_id]
    assert len(request.events) == DIAGNOSE_EVENTS_MAX + 1  # the last events, and a line saying how many were left
    assert request.events[0].endswith("earlier events left out)")
    assert all(len(line) <= DIAGNOSE_EVENT_CHARS for line in request.events)
    assert '"rw check --json"' in " ".join(request.events) and '"final"' in request.events[-1]

    report = run_pass(world.home, now=NOW)
    wiki = OpsWiki(world.home)
    workflow = wiki.read("patterns/extract/accepted-workflow.md") or ""
    assert "patterns/extract/accepted-workflow.md" in report.written
    assert "## Tool calls that mattered" in workflow
    for call in ("rw work", "rw source text", "rw check", "rw new finding"):
        assert f"- `{call}`: called in 1 of 1 accepted traces" in workflow, workflow
    assert "`rw work -> rw source text -> rw check -> rw new finding`" in workflow
    assert "rw -> rw" not in workflow and SLUG not in workflow.split("## Evidence")[0]  # no arguments, no ids
    failure = next(path for path in report.written if "after-rw-new-finding" in path)
    assert "`rw new finding`" in (wiki.read(failure) or "")

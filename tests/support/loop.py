"""Helpers for the improvement-loop tests: a skill-following scripted worker and a seeded skill.

The worker stands in for an outside agent (as verifier/agentkit/scripted.py does) and does what
the skill it was handed says, by two rules a test can steer:

- an extract section that says "verbatim" makes it quote the source exactly; without that word it
  "tidies" each quote (a changed word), which the verifier rejects with `excerpt_not_found`;
- an extract section that says "five findings" makes it write five findings, otherwise three.

Scout leaves: it fetches the first hinted URL and stages that source. Its trace manifest carries
the skill_version of the skill text it was given.
"""

from __future__ import annotations

import re
import urllib.request
from datetime import date, datetime, timedelta
from pathlib import Path

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file, source_files
from verifier.agentkit.scripted import ScriptedAgent
from verifier.agentkit.workspace import creation_patch
from verifier.formats.skill import SKILL_KINDS, replace_section, sections, skill_version
from verifier.roles.validation import WorkerResult, WorkerTask
from verifier.store.home import Home
from verifier.wiring import open_home

_SENTENCE_RE = re.compile(r"[A-Z][^.!?\n]{40,260}[.!?]")

SEED_SKILL = "---\nname: researchwiki\n---\n\n# ResearchWiki (test seed)\n\n" + "".join(
    f"<!-- rw-skill:begin {kind} -->\n## {kind.title()}\n\nDo the leaf.\n<!-- rw-skill:end {kind} -->\n\n"
    for kind in SKILL_KINDS)


def extract_section(skill: str) -> str:
    return sections(skill)["extract"].body


def _findings(text: str, source_id: str, leaf_id: str, skill: str) -> dict[str, bytes]:
    section = extract_section(skill)
    wanted = 5 if "five findings" in section else 3
    files: dict[str, bytes] = {}
    for sentence in _SENTENCE_RE.findall(text)[:wanted]:
        excerpt = sentence if "verbatim" in section else sentence.replace(" the ", " a ", 1).replace(" of ", " in ", 1)
        location = None if excerpt == sentence else (0, len(excerpt))
        path, data = finding_file(source_id=source_id, source_text=text, excerpt=excerpt,
                                  statement=f"The source states: {sentence[:120]}",
                                  limitation="One source; not independently checked.", leaf_id=leaf_id,
                                  location=location)
        files[path] = data
    return files


def work(home: Home, *, project: str, leaf_id: str, kind: str, base: str, inputs: dict[str, object],
         hints: list[str], skill: str, agent: str, operator: str, now: datetime) -> WorkerResult:
    """Do one leaf as the skill says; returns the patch and the trace bundle."""
    trace = TraceRecorder()
    clock = now - timedelta(seconds=20)
    trace.add(clock, "reasoning", f"Leaf {leaf_id} ({kind}); following the skill's {kind} section.")
    if kind == "extract":
        source_id = str(inputs["source_id"])
        trace.add(clock, "tool_call", {"tool": "rw source text", "args": [project, source_id]})
        text = ScriptedAgent(home, agent, operator, "").source_text(project, source_id, base)
        trace.add(clock, "tool_result", {"chars": len(text)})
        files = _findings(text, source_id, leaf_id, skill)
    else:
        trace.add(clock, "tool_call", {"tool": "fetch", "url": hints[0]})
        with urllib.request.urlopen(hints[0], timeout=10) as response:
            data = response.read()
        trace.add(clock, "tool_result", {"bytes": len(data)})
        files = source_files(url=hints[0], data=data, media_type="text/plain", fetched_by=agent, retrieved_at=now,
                             language="en", rights="public", published=date(2026, 2, 1), title="Pinned source",
                             leaf_id=leaf_id)
    trace.add(clock, "tool_call", {"tool": "write", "files": sorted(files)})
    trace.add(clock, "tool_result", "ok")
    trace.add(now, "final", f"Wrote {len(files)} files for {leaf_id}.")
    patch = creation_patch(files)
    bundle = trace.bundle(leaf_id=leaf_id, agent=agent, operator=operator, base_revision=base, patch=patch,
                          level="L2", skill_version=skill_version(skill.encode("utf-8")))
    return WorkerResult(patch, bundle)


def skill_following_worker(task: WorkerTask) -> WorkerResult:
    """The platform-run worker of the validation replay, scripted (no model)."""
    return work(open_home(Path(task.home)), project=task.project, leaf_id=task.leaf_id, kind=task.kind,
                base=task.base_revision, inputs=task.inputs, hints=task.hints, skill=task.skill, agent=task.agent,
                operator=task.operator, now=datetime.fromisoformat(task.now.replace("Z", "+00:00")))


def with_extract(skill: str, body: str) -> str:
    """`skill` with the extract section's body replaced (for building candidates in tests)."""
    return replace_section(skill, "extract", body)

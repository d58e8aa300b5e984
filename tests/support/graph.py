"""Helpers for the graph-meaning tests: land findings, links and reviews through the real
pipeline, and read a project's state (files, scores) at its tip."""

from __future__ import annotations

import difflib
import json
from typing import Any

from tests.support.world import SLUG, World
from verifier.agentkit.objects import link_file, review_file
from verifier.agentkit.scripted import ScriptedAgent
from verifier.agentkit.workspace import creation_patch
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.submit import Submission, Verdict
from verifier.state.layout import USE_SCORES, report_path, use_shard_path


def land_findings(world: World, leaf_id: str = "extract-1") -> tuple[Verdict, list[str]]:
    """agent-a extracts the fixture note's findings; returns the verdict and the finding ids."""
    world.leaf(leaf_id)
    verdict = world.submit(world.extract(leaf_id))
    assert verdict.outcome == "accepted", verdict.line()
    return verdict, sorted(path.rsplit("/", 1)[1][:-5] for path in world.findings(leaf_id))


def land_link(world: World, leaf_id: str, finding_id: str, agent: ScriptedAgent | None = None,
              stance: str = "contradicts") -> tuple[Verdict, str]:
    """One link leaf on H1 revision 1 with one link; returns the verdict and the link's path."""
    world.leaf(leaf_id, "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    path, data = link_file(finding_id=finding_id, hypothesis_id="H1", revision=1, stance=stance,
                           rationale="The figures point the other way.", leaf_kind="link", leaf_id=leaf_id)
    verdict = world.submit(world.creation(leaf_id, {path: data}, agent=agent))
    return verdict, path


def land_review(world: World, leaf_id: str, object_path: str, decision: str, agent: ScriptedAgent | None = None,
                amendment: dict[str, str] | None = None) -> tuple[Verdict, str]:
    """One review leaf of `object_path`; returns the verdict and the review's path."""
    world.leaf(leaf_id, "review", source_id=None, object_path=object_path)
    object_id = object_path.rsplit("/", 1)[1].rsplit(".", 1)[0]
    path, data = review_file(object_path=object_path, object_id=object_id, decision=decision,
                             reason="Read against the source text.", leaf_id=leaf_id, amendment=amendment)
    verdict = world.submit(world.creation(leaf_id, {path: data}, agent=agent))
    return verdict, path


def read(world: World, path: str) -> bytes | None:
    data: bytes | None = world.repo.view(world.tip()).read(path)
    return data


def entry(world: World, object_id: str) -> dict[str, Any]:
    shard = json.loads(read(world, use_shard_path(object_id)) or b"{}")
    found: dict[str, Any] = shard[object_id]
    return found


def hypothesis_use(world: World, hypothesis_id: str = "H1") -> float:
    summary = json.loads(read(world, USE_SCORES) or b"{}")
    return float(summary.get("hypotheses", {}).get(hypothesis_id, 0.0))


def state(world: World) -> dict[str, bytes | None]:
    """Every file at the tip except the ledger (which grows by one row a landing)."""
    view = world.repo.view(world.tip())
    return {path: view.read(path) for path in sorted(view.walk()) if not path.startswith("ledger/")}


def report_edit(world: World, token: str, report_id: str, cites: list[str]) -> Submission:
    """A person's edit adding one report that cites `cites`."""
    front = dump_yaml({"report_id": report_id, "title": "Who pays first", "introduced": [], "cites": cites,
                       "author": "alice", "created_at": "2026-11-30T12:00:00Z"}).decode()
    document = f"---\n{front}---\nVerification layers sell first.\n".encode()
    return Submission(SLUG, None, creation_patch({report_path(report_id): document}), {}, token)


def edit_file(world: World, token: str, path: str, new: str) -> Verdict:
    """A person's edit of one existing file, as the diff their clone would make."""
    old = (read(world, path) or b"").decode()
    diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}",
                                f"b/{path}", n=3)
    patch = f"diff --git a/{path} b/{path}\n{''.join(diff)}".encode()
    return world.submit(Submission(SLUG, None, patch, {}, token))


def hold_links(world: World, token: str) -> None:
    """A person's edit of PROJECT.md: links are held for a person from now on."""
    old = (read(world, "PROJECT.md") or b"").decode()
    assert "holds: []" in old
    verdict = edit_file(world, token, "PROJECT.md", old.replace("holds: []", "holds: [ links ]"))
    assert verdict.outcome == "accepted", verdict.line()

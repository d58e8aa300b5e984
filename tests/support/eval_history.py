"""A real project history for the evaluation: submissions through the verifier by three agents
with disclosed (and undisclosed) models, skill versions and costs, a stale rejection, a rejecting
review, and H1 resolved by the Resolver against a sealed baseline, with the model's answers
recorded the way fixtures/resolution records them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from tests.support.world import GUIDE_ID, NOTE_ID, NOW, PDF_ID, SLUG, World
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import link_file, note_file, review_file
from verifier.agentkit.scripted import ScriptedAgent
from verifier.agentkit.workspace import creation_patch
from verifier.formats.yamlout import dump_yaml
from verifier.model.adapter import Exchange, RecordedBackend, recording_path
from verifier.pipeline.submit import Submission
from verifier.roles.resolver import resolve_project
from verifier.seal import read_private_key, resolver_dir, write_keypair
from verifier.seal.keys import PRIVATE_PEM
from verifier.state.layout import link_path, plan_path
from verifier.store.home import Settings
from verifier.writes.baseline import seal_missing

AFTER_H1 = datetime(2027, 7, 1, 6, 0, tzinfo=UTC)  # the day after H1's check date
ANSWERS = {
    "baseline:H1": {"confidence": 0.6, "kind": "baseline", "model": "frontier-1", "verdict": "false"},
    "baseline:H3": {"confidence": 0.6, "kind": "baseline", "model": "frontier-1", "verdict": "true"},
    "resolve:H1": {"confidence": 0.9, "kind": "resolve", "model": "frontier-1", "verdict": "true",
                   "rationale": "The survey counted more teams paying for verification layers."},
}


class AnswerBook:
    """The recorded backend, its recordings written from ANSWERS as requests arrive."""

    name: Literal["recorded"] = "recorded"

    def __init__(self, folder: Path) -> None:
        self.inner = RecordedBackend(folder)

    def exchange(self, request: bytes) -> Exchange:
        value = json.loads(request)
        path = recording_path(self.inner.folder, request)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(json.dumps(ANSWERS[f"{value['kind']}:{value['hypothesis_id']}"]).encode())
        return self.inner.exchange(request)


@dataclass(frozen=True)
class Manifest:
    model: str | None
    skill_version: str
    usd: float | None


def submission(world: World, who: ScriptedAgent, leaf_id: str, files: dict[str, bytes], manifest: Manifest,
               *, base: str | None = None) -> Submission:
    patch = creation_patch(files)
    trace = TraceRecorder()
    trace.add(NOW - timedelta(seconds=3), "tool_call", {"tool": "write", "files": sorted(files)})
    trace.add(NOW - timedelta(seconds=2), "tool_result", "ok")
    trace.add(NOW - timedelta(seconds=1), "final", f"Created {len(files)} files.")
    bundle = trace.bundle(leaf_id=leaf_id, agent=who.handle, operator=who.operator, base_revision=base or world.tip(),
                          patch=patch, level="L1", skill_version=manifest.skill_version, model=manifest.model,
                          tokens=1000)
    if manifest.usd is not None:
        data = json.loads(bundle["manifest.json"])
        data["usd"] = manifest.usd
        bundle["manifest.json"] = json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"
    return Submission(SLUG, leaf_id, patch, bundle, who.token)


def _links(leaf_id: str, kind: str, items: list[tuple[str, str]]) -> dict[str, bytes]:
    """Link files; with a counter-evidence note when none of them contradicts (a link leaf needs one)."""
    files = dict([note_file(leaf_id=leaf_id, hypothesis_id="H1", revision=1, none_found_after=3,
                                   sources_checked=[NOTE_ID, GUIDE_ID, PDF_ID])]) \
        if all(stance != "contradicts" for _, stance in items) else {}
    for finding_id, stance in items:
        path, data = link_file(finding_id=finding_id, hypothesis_id="H1", revision=1, stance=stance,
                               rationale=f"The finding {stance} the claim on paying teams.", leaf_kind=kind,
                               leaf_id=leaf_id)
        files[path] = data
    return files


def at(minutes: int) -> datetime:
    return NOW + timedelta(minutes=minutes)


def build_history(world: World) -> dict[str, str]:
    """The history; returns the outcome of each attempt by name, in order."""
    home = world.home
    write_keypair(resolver_dir(home.root))
    home.save_settings(Settings.model_validate({**home.settings.model_dump(), "recruited_by_steward": ["op-a"]}))
    bee = ScriptedAgent(home, "agent-b", "op-b", home.identities.add("agent-b", "op-b", "agent", NOW))
    sea = ScriptedAgent(home, "agent-c", "op-c", home.identities.add("agent-c", "op-c", "agent", NOW))
    steward = home.identities.add("ericxtang", "ericxtang", "human", NOW)
    large, small = Manifest("m-large", "sk-1", 0.30), Manifest("m-small", "sk-2", 0.05)
    outcomes: dict[str, str] = {}

    def attempt(name: str, sub: Submission, minutes: int) -> None:
        verdict = world.submit(sub, now=at(minutes))
        outcomes[name] = verdict.outcome if verdict.outcome != "rejected" else f"rejected {verdict.rejections[0].code}"

    world.leaf("extract-1")
    attempt("extract-bad", submission(world, world.agent, "extract-1",
                                      world.findings("extract-1", "extract-too-few.yaml"),
                                      Manifest("m-large", "sk-1", None)), 5)
    findings = world.findings("extract-1")
    attempt("extract-good", submission(world, world.agent, "extract-1", findings, large), 10)
    outcomes["plan"] = world.submit(plan_edit(world, steward), now=at(15)).outcome
    ids = [path.rsplit("/", 1)[1][:-5] for path in findings]
    teams, tessellate, quillmark, northgate = ids
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    world.leaf("link-2", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    early = world.tip()
    attempt("link-1", submission(world, bee, "link-1", _links("link-1", "link", [(teams, "supports")]), small), 20)
    # The same link again, made against the revision before link-1 landed: stale, never merged.
    attempt("link-2-stale", submission(world, sea, "link-2", _links("link-2", "link", [(teams, "supports")]),
                                       Manifest("m-small", "sk-2", 0.04), base=early), 25)
    attempt("link-2", submission(world, sea, "link-2", _links("link-2", "link", [(quillmark, "supports")]),
                                 Manifest("m-small", "sk-2", 0.04)), 30)
    # op-a contradicts its own finding: a same-operator link weighs 0.25, so the corpus leans true.
    world.leaf("link-3", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    attempt("link-3", submission(world, world.agent, "link-3", _links("link-3", "link", [(northgate, "contradicts")]),
                                 small), 35)
    world.leaf("skeptic-1", "skeptic", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    skeptic = _links("skeptic-1", "skeptic", [(tessellate, "contradicts")])
    attempt("skeptic-1", submission(world, sea, "skeptic-1", skeptic, Manifest(None, "sk-2", 0.02)), 40)
    northgate_link = link_path(_link_id(northgate))
    world.leaf("review-1", "review", source_id=None, object_path=northgate_link)
    path, data = review_file(object_path=northgate_link, object_id=_link_id(northgate), decision="reject",
                             reason="The northgate quote is about buyers, not payers.", leaf_id="review-1")
    attempt("review-1", submission(world, sea, "review-1", {path: data}, Manifest("m-small", "sk-2", 0.01)), 50)
    backend = AnswerBook(home.root / "recordings")
    seal_missing(home, SLUG, now=at(60), backend=backend)
    key = read_private_key(resolver_dir(home.root) / PRIVATE_PEM)
    runs = resolve_project(home, SLUG, now=AFTER_H1, backend=backend, private_key=key)
    outcomes["resolve"] = ",".join(f"{run.hypothesis_id} {run.status}" for run in runs)
    return outcomes


def _link_id(finding_id: str) -> str:
    path, _ = link_file(finding_id=finding_id, hypothesis_id="H1", revision=1, stance="context", rationale="x",
                        leaf_kind="link", leaf_id=None)
    return path.rsplit("/", 1)[1][:-5]


PLAN_ID = "h1-who-pays"


def plan_edit(world: World, token: str) -> Submission:
    """A person writes the plan the controlled arm holds out: H1, before any evidence is linked."""
    front = dump_yaml({"plan_id": PLAN_ID, "hypotheses": ["H1"], "author": "ericxtang",
                       "created_at": "2026-11-30T12:00:00Z"}).decode()
    files = {plan_path(PLAN_ID): f"---\n{front}---\nLink the extracted findings to H1.\n".encode()}
    return Submission(SLUG, None, creation_patch(files), {}, token)

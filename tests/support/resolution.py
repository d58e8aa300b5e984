"""The resolution scenario the resolver and UI tests share: three operators' evidence on H1, two
reviews, a steward's report, baselines sealed for H1 and H3; the recorded and stand-in model
backends, and resolving the project at a given time."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from tests.support.edits import edit, report_doc
from tests.support.world import FIXTURES, GUIDE_ID, NOTE_ID, NOW, PDF_ID, SLUG, World, copied_world, make_world
from verifier.agentkit.objects import link_file, note_file, review_file
from verifier.agentkit.scripted import ScriptedAgent
from verifier.model.adapter import Backend, BackendName, Exchange, RecordedBackend, recording_path
from verifier.roles.resolver import resolve_project
from verifier.seal import read_private_key, resolver_dir, write_keypair
from verifier.seal.keys import PRIVATE_PEM
from verifier.state.layout import link_path
from verifier.store.gitrepo import GitTree
from verifier.store.home import Home, Settings
from verifier.store.identities import Actor
from verifier.writes.baseline import seal_missing

RESOLUTION = FIXTURES / "resolution"
RECORDINGS = RESOLUTION / "recordings"
UPDATE = bool(os.environ.get("RW_UPDATE_GOLDEN"))
AFTER_H1 = datetime(2027, 7, 1, 6, 0, tzinfo=UTC)  # the day after H1's check date (2027-06-30)


@dataclass
class Scenario:
    """The built resolution fixture: its world, the steward, and the ids of its findings and links."""

    world: World
    steward: Actor
    steward_token: str
    findings: dict[str, str]  # name -> finding id
    links: dict[str, str]  # name -> link id
    private_key: bytes

    @property
    def home(self) -> Home:
        return self.world.home

    def view(self) -> GitTree:
        view: GitTree = self.world.repo.view(self.world.tip())
        return view

    def read(self, path: str) -> bytes | None:
        return self.view().read(path)


class FixtureBackend:
    """The recorded backend over fixtures/resolution/recordings/; with RW_UPDATE_GOLDEN it first
    records the answer fixtures/resolution/answers.json holds for each request it sees."""

    name: BackendName = "recorded"

    def __init__(self, folder: Path = RECORDINGS) -> None:
        self.inner = RecordedBackend(folder)
        self.answers = json.loads((RESOLUTION / "answers.json").read_text())

    def exchange(self, request: bytes) -> Exchange:
        if UPDATE:
            value = json.loads(request)
            answer = self.answers[f"{value['kind']}:{value['hypothesis_id']}"]
            path = recording_path(self.inner.folder, request)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(json.dumps(answer, sort_keys=True).encode())
        return self.inner.exchange(request)


def configure(home: Home, recordings: Path = RECORDINGS) -> bytes:
    """Give the home a Resolver key pair and the recorded model backend; returns the private key."""
    write_keypair(resolver_dir(home.root))
    config = {"backend": "recorded", "recordings": str(recordings), "sealed_replay": True}  # a test fixture
    home.save_settings(Settings.model_validate({**home.settings.model_dump(), "model": config}))
    return read_private_key(resolver_dir(home.root) / PRIVATE_PEM)


def agent(world: World, handle: str, operator: str) -> ScriptedAgent:
    """A scripted agent `handle` run by `operator`, with its own token."""
    return ScriptedAgent(world.home, handle, operator, world.home.identities.add(handle, operator, "agent", NOW))


def _links(leaf_id: str, kind: str, items: list[tuple[str, str]]) -> dict[str, bytes]:
    """Link files on H1 for `(finding id, stance)` pairs, written by leaf `leaf_id` of kind `kind`."""
    files = {}
    for finding_id, stance in items:
        path, data = link_file(finding_id=finding_id, hypothesis_id="H1", revision=1, stance=stance,
                               rationale=f"The finding {stance} the claim on paying teams.", leaf_kind=kind,
                               leaf_id=leaf_id)
        files[path] = data
    return files


def _accept(world: World, leaf_id: str, files: dict[str, bytes], who: ScriptedAgent) -> None:
    """Submit `files` for `leaf_id` as `who`; they must be accepted."""
    verdict = world.submit(world.creation(leaf_id, files, agent=who))
    assert verdict.outcome == "accepted", verdict.line()


def build(world: World, *, backend: Backend | None = None) -> Scenario:
    """The resolution fixture: three operators' evidence on H1, two reviews, a steward's report,
    baselines sealed for the active hypotheses H1 and H3."""
    private_key = configure(world.home)
    steward_token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    steward = world.home.identities.authenticate(steward_token)
    bee, sea = agent(world, "agent-b", "op-b"), agent(world, "agent-c", "op-c")
    world.leaf("extract-1")
    assert world.submit(world.extract("extract-1")).outcome == "accepted"
    ids = [path.rsplit("/", 1)[1][:-5] for path in world.findings("extract-1")]  # in the script's order
    findings = dict(zip(["teams", "tessellate", "quillmark", "northgate"], ids, strict=True))
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    _accept(world, "link-1", _links("link-1", "link", [(findings["teams"], "supports"),
                                                       (findings["northgate"], "contradicts")]), bee)
    world.leaf("skeptic-1", "skeptic", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    _accept(world, "skeptic-1", _links("skeptic-1", "skeptic", [(findings["tessellate"], "contradicts")]), sea)
    world.leaf("link-2", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    files = _links("link-2", "link", [(findings["quillmark"], "supports")])
    files.update([note_file(leaf_id="link-2", hypothesis_id="H1", revision=1, none_found_after=3,
                            sources_checked=[NOTE_ID, GUIDE_ID, PDF_ID])])
    _accept(world, "link-2", files, world.agent)
    links = {name: path.rsplit("/", 1)[1][:-5] for name, path in (
        (name, link_path_of(findings[name])) for name in findings)}
    for leaf_id, who, name, decision in (("review-1", sea, "teams", "accept"), ("review-2", sea, "northgate", "reject"),
                                         ("review-3", bee, "quillmark", "accept")):
        target = link_path(links[name])
        world.leaf(leaf_id, "review", source_id=None, object_path=target)
        path, data = review_file(object_path=target, object_id=links[name], decision=decision,
                                 reason=f"Checked the {name} quote against the hypothesis.", leaf_id=leaf_id)
        _accept(world, leaf_id, {path: data}, who)
    report = report_doc("r-who-pays", [findings["teams"], links["teams"]], [links["teams"]])
    landed = world.submit(edit(world, steward_token, {"reports/r-who-pays.md": report}))
    assert landed.outcome == "accepted", landed.line()
    assert seal_missing(world.home, SLUG, now=NOW, backend=backend or FixtureBackend()) == ["H1", "H3"]
    return Scenario(world, steward, steward_token, findings, links, private_key)


def link_path_of(finding_id: str) -> str:
    """The path of the link on H1 to `finding_id` (the scenario has one per finding)."""
    path, _ = link_file(finding_id=finding_id, hypothesis_id="H1", revision=1, stance="context", rationale="x",
                        leaf_kind="link", leaf_id=None)
    return path


def resolve(scenario: Scenario, now: datetime = AFTER_H1, backend: Backend | None = None,
            key: bytes | None = None) -> list[str]:
    """Run the Resolver at `now`; returns "<hypothesis> <status>" per run."""
    runs = resolve_project(scenario.home, SLUG, now=now, backend=backend or FixtureBackend(),
                           private_key=key if key is not None else scenario.private_key)
    return [f"{run.hypothesis_id} {run.status}" for run in runs]


class Answers:
    """A stand-in model answering by `<kind>:<hypothesis>`, for scenarios without recordings."""

    name: BackendName = "command"

    def __init__(self, answers: dict[str, dict[str, object]]) -> None:
        self.answers = answers
        self.asked: list[dict[str, object]] = []

    def exchange(self, request: bytes) -> Exchange:
        value = json.loads(request)
        self.asked.append(value)
        answer = self.answers[f"{value['kind']}:{value['hypothesis_id']}"]
        return Exchange(json.dumps(answer).encode(), 0.0, "test answers")


def answer(verdict: str, confidence: float = 0.7) -> dict[str, object]:
    """A resolve answer with `verdict` and `confidence`, as the stand-in model gives it."""
    return {"kind": "resolve", "verdict": verdict, "confidence": confidence, "rationale": f"checked: {verdict}",
            "model": "frontier-1"}




def copied(scenario: Scenario, dest: Path) -> Scenario:
    """The built scenario's home copied under `dest`: a real home of its own, to change freely."""
    return replace(scenario, world=copied_world(scenario.world, dest))


class BuiltScenarios:
    """The resolution fixture built once (on first use) under `root`, then copied for each test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: Scenario | None = None

    def copy(self, dest: Path) -> Scenario:
        if self._built is None:
            self._built = build(make_world(self.root))
        return copied(self._built, dest)

"""The shared test world: a throwaway verifier home with the fixture project, an agent and helpers
to write leaves and submissions (the fixtures in tests/conftest.py hand it out)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file
from verifier.agentkit.scripted import ScriptedAgent, load_script
from verifier.agentkit.workspace import creation_patch
from verifier.formats.ids import source_id_for
from verifier.formats.leaf import LeafContract, WriteRule
from verifier.pipeline.submit import Submission, Verdict, submit
from verifier.state.layout import default_write_rules
from verifier.store.fetcher import Fetcher, OfflineFetcher
from verifier.store.gitrepo import ProjectRepo
from verifier.store.home import Home, Settings
from verifier.store.hooks import install_hooks
from verifier.wiring import open_home
from verifier.writes.project import add_leaf, init_project

__all__ = ["FIXTURES", "GUIDE_ID", "NOTE_ID", "NOW", "PDF_ID", "ROOT", "SLUG", "ScriptedAgent", "World", "copied_world",
           "make_home", "make_world"]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SLUG = "world-model-eval"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NOTE_ID = source_id_for("https://notes.example.org/world-models/analyst-note-2026-03-12.txt")
GUIDE_ID = source_id_for("https://guides.example.org/conditioning-layers-buyers-guide")
PDF_ID = source_id_for("https://reports.example.org/verification-layer-eval-2026.pdf")


@dataclass
class World:
    """A verifier home with the fixture project and one registered agent."""

    home: Home
    agent: ScriptedAgent
    fetcher: Fetcher

    @property
    def repo(self) -> ProjectRepo:
        return self.home.project(SLUG)

    def tip(self) -> str:
        tip = self.repo.tip()
        assert tip is not None
        return tip

    def leaf(self, leaf_id: str, kind: str = "extract", *, source_id: str | None = NOTE_ID,
             base: str | None = None, expires: timedelta = timedelta(days=1),
             may_write: list[WriteRule] | None = None, trace_level: str | None = None,
             **inputs: object) -> LeafContract:
        all_inputs: dict[str, object] = dict(inputs)
        if kind == "extract":
            all_inputs["source_id"] = source_id
        contract = LeafContract.model_validate({
            "leaf_id": leaf_id, "kind": kind, "inputs": all_inputs, "base_revision": base or self.tip(),
            "may_write": [r.model_dump() for r in (may_write or default_write_rules(kind))],  # type: ignore[arg-type]
            "check": kind, "created_at": NOW, "created_by": "planner", "expires_at": NOW + expires,
            "trace_level": trace_level,
        })
        add_leaf(self.home, SLUG, contract, now=NOW, actor="planner",
                 disjoint=False)  # replays leaves on one source one after another
        return contract

    def submit(self, submission: Submission, now: datetime = NOW) -> Verdict:
        return submit(self.home, submission, now=now, fetcher=self.fetcher)

    def extract(self, leaf_id: str, script: str = "extract-good.yaml") -> Submission:
        return self.agent.extract(SLUG, leaf_id, load_script(FIXTURES / "submissions" / script), now=NOW)

    def creation(self, leaf_id: str, files: dict[str, bytes], *, base: str | None = None,
                 agent: ScriptedAgent | None = None, level: str = "L1") -> Submission:
        """A submission that creates `files`, made without a clone (as an agent may)."""
        who = agent or self.agent
        patch = creation_patch(files)
        trace = TraceRecorder()
        trace.add(NOW - timedelta(seconds=3), "tool_call", {"tool": "write", "files": sorted(files)})
        trace.add(NOW - timedelta(seconds=2), "tool_result", "ok")
        trace.add(NOW - timedelta(seconds=1), "final", f"Created {len(files)} files.")
        bundle = trace.bundle(leaf_id=leaf_id, agent=who.handle, operator=who.operator,
                              base_revision=base or self.tip(), patch=patch, level=level)
        return Submission(SLUG, leaf_id, patch, bundle, who.token)

    def findings(self, leaf_id: str, script: str = "extract-good.yaml",
                 source_id: str = NOTE_ID) -> dict[str, bytes]:
        text = self.agent.source_text(SLUG, source_id, self.tip())
        files: dict[str, bytes] = {}
        for item in load_script(FIXTURES / "submissions" / script):
            path, data = finding_file(source_id=source_id, source_text=text, excerpt=item["excerpt"],
                                      statement=item["statement"], limitation=item["limitation"],
                                      leaf_id=leaf_id)
            files[path] = data
        return files

    def objects(self) -> set[str]:
        """Every object id in the project's object store."""
        return {str(oid) for oid in self.repo.repo.odb}


def make_home(root: Path) -> Home:
    home = open_home(root)
    home.save_settings(Settings(durable=False, fetch="offline"))
    return open_home(root)


def make_world(root: Path) -> World:
    """A home under `root` with the fixture project and agent-a registered (the `world` fixture)."""
    home = make_home(root / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("agent-a", "op-a", "agent", NOW)
    return World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())


def copied_world(world: World, dest: Path) -> World:
    """`world`'s home copied to `dest`/home: a real home of its own, to change freely. The project's
    hooks name their home, so they are written again for the copy."""
    root = dest / "home"
    shutil.copytree(world.home.root, root, symlinks=True)
    home = open_home(root)
    for slug in home.projects():
        install_hooks(home.root, home.repo_path(slug))
    return World(home, replace(world.agent, home=home), world.fetcher)

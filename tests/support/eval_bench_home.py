"""A home of synthetic project histories made by scripts/bench_eval.py's own builder (real repos:
chained ledger rows of every kind, use-score shards, decided resolution records), small enough for
a test: the fixture the eval document's golden is computed over."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from verifier.state.view import TreeView
from verifier.store.gitrepo import VERIFIER
from verifier.store.home import Settings
from verifier.wiring import open_home
from verifier.writes.project import init_project

BENCH = Path(__file__).resolve().parents[2] / "scripts" / "bench_eval.py"


def bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_eval", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def eval_document(root: Path, *, projects: int = 3, rows: int = 700) -> str:
    """`rw eval --all --json`'s document over `projects` synthetic projects of `rows` rows each."""
    bench = bench_module()
    home = open_home(root / "home")
    home.save_settings(Settings(durable=False, fetch="offline"))
    home = open_home(root / "home")
    for number in range(projects):
        bench.build(home, root, f"project-{number:02d}", rows, seed=number)
    text: str = bench.run_eval(home)
    json.loads(text)
    return text + "\n"


def project_view_with(root: Path, files: dict[str, bytes]) -> TreeView:
    """A real project repository (made by `init_project`) with `files` committed on top: its tip."""
    bench = bench_module()
    home = open_home(root / "home")
    home.save_settings(Settings(durable=False, fetch="offline"))
    home = open_home(root / "home")
    init_project(home, "shards", now=bench.START, template=bench._template(root, "shards"))
    repo = home.project("shards")
    tip = repo.tip()
    assert tip is not None
    commit = repo.create_commit(tree=repo.build_tree(tip, dict(files)), parents=[tip], author=VERIFIER,
                                committer=VERIFIER, message="shards\n", when=bench.NOW)
    repo.move_branch(commit, tip)
    return repo.view(commit)

"""The three seed projects (design §14): each is what scripts/build_seed_projects.py writes, has a
thesis with a criterion, a check date and a measure, and three to five warm sources whose
retained bytes are real text; the Planner's first wake fills the warm-leaf pool from them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.world import FIXTURES, NOW, make_home
from verifier.formats.source import parse_source
from verifier.roles.planner import local_commons, wake
from verifier.state.project import current_hypothesis
from verifier.writes.project import init_project

SEEDS = ("edge-inference", "grid-storage", "open-weights")


def builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_seed_projects",
                                                  FIXTURES.parent / "scripts" / "build_seed_projects.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("slug", SEEDS)
def test_a_seed_project_is_what_the_script_writes_and_starts_warm(slug: str, tmp_path: Path) -> None:
    folder = FIXTURES / f"seed-{slug}"
    actual = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert actual == builder().build(slug)
    records = [parse_source(data, path) for path, data in actual.items() if path.endswith(".yaml")]
    assert 3 <= len(records) <= 5 and all(r.warm and r.status == "included" for r in records)
    texts = [data.decode("utf-8") for path, data in actual.items() if path.endswith(".txt")]
    assert all(len(text.split()) > 100 for text in texts)  # real prose to quote, not placeholders
    home = make_home(tmp_path / "home")
    init_project(home, slug, now=NOW, template=folder)
    repo = home.project(slug)
    thesis = current_hypothesis(repo.view(repo.tip()), "H1")
    assert thesis is not None and thesis.resolution is not None
    result = wake(home, slug, NOW, commons=local_commons(home))
    assert result.plan is not None and sum(1 for c in result.plan.leaves if c.warm) == 3

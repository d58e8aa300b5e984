"""docs/planner.md: `rw runner --worker-command 'claude -p "Do researchwiki leaf $RW_LEAF"'`: the
leaf's variables in the command's words are expanded (the command runs without a shell), and the
token is never put on a command line."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from tests.support.world import FIXTURES, make_home
from verifier.roles.planner import local_commons
from verifier.roles.runner import WorkerConfig, command_words, tick
from verifier.writes.project import init_project

SLUG = "grid-storage"
NOW = datetime.now(UTC).replace(microsecond=0)


def test_the_worker_command_gets_rw_leaf_expanded_in_its_words(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / f"seed-{SLUG}")
    token = home.identities.add("worker", "op-w", "agent", NOW)
    script = "import sys; print(sys.argv[1])"
    config = WorkerConfig(f"{sys.executable} -c \"{script}\" \"Do researchwiki leaf $RW_LEAF of ${{RW_PROJECT}}\"",
                          token, workers=1, limit_s=30)
    report = tick(home, [SLUG], NOW, local_commons(home), config)
    assert len(report.runs) == 1 and report.runs[0].exit_code == 0
    run = report.runs[0]
    assert run.log.read_text().strip() == f"Do researchwiki leaf {run.leaf_id} of {SLUG}"


def test_the_token_and_other_variables_are_not_expanded() -> None:
    env = {"RW_LEAF": "extract-1", "RW_PROJECT": "p", "RW_SERVER": "", "RW_HOME": "/h", "RW_TOKEN": "rwt_secret"}
    words = command_words("agent $RW_TOKEN $RW_LEAFX $HOME ${RW_LEAF}/$RW_HOME", env)
    assert words == ["agent", "$RW_TOKEN", "$RW_LEAFX", "$HOME", "extract-1//h"]

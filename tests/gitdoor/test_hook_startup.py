"""The pre-receive hook starts Python at every push, so it imports only what a push needs: not
the text extractors (pypdf, BeautifulSoup) and, for a project without hypotheses, not the
sealing machinery (the Resolver's keys, the baseline's model calls); a project with hypotheses
still seals after a landing as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.world import NOW, SLUG, World
from verifier.gitdoor.receive import seal_landed
from verifier.store.home import Settings
from verifier.wiring import open_home
from verifier.writes.followups import seal_after_landing
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # each case starts a Python process of its own, as git starts the hook

NEVER_AT_START = ("pypdf", "bs4", "verifier.text.extract", "verifier.seal", "verifier.writes.followups")


def loaded_by(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh Python process has loaded after running `code`."""
    script = f"{code}\nimport json, sys\nprint('\\n' + json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120,
                          env={**os.environ, **(env or {})})
    loaded: list[str] = json.loads(done.stdout.strip().rsplit("\n", 1)[-1])
    return set(loaded)


def test_the_hook_module_loads_neither_the_text_extractors_nor_the_sealing_machinery() -> None:
    loaded = loaded_by("import verifier.gitdoor.receive")
    assert "verifier.writes.push" in loaded  # the control: what a push needs is there
    assert not [name for name in loaded if name.startswith(NEVER_AT_START)]


def test_a_landing_on_a_project_without_hypotheses_seals_nothing_and_loads_no_sealing(tmp_path: Path) -> None:
    home = open_home(tmp_path / "home")
    home.save_settings(Settings(durable=False, fetch="offline"))
    init_project(open_home(tmp_path / "home"), "plain-notes", now=NOW)
    code = ("from datetime import UTC, datetime\nfrom verifier.gitdoor.receive import seal_landed\n"
            "from pathlib import Path\nfrom verifier.wiring import open_home\n"
            f"said = seal_landed(open_home(Path({str(tmp_path / 'home')!r})), 'plain-notes', datetime.now(UTC))\n"
            "assert said == ([], None), said")
    loaded = loaded_by(code)
    assert not [name for name in loaded if name.startswith(NEVER_AT_START)]


def test_a_landing_on_a_project_with_hypotheses_answers_as_seal_after_landing(world: World) -> None:
    # The fixture project has hypotheses and no model: both say why nothing was sealed.
    assert world.repo.view(world.tip()).list_dir("hypotheses")
    answered = seal_landed(world.home, SLUG, NOW)
    assert answered == seal_after_landing(world.home, SLUG, now=NOW)
    assert answered[0] == [] and answered[1] is not None and "not sealed" in answered[1]

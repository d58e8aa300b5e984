"""README: `rw submit ... --server URL` submits to that service. Inside a working folder (rw work),
an explicit --server wins over the server `rw work` recorded (it was ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent, sentences
from tests.support.service_harness import Server, live_leaf, start
from tests.support.world import FIXTURES, NOW, SLUG, make_home
from verifier.store.home import Home
from verifier.writes.project import init_project

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback

UNREACHABLE = 5


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Home, Server, str]]:
    home = make_home(tmp_path_factory.mktemp("docs-submit") / "home")
    init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
    token = home.identities.add("docs-agent", "docs-op", "agent", NOW)
    server = start(home.root)
    yield home, server, token
    server.stop()


def test_submit_in_a_working_folder_goes_to_the_server_given_with_server(
        served: tuple[Home, Server, str], tmp_path: Path) -> None:
    home, server, token = served
    live_leaf(home, "extract-warm-1")
    agent = OutsideAgent(tmp_path, server.url, token)
    agent.rw("work", SLUG, "--warm", "--dir", "w")
    work = tmp_path / "w"
    text = next((work / ".rw" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    for number, sentence in enumerate(sentences(text, 3)):
        agent.rw("new", "finding", "--excerpt", sentence, "--statement", f"Claim {number}.",
                 "--limitation", "One note.", cwd=work)
    agent.rw("trace", "add", "reasoning", "Three sentences with numbers.", cwd=work)
    down = agent.rw("submit", "--server", "http://127.0.0.1:9", "--retry-for", "1s", cwd=work, ok=False)
    assert down.code == UNREACHABLE, (down.out, down.err)
    assert "127.0.0.1:9" in down.err
    landed = agent.rw("submit", cwd=work)  # without --server: the server rw work used
    assert landed.out.startswith("ACCEPTED")

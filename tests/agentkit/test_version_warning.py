"""`rw work` (and the MCP `work` tool) say when the service's verifier is newer than the client's,
read from the service's GET /version (verifier.agentkit.loop.version_warning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agent import OutsideAgent
from tests.support.hostile_server import SLUG, hostile_service
from verifier.agentkit.loop import version_warning
from verifier.version import verifier_version

MINE = "0.1.0+src.aaaaaaaaaaaa"
INSTALL = {"install": "pip install http://127.0.0.1:1/client/researchwiki_verifier-0.2.0-py3-none-any.whl"}


def test_a_newer_release_on_the_service_is_named_with_the_command_that_installs_its_client() -> None:
    warning = version_warning({"verifier_version": "0.2.0+src.bbbbbbbbbbbb", "client": INSTALL}, MINE)
    assert warning is not None and "newer than this client's 0.1.0+src.aaaaaaaaaaaa" in warning
    assert INSTALL["install"] in warning
    assert version_warning({"verifier_version": "0.10.0+src.b"}, "0.9.0+src.a") is not None  # not text order


def test_the_same_release_from_other_source_is_said_and_an_older_or_equal_service_is_not() -> None:
    other = version_warning({"verifier_version": "0.1.0+src.bbbbbbbbbbbb"}, MINE)
    assert other is not None and "built from other source" in other
    assert version_warning({"verifier_version": MINE}, MINE) is None
    assert version_warning({"verifier_version": "0.0.9+src.bbbbbbbbbbbb"}, MINE) is None
    assert version_warning({"verifier_version": ["not", "a", "string"]}, MINE) is None
    assert version_warning({}, MINE) is None


@pytest.mark.slow  # real `rw` processes against a loopback service
def test_rw_work_warns_on_stderr_when_the_service_is_newer_and_still_works(tmp_path: Path) -> None:
    with hostile_service(tmp_path / "served") as service:
        agent = OutsideAgent(tmp_path, service.url, "rwt_test")
        quiet = agent.rw("work", SLUG, "--warm", "--dir", str(tmp_path / "first"))  # no /version: no warning
        assert "warning" not in quiet.err
        service.answers.version = {"verifier_version": "99.0.0+src.cccccccccccc", "client": INSTALL}
        loud = agent.rw("work", SLUG, "--warm", "--dir", str(tmp_path / "second"))
        assert f"warning: the service runs verifier 99.0.0+src.cccccccccccc, newer than this client's " \
               f"{verifier_version()}; install its client: {INSTALL['install']}" in loud.err
        assert Path(loud.out.strip()) == (tmp_path / "second").resolve()

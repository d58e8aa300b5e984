"""The live skill reaches workers (issue 24 point 4): the service serves it (GET /skill), `rw skill
install` writes it, `rw work` puts it in the folder and the manifest names its version; a kept
proposal changes what the next claimed leaf gets; the gate's replays are the validation results
`rw eval` sets beside live acceptance, so the stale-validation flag rises from real rows."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.agent import RW
from tests.support.agent_cli import install
from tests.support.first_hour import Steward, agent_token, copied_initialised, serving
from tests.support.loop import SEED_SKILL, skill_following_worker, with_extract
from tests.support.world import NOW
from verifier.client.http import Client
from verifier.formats.ledger import LedgerRow
from verifier.formats.skill import SKILL_KINDS
from verifier.roles.liveskill import install_skill, live_skill_version, read_live_skill
from verifier.roles.skillgate import gate
from verifier.state.project import rows_from

pytestmark = pytest.mark.slow
SLUG = "world-model-eval"
VERBATIM = "## Extract\n\nQuote every excerpt verbatim: copy it from `rw source text`, never retype it.\n"


def _last_row(steward: Steward) -> LedgerRow:
    repo = steward.home.project(SLUG)
    tip = repo.tip()
    assert tip is not None
    return rows_from(repo.view(tip), 0)[-1]


def _run_claude(steward: Steward, url: str, token: str, tmp_path: Path, mode: str = "replay") -> LedgerRow:
    env = {"PATH": f"{install(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}", "RW_WORKER_TOKEN": token,
           "RW_STANDIN_MODE": mode}
    steward.rw("runner", "--once", "--project", SLUG, "--worker", "claude", "--server", url, "--limit", "120s",
               env=env)
    return _last_row(steward)


def test_the_service_serves_the_live_skill_and_skill_install_writes_its_bytes(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    install_skill(steward.home, SEED_SKILL)
    with serving(steward.home) as server:
        body = Client(server.url).get("/skill", auth=False).body
        folder = tmp_path / "agent"
        folder.mkdir()
        for target, path in (("codex", folder / "AGENTS.md"),
                             ("claude", folder / ".claude" / "skills" / "researchwiki" / "SKILL.md")):
            done = subprocess.run([RW, "skill", "install", "--server", server.url, "--for", target], cwd=folder,
                                  capture_output=True, text=True, check=False, timeout=60)
            assert done.returncode == 0, done.stderr
            assert path.read_text(encoding="utf-8") == SEED_SKILL
            assert done.stdout.split()[0] == live_skill_version(steward.home)
    assert body["skill_version"] == live_skill_version(steward.home) and body["text"] == SEED_SKILL
    assert sorted(body["sections"]) == sorted(SKILL_KINDS) and "Do the leaf." in body["sections"]["extract"]


def test_a_kept_proposal_reaches_the_next_worker_and_eval_sets_validation_beside_live(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    token = agent_token(steward.home, "claude-worker")
    install_skill(steward.home, SEED_SKILL)
    seed_version = live_skill_version(steward.home)
    with serving(steward.home) as server:
        first = _run_claude(steward, server.url, token, tmp_path)
        assert (first.outcome, first.skill_version) == ("accepted", seed_version)
        decision = gate(steward.home, "extract", with_extract(SEED_SKILL, VERBATIM), worker=skill_following_worker,
                        now=NOW)
        assert decision.outcome == "kept"
        new_version = live_skill_version(steward.home)
        assert new_version != seed_version and "verbatim" in read_live_skill(steward.home).decode()
        second = _run_claude(steward, server.url, token, tmp_path)
        assert (second.outcome, second.skill_version) == ("accepted", new_version)  # the manifest named it
        third = _run_claude(steward, server.url, token, tmp_path, mode="exit1")
        assert (third.outcome, third.skill_version) == ("crash", new_version)
    report = json.loads(steward.rw("eval", SLUG, "--json").stdout)
    versions = {entry["skill_version"]: entry for entry in report["skill_versions"]}
    seed, new = versions[seed_version], versions[new_version]
    assert (seed["live"]["attempts"], seed["live"]["accepted"]) == (1, 1)
    assert (new["live"]["attempts"], new["live"]["accepted"]) == (2, 1)
    assert seed["validation"] is not None and new["validation"] is not None
    assert new["validation"]["acceptance_rate"]["value"] > seed["validation"]["acceptance_rate"]["value"]
    # Better on validation, worse live than the version before it: the validation set has gone stale.
    assert new["previous"] == seed_version and new["validation_stale"] is True, new["note"]

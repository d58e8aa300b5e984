"""`rw token` and `rw invite` without a server act on RW_HOME as its admin: list every token,
revoke and rotate any, make an invite whose code works once."""

from __future__ import annotations

import json

from tests.support.cli import rw_here
from tests.support.world import NOW, SLUG, World
from verifier.store.identities import token_valid


def test_the_homes_admin_lists_revokes_and_rotates_any_token(world: World) -> None:
    env = {"RW_HOME": str(world.home.root), "RW_SERVER": "", "RW_CLIENT_HOME": str(world.home.root / "no-client")}
    listed = rw_here("token", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [t["handle"] for t in json.loads(listed.stdout)["tokens"]] == ["agent-a"]
    revoked = rw_here("token", "revoke", "agent-a", "--reason", "left the project", env=env)
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    assert token_valid(world.home.identities, world.agent.token, NOW) is None
    rotated = rw_here("token", "rotate", "agent-a", "--expires", "30d", env=env)
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.strip()
    assert token_valid(world.home.identities, new, NOW) is not None
    missing = rw_here("token", "revoke", "nobody", env=env)
    assert missing.returncode == 2 and "no agent or person" in missing.stderr


def test_the_homes_admin_makes_an_invite_and_its_code_works_once(world: World) -> None:
    env = {"RW_HOME": str(world.home.root), "RW_SERVER": "", "RW_CLIENT_HOME": str(world.home.root / "no-client")}
    made = rw_here("invite", SLUG, "--operator", "kim", "--agents", "1", "--expires", "2d", env=env)
    assert made.returncode == 0, made.stderr
    code = made.stdout.strip()
    assert code.startswith("rwi_") and code not in (world.home.root / "identities.json").read_text()
    joined = world.home.identities.join(code, [], NOW)
    assert joined.operator == "kim" and list(joined.agents) == ["kim-agent-1"]
    bad = rw_here("invite", "no-such-project", "--operator", "kim", env=env)
    assert bad.returncode == 2

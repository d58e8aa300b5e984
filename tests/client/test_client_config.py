"""The client config `rw join` writes: 0600 in a 0700 folder, where RW_CLIENT_HOME says, and the
token a client command takes from it (RW_AGENT's, the person's, or the default agent's)."""

from __future__ import annotations

import stat
from pathlib import Path

from verifier.client.config import config_path, default_server, remember, replace_token, stored_token

SERVER = "http://127.0.0.1:8765"
PERSON, BOT_A, BOT_B = "rwt_" + "p" * 43, "rwt_" + "a" * 43, "rwt_" + "b" * 43


def test_the_client_config_lives_under_rw_client_home_or_the_xdg_config_folder(tmp_path: Path) -> None:
    assert config_path({"RW_CLIENT_HOME": str(tmp_path)}) == tmp_path / "client.json"
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "researchwiki" / "client.json"


def test_joined_tokens_are_stored_0600_and_found_by_server(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "client.json"
    remember(SERVER + "/", "alice", PERSON, {"alice-agent-2": BOT_B, "alice-agent-1": BOT_A}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert default_server(path) == SERVER
    assert stored_token(SERVER, path=path) == BOT_A  # the first agent is the default
    assert stored_token(SERVER, person=True, path=path) == PERSON
    assert stored_token(SERVER, agent="alice-agent-2", path=path) == BOT_B
    assert stored_token("http://127.0.0.1:9999", path=path) == ""


def test_a_rotated_token_replaces_the_stored_one(tmp_path: Path) -> None:
    path = tmp_path / "client.json"
    remember(SERVER, "alice", PERSON, {}, path)
    new = "rwt_" + "n" * 43
    assert replace_token(SERVER, "alice", new, path) and stored_token(SERVER, person=True, path=path) == new
    assert not replace_token(SERVER, "nobody", new, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

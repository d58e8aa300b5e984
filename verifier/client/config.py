"""The client's own config file: the servers an operator joined and the tokens `rw join` stored.

Where: `$RW_CLIENT_HOME/client.json` when RW_CLIENT_HOME is set, else
`$XDG_CONFIG_HOME/researchwiki/client.json` (`~/.config/researchwiki/client.json`). The file is
mode 0600 from its creation and its folder 0700: it holds bearer tokens. A client command finds its
server as `--server`, else RW_SERVER, else the file's default server; its token as RW_TOKEN, else
the file's token for that server: the agent RW_AGENT names, else the person's (for a person's
commands) or the server's default agent.

    {"default_server": "http://127.0.0.1:8765",
     "servers": {"http://127.0.0.1:8765": {"person": "alice", "default": "alice-agent-1",
                                           "tokens": {"alice": "rwt_...", "alice-agent-1": "rwt_..."}}}}
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pydantic import Field, ValidationError

from verifier.errors import FormatError
from verifier.formats.base import Strict

CLIENT_FILE = "client.json"


class ServerEntry(Strict):
    person: str | None = None
    default: str | None = None
    tokens: dict[str, str] = Field(default_factory=dict)


class ClientConfig(Strict):
    default_server: str | None = None
    servers: dict[str, ServerEntry] = Field(default_factory=dict)


def config_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("RW_CLIENT_HOME"):
        return Path(env["RW_CLIENT_HOME"]) / CLIENT_FILE
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "researchwiki" / CLIENT_FILE


def load(path: Path | None = None) -> ClientConfig:
    where = path or config_path()
    if not where.exists():
        return ClientConfig()
    try:
        return ClientConfig.model_validate_json(where.read_bytes())
    except ValidationError as exc:
        raise FormatError(f"the client config is unreadable: {exc.errors()[0]['msg']}", str(where)) from exc


def save(config: ClientConfig, path: Path | None = None) -> Path:
    """Write the config atomically (readers see the old file or the new one), 0600 from creation;
    its folder is made 0700. Not verifier.store.files: client commands start without the store."""
    where = path or config_path()
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = where.with_name(f".{where.name}.{secrets.token_hex(6)}")
    # O_EXCL: never write through a file (or link) someone put there; 0600 before a byte is written.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(config.model_dump_json(indent=2, exclude_none=True).encode())
            out.flush()
            os.fsync(out.fileno())
        temporary.replace(where)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return where


def normal(server: str) -> str:
    return server.rstrip("/")


def remember(server: str, person: str | None, person_token: str | None, agents: dict[str, str],
             path: Path | None = None) -> Path:
    """Store what `rw join` got: the person's token (if one was made) and each agent's."""
    config = load(path)
    key = normal(server)
    entry = config.servers.get(key, ServerEntry())
    tokens = {**entry.tokens, **agents}
    if person is not None and person_token is not None:
        tokens[person] = person_token
    updated = ServerEntry(person=person or entry.person, default=entry.default or next(iter(sorted(agents)), None),
                          tokens=tokens)
    return save(config.model_copy(update={"servers": {**config.servers, key: updated},
                                          "default_server": config.default_server or key}), path)


def replace_token(server: str, handle: str, token: str, path: Path | None = None) -> bool:
    """After a rotation: the stored token of `handle` at `server` is the new one; False if none was stored."""
    config = load(path)
    entry = config.servers.get(normal(server))
    if entry is None or handle not in entry.tokens:
        return False
    entry = entry.model_copy(update={"tokens": {**entry.tokens, handle: token}})
    save(config.model_copy(update={"servers": {**config.servers, normal(server): entry}}), path)
    return True


def default_server(path: Path | None = None) -> str | None:
    return load(path).default_server


def stored_token(server: str, *, agent: str | None = None, person: bool = False, path: Path | None = None) -> str:
    """The stored token to use at `server` ("" when there is none): `agent`'s, else the person's
    when `person`, else the default agent's (or the person's when no agent is stored)."""
    entry = load(path).servers.get(normal(server))
    if entry is None:
        return ""
    if agent:
        return entry.tokens.get(agent, "")
    for handle in ((entry.person, entry.default) if person else (entry.default, entry.person)):
        if handle and handle in entry.tokens:
            return entry.tokens[handle]
    return ""

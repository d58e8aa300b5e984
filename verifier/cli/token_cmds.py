"""Tokens, invites and git for people: `rw token list|revoke|rotate`, `rw invite`, `rw join` and
`rw git setup` (docs/api.md "Tokens and invites", README "People push with git").

With a server (`--server`, RW_SERVER or the one `rw join` stored) these call the service with the
caller's token: a person manages their own and their agents' tokens, an admin any. Without one,
`rw token` and `rw invite` act on RW_HOME directly, as its admin (whoever has a shell on the
verifier's home owns it). `rw join` redeems an invite over HTTP and keeps the tokens in the client
config (verifier.client.config, mode 0600), never on the terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit

import click
import pygit2

from verifier.cli.app import EXIT_AUTH, RwError, cli, fail, home_from_env, now_from_env
from verifier.cli.remote import call, client_for, ok, token_for
from verifier.client.config import config_path, default_server, remember, replace_token
from verifier.client.http import Client
from verifier.constants import INVITE_MAX_AGENTS, INVITE_TTL, TOKEN_TTL
from verifier.errors import ConflictError, FormatError, NotFound, VerifierError
from verifier.formats.duration import parse_duration
from verifier.writes.push import PUSH_REF

server_choice = click.option("--server", envvar="RW_SERVER", show_envvar=True, metavar="URL", default=None,
                             help="The verifier service (or RW_SERVER, or the server `rw join` stored); without "
                                  "one, act on RW_HOME as its admin.")


def _server(server: str | None) -> str | None:
    try:
        return server or default_server()
    except FormatError as exc:
        raise RwError(str(exc)) from exc


def _lifetime(text: str | None, what: str) -> timedelta | None:
    try:
        return parse_duration(text, what, positive=True) if text else None
    except FormatError as exc:
        raise RwError(str(exc)) from exc


def _names(value: object) -> str:
    return ",".join(str(item) for item in value) if isinstance(value, list) else ""


def _line(info: dict[str, object]) -> str:
    projects = _names(info.get("projects")) or "every project"
    scopes = _names(info.get("scopes"))
    admin = " admin" if info.get("admin") else ""
    return (f"{info['handle']:<24} {info['type']:<6}{admin} operator {info['operator']}  {info['state']}  "
            f"expires {info.get('expires_at') or 'never'}  scopes {scopes}  projects {projects}")


@cli.group("token")
def token_group() -> None:
    """List, revoke and rotate bearer tokens (yours and your agents'; the admin any)."""


@token_group.command("list")
@server_choice
@click.option("--json", "as_json", is_flag=True)
def token_list(server: str | None, as_json: bool) -> None:
    """The tokens you may manage: who, state (live, expired, revoked), expiry, scopes, projects."""
    where = _server(server)
    if where is not None:
        client = client_for(where, person=True)
        infos: list[dict[str, object]] = ok(call(lambda: client.get("/tokens"))).body.get("tokens", [])
    else:
        home = home_from_env()
        infos = [info.to_json() for info in home.identities.tokens(now_from_env())]
    click.echo(json.dumps({"tokens": infos}, indent=2) if as_json else "\n".join(map(_line, infos)) or "no tokens")


@token_group.command("revoke")
@click.argument("handle")
@click.option("--reason", help="Why (kept with the registry entry).")
@server_choice
def token_revoke(handle: str, reason: str | None, server: str | None) -> None:
    """Revoke HANDLE's token at once: it authenticates nowhere any more (API, git, UI)."""
    where = _server(server)
    if where is not None:
        client = client_for(where, person=True)
        body = {"reason": reason} if reason else {}
        info = ok(call(lambda: client.post_json(f"/tokens/{quote(handle)}/revoke", body))).body["token"]
    else:
        home = home_from_env()
        try:
            info = home.identities.revoke(handle, now_from_env(), reason or "revoked by the home's admin").to_json()
        except NotFound as exc:
            fail(exc)
    click.echo(_line(info))


@token_group.command("rotate")
@click.argument("handle")
@click.option("--expires", help=f"Lifetime of the new token, like 30d (default {TOKEN_TTL.days}d).")
@server_choice
def token_rotate(handle: str, expires: str | None, server: str | None) -> None:
    """A new token for HANDLE (the old one stops working); printed once, or stored if `rw join` stored the old."""
    lifetime = _lifetime(expires, "--expires")
    where = _server(server)
    if where is not None:
        client = client_for(where, person=True)
        body = {"expires_s": int(lifetime.total_seconds())} if lifetime else {}
        token = str(ok(call(lambda: client.post_json(f"/tokens/{quote(handle)}/rotate", body))).body["token"])
        if replace_token(where, handle, token):
            click.echo(f"rotated {handle}; the new token is stored in {config_path()}", err=True)
            return
    else:
        home = home_from_env()
        try:
            token = home.identities.rotate(handle, now_from_env(), lifetime)
        except (NotFound, FormatError) as exc:
            fail(exc)
    click.echo(token)
    click.echo(f"rotated {handle}; store this token now, it is not shown again", err=True)


@cli.command("invite")
@click.argument("slug")
@click.option("--operator", required=True, help="The person who will run `rw join` (registered if new).")
@click.option("--agents", default=1, show_default=True, type=click.IntRange(0, INVITE_MAX_AGENTS),
              help="How many agents they register.")
@click.option("--expires", default=f"{INVITE_TTL.days}d", show_default=True, help="How long the code may be used.")
@server_choice
def invite(slug: str, operator: str, agents: int, expires: str, server: str | None) -> None:
    """Print a one-time code that lets OPERATOR join SLUG from their own machine."""
    lifetime = _lifetime(expires, "--expires")
    where = _server(server)
    if where is not None:
        client = client_for(where, person=True)
        body = {"operator": operator, "agents": agents, **({"expires_s": int(lifetime.total_seconds())}
                                                             if lifetime else {})}
        code = str(ok(call(lambda: client.post_json(f"/projects/{quote(slug)}/invites", body))).body["code"])
    else:
        home = home_from_env()
        try:
            home.project(slug)
            _id, code = home.identities.invite(slug, operator, agents, now_from_env(), "admin", lifetime)
        except (NotFound, FormatError, ConflictError) as exc:
            fail(exc)
    click.echo(code)
    click.echo(f"give {operator} this code once; on their machine: rw join SERVER CODE (good for {expires}, "
               "one use)", err=True)


@cli.command("join")
@click.argument("server")
@click.argument("code")
@click.option("--agent", "agents", multiple=True, help="A handle for one of your agents (repeatable; the rest "
                                                         "are named OPERATOR-agent-N).")
def join(server: str, code: str, agents: tuple[str, ...]) -> None:
    """Redeem an invite CODE at SERVER: register your agents, keep the tokens (0600)."""
    try:
        client = Client(server, None, retry_for_s=30)
    except FormatError as exc:
        raise RwError(str(exc)) from exc
    body = ok(call(lambda: client.post_json("/join", {"code": code, "agents": list(agents)}))).body
    operator, person_token = str(body["operator"]), body.get("person_token")
    tokens = {str(handle): str(token) for handle, token in dict(body["agents"]).items()}
    where = remember(server, operator, str(person_token) if person_token else None, tokens)
    click.echo(f"joined {body['project']} at {server} as {operator}"
               f"{' (a new person token)' if person_token else ''}; agents: {', '.join(sorted(tokens)) or 'none'}")
    click.echo(f"tokens stored in {where} (mode 0600); rw commands find the server and token there "
               "(RW_AGENT=HANDLE picks an agent)", err=True)


@cli.group("git")
def git_group() -> None:
    """git for people: a clone that pushes to refs/for/main with your token."""


@git_group.command("setup")
@click.argument("remote", default="origin")
def git_setup(remote: str) -> None:
    """Store your token in this clone's own config so `git push REMOTE HEAD:refs/for/main` carries it:
    `http.<server>/.extraHeader` for a remote over the service, `push.pushOption token=...` for a path."""
    try:
        repo = pygit2.Repository(pygit2.discover_repository(str(Path.cwd())) or ".")
        url = repo.remotes[remote].url or ""
    except (pygit2.GitError, KeyError, TypeError) as exc:
        raise RwError(f"no git clone with a remote {remote!r} here ({exc})") from exc
    parts = urlsplit(url)
    http = parts.scheme in ("http", "https")
    server = f"{parts.scheme}://{parts.netloc}" if http else ""
    token = token_for(server, person=True) if http else os.environ.get("RW_TOKEN", "")
    if not token:
        raise RwError("no token: set RW_TOKEN (a person's) or `rw join SERVER CODE` first", EXIT_AUTH)
    # Written into the clone's config by libgit2, never on a command line another user's `ps` shows.
    config = repo.config
    key, value = (f"http.{server}/.extraHeader", f"Authorization: Bearer {token}") if http else \
        ("push.pushOption", f"token={token}")
    with contextlib.suppress(pygit2.GitError, KeyError):  # nothing set before
        config.delete_multivar(key, "^Authorization: Bearer " if http else "^token=")
    config.set_multivar(key, "^$", value)
    config_file = Path(repo.path) / "config"
    config_file.chmod(0o600)  # it holds a token now
    click.echo(f"set {key} in {config_file} (mode 0600); push with `git push {remote} HEAD:{PUSH_REF}`")
    if http:
        _warn_unless_a_person(server, token)


def _warn_unless_a_person(server: str, token: str) -> None:
    """Say on stderr when the stored token is not a person's (agents submit, they never push), as
    the service's /whoami answers; a service that does not answer now is no reason to refuse."""
    try:
        reply = Client(server, token, retry_for_s=0).get("/whoami")
    except (OSError, VerifierError):
        return
    kind = reply.body.get("type") if reply.status == 200 else None
    if reply.status == 200 and kind != "human":
        click.echo(f"warning: this token is {reply.body.get('agent')!r}'s, an agent's: agents do not push "
                   "(their patches go with `rw submit`); set a person's token and run `rw git setup` again",
                   err=True)
    elif reply.status in (401, 403):
        click.echo(f"warning: {server} refuses this token ({reply.error_code}): the push will be refused too",
                   err=True)

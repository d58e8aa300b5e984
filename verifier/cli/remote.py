"""What every client command shares (`--server URL`, the token from RW_TOKEN, retries, printing a
reply), kept light: these commands start in a fraction of the time of the in-process ones.

The server is `--server`, else RW_SERVER, else the client config's default server; the token is
RW_TOKEN, else the client config's for that server (`rw join` stores them; verifier.client.config)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, NoReturn
from urllib.parse import quote

import click

from verifier.cli.app import EXIT_AUTH, EXIT_REJECTED, RwError, exit_code_of_reply
from verifier.cli.warm import pick_warm
from verifier.client.config import default_server, stored_token
from verifier.client.http import Client, Reply
from verifier.constants import READ_RETRY_S
from verifier.errors import FormatError, Unreachable, UntrustedReply
from verifier.formats.duration import parse_duration


def _server_or_joined(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    if value:
        return value
    try:
        joined = default_server()
    except FormatError as exc:
        raise click.UsageError(str(exc)) from exc
    if joined is None:
        raise click.UsageError("no server: pass --server URL, set RW_SERVER, or `rw join SERVER CODE` first")
    return joined


server_option = click.option("--server", envvar="RW_SERVER", show_envvar=True, metavar="URL",
                             callback=_server_or_joined,
                             help="The verifier service, e.g. http://127.0.0.1:8765 (or RW_SERVER, or the server "
                                  "`rw join` stored).")


def token_for(server: str, *, person: bool = False) -> str:
    """RW_TOKEN, else the token the client config holds for `server` (RW_AGENT picks an agent's)."""
    try:
        return os.environ.get("RW_TOKEN", "") or stored_token(server, agent=os.environ.get("RW_AGENT") or None,
                                                              person=person)
    except FormatError as exc:
        raise RwError(str(exc)) from exc


def client_for(server: str, retry_for: str = f"{READ_RETRY_S}s", *, token_required: bool = True,
               person: bool = False) -> Client:
    token = token_for(server, person=person)
    if token_required and not token:
        raise RwError("no token: set RW_TOKEN (or `rw join SERVER CODE` to store one)", EXIT_AUTH)
    try:
        window = parse_duration(retry_for, "--retry-for").total_seconds()
        return Client(server, token or None, retry_for_s=window, on_retry=lambda problem, wait: click.echo(
            f"service unavailable ({problem}); retrying in {wait:.1f}s", err=True))
    except FormatError as exc:
        raise RwError(str(exc)) from exc


def untrusted(message: str) -> RwError:
    """The error of a served value or tree the client refuses (`UntrustedReply`'s exit code)."""
    return RwError(f"[{UntrustedReply.code}] {message}", UntrustedReply.exit_code)


def call(action: Callable[[], Reply]) -> Reply:
    try:
        return action()
    except Unreachable as exc:
        raise RwError(str(exc), exc.exit_code) from exc


def fail_reply(reply: Reply) -> NoReturn:
    raise RwError(f"HTTP {reply.status} [{reply.error_code}] {reply.error_message}", exit_code_of_reply(reply.status))


def show(reply: Reply, as_json: bool, text: str) -> None:
    if reply.status >= 400:
        fail_reply(reply)
    click.echo(json.dumps(reply.body, indent=2, sort_keys=True) if as_json else text)


def ok(reply: Reply) -> Reply:
    """The reply, or the error it carries as the command's error."""
    if reply.status >= 400:
        fail_reply(reply)
    return reply


def remote_payload(server: str, slug: str, leaf_id: str) -> dict[str, Any]:
    """`rw leaf show --server`: what the service hands an agent for the leaf, and its state as the
    board shows it (the service's one `leaf_state`)."""
    client = client_for(server, token_required=False)
    where = f"/projects/{quote(slug)}/leaves/{quote(leaf_id)}"
    body: dict[str, Any] = ok(call(lambda: client.get(f"{where}/payload", auth=False))).body
    leaf = ok(call(lambda: client.get(where, auth=False))).body
    return {**body, "state": leaf.get("state"), "claimed_by": leaf.get("claimed_by")}


def remote_source_text(server: str, slug: str, source_id: str) -> str:
    """`rw source text --server`: the derived text excerpts are matched against."""
    client = client_for(server, token_required=False)
    reply = ok(call(lambda: client.get(f"/projects/{quote(slug)}/sources/{quote(source_id)}/text", auth=False)))
    text = reply.body.get("text")
    if not isinstance(text, str):
        raise untrusted(f"refusing what the server sent: the text of {source_id} is not a string")
    return text


def claim_leaf(client: Client, slug: str, leaf_id: str | None, ttl: str) -> tuple[str, Reply]:
    """Claim LEAF_ID, or with None a warm extract leaf from the board (`verifier.cli.warm`)."""
    if leaf_id is None:
        board = ok(call(lambda: client.get(f"/projects/{quote(slug)}/leaves", {"state": "open"}, auth=False)))
        leaf_id = pick_warm(board.body.get("leaves", []))
        if leaf_id is None:
            raise RwError(f"no open extract leaf in {slug}; see `rw board {slug}` for other kinds", EXIT_REJECTED)
    chosen = leaf_id
    return chosen, call(lambda: client.post_json(f"/projects/{quote(slug)}/leaves/{quote(chosen)}/claim",
                                                 {"ttl_s": int(parse_duration(ttl, "--ttl").total_seconds())}))

"""What every client command shares (`--server URL`, the token from RW_TOKEN, retries, printing a
reply), kept light: these commands start in a fraction of the time of the in-process ones."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, NoReturn
from urllib.parse import quote

import click

from verifier.cli.app import EXIT_AUTH, EXIT_REJECTED, EXIT_USAGE, RwError
from verifier.cli.warm import pick_warm
from verifier.client.http import Client, Reply, Unreachable
from verifier.errors import FormatError

EXIT_UNREACHABLE = 5
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
server_option = click.option("--server", envvar="RW_SERVER", show_envvar=True, required=True, metavar="URL",
                             help="The verifier service, e.g. http://127.0.0.1:8765 (or RW_SERVER).")


def seconds(text: str) -> float:
    """A duration like 90s, 30m, 2h, 7d in seconds."""
    if len(text) < 2 or text[-1] not in _UNITS or not text[:-1].isdigit():
        raise RwError(f"duration {text!r}: expected a number and s, m, h or d, like 30m")
    return float(int(text[:-1]) * _UNITS[text[-1]])


# Reads (board, claim, leaf, source text, messages) give up sooner than a submission, which keeps
# its verdict worth waiting for (`--retry-for`, 10 minutes by default).
READ_RETRY = "30s"


def client_for(server: str, retry_for: str = READ_RETRY, *, token_required: bool = True) -> Client:
    token = os.environ.get("RW_TOKEN", "")
    if token_required and not token:
        raise RwError("no token: set RW_TOKEN", EXIT_AUTH)
    try:
        return Client(server, token or None, retry_for_s=seconds(retry_for), on_retry=lambda problem, wait: click.echo(
            f"service unavailable ({problem}); retrying in {wait:.1f}s", err=True))
    except FormatError as exc:
        raise RwError(str(exc)) from exc


def call(action: Callable[[], Reply]) -> Reply:
    try:
        return action()
    except Unreachable as exc:
        raise RwError(str(exc), EXIT_UNREACHABLE) from exc


def fail_reply(reply: Reply) -> NoReturn:
    code = EXIT_AUTH if reply.status == 401 else EXIT_REJECTED if reply.status in (403, 409) else EXIT_USAGE
    raise RwError(f"HTTP {reply.status} [{reply.error_code}] {reply.error_message}", code)


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
    return str(reply.body["text"])


def claim_leaf(client: Client, slug: str, leaf_id: str | None, ttl: str) -> tuple[str, Reply]:
    """Claim LEAF_ID, or with None a warm extract leaf from the board (`verifier.cli.warm`)."""
    if leaf_id is None:
        board = ok(call(lambda: client.get(f"/projects/{quote(slug)}/leaves", {"state": "open"}, auth=False)))
        leaf_id = pick_warm(board.body.get("leaves", []))
        if leaf_id is None:
            raise RwError(f"no open extract leaf in {slug}; see `rw board {slug}` for other kinds", EXIT_REJECTED)
    chosen = leaf_id
    return chosen, call(lambda: client.post_json(f"/projects/{quote(slug)}/leaves/{quote(chosen)}/claim",
                                                 {"ttl_s": int(seconds(ttl))}))

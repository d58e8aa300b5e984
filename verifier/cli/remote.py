"""What every client command shares (`--server URL`, the token from RW_TOKEN, retries, printing a
reply), kept light: these commands start in a fraction of the time of the in-process ones.

`--server` is read one way by every command: the option, else RW_SERVER; the token is RW_TOKEN,
else the client config's for that server (`rw join` stores them; verifier.client.config).
Commands that only talk to a service (`board`, `claim`, `work`...) take `server_option` (one is
required: the option, RW_SERVER, or the default server `rw join` stored); commands that also
work on this machine's RW_HOME (`hold`, `revert`, `verdict`, `leaf add`, `seal`,
`digest`, `scores`, `ledger`, `eval`, `repair`, `planner wake`, `source text`, `audit`...) take
`remote_option`, and run in-process only when neither names a server (and, with no RW_HOME set,
only when `rw join` stored no server either). A person's action sends the person's stored token
when RW_TOKEN is not set."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote

import click

from verifier.cli.app import EXIT_AUTH, RwError, exit_code_of_reply, untrusted
from verifier.constants import READ_RETRY_S
from verifier.errors import FormatError, Unreachable, UntrustedReply, VerifierError
from verifier.formats.duration import parse_duration

if TYPE_CHECKING:
    # Loaded by `client_for`, when a command first talks to a service: the agent's commands that
    # only write the folder (`rw new`, `rw trace`) import this module and never do (issue 26).
    from verifier.client.http import Client, Reply


def _server_or_joined(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    if value:
        return value
    from verifier.client.config import default_server  # noqa: PLC0415 - read only when no server was named

    try:
        joined = default_server()
    except FormatError as exc:
        raise click.UsageError(str(exc)) from exc
    if joined is None:
        raise click.UsageError("no server: pass --server URL, set RW_SERVER, or `rw join SERVER CODE` first")
    return joined


def _server_unless_home(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    return server_unless_home(value)


def server_unless_home(value: str | None) -> str | None:
    """A person's command runs where they are: on the service named by --server or RW_SERVER;
    else on RW_HOME when it is set; else on the server `rw join` stored (a person's own machine
    has no home); else on the default home."""
    if value or os.environ.get("RW_HOME"):
        return value or None
    from verifier.client.config import default_server  # noqa: PLC0415 - read only when no server was named

    try:
        return default_server()
    except FormatError as exc:
        raise click.UsageError(str(exc)) from exc


remote_option = click.option("--server", envvar="RW_SERVER", show_envvar=True, default=None, metavar="URL",
                             callback=_server_unless_home,
                             help="Ask the verifier service at URL (or RW_SERVER; or, with no RW_HOME, the server "
                                  "`rw join` stored) instead of this machine's RW_HOME.")
server_option = click.option("--server", envvar="RW_SERVER", show_envvar=True, metavar="URL",
                             callback=_server_or_joined,
                             help="The verifier service, e.g. http://127.0.0.1:8765 (or RW_SERVER, or the server "
                                  "`rw join` stored).")


def token_for(server: str, *, person: bool = False) -> str:
    """RW_TOKEN, else the token the client config holds for `server` (RW_AGENT picks an agent's)."""
    if os.environ.get("RW_TOKEN"):
        return os.environ["RW_TOKEN"]
    from verifier.client.config import stored_token  # noqa: PLC0415 - the config's model loads pydantic

    try:
        return stored_token(server, agent=os.environ.get("RW_AGENT") or None, person=person)
    except FormatError as exc:
        raise RwError(str(exc)) from exc


def client_for(server: str, retry_for: str = f"{READ_RETRY_S}s", *, token_required: bool = True,
               person: bool = False) -> Client:
    from verifier.client.http import Client  # noqa: PLC0415 - see the imports

    token = token_for(server, person=person)
    if token_required and not token:
        raise RwError("no token: set RW_TOKEN (or `rw join SERVER CODE` to store one)", EXIT_AUTH)
    try:
        window = parse_duration(retry_for, "--retry-for").total_seconds()
        return Client(server, token or None, retry_for_s=window, on_retry=lambda problem, wait: click.echo(
            f"service unavailable ({problem}); retrying in {wait:.1f}s", err=True))
    except FormatError as exc:
        raise RwError(str(exc)) from exc


@contextlib.contextmanager
def loop_errors() -> Iterator[None]:
    """The agent's loop's refusals (verifier.agentkit.loop) as the command's `Error: ...` line,
    with the same message and the exit code the error's class carries."""
    try:
        yield
    except UntrustedReply as exc:
        raise untrusted(str(exc)) from exc
    except VerifierError as exc:
        raise RwError(str(exc), exc.exit_code) from exc


def warn_if_server_newer(client: Client) -> None:
    """Say on stderr when the service's verifier is newer than this client's (GET /version); a
    service too old to answer, or not answering, is no reason to stop here."""
    from verifier.agentkit import loop  # noqa: PLC0415 - the agent's loop loads the formats; `rw board` needs none
    from verifier.version import verifier_version  # noqa: PLC0415 - it reads the package's files

    warning = loop.served_version_warning(client, verifier_version())
    if warning is not None:
        click.echo(f"warning: {warning}", err=True)


def call(action: Callable[[], Reply]) -> Reply:
    try:
        return action()
    except Unreachable as exc:
        raise RwError(str(exc), exc.exit_code) from exc


def fail_reply(reply: Reply) -> NoReturn:
    raise RwError(f"HTTP {reply.status} [{reply.error_code}] {reply.error_message}",
                  exit_code_of_reply(reply.status, reply.error_code))


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
    with loop_errors():
        from verifier.agentkit import loop  # noqa: PLC0415 - loaded by the commands that claim, not by every client

        return loop.claim_leaf(client, slug, leaf_id, int(parse_duration(ttl, "--ttl").total_seconds()))


def project_url(slug: str, *parts: str) -> str:
    """/projects/SLUG/PART/... with every part quoted."""
    return "/".join([f"/projects/{quote(slug, safe='')}", *(quote(part, safe="") for part in parts)])


def remote_get(server: str, where: str, params: dict[str, str] | None = None, *, auth: bool = False) -> dict[str, Any]:
    """GET a JSON answer of the service (reads are open unless `auth`), or the error as the command's."""
    client = client_for(server, token_required=auth, person=True)
    body: dict[str, Any] = ok(call(lambda: client.get(where, params, auth=auth))).body
    return body


def remote_post(server: str, where: str, value: dict[str, object]) -> dict[str, Any]:
    """POST a person's action (RW_TOKEN required) and return the JSON answer, or the error as the
    command's (a 403 `not_authorised` exits 10, as in-process)."""
    client = client_for(server, person=True)
    body: dict[str, Any] = ok(call(lambda: client.post_json(where, dict(value)))).body
    return body


def remote_leaf_add(server: str, slug: str, request: dict[str, object]) -> str:
    """`rw leaf add --server`: the new leaf's id."""
    body = remote_post(server, project_url(slug, "leaves"), {k: v for k, v in request.items() if v not in (None, ())})
    leaf_id = body.get("leaf_id")
    if not isinstance(leaf_id, str):
        raise untrusted("refusing what the server sent: no leaf id")
    return leaf_id

"""`rw serve`, and the client side of the service: `rw submit --server`, board, claim, release,
thread, messages, outcome. The token comes from RW_TOKEN and travels only as a Bearer header."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote

import click

from verifier.cli.app import RwError, cli, home_from_env
from verifier.cli.remote import call as _call
from verifier.cli.remote import claim_leaf, server_option
from verifier.cli.remote import client_for as _client
from verifier.cli.remote import fail_reply as _fail
from verifier.cli.remote import show as _show
from verifier.cli.verdicts import show_verdict
from verifier.client.loopback import is_loopback
from verifier.constants import (
    BODY_IDLE_TIMEOUT_S,
    BODY_TIMEOUT_S,
    CLAIM_TTL_S,
    HEADER_TIMEOUT_S,
    OUTAGE_MIN_S,
    SUBMIT_RETRY_S,
)
from verifier.errors import ConflictError, Rejected
from verifier.text.visible import shown


def remote_submit(server: str, slug: str, leaf_id: str, patch_file: Path, trace_path: Path, as_json: bool,
                  retry_for: str = f"{SUBMIT_RETRY_S // 60}m") -> NoReturn:
    """`rw submit --server URL`: the same verdict and exit codes as in-process, over HTTP."""
    from verifier.store.traces import load_bundle  # noqa: PLC0415 - start-up cost: only a submit needs it

    client = _client(server, retry_for)
    try:
        patch = patch_file.read_bytes()
        bundle = load_bundle(trace_path)
    except Rejected as exc:
        raise RwError(f"trace bundle: {exc}") from exc
    except OSError as exc:
        raise RwError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    reply = _call(lambda: client.submit(slug, leaf_id, bundle, patch))
    verdict = reply.body.get("verdict")
    if not isinstance(verdict, dict):
        _fail(reply)
    code = show_verdict(verdict, as_json, reply.body.get("submission_id"))
    if not as_json:
        click.echo(f"submission {reply.body.get('submission_id')}", err=True)
    raise SystemExit(code)


def remote_edit(server: str, slug: str, patch_file: Path, trace_path: Path | None, base: str | None, as_json: bool,
                retry_for: str = f"{SUBMIT_RETRY_S // 60}m") -> NoReturn:
    """`rw submit SLUG --patch --server URL` without --leaf: a person's edit, with the same verdict,
    notes and exit codes as in-process."""
    from verifier.store.traces import load_bundle  # noqa: PLC0415 - start-up cost: only a submit needs it

    client = _client(server, retry_for, person=True)
    try:
        patch = patch_file.read_bytes()
        bundle = load_bundle(trace_path) if trace_path is not None else {}
    except Rejected as exc:
        raise RwError(f"trace bundle: {exc}") from exc
    except OSError as exc:
        raise RwError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    reply = _call(lambda: client.edit(slug, patch, bundle, base=base))
    verdict = reply.body.get("verdict")
    if reply.status >= 400 or not isinstance(verdict, dict):
        _fail(reply)
    sealed, note = reply.body.get("sealed"), reply.body.get("note")
    if isinstance(sealed, list) and sealed:
        click.echo(f"sealed baseline for {', '.join(map(str, sealed))}", err=True)
    if isinstance(note, str) and note:
        click.echo(f"note: {note}", err=True)
    raise SystemExit(show_verdict(verdict, as_json))


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback belongs behind an authenticated TLS proxy.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64))
@click.option("--allowed-host", "allowed_hosts", multiple=True,
              help="A Host header name to answer besides the loopback names (repeatable).")
@click.option("--header-timeout", default=HEADER_TIMEOUT_S, show_default=True, type=click.FloatRange(0.1, 600),
              help="Seconds a client has to send the request head.")
@click.option("--body-idle-timeout", default=BODY_IDLE_TIMEOUT_S, show_default=True, type=click.FloatRange(0.1, 600),
              help="Longest pause (seconds) while a body streams in.")
@click.option("--body-timeout", default=BODY_TIMEOUT_S, show_default=True, type=click.FloatRange(0.1, 3600),
              help="Seconds a client has to send a whole body.")
@click.option("--outage-min", default=OUTAGE_MIN_S, show_default=True, type=click.FloatRange(0, None),
              help="Outages shorter than this (seconds) do not extend leaf expiry.")
@click.option("--openapi", "print_openapi", is_flag=True, help="Print the OpenAPI description and exit.")
def serve_cmd(host: str, port: int, workers: int, allowed_hosts: tuple[str, ...], header_timeout: float,
              body_idle_timeout: float, body_timeout: float, outage_min: float, print_openapi: bool) -> None:
    """Run the verifier as an HTTP service on RW_HOME (recovering from any crash first)."""
    # Imported here, not at the top: the client commands of this module start without the service.
    from verifier.service.config import ServiceConfig  # noqa: PLC0415
    from verifier.service.openapi import openapi_text  # noqa: PLC0415
    from verifier.service.server import serve  # noqa: PLC0415

    if print_openapi:
        click.echo(openapi_text(), nl=False)
        return
    home = home_from_env()
    if not is_loopback(host):
        click.echo(f"warning: listening on {host}; put the service behind an authenticated TLS reverse proxy",
                   err=True)
    config = ServiceConfig(home=home.root, host=host, port=port, allowed_hosts=allowed_hosts, workers=workers,
                           header_timeout_s=header_timeout, body_idle_timeout_s=body_idle_timeout,
                           body_timeout_s=body_timeout, outage_min_s=outage_min)
    try:
        serve(config, echo=lambda line: click.echo(line, err=True))
    except ConflictError as exc:
        raise RwError(str(exc)) from exc


@cli.command("board")
@click.argument("slug")
@server_option
@click.option("--state", default="open", show_default=True,
              type=click.Choice(["open", "claimed", "expired", "accepted", "held", "rejected", "reverted", "all"]))
@click.option("--json", "as_json", is_flag=True)
def board_cmd(slug: str, server: str, state: str, as_json: bool) -> None:
    """The task board: SLUG's leaves in a state (reading needs no token; with RW_TOKEN an agent is
    not shown reviews of its own objects, which it may not claim)."""
    client = _client(server, token_required=False)
    reply = _call(lambda: client.get(f"/projects/{quote(slug)}/leaves", {"state": state}, auth=True))
    leaves = reply.body.get("leaves", [])
    _show(reply, as_json, board_text(slug, state, leaves))


_INPUT_ORDER = ("source_id", "object_path", "hypothesis_id", "gap")


def leaf_input(inputs: Mapping[str, object]) -> str:
    """What a leaf works on, in one field: its source, object, hypothesis (with revision) or gap."""
    parts = []
    for name in _INPUT_ORDER:
        value = inputs.get(name)
        if value is None:
            continue
        if name == "hypothesis_id" and inputs.get("hypothesis_revision") is not None:
            value = f"{value}@r{inputs['hypothesis_revision']}"
        parts.append(f"gap: {value}" if name == "gap" else str(value))
    findings = inputs.get("finding_ids")
    if isinstance(findings, list) and findings:
        parts.append(f"{len(findings)} finding(s)")
    return ", ".join(parts) or "-"


def _mapping(value: object) -> Mapping[str, object]:
    return {str(key): item for key, item in value.items()} if isinstance(value, dict) else {}


def board_text(slug: str, state: str, leaves: Sequence[Mapping[str, object]]) -> str:
    """The board as a table under a header; an empty board says so and what to do next."""
    if not leaves:
        which = "" if state == "all" else f"{state} "
        hint = f"; ask the steward to run `rw planner wake {slug}`" if state in ("open", "all") else ""
        return f"{slug}: no {which}leaves{hint}"
    lines = ["LEAF\tKIND\tSTATE\tEXPIRES\tTITLE\tINPUT"]
    for leaf in leaves:
        line = (f"{leaf['leaf_id']}\t{leaf['kind']}{' (warm)' if leaf.get('warm') else ''}\t{leaf['state']}\t"
                f"{leaf['expires_at']}\t{leaf.get('title') or '-'}\t{leaf_input(_mapping(leaf.get('inputs')))}")
        if leaf.get("claimed_by"):
            line += f"\tclaimed by {leaf['claimed_by']} until {leaf['claim_expires_at']}"
        lines.append(line)
    return "\n".join(lines)


@cli.command("claim")
@click.argument("slug")
@click.argument("leaf_id", required=False)
@server_option
@click.option("--warm", is_flag=True, help="Claim a warm extract leaf from the board instead of naming one.")
@click.option("--ttl", default=f"{CLAIM_TTL_S // 60}m", show_default=True,
              help="How long to hold the claim (like 30m, 2h).")
@click.option("--json", "as_json", is_flag=True)
def claim_cmd(slug: str, leaf_id: str | None, server: str, warm: bool, ttl: str, as_json: bool) -> None:
    """Claim LEAF_ID (or, with --warm, a warm extract leaf) until its claim expires."""
    if (leaf_id is None) == (not warm):
        raise RwError("give a LEAF_ID or --warm, not both")
    client = _client(server)
    leaf_id, reply = claim_leaf(client, slug, leaf_id, ttl)
    _show(reply, as_json, f"claimed {slug}/{leaf_id} until {reply.body.get('expires_at')}")


@cli.command("release")
@click.argument("slug")
@click.argument("leaf_id")
@server_option
def release_cmd(slug: str, leaf_id: str, server: str) -> None:
    """Release your claim on LEAF_ID."""
    client = _client(server)
    reply = _call(lambda: client.request("DELETE", f"/projects/{quote(slug)}/leaves/{quote(leaf_id)}/claim"))
    _show(reply, False, f"released {slug}/{leaf_id}")


@cli.command("thread")
@click.argument("slug")
@click.argument("leaf_id")
@server_option
@click.option("--post", "text", help="Post this question or note on the thread.")
@click.option("--json", "as_json", is_flag=True)
def thread_cmd(slug: str, leaf_id: str, server: str, text: str | None, as_json: bool) -> None:
    """Read a leaf's thread (outcomes, questions), or post on it."""
    path = f"/projects/{quote(slug)}/leaves/{quote(leaf_id)}/messages"
    if text is not None:
        client = _client(server)
        reply = _call(lambda: client.post_json(path, {"body": text}))
        _show(reply, as_json, f"posted message {reply.body.get('id')}")
        return
    client = _client(server, token_required=False)
    reply = _call(lambda: client.get(path, auth=False))
    _show(reply, as_json, "\n".join(f"#{m['id']} {m['at']} {shown(str(m['from']))}: "
                                    f"{shown(str(m['body']), lines=True)}" for m in reply.body.get("messages", [])))


@cli.command("messages")
@server_option
@click.option("--after", default=0, show_default=True, type=click.IntRange(0, None),
              help="Only messages with a larger id (the last id you read).")
@click.option("--json", "as_json", is_flag=True)
def messages_cmd(server: str, after: int, as_json: bool) -> None:
    """Your inbox: the first-minute message and the return triggers."""
    client = _client(server)
    reply = _call(lambda: client.get("/messages", {"after": after}))
    _show(reply, as_json, "\n".join(f"#{m['id']} {m['at']} [{shown(str(m['kind']))}] "
                                    f"{shown(str(m['body']), lines=True)}" for m in reply.body.get("messages", [])))


@cli.command("outcome")
@click.argument("submission_id")
@server_option
@click.option("--json", "as_json", is_flag=True)
def outcome_cmd(submission_id: str, server: str, as_json: bool) -> None:
    """The state and verdict of one of your submissions."""
    client = _client(server)
    reply = _call(lambda: client.get(f"/submissions/{quote(submission_id)}"))
    verdict = reply.body.get("verdict") or {}
    _show(reply, as_json, f"{submission_id}: {reply.body.get('state')} {verdict.get('outcome', '')}".rstrip())

"""The agent's commands, needing only a server URL and a token (no RW_HOME): `rw work` (claim, clone,
write the payload beside the clone, start the trace), `rw new ...` (write a correct object file),
`rw trace ...` (record events) and the submit of a working folder (`rw submit` run inside it; see
`submit_work`). `rw check` is in check_cmds, so these start without the checks. skill/SKILL.md is
their manual.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

import click

from verifier.agentkit import served
from verifier.agentkit.objects import finding_file, link_file, note_file, review_file, source_files
from verifier.agentkit.safefiles import LinkRefused
from verifier.agentkit.skillref import current_skill_version
from verifier.agentkit.tracing import EVENT_TYPES, LEVELS, TraceLog, clean_manifest
from verifier.agentkit.workdir import (
    STATE_DIR,
    Work,
    WorkState,
    clone_at,
    default_final,
    find_work,
    make_patch,
    manifest_for,
    remove_clone,
)
from verifier.checks.citation import ExcerptMissing, first_difference, locate_excerpt
from verifier.cli.app import EXIT_REJECTED, RwError, cli, untrusted
from verifier.cli.remote import call, claim_leaf, client_for, ok, remote_source_text, server_option
from verifier.cli.verdicts import show_verdict
from verifier.client.http import Client
from verifier.constants import CLAIM_TTL_S
from verifier.errors import FormatError
from verifier.formats.base import check_slug
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE
from verifier.formats.trace import BUNDLE_ORDER, bundle_digest
from verifier.state.layout import FIELD_GUIDE


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def current_work() -> Work:
    try:
        return find_work(Path.cwd())
    except FileNotFoundError as exc:
        raise RwError(str(exc)) from exc
    except LinkRefused as exc:
        raise untrusted(str(exc)) from exc


@contextlib.contextmanager
def no_links() -> Iterator[None]:
    """A link met on the way to a file of the folder is the command's refusal (exit 8), not a crash."""
    try:
        yield
    except LinkRefused as exc:
        raise untrusted(str(exc)) from exc


def trace_of(work: Work) -> TraceLog:
    return TraceLog(work.trace_dir, work.state.level, root=work.root)


def record_tool(work: Work, command: str, result: dict[str, str]) -> None:
    """Each `rw` command run in the folder is a tool call of the agent's, recorded as one. Only ids,
    paths and command names go in (rw's own words), so the records need no secret scan."""
    log = trace_of(work)
    log.add_own(now_iso(), "tool_call", {"tool": "rw", "command": command})
    log.add_own(now_iso(), "tool_result", result)


# rw work ----------------------------------------------------------------------------------------------

def _write_inputs(work: Work, payload: dict[str, Any]) -> None:
    """The payload, the Field Guide and each source's text into `.rw/`, never through a link (the
    file names are checked ids: `served.leaf_payload`)."""
    work.write(f"{STATE_DIR}/payload.json", (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    work.write(f"{STATE_DIR}/FIELD-GUIDE.md", str(payload.get("field_guide", "")).encode("utf-8"))
    for source_id in work.state.source_ids:
        text = remote_source_text(work.state.server, work.state.project, source_id)
        work.write(f"{STATE_DIR}/sources/{source_id}.txt", text.encode("utf-8"))


def _announce(work: Work, what: str) -> None:
    """What `rw work` made goes to stderr; stdout is the folder alone, so `cd "$(rw work SLUG --warm)"`
    works whatever the leaf's id (a glob like `cd extract-*` breaks on the second leaf)."""
    dest = work.root
    click.echo(f"claimed {what}; working folder {dest}", err=True)
    click.echo(f"  payload   {dest / '.rw' / 'payload.json'}", err=True)
    for source_id in work.state.source_ids:
        click.echo(f"  source    {dest / '.rw' / 'sources' / (source_id + '.txt')}", err=True)
    click.echo(f"  guide     {dest / '.rw' / FIELD_GUIDE}", err=True)
    click.echo("next: cd there, `rw new ...`, `rw check`, `rw submit`", err=True)
    click.echo(str(dest))


@cli.command("work")
@click.argument("slug")
@click.argument("leaf_id", required=False)
@server_option
@click.option("--warm", is_flag=True, help="Take a warm extract leaf from the board instead of naming one.")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="Where to make the working folder (default: ./LEAF_ID).")
@click.option("--level", type=click.Choice(LEVELS), default="L2", show_default=True,
              help="Trace level: L1 tool calls and results, L2 adds reasoning, L3 adds the starting context.")
@click.option("--ttl", default=f"{CLAIM_TTL_S // 60}m", show_default=True, help="How long to hold the claim.")
def work_cmd(slug: str, leaf_id: str | None, server: str, warm: bool, folder: Path | None, level: str,
             ttl: str) -> None:
    """Claim a leaf, clone the project at its base, write its payload and sources beside it, start the trace.

    Prints the working folder it made as the one line on stdout: `cd "$(rw work SLUG --warm)"`."""
    if (leaf_id is None) == (not warm):
        raise RwError("give a LEAF_ID or --warm, not both")
    try:
        check_slug(slug)
        if leaf_id is not None:
            served.leaf_id(leaf_id, "LEAF_ID")
    except (FormatError, served.Untrusted) as exc:
        raise RwError(str(exc)) from exc
    if folder is not None and folder.exists() and any(folder.iterdir()):
        raise RwError(f"{folder} exists and is not empty; choose another --dir")
    client = client_for(server)
    try:
        me = served.whoami(ok(call(lambda: client.get("/whoami"))).body)
        chosen, claimed = claim_leaf(client, slug, leaf_id, ttl)
        served.leaf_id(chosen, "the board's warm leaf")
        ok(claimed)
        payload = ok(call(lambda: client.get(f"/projects/{quote(slug)}/leaves/{quote(chosen)}/payload",
                                             auth=False))).body
        leaf = served.leaf_payload(payload, chosen)
    except served.Untrusted as exc:
        raise untrusted(f"refusing what the server sent: {exc}") from exc
    contract = leaf.contract
    # The default folder is one checked segment (a leaf id) below the current folder: a served id
    # can never place the clone anywhere else.
    target = folder or Path.cwd() / chosen
    if target.is_symlink():
        raise untrusted(f"{target} is a link; rw work makes its folder itself (choose another --dir)")
    dest = target.resolve()
    made = not dest.exists()
    try:
        clone_at(f"{server.rstrip('/')}/projects/{quote(slug)}.git", dest, contract.base_revision)
    except LinkRefused as exc:
        raise untrusted(str(exc)) from exc
    except (OSError, RuntimeError, ValueError) as exc:
        raise RwError(f"cannot clone {slug}: {exc}") from exc
    work = Work(dest, WorkState(server=server, project=slug, leaf_id=chosen, kind=contract.kind,
                                base_revision=contract.base_revision, agent=me.agent, operator=me.operator,
                                level=level, source_ids=leaf.source_ids, started_at=now_iso()))
    try:
        with no_links():
            work.save()
            _write_inputs(work, payload)
            record_tool(work, f"rw work {slug} {chosen}", {"leaf_id": chosen, "kind": contract.kind,
                                                           "base_revision": contract.base_revision,
                                                           "sources": " ".join(work.state.source_ids)})
            if level == "L3":
                trace_of(work).set_context(json.dumps(payload, indent=2, sort_keys=True))
    except RwError:
        remove_clone(dest, made)  # no half-made working folder is left behind
        raise
    _announce(work, f"{slug}/{chosen} ({contract.kind})")


# rw new -----------------------------------------------------------------------------------------------

@cli.group("new")
def new_group() -> None:
    """Write an object file into the working folder: ids and offsets computed, content checked."""


def _put(work: Work, command: str, path: str, data: bytes, *, overwrite: bool = False) -> None:
    with no_links():
        if work.has(path) and not overwrite:
            raise RwError(f"{path} already exists: the same content gives the same id (one object per id)")
        work.write(path, data)
        record_tool(work, f"rw new {command}", {"wrote": path})
    click.echo(path)


def _only(values: list[str], what: str, given: str | None) -> str:
    if given is not None:
        return given
    if len(values) != 1:
        raise RwError(f"this leaf has {len(values)} {what}s ({', '.join(values) or 'none'}); name one")
    return values[0]


@new_group.command("finding")
@click.option("--excerpt", required=True, help="The exact words of the source (see .rw/sources/).")
@click.option("--statement", required=True, help="What the excerpt shows, in your words.")
@click.option("--limitation", required=True, help="What it does not show, or why it may mislead.")
@click.option("--source", "source_id", help="The source quoted (default: the leaf's source).")
def new_finding(excerpt: str, statement: str, limitation: str, source_id: str | None) -> None:
    """A finding quoting the source exactly; refuses an excerpt that is not in the text."""
    work = current_work()
    source_id = _only(work.state.source_ids, "source", source_id)
    try:
        text = work.source_text(source_id)
    except FileNotFoundError as exc:
        raise RwError(str(exc)) from exc
    match = locate_excerpt(text, excerpt)
    if isinstance(match, ExcerptMissing):
        raise RwError(f"the excerpt is not in the text of {source_id}; the closest passage is at offset "
                      f"{match.closest_offset} ({match.similarity:.0f}% similar): {match.closest_text!r}"
                      + "".join(f"; {detail}" for detail in [first_difference(excerpt, match.closest_text,
                                                                              match.closest_offset)] if detail)
                      + ". Quote the text exactly as .rw/sources holds it", EXIT_REJECTED)
    path, data = finding_file(source_id=source_id, source_text=text, excerpt=excerpt, statement=statement,
                              limitation=limitation, leaf_id=work.state.leaf_id, location=(match.start, match.end))
    _put(work, "finding", path, data)


@new_group.command("source")
@click.option("--url", required=True)
@click.option("--file", "data_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The bytes you fetched from the URL, as they were served.")
@click.option("--media-type", required=True, type=click.Choice(sorted(EXTENSION_BY_MEDIA_TYPE)))
@click.option("--language", required=True, help="Like en.")
@click.option("--rights", required=True, help="Like public, cc-by, fair-use-quote (PROJECT.md's source policy).")
@click.option("--published", type=click.DateTime(["%Y-%m-%d"]), help="Publication date, YYYY-MM-DD.")
@click.option("--title")
def new_source(url: str, data_file: Path, media_type: str, language: str, rights: str, published: datetime | None,
               title: str | None) -> None:
    """A source record and its retained bytes (scout leaves)."""
    work = current_work()
    published_on: date | None = published.date() if published else None
    files = source_files(url=url, data=data_file.read_bytes(), media_type=media_type, fetched_by=work.state.agent,
                         retrieved_at=datetime.now(UTC).replace(microsecond=0), language=language, rights=rights,
                         published=published_on, title=title, leaf_id=work.state.leaf_id)
    for path, data in files.items():
        _put(work, "source", path, data)


def _inputs(work: Work) -> dict[str, Any]:
    inputs: dict[str, Any] = work.contract().get("inputs", {})
    return inputs


@new_group.command("link")
@click.option("--finding", "finding_id", required=True)
@click.option("--stance", required=True, type=click.Choice(["supports", "contradicts", "context"]))
@click.option("--rationale", required=True, help="Why the finding bears on the hypothesis this way.")
@click.option("--hypothesis", "hypothesis_id", help="Default: the leaf's hypothesis.")
@click.option("--revision", type=int, help="Default: the leaf's hypothesis revision.")
def new_link(finding_id: str, stance: str, rationale: str, hypothesis_id: str | None, revision: int | None) -> None:
    """A link from a finding to a hypothesis (skeptic and link leaves)."""
    work = current_work()
    inputs = _inputs(work)
    hypothesis_id = hypothesis_id or inputs.get("hypothesis_id")
    revision = revision if revision is not None else inputs.get("hypothesis_revision")
    if hypothesis_id is None or revision is None:
        raise RwError("this leaf names no hypothesis: give --hypothesis and --revision")
    path, data = link_file(finding_id=finding_id, hypothesis_id=hypothesis_id, revision=int(revision),
                           stance=stance, rationale=rationale, leaf_kind=work.state.kind, leaf_id=work.state.leaf_id)
    _put(work, "link", path, data)


@new_group.command("note")
@click.option("--source", "sources", multiple=True, required=True, metavar="SOURCE_ID",
              help="A source you searched for counter-evidence (repeatable; the project sets how many, "
                   "PROJECT.md counter_evidence_min_sources, default 3).")
@click.option("--none-found-after", type=click.IntRange(0, None),
              help="How many sources you searched (default: the number of --source given; they must agree).")
@click.option("--scout-request", "requests", multiple=True, help="A gap a scout should search (repeatable).")
def new_note(sources: tuple[str, ...], none_found_after: int | None, requests: tuple[str, ...]) -> None:
    """The "none found after N sources" note of a skeptic or link leaf, listing the sources searched."""
    work = current_work()
    inputs = _inputs(work)
    if inputs.get("hypothesis_id") is None or inputs.get("hypothesis_revision") is None:
        raise RwError("this leaf names no hypothesis; a note belongs to a skeptic or link leaf")
    listed = sorted(set(sources))
    if none_found_after is not None and none_found_after != len(listed):
        raise RwError(f"--none-found-after {none_found_after} but {len(listed)} distinct --source given; "
                      "a note lists every source it searched")
    path, data = note_file(leaf_id=work.state.leaf_id, hypothesis_id=inputs["hypothesis_id"],
                           revision=int(inputs["hypothesis_revision"]), none_found_after=len(listed),
                           scout_requests=list(requests), sources_checked=listed)
    _put(work, "note", path, data)


@new_group.command("review")
@click.option("--decision", required=True, type=click.Choice(["accept", "reject", "amend"]))
@click.option("--reason", required=True)
@click.option("--object", "object_path", help="Default: the leaf's object.")
@click.option("--amend-statement", help="amend: the corrected statement.")
@click.option("--amend-limitation", help="amend: the corrected limitation.")
@click.option("--amend-stance", type=click.Choice(["supports", "contradicts", "context"]), help="amend: a link's.")
def new_review(decision: str, reason: str, object_path: str | None, amend_statement: str | None,
               amend_limitation: str | None, amend_stance: str | None) -> None:
    """A review of the leaf's object: accept, reject or amend, with the reason."""
    work = current_work()
    object_path = object_path or _inputs(work).get("object_path")
    if not object_path:
        raise RwError("this leaf names no object to review: give --object")
    amendment = {key: value for key, value in (("statement", amend_statement), ("limitation", amend_limitation),
                                               ("stance", amend_stance)) if value is not None}
    if (decision == "amend") != bool(amendment):
        raise RwError("an amend decision needs --amend-statement, --amend-limitation or --amend-stance, and only it")
    path, data = review_file(object_path=object_path, object_id=Path(object_path).stem, decision=decision,
                             reason=reason, leaf_id=work.state.leaf_id, amendment=amendment or None)
    _put(work, "review", path, data)


@new_group.command("guide-line")
@click.option("--text", required=True, help="One surprising, reusable research lesson for this project.")
@click.option("--replace", "old", help="The exact line it replaces (default: add a line).")
def new_guide_line(text: str, old: str | None) -> None:
    """A Field Guide line, attributed to you (guide leaves)."""
    work = current_work()
    line = f"{text.strip()} (agent: {work.state.agent})"
    with no_links():
        lines = work.read(FIELD_GUIDE).decode("utf-8").splitlines() if work.has(FIELD_GUIDE) else []
    if old is not None:
        if old not in lines:
            raise RwError(f"no line {old!r} in {FIELD_GUIDE}")
        lines[lines.index(old)] = line
    else:
        lines.append(line)
    _put(work, "guide-line", FIELD_GUIDE, ("\n".join(lines) + "\n").encode("utf-8"), overwrite=True)


# rw trace -----------------------------------------------------------------------------------------------

@cli.group("trace")
def trace_group() -> None:
    """Record the trace of the leaf you work on (.rw/trace/): secrets stripped, tool output capped;
    a steward reads their own projects' stored traces with `list` and `show`."""


@trace_group.command("list")
@click.option("--kind", default=None, help="Only this leaf kind.")
@click.option("--outcome", type=click.Choice(["accepted", "held", "rejected", "crash"]), default=None,
              help="Only this outcome.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def trace_list(kind: str | None, outcome: str | None, limit: int, as_json: bool) -> None:
    """A steward reads their projects' traces: the newest traced submissions (never an agent's token)."""
    from verifier.cli.loop_cmds import list_traces  # noqa: PLC0415 - the store is the steward's, not the agent's start-up

    list_traces(kind, outcome, limit, as_json)


@trace_group.command("show")
@click.argument("trace_id")
@click.option("--file", "name", type=click.Choice(BUNDLE_ORDER), default=None, help="Print one bundle file as is.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def trace_show(trace_id: str, name: str | None, as_json: bool) -> None:
    """A steward reads one trace of their projects: its outcomes and manifest (or one file with --file)."""
    from verifier.cli.loop_cmds import show_trace  # noqa: PLC0415 - see trace_list

    show_trace(trace_id, name, as_json)


def _stripped(kinds: list[str]) -> None:
    if kinds:
        click.echo(f"stripped {len(kinds)} secret(s): {', '.join(sorted(set(kinds)))}", err=True)


@trace_group.command("add")
@click.argument("kind", type=click.Choice(EVENT_TYPES))
@click.argument("text", required=False)
@click.option("--file", "from_file", type=click.File("r", encoding="utf-8"),
              help="Read the content from a file (- for stdin).")
@click.option("--json", "as_json", is_flag=True, help="The content is a JSON object (tool calls and results).")
def trace_add(kind: str, text: str | None, from_file: Any, as_json: bool) -> None:
    """Append one event: reasoning, tool_call, tool_result or final."""
    if (text is None) == (from_file is None):
        raise RwError("give the content as TEXT or --file, not both")
    raw = text if text is not None else from_file.read()
    try:
        content: Any = json.loads(raw) if as_json else raw
    except ValueError as exc:
        raise RwError(f"--json: {exc}") from exc
    with no_links():
        recorded = trace_of(current_work()).add(now_iso(), kind, content)
    _stripped(recorded.stripped)
    if recorded.event is None:
        click.echo(f"not recorded: the trace level leaves out {kind} events", err=True)


@trace_group.command("import")
@click.argument("events_file", type=click.File("r", encoding="utf-8"))
def trace_import(events_file: Any) -> None:
    """Append events from a JSON-lines file ({ts, type, content} per line)."""
    try:
        with no_links():
            count = trace_of(current_work()).add_lines(events_file)
    except ValueError as exc:
        raise RwError(str(exc)) from exc
    click.echo(f"recorded {count} event(s)")


@trace_group.command("context")
@click.argument("context_file", type=click.File("r", encoding="utf-8"))
def trace_context(context_file: Any) -> None:
    """Keep the full starting context as context.md (sent at L3 only)."""
    with no_links():
        _stripped(trace_of(current_work()).set_context(context_file.read()))


@trace_group.command("level")
@click.argument("level", type=click.Choice(LEVELS))
def trace_level(level: str) -> None:
    """Set the level this folder's trace is sent at."""
    work = current_work()
    work.state.level = level
    with no_links():
        work.save()
    click.echo(f"trace level {level}")


# rw submit (inside a working folder) ------------------------------------------------------------------

def _ensure_final(work: Work, summary: str | None) -> None:
    log = trace_of(work)
    if not log.has_final():
        log.add(now_iso(), "final", summary or default_final(work))


def _print_messages(client: Client, work: Work) -> None:
    """The messages the verdict set off for this leaf (the first-minute message, §9.1)."""
    reply = call(lambda: client.get("/messages"))
    for message in reply.body.get("messages", []) if reply.status == 200 else []:
        if message.get("project") == work.state.project and message.get("leaf_id") == work.state.leaf_id \
                and message.get("kind") != "new_leaf":
            click.echo(f"message [{message['kind']}] {message['body']}")


def _failed_source_hint(work: Work, rejections: Sequence[Mapping[str, object]]) -> None:
    """After `url_unresolved`: the failed source is now recorded in the project under its id, so
    keeping its files would make the next attempt `stale`. Say which files to remove; the leaf
    stays workable with another URL."""
    failed = sorted({str(r["where"]) for r in rejections if r.get("code") == "url_unresolved" and r.get("where")})
    if not failed:
        return
    paths = sorted(str(path.relative_to(work.root)) for record in failed
                   for path in (work.root / record).parent.glob(Path(record).stem + ".*"))
    click.echo(f"next: the project now records {len(failed)} failed source(s); remove their files here "
               f"(rm {' '.join(paths)}), scout another URL with `rw new source`, then `rw check` and "
               "`rw submit` (the leaf is still yours)", err=True)


def submit_work(as_json: bool, retry_for: str, summary: str | None, server: str | None = None) -> NoReturn:
    """`rw submit` inside a working folder: the patch from the clone, the trace, the verdict.

    It goes to `server` when given (`rw submit --server URL`), else to the server `rw work` used."""
    work = current_work()
    client = client_for(server or work.state.server, retry_for)
    manifest, found = clean_manifest(manifest_for(work, current_skill_version(), summary))
    _stripped(found)  # the summary (or any field) carried a secret: it is sent as a marker
    with no_links():
        _ensure_final(work, summary)
        try:
            patch = make_patch(work)
        except RuntimeError as exc:
            raise RwError(str(exc)) from exc
        bundle = trace_of(work).bundle(manifest, patch)
    key = "rwk_" + bundle_digest(bundle)[:32]  # the same bundle retried is the same attempt
    reply = call(lambda: client.submit(work.state.project, work.state.leaf_id, bundle, patch, key=key))
    verdict = reply.body.get("verdict")
    if not isinstance(verdict, dict):
        ok(reply)
        raise RwError(f"the service answered without a verdict: {reply.body}")
    submission_id = str(reply.body.get("submission_id"))
    replayed = reply.headers.get("idempotent-replayed") == "true"
    if submission_id not in work.state.submitted:
        work.state.submitted.append(submission_id)
    with no_links():
        work.save()
    if replayed:  # the same bundle again: no second attempt, and say so rather than reprint silently
        click.echo(f"same attempt as #{verdict.get('ledger_seq')} ({submission_id}): this bundle was already "
                   "judged and its verdict follows again; change the files to make a new attempt", err=True)
    shown = {**verdict, "same_attempt_as": verdict.get("ledger_seq") if replayed else None} if as_json else verdict
    code = show_verdict(shown, as_json, submission_id)
    if not as_json:
        _failed_source_hint(work, verdict.get("rejections") or [])
        _print_messages(client, work)
    raise SystemExit(code)

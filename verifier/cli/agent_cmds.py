"""The agent's commands, needing only a server URL and a token (no RW_HOME): `rw work` (claim, clone,
write the payload beside the clone, start the trace), `rw new ...` (write a correct object file),
`rw trace ...` (record events) and the submit of a working folder (`rw submit` run inside it; see
`submit_work`). `rw check` is in check_cmds, so these start without the checks. skill/SKILL.md is
their manual.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from verifier.agentkit import loop
from verifier.agentkit.disclosure import check_disclosure, disclose
from verifier.agentkit.loop import now_iso, trace_of
from verifier.agentkit.safefiles import LinkRefused
from verifier.agentkit.tracing import EVENT_TYPES, LEVELS
from verifier.agentkit.transcripts import FORMATS, Disclosure, TranscriptError, parse_transcript
from verifier.agentkit.workdir import Work, find_work
from verifier.cli.app import RwError, cli, untrusted
from verifier.cli.remote import client_for, loop_errors, server_option, warn_if_server_newer
from verifier.cli.verdicts import show_verdict
from verifier.constants import CLAIM_TTL_S
from verifier.errors import FormatError
from verifier.formats.duration import parse_duration
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE
from verifier.formats.trace import BUNDLE_ORDER
from verifier.state.layout import FIELD_GUIDE

if TYPE_CHECKING:
    from verifier.client.http import Client  # a type here: `rw new` and `rw trace` never load HTTP


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


# rw work ----------------------------------------------------------------------------------------------

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
    with loop_errors():
        loop.check_work_arguments(slug, leaf_id, folder)
        ttl_s = int(parse_duration(ttl, "--ttl").total_seconds())
    client = client_for(server)
    warn_if_server_newer(client)
    with loop_errors():
        work = loop.start_work(client, server, slug, leaf_id, parent=Path.cwd(), folder=folder, level=level,
                               ttl_s=ttl_s, say=lambda note: click.echo(note, err=True))
    _announce(work, f"{slug}/{work.state.leaf_id} ({work.state.kind})")


# rw new -----------------------------------------------------------------------------------------------

@cli.group("new")
def new_group() -> None:
    """Write an object file into the working folder: ids and offsets computed, content checked."""


@new_group.command("finding")
@click.option("--excerpt", required=True, help="The exact words of the source (see .rw/sources/).")
@click.option("--statement", required=True, help="What the excerpt shows, in your words.")
@click.option("--limitation", required=True, help="What it does not show, or why it may mislead.")
@click.option("--source", "source_id", help="The source quoted (default: the leaf's source).")
def new_finding(excerpt: str, statement: str, limitation: str, source_id: str | None) -> None:
    """A finding quoting the source exactly; refuses an excerpt that is not in the text."""
    work = current_work()
    with loop_errors():
        click.echo(loop.add_finding(work, excerpt=excerpt, statement=statement, limitation=limitation,
                                    source_id=source_id))


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
    with loop_errors():
        for path in loop.add_source(work, url=url, data=data_file.read_bytes(), media_type=media_type,
                                    language=language, rights=rights, published=published_on, title=title):
            click.echo(path)


@new_group.command("link")
@click.option("--finding", "finding_id", required=True)
@click.option("--stance", required=True, type=click.Choice(loop.STANCES))
@click.option("--rationale", required=True, help="Why the finding bears on the hypothesis this way.")
@click.option("--hypothesis", "hypothesis_id", help="Default: the leaf's hypothesis.")
@click.option("--revision", type=int, help="Default: the leaf's hypothesis revision.")
def new_link(finding_id: str, stance: str, rationale: str, hypothesis_id: str | None, revision: int | None) -> None:
    """A link from a finding to a hypothesis (skeptic and link leaves)."""
    work = current_work()
    with loop_errors():
        click.echo(loop.add_link(work, finding_id=finding_id, stance=stance, rationale=rationale,
                                 hypothesis_id=hypothesis_id, revision=revision))


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
    with loop_errors():
        click.echo(loop.add_note(work, sources=sources, none_found_after=none_found_after, requests=requests))


@new_group.command("review")
@click.option("--decision", required=True, type=click.Choice(loop.DECISIONS))
@click.option("--reason", required=True)
@click.option("--object", "object_path", help="Default: the leaf's object.")
@click.option("--amend-statement", help="amend: the corrected statement.")
@click.option("--amend-limitation", help="amend: the corrected limitation.")
@click.option("--amend-stance", type=click.Choice(loop.STANCES), help="amend: a link's.")
def new_review(decision: str, reason: str, object_path: str | None, amend_statement: str | None,
               amend_limitation: str | None, amend_stance: str | None) -> None:
    """A review of the leaf's object: accept, reject or amend, with the reason."""
    work = current_work()
    amendment = {key: value for key, value in (("statement", amend_statement), ("limitation", amend_limitation),
                                               ("stance", amend_stance)) if value is not None}
    with loop_errors():
        click.echo(loop.add_review(work, decision=decision, reason=reason, object_path=object_path,
                                   amendment=amendment))


@new_group.command("guide-line")
@click.option("--text", required=True, help="One surprising, reusable research lesson for this project.")
@click.option("--replace", "old", help="The exact line it replaces (default: add a line).")
def new_guide_line(text: str, old: str | None) -> None:
    """A Field Guide line, attributed to you (guide leaves)."""
    work = current_work()
    with loop_errors():
        click.echo(loop.add_guide_line(work, text=text, old=old))


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


def _utf8_lines(binary: IO[bytes]) -> Iterator[str]:
    """The file's lines as text; a line that is not UTF-8 is refused with its number."""
    for number, raw in enumerate(binary, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TranscriptError(number, f"not UTF-8 (byte {exc.start + 1})") from None


def _disclosed(disclosure: Disclosure) -> str:
    values = disclosure.to_json()
    parts = [f"{name} {value}" for name, value in values.items() if value is not None]
    return ", ".join(parts) if parts else "nothing"


@trace_group.command("import")
@click.argument("events_file", type=click.File("rb"))
@click.option("--from", "fmt", type=click.Choice(["jsonl", *FORMATS]), default="jsonl", show_default=True,
              help="jsonl: rw's own events ({ts, type, content} per line); claude-stream-json: the output of "
                   "`claude -p --output-format stream-json --verbose`; codex-jsonl: of `codex exec --json`.")
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as one JSON object.")
def trace_import(events_file: IO[bytes], fmt: str, as_json: bool) -> None:
    """Append events from a JSON-lines file: rw's own, or an agent CLI's transcript.

    A transcript also discloses the run's model, tokens (in, out, cached), cost and duration as
    far as it states them (docs/format.md, "Transcripts"); `rw submit` sends them in the manifest.
    Secrets are stripped and tool output is capped as for `rw trace add`. A malformed line is
    refused with its number and nothing is recorded; a transcript's cut-short last line (a CLI
    killed mid-write) is left out and reported."""
    name = getattr(events_file, "name", "-")
    work = current_work()
    try:
        if fmt == "jsonl":
            with no_links():
                count = trace_of(work).add_lines(_utf8_lines(events_file))
            click.echo(json.dumps({"format": fmt, "recorded": count}) if as_json else f"recorded {count} event(s)")
            return
        transcript = parse_transcript(fmt, _utf8_lines(events_file))
        with no_links():
            recorded = trace_of(work).add_many(now_iso(), ((e.type, e.content) for e in transcript.events))
            disclosure = disclose(work, transcript.disclosure)
    except TranscriptError as exc:
        raise RwError(f"{name}: {exc}; nothing was recorded (is it {fmt}?)") from exc
    except ValueError as exc:
        raise RwError(f"{name}: {exc}") from exc
    count = sum(1 for r in recorded if r.event is not None)
    stripped = [kind for r in recorded for kind in r.stripped]
    if as_json:
        click.echo(json.dumps({**transcript.summary(), "recorded": count, "folder_disclosure": disclosure.to_json(),
                               "stripped": sorted(set(stripped))}, sort_keys=True))
    else:
        _stripped(stripped)
        if transcript.truncated_line is not None:
            click.echo(f"note: line {transcript.truncated_line}, the last, is cut short (the CLI was stopped "
                       "mid-write); it is left out", err=True)
        click.echo(f"recorded {count} event(s) from {fmt} ({transcript.outcome or 'empty'}); "
                   f"disclosed {_disclosed(transcript.disclosure)}")


_Command = TypeVar("_Command", bound=Callable[..., object])


def disclosure_options(command: _Command) -> _Command:
    """--model, --tokens, --tokens-in/-out/-cached, --usd, --duration: what the run disclosed."""
    options = [
        click.option("--model", help="The model that did the work, as its provider names it."),
        click.option("--tokens", type=click.IntRange(0, 10**12), help="Total tokens, when no in/out split is known."),
        click.option("--tokens-in", type=click.IntRange(0, 10**12), help="Input tokens read, cached ones included."),
        click.option("--tokens-out", type=click.IntRange(0, 10**12), help="Output tokens written."),
        click.option("--tokens-cached", type=click.IntRange(0, 10**12), help="Input tokens served from a cache."),
        click.option("--usd", type=click.FloatRange(0, 10**6), help="What the run cost in US dollars, if known."),
        click.option("--duration", help="How long the run took: seconds (312.5) or like 90s, 15m."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def given_disclosure(model: str | None, tokens: int | None, tokens_in: int | None, tokens_out: int | None,
                     tokens_cached: int | None, usd: float | None, duration: str | None) -> Disclosure:
    """The disclosure flags as a Disclosure (unset flags stay unknown)."""
    seconds: float | None = None
    if duration is not None:
        try:
            seconds = float(duration) if duration.replace(".", "", 1).isdigit() else \
                parse_duration(duration, "--duration").total_seconds()
        except FormatError as exc:
            raise RwError(f"{exc}, or a number of seconds") from exc
    try:
        return check_disclosure(Disclosure(model=model, tokens=tokens, tokens_in=tokens_in, tokens_out=tokens_out,
                                           tokens_cached=tokens_cached, usd=usd, duration_s=seconds))
    except ValueError as exc:
        raise RwError(str(exc)) from exc


@trace_group.command("meta")
@disclosure_options
@click.option("--json", "as_json", is_flag=True, help="Print the folder's disclosure as JSON.")
def trace_meta(model: str | None, tokens: int | None, tokens_in: int | None, tokens_out: int | None,
               tokens_cached: int | None, usd: float | None, duration: str | None, as_json: bool) -> None:
    """Disclose what the run cost (model, tokens, usd, duration); `rw submit` sends it in the manifest.

    Each flag given replaces what was disclosed before (by an import or an earlier call); with
    none it prints the folder's disclosure. What is never disclosed is sent as unknown, not zero."""
    work = current_work()
    given = given_disclosure(model, tokens, tokens_in, tokens_out, tokens_cached, usd, duration)
    try:
        with no_links():
            disclosure = disclose(work, given)
    except ValueError as exc:
        raise RwError(str(exc)) from exc
    click.echo(json.dumps(disclosure.to_json(), sort_keys=True) if as_json else f"disclosed {_disclosed(disclosure)}")


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

def _print_messages(client: Client, work: Work) -> None:
    """The messages the verdict set off for this leaf (the first-minute message, §9.1)."""
    with loop_errors():
        messages = loop.leaf_messages(client, work)
    for message in messages:
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


def submit_work(as_json: bool, retry_for: str, summary: str | None, server: str | None = None,
                disclosed: Disclosure | None = None) -> NoReturn:
    """`rw submit` inside a working folder: the patch from the clone, the trace, the verdict.

    It goes to `server` when given (`rw submit --server URL`), else to the server `rw work` used.
    `disclosed` (the submit's flags) is laid over the folder's disclosure (`rw trace import`,
    `rw trace meta`) and kept; the manifest carries the result, nothing where nothing was said."""
    work = current_work()
    client = client_for(server or work.state.server, retry_for)
    with loop_errors():
        done = loop.submit_folder(client, work, summary, disclosed)
    _stripped(done.stripped)  # the summary (or any field) carried a secret: it is sent as a marker
    verdict = done.verdict
    if done.replayed:  # the same bundle again: no second attempt, and say so rather than reprint silently
        click.echo(f"same attempt as #{verdict.get('ledger_seq')} ({done.submission_id}): this bundle was already "
                   "judged and its verdict follows again; change the files to make a new attempt", err=True)
    shown = {**verdict, "same_attempt_as": verdict.get("ledger_seq") if done.replayed else None} if as_json \
        else verdict
    code = show_verdict(shown, as_json, done.submission_id)
    if not as_json:
        _failed_source_hint(work, verdict.get("rejections") or [])
        _print_messages(client, work)
    raise SystemExit(code)

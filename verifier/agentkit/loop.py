"""The agent's loop as plain functions over a service client and a working folder: claim and clone
(`start_work`), write each kind of object (`add_finding`, `add_source`, ...), submit the folder
(`submit_folder`). `rw work`/`rw new`/`rw submit` (verifier.cli.agent_cmds) and the MCP server's
tools (verifier.mcp) both call these, so an agent gets the same checks and the same errors, with
the same codes and messages, whichever door it uses.

Every refusal is a VerifierError carrying its exit code and code (verifier.errors): a usage or
input problem is a FormatError, an excerpt not in the text a Rejected with the verifier's own
`excerpt_not_found`, a served value or a link the client refuses an UntrustedReply, a service's
error answer the error its status maps to (`reply_error`). Nothing here prints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from verifier.agentkit import served
from verifier.agentkit.disclosure import disclose, load_disclosure
from verifier.agentkit.objects import finding_file, link_file, note_file, review_file, source_files
from verifier.agentkit.safefiles import LinkRefused, read_bytes
from verifier.agentkit.skillref import current_skill_version, skill_path
from verifier.agentkit.tracing import TraceLog, clean_manifest
from verifier.agentkit.transcripts import Disclosure
from verifier.agentkit.workdir import (
    STATE_DIR,
    Work,
    WorkState,
    clone_at,
    default_final,
    make_patch,
    manifest_for,
    remove_clone,
)
from verifier.checks.citation import ExcerptMissing, first_difference, locate_excerpt
from verifier.checks.extract import excerpt_length_problem
from verifier.errors import AuthError, FormatError, Rejected, Rejection, UntrustedReply, VerifierError
from verifier.formats.base import check_slug
from verifier.formats.project import parse_project
from verifier.formats.trace import bundle_digest
from verifier.state.layout import FIELD_GUIDE, PROJECT_FILE
from verifier.text.normalize import normalize
from verifier.text.visible import control_problem

if TYPE_CHECKING:
    # The HTTP client (http.client, ssl, email) is loaded by the functions that talk to the
    # service: `rw new` and `rw trace` write the folder and never do (issue 26).
    from verifier.client.http import Client, Reply

STANCES = ("supports", "contradicts", "context")
DECISIONS = ("accept", "reject", "amend")


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def reply_error(reply: Reply) -> VerifierError:
    """A service's error answer as the error that says it, by the one map of statuses to exit codes
    (`verifier.cli.app.exit_code_of_reply`): 401 authentication, 403/409 a refusal, else usage."""
    text = f"HTTP {reply.status} [{reply.error_code}] {reply.error_message}"
    code = reply.error_code or "http_error"
    if reply.status == 401:
        return AuthError(text, code=code)
    if reply.status in (403, 409):
        return Rejected(Rejection(code, text))
    return FormatError(text, code=code)


def ok(reply: Reply) -> Reply:
    """The reply, or the error it carries raised."""
    if reply.status >= 400:
        raise reply_error(reply)
    return reply


def refused_by_client(exc: LinkRefused | served.Untrusted, prefix: str = "") -> UntrustedReply:
    return UntrustedReply(f"{prefix}{exc}")


def trace_of(work: Work) -> TraceLog:
    return TraceLog(work.trace_dir, work.state.level, root=work.root)


def record_tool(work: Work, command: str, result: dict[str, str]) -> None:
    """Each step run in the folder is a tool call of the agent's, recorded as one. Only ids, paths
    and command names go in (rw's own words), so the records need no secret scan."""
    log = trace_of(work)
    log.add_own(now_iso(), "tool_call", {"tool": "rw", "command": command})
    log.add_own(now_iso(), "tool_result", result)


def _release(version: str) -> tuple[int, ...]:
    public = version.split("+", 1)[0]
    return tuple(int(part) for part in re.findall(r"\d+", public))


def version_warning(answer: Mapping[str, object], mine: str) -> str | None:
    """What to tell the agent when the service's verifier (its GET /version answer) is not the one
    this client was built from, or None: newer by release, or the same release from other source."""
    theirs = answer.get("verifier_version")
    if not isinstance(theirs, str) or theirs == mine:
        return None
    install = answer.get("client")
    command = install.get("install") if isinstance(install, dict) else None
    how = f"; install its client: {command}" if isinstance(command, str) else ""
    if _release(theirs) > _release(mine):
        return f"the service runs verifier {theirs[:80]}, newer than this client's {mine}{how}"
    if _release(theirs) == _release(mine):
        return f"the service runs verifier {theirs[:80]}, built from other source than this client's {mine}{how}"
    return None


def served_version_warning(client: Client, mine: str) -> str | None:
    """`version_warning` of the service's GET /version; a service too old to answer it, or not
    answering, is no reason to stop (the next request says what is wrong)."""
    import http.client  # noqa: PLC0415 - see the imports

    from verifier.client.http import TRANSIENT  # noqa: PLC0415

    try:
        reply = client.once("GET", "/version", auth=False)
    except (*TRANSIENT, OSError, http.client.HTTPException):
        return None
    return version_warning(reply.body, mine) if reply.status == 200 else None


# claiming and cloning -------------------------------------------------------------------------------

def pick_warm(leaves: Sequence[Mapping[str, Any]]) -> str | None:
    """The warm leaf to claim from the open board entries (one the board marks `warm` first, then
    the one that expires soonest, then by id), or None when there is none."""
    open_extracts = [leaf for leaf in leaves if leaf.get("kind") == "extract" and leaf.get("state") == "open"]
    if not open_extracts:
        return None
    best = min(open_extracts, key=lambda leaf: (not leaf.get("warm", False), str(leaf.get("expires_at", "")),
                                               str(leaf.get("leaf_id", ""))))
    return str(best["leaf_id"])


def claim_leaf(client: Client, slug: str, leaf_id: str | None, ttl_s: int) -> tuple[str, Reply]:
    """Claim LEAF_ID, or with None a warm extract leaf from the board; the id and the claim's reply
    (not checked: `rw claim` shows the reply as it came)."""
    if leaf_id is None:
        board = ok(client.get(f"/projects/{quote(slug)}/leaves", {"state": "open"}, auth=False))
        leaf_id = pick_warm(board.body.get("leaves", []))
        if leaf_id is None:
            raise Rejected(Rejection("no_open_leaf", f"no open extract leaf in {slug}; see `rw board {slug}` for "
                                                     "other kinds"))
    chosen = leaf_id
    return chosen, client.post_json(f"/projects/{quote(slug)}/leaves/{quote(chosen)}/claim", {"ttl_s": ttl_s})


def source_text(client: Client, slug: str, source_id: str) -> str:
    """The derived text of a source, the text excerpts are matched against."""
    reply = ok(client.get(f"/projects/{quote(slug)}/sources/{quote(source_id)}/text", auth=False))
    text = reply.body.get("text")
    if not isinstance(text, str):
        raise UntrustedReply(f"refusing what the server sent: the text of {source_id} is not a string")
    return text


def _write_inputs(client: Client, work: Work, payload: Mapping[str, Any]) -> None:
    """The payload, the Field Guide and each source's text into `.rw/`, never through a link (the
    file names are checked ids: `served.leaf_payload`)."""
    work.write(f"{STATE_DIR}/payload.json", (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    work.write(f"{STATE_DIR}/FIELD-GUIDE.md", str(payload.get("field_guide", "")).encode("utf-8"))
    for source_id in work.state.source_ids:
        text = source_text(client, work.state.project, source_id)
        work.write(f"{STATE_DIR}/sources/{source_id}.txt", text.encode("utf-8"))


def check_work_arguments(slug: str, leaf_id: str | None, folder: Path | None) -> None:
    """The agent's own arguments to `start_work`, refused before anything is asked of the service."""
    check_slug(slug)
    if leaf_id is not None:
        try:
            served.leaf_id(leaf_id, "LEAF_ID")
        except served.Untrusted as exc:
            raise FormatError(str(exc)) from exc
    if folder is not None and folder.exists() and any(folder.iterdir()):
        raise FormatError(f"{folder} exists and is not empty; choose another --dir")


def skill_and_level(client: Client, payload: Mapping[str, object], level: str,
                    say: Callable[[str], None]) -> tuple[bytes, str, str]:
    """The live skill the service serves (its bytes and version), and the trace level to record at:
    the one asked for, raised to the leaf's own ask (a warm leaf asks for L3). `say` hears why
    either differs from what the caller would expect."""
    try:
        reply = client.get("/skill", auth=False)
        if reply.status == 404:  # a service from before GET /skill: the skill this client ships with
            say("the service serves no live skill (GET /skill); using the packaged skill")
            skill, version = skill_path().read_bytes(), current_skill_version()
        else:
            skill, version = served.live_skill(ok(reply).body)
        asked = served.trace_level_asked(payload)
    except served.Untrusted as exc:
        raise refused_by_client(exc, "refusing what the server sent: ") from exc
    if asked is not None and served.LEVEL_RANK[level] < served.LEVEL_RANK[asked]:
        say(f"this leaf asks for a trace at {asked}: recording at {asked}, not {level}")
        level = asked
    return skill, version, level


def start_work(client: Client, server: str, slug: str, leaf_id: str | None, *, parent: Path,
               folder: Path | None = None, level: str = "L2", ttl_s: int,
               say: Callable[[str], None] = lambda _note: None) -> Work:
    """Claim LEAF_ID (or a warm extract leaf), clone the project at its base into `folder` (default
    `parent/LEAF_ID`), write the payload, the sources and the live skill (`.rw/SKILL.md`, its
    version kept for the manifest) beside it and start the trace.

    No half-made working folder is left behind when a step fails."""
    check_work_arguments(slug, leaf_id, folder)
    try:
        me = served.whoami(ok(client.get("/whoami")).body)
        chosen, claimed = claim_leaf(client, slug, leaf_id, ttl_s)
        served.leaf_id(chosen, "the board's warm leaf")
        ok(claimed)
        payload = ok(client.get(f"/projects/{quote(slug)}/leaves/{quote(chosen)}/payload", auth=False)).body
        leaf = served.leaf_payload(payload, chosen)
    except served.Untrusted as exc:
        raise refused_by_client(exc, "refusing what the server sent: ") from exc
    if leaf_id is None and not leaf.contract.warm:  # said: the agent asked for a warm one
        say(f"no leaf marked warm is open in {slug}: took {chosen}, the open extract leaf that expires soonest")
    skill, skill_version, level = skill_and_level(client, payload, level, say)
    contract = leaf.contract
    # The default folder is one checked segment (a leaf id) below the parent: a served id can
    # never place the clone anywhere else.
    target = folder or parent / chosen
    if target.is_symlink():
        raise UntrustedReply(f"{target} is a link; rw work makes its folder itself (choose another --dir)")
    dest = target.resolve()
    made = not dest.exists()
    try:
        clone_at(f"{server.rstrip('/')}/projects/{quote(slug)}.git", dest, contract.base_revision)
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    except (OSError, RuntimeError, ValueError) as exc:
        raise FormatError(f"cannot clone {slug}: {exc}") from exc
    work = Work(dest, WorkState(server=server, project=slug, leaf_id=chosen, kind=contract.kind,
                                base_revision=contract.base_revision, agent=me.agent, operator=me.operator,
                                level=level, source_ids=leaf.source_ids, started_at=now_iso(),
                                skill_version=skill_version))
    try:
        work.save()
        _write_inputs(client, work, payload)
        work.write(f"{STATE_DIR}/SKILL.md", skill)
        record_tool(work, f"rw work {slug} {chosen}", {"leaf_id": chosen, "kind": contract.kind,
                                                       "base_revision": contract.base_revision,
                                                       "sources": " ".join(work.state.source_ids)})
        if level == "L3":  # the context the agent starts with: the payload and the skill it follows
            trace_of(work).set_context(json.dumps(payload, indent=2, sort_keys=True) + "\n\n"
                                       + skill.decode("utf-8"))
    except LinkRefused as exc:
        remove_clone(dest, made)
        raise refused_by_client(exc) from exc
    except BaseException:
        remove_clone(dest, made)
        raise
    return work


# writing objects --------------------------------------------------------------------------------------

def put(work: Work, command: str, path: str, data: bytes, *, overwrite: bool = False) -> str:
    """Write one object file of the folder and record the step; refuses to replace an object."""
    try:
        if work.has(path) and not overwrite:
            raise FormatError(f"{path} already exists: the same content gives the same id (one object per id)")
        work.write(path, data)
        record_tool(work, f"rw new {command}", {"wrote": path})
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    return path


def _only(values: list[str], what: str, given: str | None) -> str:
    if given is not None:
        return given
    if len(values) != 1:
        raise FormatError(f"this leaf has {len(values)} {what}s ({', '.join(values) or 'none'}); name one")
    return values[0]


def _inputs(work: Work) -> dict[str, Any]:
    try:
        inputs: dict[str, Any] = work.contract().get("inputs", {})
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    return inputs


def add_finding(work: Work, *, excerpt: str, statement: str, limitation: str, source_id: str | None = None) -> str:
    """A finding quoting the source exactly; refuses an excerpt that is not in the text (saying
    where the closest passage is), or shorter than the project asks (PROJECT.md
    min_excerpt_chars), as the extract check would."""
    source_id = _only(work.state.source_ids, "source", source_id)
    minimum = _min_excerpt_chars(work)
    too_short = None if minimum is None else excerpt_length_problem(normalize(excerpt), minimum)
    if too_short is not None:
        raise Rejected(too_short)
    try:
        text = work.source_text(source_id)
    except FileNotFoundError as exc:
        raise FormatError(str(exc)) from exc
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    match = locate_excerpt(text, excerpt)
    if isinstance(match, ExcerptMissing):
        detail = first_difference(excerpt, match.closest_text, match.closest_offset)
        raise Rejected(Rejection("excerpt_not_found", (
            f"the excerpt is not in the text of {source_id}; the closest passage is at offset "
            f"{match.closest_offset} ({match.similarity:.0f}% similar): {match.closest_text!r}"
            + (f"; {detail}" if detail else "") + ". Quote the text exactly as .rw/sources holds it")))
    path, data = finding_file(source_id=source_id, source_text=text, excerpt=excerpt, statement=statement,
                              limitation=limitation, leaf_id=work.state.leaf_id, location=(match.start, match.end))
    return put(work, "finding", path, data)


def _min_excerpt_chars(work: Work) -> int | None:
    """The project's shortest excerpt, from PROJECT.md as the folder holds it (the leaf's base);
    None when it cannot be read, which `rw check` then reports."""
    try:
        project, _ = parse_project(read_bytes(work.root, PROJECT_FILE), PROJECT_FILE)
    except (OSError, LinkRefused, FormatError):
        return None
    return project.min_excerpt_chars


def add_source(work: Work, *, url: str, data: bytes, media_type: str, language: str, rights: str,
               published: date | None = None, title: str | None = None) -> list[str]:
    """A source record and its retained bytes (scout leaves); the paths written."""
    files = source_files(url=url, data=data, media_type=media_type, fetched_by=work.state.agent,
                         retrieved_at=datetime.now(UTC).replace(microsecond=0), language=language, rights=rights,
                         published=published, title=title, leaf_id=work.state.leaf_id)
    return [put(work, "source", path, body) for path, body in files.items()]


def add_link(work: Work, *, finding_id: str, stance: str, rationale: str, hypothesis_id: str | None = None,
             revision: int | None = None) -> str:
    """A link from a finding to a hypothesis (skeptic and link leaves); the leaf's hypothesis by default."""
    inputs = _inputs(work)
    hypothesis_id = hypothesis_id or inputs.get("hypothesis_id")
    revision = revision if revision is not None else inputs.get("hypothesis_revision")
    if hypothesis_id is None or revision is None:
        raise FormatError("this leaf names no hypothesis: give --hypothesis and --revision")
    path, data = link_file(finding_id=finding_id, hypothesis_id=hypothesis_id, revision=int(revision),
                           stance=stance, rationale=rationale, leaf_kind=work.state.kind, leaf_id=work.state.leaf_id)
    return put(work, "link", path, data)


def add_note(work: Work, *, sources: Sequence[str], none_found_after: int | None = None,
             requests: Sequence[str] = ()) -> str:
    """The "none found after N sources" note of a skeptic or link leaf, listing the sources searched."""
    inputs = _inputs(work)
    if inputs.get("hypothesis_id") is None or inputs.get("hypothesis_revision") is None:
        raise FormatError("this leaf names no hypothesis; a note belongs to a skeptic or link leaf")
    listed = sorted(set(sources))
    if none_found_after is not None and none_found_after != len(listed):
        raise FormatError(f"--none-found-after {none_found_after} but {len(listed)} distinct --source given; "
                          "a note lists every source it searched")
    path, data = note_file(leaf_id=work.state.leaf_id, hypothesis_id=inputs["hypothesis_id"],
                           revision=int(inputs["hypothesis_revision"]), none_found_after=len(listed),
                           scout_requests=list(requests), sources_checked=listed)
    return put(work, "note", path, data)


def add_review(work: Work, *, decision: str, reason: str, object_path: str | None = None,
               amendment: Mapping[str, str] | None = None) -> str:
    """A review of the leaf's object: accept, reject or amend (with the amended fields), with the reason."""
    object_path = object_path or _inputs(work).get("object_path")
    if not object_path:
        raise FormatError("this leaf names no object to review: give --object")
    amended = dict(amendment or {})
    if (decision == "amend") != bool(amended):
        raise FormatError("an amend decision needs --amend-statement, --amend-limitation or --amend-stance, "
                          "and only it")
    path, data = review_file(object_path=object_path, object_id=Path(object_path).stem, decision=decision,
                             reason=reason, leaf_id=work.state.leaf_id, amendment=amended or None)
    return put(work, "review", path, data)


def add_guide_line(work: Work, *, text: str, old: str | None = None) -> str:
    """A Field Guide line attributed to the agent (guide leaves), added or replacing `old`: one
    line of plain text (more lines would land unattributed)."""
    problem = control_problem(text.strip())
    if problem is not None:
        raise FormatError(f"a guide line is one line of plain text; this one {problem}", "--text")
    line = f"{text.strip()} (agent: {work.state.agent})"
    try:
        lines = work.read(FIELD_GUIDE).decode("utf-8").splitlines() if work.has(FIELD_GUIDE) else []
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    if old is not None:
        if old not in lines:
            raise FormatError(f"no line {old!r} in {FIELD_GUIDE}")
        lines[lines.index(old)] = line
    else:
        lines.append(line)
    return put(work, "guide-line", FIELD_GUIDE, ("\n".join(lines) + "\n").encode("utf-8"), overwrite=True)


# submitting ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Submitted:
    """A working folder's submission as the service judged it."""

    submission_id: str
    verdict: dict[str, Any]
    replayed: bool  # the same bundle was sent before: no second attempt, its verdict again
    stripped: list[str]  # kinds of secret the manifest carried, sent as markers


def submit_folder(client: Client, work: Work, summary: str | None = None,
                  disclosed: Disclosure | None = None) -> Submitted:
    """Send the folder's patch against its base and its trace; the service's verdict.

    `disclosed` (model, tokens, usd, duration the caller states) is laid over the folder's
    disclosure (`rw trace import`, `rw trace meta`) and kept; the manifest carries the result,
    nothing where nothing was said. The idempotency key is the bundle's digest, so the same
    bundle retried is the same attempt."""
    try:
        try:
            disclosure = disclose(work, disclosed) if disclosed is not None else load_disclosure(work)
        except ValueError as exc:
            raise FormatError(str(exc)) from exc
        version = work.state.skill_version or current_skill_version()  # the skill `rw work` was served
        manifest, found = clean_manifest({**manifest_for(work, version, summary), **disclosure.manifest_fields()})
        log = trace_of(work)
        if not log.has_final():
            log.add(now_iso(), "final", summary or default_final(work))
        try:
            patch = make_patch(work)
        except RuntimeError as exc:
            raise FormatError(str(exc)) from exc
        bundle = log.bundle(manifest, patch)
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    key = "rwk_" + bundle_digest(bundle)[:32]
    reply = client.submit(work.state.project, work.state.leaf_id, bundle, patch, key=key)
    verdict = reply.body.get("verdict")
    if not isinstance(verdict, dict):
        ok(reply)
        raise FormatError(f"the service answered without a verdict: {reply.body}")
    submission_id = str(reply.body.get("submission_id"))
    if submission_id not in work.state.submitted:
        work.state.submitted.append(submission_id)
    try:
        work.save()
    except LinkRefused as exc:
        raise refused_by_client(exc) from exc
    return Submitted(submission_id, verdict, reply.headers.get("idempotent-replayed") == "true", found)


def leaf_messages(client: Client, work: Work) -> list[dict[str, Any]]:
    """The messages the verdict set off for this leaf (the first-minute message, §9.1)."""
    reply = client.get("/messages")
    messages = reply.body.get("messages", []) if reply.status == 200 else []
    return [message for message in messages if isinstance(message, dict)
            and message.get("project") == work.state.project and message.get("leaf_id") == work.state.leaf_id
            and message.get("kind") != "new_leaf"]

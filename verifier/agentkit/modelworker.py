"""The platform's own worker (design §6.1): a leaf done by the configured `worker` model through the adapter.

For an extract leaf it reads the source's derived text at the leaf's base, asks the model for
findings with exact excerpts as structured output (verifier/model/work.py), checks each excerpt
locally with the verifier's own rule (`locate_excerpt`), and asks again for the failed ones only,
at most WORKER_EXCERPT_RETRIES times; findings whose excerpts are still not in the text are
dropped, never submitted as known-bad. For a link leaf it shows the model the hypothesis and the
findings to weigh (the leaf's `finding_ids`, else the project's, at most WORKER_LINK_MAX_FINDINGS),
asks for links as structured output, checks each proposed link locally with the verifier's own
link rules (`check_link_file`, the leaf's findings, no duplicate), and asks again for the refused
ones only, at most WORKER_LINK_RETRIES times; links still refused are dropped. With no contradicts
link it adds the none-found note, listing the sources whose findings the model weighed. For a
scout leaf it fetches the pinned URL it was handed, asks the model for the source record's
metadata and stages the source. Every call is recorded in
the trace as it went (the request, the answer, the model, the usage), at L3 with the first
request (the full context) as context.md; the manifest discloses the model and its tokens.

It returns a patch and a trace bundle (a `WorkerResult`), which the caller submits through the
verifier's one submission path: the skill gate's replay (verifier/roles/validation.py), the
controlled arm, and `rw worker run SLUG LEAF --model ROLE`.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file, link_file, note_file, source_files
from verifier.agentkit.scripted import ScriptedAgent
from verifier.agentkit.workspace import creation_patch
from verifier.checks.citation import ExcerptFound, locate_excerpt
from verifier.checks.hypotheses import loose_problem
from verifier.checks.links import check_link_file
from verifier.constants import (
    FETCH_TIMEOUT_S,
    MAX_SOURCE_BYTES,
    WORKER_EXCERPT_RETRIES,
    WORKER_LINK_MAX_FINDINGS,
    WORKER_LINK_RETRIES,
)
from verifier.errors import FormatError
from verifier.formats.leaf import parse_leaf
from verifier.formats.skill import sections, skill_version
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE
from verifier.model.adapter import Backend, ModelError, ModelReply, ask_for
from verifier.model.roles import Role, role_backend
from verifier.model.schema import A
from verifier.model.work import (
    SCOUT_TEXT_MAX,
    SOURCE_TEXT_MAX,
    ExtractAnswer,
    ExtractRequest,
    Finding,
    LinkAnswer,
    LinkRequest,
    LinkRetry,
    ProposedLink,
    Retry,
    ScoutAnswer,
    ScoutRequest,
    ShownFinding,
    ShownHypothesis,
)
from verifier.pipeline.submit import Submission, submit
from verifier.pipeline.verdict import Verdict
from verifier.roles.liveskill import read_live_skill
from verifier.roles.validation import CommandWorker, WorkerError, WorkerResult, WorkerTask
from verifier.state.layout import leaf_path
from verifier.state.project import ProjectView, current_hypothesis
from verifier.state.view import TreeView
from verifier.store.fetcher import Fetcher
from verifier.store.home import Home


@dataclass(frozen=True)
class Leaf:
    """One leaf as the worker sees it: where, what, and with which skill."""

    project: str
    leaf_id: str
    kind: str
    base: str
    inputs: dict[str, object]
    hints: list[str]
    skill: str
    agent: str
    operator: str
    now: datetime


WorkRequest = ExtractRequest | ScoutRequest | LinkRequest


@dataclass
class _Calls:
    """The model calls of one leaf, recorded into the trace as they happen."""

    trace: TraceRecorder
    clock: datetime
    replies: list[ModelReply[ExtractAnswer] | ModelReply[ScoutAnswer] | ModelReply[LinkAnswer]] = field(
        default_factory=list)
    context: str | None = None

    def ask(self, backend: Backend, request: WorkRequest, answer: type[A]) -> ModelReply[A]:
        if self.context is None:
            self.context = _context(request)  # L3: the full starting context, the source text included
        self.trace.add(self.clock, "tool_call", {"tool": "model", "backend": backend.name, "kind": request.kind,
                                                 "retry": len(getattr(request, "retry", []))})
        try:
            reply = ask_for(backend, request, answer)
        except ModelError as exc:
            self.trace.add(self.clock, "tool_result", {"error": str(exc)})
            raise WorkerError(f"the worker model failed on the leaf: {exc}") from exc
        usage = reply.usage
        self.trace.add(self.clock, "tool_result", {
            "model": reply.model, "request_sha256": reply.request_sha256, "answer_sha256": reply.answer_sha256,
            "answer": reply.answer.model_dump(mode="json"),
            "usage": None if usage is None else {"input_tokens": usage.input_tokens,
                                                 "output_tokens": usage.output_tokens, "usd": usage.usd}})
        self.replies.append(reply)  # type: ignore[arg-type]  # A is one of the three answers here
        return reply

    def tokens(self) -> int | None:
        used = [reply.usage.tokens for reply in self.replies if reply.usage is not None]
        return sum(used) if used else None

    def usd(self) -> float | None:
        costs = [reply.usage.usd for reply in self.replies if reply.usage is not None]
        return round(sum(c for c in costs if c is not None), 6) if costs and None not in costs else None


def _context(request: WorkRequest) -> str:
    """The first request as Markdown: the instructions, the skill section, the rest of the request
    (canonical JSON), and the source text as it was sent (a link leaf's findings are in the request),
    so a reader sees what the model saw."""
    if isinstance(request, LinkRequest):
        rest = request.model_dump(mode="json", exclude={"instructions", "skill"})
        return (f"# Instructions\n\n{request.instructions}\n\n# Skill section\n\n{request.skill}\n\n# Request\n\n"
                f"{json.dumps(rest, sort_keys=True, ensure_ascii=False)}\n")
    text = request.source_text if isinstance(request, ExtractRequest) else request.text
    rest = request.model_dump(mode="json", exclude={"instructions", "skill", "source_text", "text"})
    return (f"# Instructions\n\n{request.instructions}\n\n# Skill section\n\n{request.skill}\n\n# Request\n\n"
            f"{json.dumps(rest, sort_keys=True, ensure_ascii=False)}\n\n# Source text\n\n{text}\n")


def _section(skill: str, kind: str) -> str:
    found = sections(skill).get(kind)
    return found.body if found is not None else skill


def _problem(text: str, excerpt: str) -> str | None:
    """None when the verifier's excerpt rule finds `excerpt` in `text`; otherwise what is wrong."""
    match = locate_excerpt(text, excerpt)
    if isinstance(match, ExcerptFound):
        return None
    return (f"not found in the source text (the closest passage starts at offset {match.closest_offset}); copy "
            "the excerpt exactly from the text")


def extract_findings(backend: Backend, leaf: Leaf, text: str, calls: _Calls) -> list[Finding]:
    """Ask for findings, check every excerpt, ask again for the failed ones only (bounded)."""
    source_id = str(leaf.inputs["source_id"])
    base = ExtractRequest(skill=_section(leaf.skill, "extract"), project=leaf.project, leaf_id=leaf.leaf_id,
                          source_id=source_id, source_text=text[:SOURCE_TEXT_MAX],
                          truncated=len(text) > SOURCE_TEXT_MAX)
    answer = calls.ask(backend, base, ExtractAnswer).answer
    good: list[Finding] = []
    pending = list(answer.findings)
    for attempt in range(WORKER_EXCERPT_RETRIES + 1):
        failed: list[Retry] = []
        for finding in pending:
            problem = _problem(text, finding.excerpt)
            if problem is None:
                good.append(finding)
            else:
                failed.append(Retry(excerpt=finding.excerpt, problem=problem))
        calls.trace.add(calls.clock, "reasoning", f"{len(good)} excerpts found in the source text, "
                                                  f"{len(failed)} not (round {attempt + 1})")
        if not failed or attempt == WORKER_EXCERPT_RETRIES:
            break
        retry = base.model_copy(update={"retry": failed, "max_findings": len(failed)})
        pending = list(calls.ask(backend, retry, ExtractAnswer).answer.findings)[:len(failed)]
    unique: dict[str, Finding] = {}
    for finding in good:
        unique.setdefault(finding.excerpt, finding)  # one excerpt, one finding id: the first statement wins
    return list(unique.values())


def _link_problem(tree: TreeView, leaf: Leaf, proposal: ProposedLink, shown: set[str],
                  taken: set[str]) -> tuple[str, bytes] | str:
    """The link file for `proposal` when the verifier's link rules take it; otherwise what is wrong."""
    if proposal.finding_id not in shown:
        return f"{proposal.finding_id} is not one of the findings shown; use a finding_id exactly as shown"
    path, data = link_file(finding_id=proposal.finding_id, hypothesis_id=str(leaf.inputs["hypothesis_id"]),
                           revision=int(str(leaf.inputs["hypothesis_revision"])), stance=proposal.stance,
                           rationale=proposal.rationale, leaf_kind="link", leaf_id=leaf.leaf_id)
    _, problems = check_link_file(tree, path, data)
    if problems:
        return "; ".join(problem.message for problem in problems)
    if path in taken or tree.read(path) is not None:
        return f"{proposal.finding_id} is linked to this hypothesis revision already; link each finding once"
    return path, data


def link_findings(backend: Backend, leaf: Leaf, tree: TreeView, calls: _Calls) -> dict[str, bytes]:
    """Ask for links, check every one with the link rules, ask again for the refused ones only
    (bounded); the link files, and the none-found note when no link contradicts."""
    hypothesis_id = str(leaf.inputs["hypothesis_id"])
    revision = int(str(leaf.inputs["hypothesis_revision"]))
    loose = loose_problem(tree, hypothesis_id)
    if loose is not None:
        raise WorkerError(f"{leaf.leaf_id}: {loose.message}")
    hypothesis = current_hypothesis(tree, hypothesis_id)
    if hypothesis is None:
        raise WorkerError(f"{leaf.leaf_id}: there is no hypothesis {hypothesis_id} at the leaf's base")
    state = ProjectView(tree)
    asked = leaf.inputs.get("finding_ids")
    wanted = [str(f) for f in asked] if isinstance(asked, list) and asked else list(state.finding_ids)
    findings = [found for finding_id in wanted[:WORKER_LINK_MAX_FINDINGS]
                if (found := state.finding(finding_id)) is not None]
    if not findings:
        raise WorkerError(f"{leaf.leaf_id}: there are no findings to link at the leaf's base")
    base = LinkRequest(skill=_section(leaf.skill, "link"), project=leaf.project, leaf_id=leaf.leaf_id,
                       hypothesis=ShownHypothesis(hypothesis_id=hypothesis_id, revision=revision,
                                                  statement=hypothesis.statement),
                       findings=[ShownFinding(finding_id=f.finding_id, source_id=f.source_id, statement=f.statement,
                                              excerpt=f.excerpt, limitation=f.limitation) for f in findings])
    shown = {f.finding_id for f in findings}
    files: dict[str, bytes] = {}
    stances: list[str] = []
    pending = list(calls.ask(backend, base, LinkAnswer).answer.links)
    for attempt in range(WORKER_LINK_RETRIES + 1):
        failed: list[LinkRetry] = []
        for proposal in pending:
            checked = _link_problem(tree, leaf, proposal, shown, set(files))
            if isinstance(checked, str):
                failed.append(LinkRetry(finding_id=proposal.finding_id, stance=proposal.stance, problem=checked))
            else:
                files[checked[0]] = checked[1]
                stances.append(proposal.stance)
        calls.trace.add(calls.clock, "reasoning", f"{len(files)} links pass the link rules, {len(failed)} not "
                                                  f"(round {attempt + 1})")
        if not failed or attempt == WORKER_LINK_RETRIES:
            break
        retry = base.model_copy(update={"retry": failed, "max_links": len(failed)})
        pending = list(calls.ask(backend, retry, LinkAnswer).answer.links)[:len(failed)]
    if not files:
        raise WorkerError(f"{leaf.leaf_id}: no proposed link passed the link rules")
    if "contradicts" not in stances:
        # The counter-evidence requirement: none found among the sources whose findings were weighed.
        searched = sorted({f.source_id for f in findings})
        floor = state.project.counter_evidence_min_sources
        if len(searched) < floor:
            raise WorkerError(f"{leaf.leaf_id}: no link contradicts the hypothesis and the findings weighed come "
                              f"from {len(searched)} sources, fewer than the {floor} a none-found note needs "
                              "(PROJECT.md counter_evidence_min_sources)")
        path, data = note_file(leaf_id=leaf.leaf_id, hypothesis_id=hypothesis_id, revision=revision,
                               none_found_after=len(searched), sources_checked=searched)
        files[path] = data
    return files


def _fetch(url: str) -> tuple[bytes, str]:
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:  # noqa: S310 - the harness's pinned URL
        data = response.read(MAX_SOURCE_BYTES + 1)
        media_type = response.headers.get_content_type()
    if len(data) > MAX_SOURCE_BYTES:
        raise WorkerError(f"{url} is larger than {MAX_SOURCE_BYTES} bytes")
    if media_type not in EXTENSION_BY_MEDIA_TYPE:
        raise WorkerError(f"{url} is {media_type}, not a media type a source may have")
    return data, media_type


def _shown_url(url: str) -> str:
    """The URL as the model is told it: a loopback URL without its port. The validation set's pinned
    sources are served on a new port at every replay, and the request must stay the same for its
    recorded answer to replay; the port says nothing about the source."""
    parts = urlsplit(url)
    if parts.hostname in ("127.0.0.1", "localhost", "::1") and parts.port is not None:
        return urlunsplit(parts._replace(netloc=parts.hostname))
    return url


def _published(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def do_leaf(home: Home, leaf: Leaf, backend: Backend) -> WorkerResult:
    """Do one extract, link or scout leaf with `backend`; the patch and trace to submit."""
    trace = TraceRecorder()
    calls = _Calls(trace, leaf.now - timedelta(seconds=5))
    trace.add(calls.clock, "reasoning", f"Leaf {leaf.leaf_id} ({leaf.kind}): the platform worker, following the "
                                        f"skill's {leaf.kind} section with the {backend.name} model.")
    files: dict[str, bytes] = {}
    if leaf.kind == "extract":
        source_id = str(leaf.inputs["source_id"])
        trace.add(calls.clock, "tool_call", {"tool": "rw source text", "args": [leaf.project, source_id]})
        text = ScriptedAgent(home, leaf.agent, leaf.operator, "").source_text(leaf.project, source_id, leaf.base)
        trace.add(calls.clock, "tool_result", {"chars": len(text)})
        for finding in extract_findings(backend, leaf, text, calls):
            path, data = finding_file(source_id=source_id, source_text=text, excerpt=finding.excerpt,
                                      statement=finding.statement, limitation=finding.limitation,
                                      leaf_id=leaf.leaf_id)
            files[path] = data
        if not files:
            raise WorkerError(f"{leaf.leaf_id}: no finding's excerpt was found in the source text")
    elif leaf.kind == "link":
        trace.add(calls.clock, "tool_call", {"tool": "rw findings", "args": [leaf.project, leaf.base]})
        files = link_findings(backend, leaf, home.project(leaf.project).view(leaf.base), calls)
    elif leaf.kind == "scout":
        if not leaf.hints:
            raise WorkerError(f"{leaf.leaf_id}: a scout leaf needs the pinned URL of its source (--url)")
        url = leaf.hints[0]
        trace.add(calls.clock, "tool_call", {"tool": "fetch", "url": url})
        data, media_type = _fetch(url)
        trace.add(calls.clock, "tool_result", {"bytes": len(data), "media_type": media_type})
        request = ScoutRequest(skill=_section(leaf.skill, "scout"), project=leaf.project, leaf_id=leaf.leaf_id,
                               gap=str(leaf.inputs.get("gap", "")), url=_shown_url(url), media_type=media_type,
                               text=data[:SCOUT_TEXT_MAX].decode("utf-8", errors="replace"))
        meta = calls.ask(backend, request, ScoutAnswer).answer
        files = source_files(url=url, data=data, media_type=media_type, fetched_by=leaf.agent,
                             retrieved_at=leaf.now, language=meta.language, rights=meta.rights,
                             published=_published(meta.published), title=meta.title, leaf_id=leaf.leaf_id)
    else:
        raise WorkerError(f"{leaf.leaf_id}: the platform worker does extract, link and scout leaves, not {leaf.kind}")
    trace.add(calls.clock, "tool_call", {"tool": "write", "files": sorted(files)})
    trace.add(calls.clock, "tool_result", "ok")
    usd = calls.usd()
    summary = (f"{len(files)} files for {leaf.leaf_id} in {len(calls.replies)} model calls"
               + (f", usd {usd:.4f}" if usd is not None else ""))
    trace.add(leaf.now, "final", summary)
    patch = creation_patch(files)
    models = sorted({reply.model for reply in calls.replies})
    bundle = trace.bundle(leaf_id=leaf.leaf_id, agent=leaf.agent, operator=leaf.operator, base_revision=leaf.base,
                          patch=patch, level="L3", skill_version=skill_version(leaf.skill.encode("utf-8")),
                          model=",".join(models) or None, tokens=calls.tokens(),
                          duration_s=round(sum(reply.duration_s for reply in calls.replies), 3), summary=summary,
                          context=calls.context)
    return WorkerResult(patch, bundle)


@dataclass(frozen=True)
class ModelWorker:
    """The validation replay's worker (a `Worker`): each task done by `backend` (docs/models.md)."""

    backend: Backend

    def __call__(self, task: WorkerTask) -> WorkerResult:
        leaf = Leaf(project=task.project, leaf_id=task.leaf_id, kind=task.kind, base=task.base_revision,
                    inputs=dict(task.inputs), hints=list(task.hints), skill=task.skill, agent=task.agent,
                    operator=task.operator, now=datetime.fromisoformat(task.now.replace("Z", "+00:00")))
        # The replay's scratch home, opened as the replay opened it (a plain folder home, no deployment).
        return do_leaf(Home(Path(task.home)), leaf, self.backend)


def validation_worker(home: Home, role: Role = "worker") -> CommandWorker | ModelWorker | None:
    """The skill gate's worker: the configured `validation_worker` command when there is one, else the
    platform worker on `role`'s model; None when neither is configured."""
    if home.settings.validation_worker:
        return CommandWorker(tuple(home.settings.validation_worker))
    backend = role_backend(home, role)
    return ModelWorker(backend) if backend is not None else None


class WorkerSetupError(FormatError):
    """`rw worker run` cannot start: no model for the role, or no such leaf (exit 2, as bad input)."""


def run_on_home(home: Home, slug: str, leaf_id: str, *, role: Role, token: str, urls: list[str], now: datetime,
                fetcher: Fetcher) -> Verdict:
    """`rw worker run SLUG LEAF --model ROLE`: do the leaf with `role`'s model and submit it as the
    token's agent, through the verifier's one submission path (verifier.pipeline.submit)."""
    backend = role_backend(home, role)
    if backend is None:
        raise WorkerSetupError(f"no model is configured for {role}: add `models.{role}` (or `model`) to "
                               f"{home.layout.config} (docs/models.md)")
    actor = home.identities.authenticate(token)
    repo = home.project(slug)
    tip = repo.tip()
    data = repo.view(tip).read(leaf_path(leaf_id)) if tip is not None else None
    if data is None:
        raise WorkerSetupError(f"no leaf {leaf_id!r} in {slug}")
    contract = parse_leaf(data, leaf_path(leaf_id))
    leaf = Leaf(project=slug, leaf_id=leaf_id, kind=contract.kind, base=contract.base_revision,
                inputs=contract.inputs.model_dump(exclude_none=True), hints=list(urls),
                skill=read_live_skill(home).decode("utf-8"), agent=actor.handle, operator=actor.operator, now=now)
    result = do_leaf(home, leaf, backend)
    return submit(home, Submission(slug, leaf_id, result.patch, result.trace, token), now=now, fetcher=fetcher)


def run_plan(home: Home, slug: str, plan_id: str, *, role: Role, token: str, now: datetime,
             fetcher: Fetcher) -> list[str]:
    """The controlled arm's default single agent (docs/eval.md): every open extract leaf of `plan_id`,
    then every open link leaf (so the links can weigh the findings just landed), done by `role`'s
    model one after another; one line per leaf (its verdict, or why not)."""
    tip = home.project(slug).tip()
    if tip is None:
        raise WorkerSetupError(f"project {slug} has no commits")
    leaves = ProjectView(home.project(slug).view(tip)).leaves
    lines: list[str] = []
    order = {"extract": 0, "link": 1}
    for leaf_id, leaf in sorted(leaves.items(), key=lambda item: (order.get(item[1].contract.kind, 2), item[0])):
        if leaf.contract.plan_id != plan_id or leaf.status(now) != "open":
            continue
        if leaf.contract.kind not in order:
            lines.append(f"{leaf_id}: {leaf.contract.kind} leaf left alone (the platform worker does extract and "
                         "link here)")
            continue
        try:
            lines.append(run_on_home(home, slug, leaf_id, role=role, token=token, urls=[], now=now,
                                     fetcher=fetcher).line())
        except WorkerError as exc:
            lines.append(f"{leaf_id}: {exc}")
    return lines

"""The check for a person's edit outside any leaf (design §8): a steward's change to PROJECT.md,
a hypothesis or its criterion, a source or finding added by hand, a plan, a report, or Field
Guide lines. Every file is held to the same rules as when a leaf writes it."""

from __future__ import annotations

from collections import defaultdict

from verifier.checks.context import CheckContext, CheckResult
from verifier.checks.documents import check_document_file
from verifier.checks.extract import check_finding_file, source_problem
from verifier.checks.guide import guide_problems
from verifier.checks.hypotheses import activation_problem, revision_rule
from verifier.checks.links import check_link_file
from verifier.checks.scout import check_source_files
from verifier.errors import FormatError, Rejection
from verifier.formats.finding import parse_finding
from verifier.formats.hypothesis import Hypothesis, VerdictBlock, parse_hypothesis
from verifier.formats.project import parse_project
from verifier.formats.review import parse_review
from verifier.state.layout import FIELD_GUIDE, HUMAN_LEAF, PROJECT_FILE, classify


def _project(ctx: CheckContext, data: bytes, notes: list[str]) -> list[Rejection]:
    try:
        project, _ = parse_project(data, PROJECT_FILE)
    except FormatError as exc:
        return [Rejection("bad_project", exc.message, exc.where)]
    if project.project != ctx.project.project:
        return [Rejection("bad_project", f"project is {ctx.project.project!r} and cannot be renamed", PROJECT_FILE)]
    notes.extend(_not_yet_people(ctx, project.steward, project.maintainers))
    return []


def _not_yet_people(ctx: CheckContext, steward: str | None, maintainers: list[str]) -> list[str]:
    """A steward or maintainer newly named who is not a registered person, said in the verdict: a
    project may be handed to someone who joins later (an invite), and until then nobody but the
    home's admins holds the role; an agent's handle never holds it. Names already in PROJECT.md
    are not said again."""
    if ctx.handle_kind is None:
        return []
    named = ([steward] if steward is not None and steward != ctx.project.steward else []) + [
        handle for handle in maintainers if handle not in ctx.project.maintainers]
    notes = []
    for handle in named:
        kind = ctx.handle_kind(handle)
        role = f"{'steward' if handle == steward else 'maintainer'} {handle!r}"
        if kind == "agent":
            notes.append(f"{role} is an agent's handle: agents hold no person's role, so nobody but the home's "
                         "admins holds it; name a person")
        elif kind is None:
            notes.append(f"{role} is not a registered person yet: until they join (`rw invite`, or `rw agent add "
                         "HANDLE --operator OP --human`), the role is held by nobody but the home's admins")
    return notes


def _hypothesis(ctx: CheckContext, path: str, data: bytes, object_id: str) -> list[Rejection]:
    try:
        new, _ = parse_hypothesis(data, path)
    except FormatError as exc:
        return [Rejection("bad_format", exc.message, exc.where)]
    if new.hypothesis_id != object_id:
        return [Rejection("bad_id", f"hypothesis_id is {new.hypothesis_id}; the file is {path}", path)]
    old_data = ctx.base_tree.read(path) if ctx.base_tree is not None else None
    old = None
    if old_data is not None:
        try:
            old = parse_hypothesis(old_data, path)[0]
        except FormatError:
            old = None
    problem = revision_rule(old, new, path) or activation_problem(old, new, ctx.now.date(), path)
    if problem:
        return [problem]
    return _resolver_fields(old, new, path)


def _resolver_fields(old: Hypothesis | None, new: Hypothesis, path: str) -> list[Rejection]:
    """Verdicts, baselines and the resolved status are the Resolver's record: a hand edit of them
    would leave no ledger trail and no scores. People change a verdict with `rw verdict set`."""
    resolved_changed = (old is not None and (old.status == "resolved") != (new.status == "resolved")) or (
        old is None and new.status == "resolved")
    verdict_changed = new.verdict != (old.verdict if old is not None else VerdictBlock())
    baseline_changed = new.baseline != (old.baseline if old is not None else None)
    if resolved_changed or verdict_changed or baseline_changed:
        what = ", ".join(name for name, changed in (("status resolved", resolved_changed),
                                                    ("verdict", verdict_changed),
                                                    ("baseline", baseline_changed)) if changed)
        return [Rejection("resolver_only", f"{what} change only through the Resolver: use `rw verdict set` "
                          "(a person's override, with a reason) or `rw resolve`", path)]
    return []


def check_human(ctx: CheckContext) -> CheckResult:  # noqa: C901, PLR0912 - one branch per file kind a person may edit, in the order the design lists them
    rejections: list[Rejection] = []
    notes: list[str] = []
    retained: dict[str, dict[str, bytes]] = defaultdict(dict)
    records: dict[str, bytes] = {}
    changed: list[str] = []
    for path, data in sorted(ctx.writes.items()):
        changed.append(path)
        kind = classify(path)
        if data is None:
            # PROJECT.md is the project; a hypothesis keeps its revisions and verdicts. Corpus
            # objects are withdrawn by reverts; other files (notes, docs) may go.
            if path == PROJECT_FILE or (kind is not None and kind.type == "hypothesis"):
                rejections.append(Rejection("cannot_delete", f"{path} cannot be deleted; edit it instead", path))
            continue
        if path == PROJECT_FILE:
            rejections += _project(ctx, data, notes)
        elif path == FIELD_GUIDE:
            old = ctx.base_tree.read(FIELD_GUIDE) if ctx.base_tree is not None else None
            rejections += guide_problems(old, data, actor=ctx.actor, actor_type="human")
        elif kind is None:
            continue  # README, docs: free text
        elif kind.type == "hypothesis":
            rejections += _hypothesis(ctx, path, data, kind.object_id)
        elif kind.type == "source":
            records[kind.object_id] = data
        elif kind.type == "source-bytes":
            retained[kind.object_id][path] = data
        elif kind.type == "finding":
            rejections += _finding(ctx, path, data)
        elif kind.type == "link":
            link, problems = check_link_file(ctx.tree, path, data)
            rejections += problems
            if link is not None and (link.leaf_kind != "human" or link.leaf_id is not None):
                rejections.append(Rejection("wrong_leaf", "a person's link has leaf_kind human and no leaf_id", path))
        elif kind.type in ("plan", "report"):
            rejections += check_document_file(ctx.tree, path, data)
        elif kind.type == "review":
            try:
                parse_review(data, path)
            except FormatError as exc:
                rejections.append(Rejection("bad_format", exc.message, exc.where))
        else:
            rejections.append(Rejection("unexpected_file", f"a person's edit does not write {kind.type} files", path))
    for source_id, record in sorted(records.items()):
        rejections += check_source_files(ctx, source_id, record, retained.pop(source_id, {}), notes)
    for orphan, files in sorted(retained.items()):
        rejections.append(Rejection("missing_record", f"retained bytes for {orphan} have no record", next(iter(files))))
    return CheckResult(rejections, f"edit of {len(changed)} file{'s' if len(changed) != 1 else ''}", notes)


def _finding(ctx: CheckContext, path: str, data: bytes) -> list[Rejection]:
    try:
        source_id = parse_finding(data, path).source_id
    except FormatError as exc:
        return [Rejection("bad_format", exc.message, exc.where)]
    unavailable = source_problem(ctx.tree, source_id)
    if unavailable is not None:
        return [unavailable]
    return check_finding_file(path, data, ctx.source_texts.get(source_id), source_id=None, leaf_id=HUMAN_LEAF,
                              min_chars=ctx.project.min_excerpt_chars)

"""The extract check (design §5.2): 3-15 findings from the leaf's one source, every excerpt an
exact substring of the source's derived text, no duplicate finding_id, limitation non-empty."""

from __future__ import annotations

from verifier.checks.citation import ExcerptFound, first_difference, locate_excerpt
from verifier.checks.context import CheckContext, CheckResult
from verifier.constants import MAX_FINDINGS, MIN_EXCERPT_CHARS, MIN_FINDINGS
from verifier.errors import FormatError, Rejection
from verifier.formats.finding import Finding, parse_finding
from verifier.formats.ids import finding_id_for
from verifier.formats.source import parse_source
from verifier.formats.wording import count
from verifier.state.layout import classify, finding_path, queue_path, source_record_path
from verifier.state.view import TreeView
from verifier.text.normalize import normalize


def source_problem(tree: TreeView, source_id: str) -> Rejection | None:
    """None if the source can be quoted: it landed in sources/ (not held) and has not failed."""
    record_path = source_record_path(source_id)
    data = tree.read(record_path)
    if data is None:
        held = tree.read(queue_path("sources", record_path)) is not None
        why = "is held in queue/sources awaiting approval" if held else "does not exist"
        return Rejection("source_unavailable", f"source {source_id} {why}", record_path)
    try:
        record = parse_source(data, record_path)
    except FormatError as exc:
        return Rejection("source_unavailable", f"the source record is unreadable: {exc.message}", record_path)
    if record.status == "failed":
        return Rejection("source_unavailable", f"source {source_id} has status failed", record_path)
    return None


def excerpt_length_problem(normalized: str, min_chars: int, where: str | None = None) -> Rejection | None:
    """An excerpt (already normalized) shorter than the project's minimum (PROJECT.md
    min_excerpt_chars): a few letters occur in any source, so they would pin any claim to it."""
    if len(normalized) >= min_chars:
        return None
    return Rejection("excerpt_too_short", f"the excerpt is {len(normalized)} characters after normalization; "
                                          f"the project asks for at least {min_chars}", where)


def check_finding_file(path: str, data: bytes, text: str | None, *, source_id: str | None,
                       leaf_id: str | None, min_chars: int = MIN_EXCERPT_CHARS) -> list[Rejection]:
    """The rules every finding obeys; `source_id` and `leaf_id` pin it to a leaf when given.

    `text` is the derived text of the finding's source (None when the source is unavailable,
    which the caller reports)."""
    try:
        finding: Finding = parse_finding(data, path)
    except FormatError as exc:
        return [Rejection("bad_format", exc.message, exc.where)]
    problems: list[Rejection] = []
    expected_id = finding_id_for(finding.source_id, finding.excerpt)
    if finding.finding_id != expected_id:
        problems.append(Rejection(
            "bad_id", f"finding_id is {finding.finding_id}; derived from source and excerpt it is {expected_id}", path
        ))
    elif path != finding_path(expected_id):
        problems.append(Rejection("bad_path", f"finding {expected_id} belongs at {finding_path(expected_id)}", path))
    if source_id is not None and finding.source_id != source_id:
        problems.append(Rejection(
            "wrong_source",
            f"source_id is {finding.source_id}; this leaf extracts from {source_id}",
            path,
        ))
    if leaf_id is not None and finding.leaf_id != leaf_id:
        problems.append(Rejection("wrong_leaf", f"leaf_id is {finding.leaf_id}; expected {leaf_id}", path))
    if text is None:
        problems.append(Rejection("source_unavailable", f"source {finding.source_id} cannot be quoted", path))
        return problems
    excerpt = normalize(finding.excerpt)
    start, end = finding.location.start, finding.location.end
    if not excerpt:
        problems.append(Rejection("excerpt_not_found", "the excerpt is empty after normalization", path))
        return problems
    too_short = excerpt_length_problem(excerpt, min_chars, path)
    if too_short is not None:
        problems.append(too_short)
        return problems
    if text[start:end] == excerpt:
        return problems
    match = locate_excerpt(text, finding.excerpt)
    if isinstance(match, ExcerptFound):
        problems.append(Rejection(
            "wrong_location",
            f"the excerpt is at {match.start}-{match.end} of the source text, not {start}-{end}",
            path,
        ))
    else:
        problems.append(Rejection(
            "excerpt_not_found",
            f"the excerpt is not an exact substring of source {finding.source_id}'s text; closest match "
            f"at offset {match.closest_offset} ({match.similarity:.0f}% similar): {match.closest_text[:120]!r}"
            + "".join(f"; {detail}" for detail in [first_difference(finding.excerpt, match.closest_text,
                                                                    match.closest_offset)] if detail),
            path,
        ))
    return problems


def check_extract(ctx: CheckContext) -> CheckResult:
    assert ctx.leaf is not None
    source_id, leaf_id = ctx.leaf.inputs.source_id, ctx.leaf.leaf_id
    assert source_id is not None  # the leaf contract requires it for extract
    rejections: list[Rejection] = []
    unavailable = source_problem(ctx.tree, source_id)
    if unavailable is not None:
        return CheckResult([unavailable], "no findings")
    text = ctx.source_texts[source_id]
    findings = 0
    for path, data in sorted(ctx.writes.items()):
        kind = classify(path)
        if data is None or kind is None or kind.type != "finding":
            rejections.append(Rejection("unexpected_file", "an extract leaf only adds findings", path))
            continue
        findings += 1
        rejections += check_finding_file(path, data, text, source_id=source_id, leaf_id=leaf_id,
                                         min_chars=ctx.project.min_excerpt_chars)
    if not MIN_FINDINGS <= findings <= MAX_FINDINGS:
        rejections.insert(0, Rejection(
            "finding_count", f"an extract leaf adds {MIN_FINDINGS}-{MAX_FINDINGS} findings; this patch adds {findings}"
        ))
    return CheckResult(rejections, f"{count(findings, 'finding')} from {source_id}")

"""The skeptic and link checks (design §5.2): every link points at an existing finding and an
existing hypothesis revision, its stance is set, the hypothesis is not loose (design §3.5: only a
person links to a loose hypothesis), and the leaf meets the counter-evidence requirement: at least
one contradicts link, or an explicit "none found after N sources" note listing the N sources, N at
least PROJECT.md's counter_evidence_min_sources (default 3)."""

from __future__ import annotations

from verifier.checks.context import CheckContext, CheckResult
from verifier.checks.failed_sources import failed_reason
from verifier.checks.hypotheses import loose_problem, revision_problem
from verifier.errors import FormatError, Rejection
from verifier.formats.ids import link_id_for
from verifier.formats.leaf import LeafContract
from verifier.formats.link import CounterEvidenceNote, Link, parse_link, parse_note
from verifier.formats.wording import count
from verifier.state.layout import classify, finding_path, link_path, note_path, source_record_path
from verifier.state.view import TreeView


def check_link_file(tree: TreeView, path: str, data: bytes) -> tuple[Link | None, list[Rejection]]:
    """The rules every link obeys, whoever writes it."""
    try:
        link = parse_link(data, path)
    except FormatError as exc:
        return None, [Rejection("bad_format", exc.message, exc.where)]
    problems: list[Rejection] = []
    expected = link_id_for(link.finding_id, link.hypothesis_id, link.hypothesis_revision)
    if link.link_id != expected:
        problems.append(Rejection(
            "bad_id", f"link_id is {link.link_id}; derived from finding, hypothesis and revision it is {expected}",
            path))
    elif path != link_path(expected):
        problems.append(Rejection("bad_path", f"link {expected} belongs at {link_path(expected)}", path))
    if tree.read(finding_path(link.finding_id)) is None:
        problems.append(Rejection("unknown_finding", f"finding {link.finding_id} does not exist", path))
    revision = revision_problem(tree, link.hypothesis_id, link.hypothesis_revision, path)
    if revision is not None:
        problems.append(revision)
    return link, problems


def _floor_problems(tree: TreeView, note: CounterEvidenceNote, floor: int, path: str) -> list[Rejection]:
    """The counter-evidence floor (issue 10): the note lists the sources it searched, at least
    PROJECT.md's `counter_evidence_min_sources` of them, each a source of the project."""
    listed = sorted(set(note.sources_checked))
    problems: list[Rejection] = []
    if len(listed) != note.none_found_after:
        problems.append(Rejection(
            "sources_unlisted", f"the note says none found after {note.none_found_after} sources but lists "
            f"{len(listed)} distinct ones in sources_checked; list every source searched", path))
    if len(listed) < floor:
        problems.append(Rejection(
            "counter_evidence_floor", f"a none-found note must have searched at least {floor} sources "
            f"(PROJECT.md counter_evidence_min_sources); this one lists {len(listed)}", path))
    unknown = [source_id for source_id in listed if tree.read(source_record_path(source_id)) is None]
    if unknown:
        problems.append(Rejection("unknown_source", f"sources_checked names sources not in the project: "
                                  f"{', '.join(unknown[:5])}", path))
    failed = [source_id for source_id in listed if source_id not in unknown and failed_reason(tree, source_id)]
    if failed:
        problems.append(Rejection("failed_source", f"sources_checked names sources that could not be fetched "
                                  f"(status failed), so nobody searched them: {', '.join(failed[:5])}", path))
    return problems


def _check_note(leaf: LeafContract, path: str, data: bytes, tree: TreeView,
                floor: int) -> tuple[CounterEvidenceNote | None, list[Rejection]]:
    try:
        note = parse_note(data, path)
    except FormatError as exc:
        return None, [Rejection("bad_format", exc.message, exc.where)]
    problems: list[Rejection] = _floor_problems(tree, note, floor, path)
    if path != note_path(leaf.leaf_id) or note.leaf_id != leaf.leaf_id:
        problems.append(Rejection("wrong_leaf", f"the note of leaf {leaf.leaf_id} is {note_path(leaf.leaf_id)}"
                                  f" with leaf_id {leaf.leaf_id}", path))
    if (note.hypothesis_id, note.hypothesis_revision) != (leaf.inputs.hypothesis_id,
                                                           leaf.inputs.hypothesis_revision):
        problems.append(Rejection("wrong_hypothesis", "the note names another hypothesis revision than the leaf", path))
    if note.scout_requests and leaf.kind != "skeptic":
        problems.append(Rejection("scout_requests", "only skeptic leaves may request scout leaves", path))
    return note, problems


def check_links(ctx: CheckContext) -> CheckResult:
    """skeptic and link leaves share this check; they differ in where they start, not in rules."""
    leaf = ctx.leaf
    assert leaf is not None
    rejections: list[Rejection] = []
    links: list[Link] = []
    note: CounterEvidenceNote | None = None
    for path, data in sorted(ctx.writes.items()):
        kind = classify(path)
        if data is None or kind is None or kind.type not in ("link", "note"):
            rejections.append(Rejection("unexpected_file", f"a {leaf.kind} leaf only adds links and its note", path))
            continue
        if kind.type == "note":
            note, problems = _check_note(leaf, path, data, ctx.tree, ctx.project.counter_evidence_min_sources)
            rejections += problems
            continue
        link, problems = check_link_file(ctx.tree, path, data)
        rejections += problems
        if link is None:
            continue
        links.append(link)
        pinned = (leaf.inputs.hypothesis_id, leaf.inputs.hypothesis_revision)
        if (link.hypothesis_id, link.hypothesis_revision) != pinned:
            rejections.append(Rejection(
                "wrong_hypothesis",
                f"the link is to {link.hypothesis_id} revision {link.hypothesis_revision}; this leaf is about "
                f"{leaf.inputs.hypothesis_id} revision {leaf.inputs.hypothesis_revision}", path))
        if link.leaf_kind != leaf.kind or link.leaf_id != leaf.leaf_id:
            rejections.append(Rejection("wrong_leaf", f"leaf_kind and leaf_id must be {leaf.kind} and {leaf.leaf_id}",
                                        path))
        if leaf.kind == "link" and leaf.inputs.finding_ids and link.finding_id not in leaf.inputs.finding_ids:
            rejections.append(Rejection("wrong_finding", f"{link.finding_id} is not among this leaf's findings", path))
    loose = loose_problem(ctx.tree, leaf.inputs.hypothesis_id)
    if loose is not None:
        rejections.insert(0, loose)
    contradicts = sum(1 for link in links if link.stance == "contradicts")
    if not links and note is None:
        rejections.insert(0, Rejection("no_links", f"a {leaf.kind} leaf adds at least one link or its note"))
    elif contradicts == 0 and note is None:
        rejections.insert(0, Rejection(
            "counter_evidence",
            "no link contradicts the hypothesis and there is no note: add a contradicts link, or "
            f"{note_path(leaf.leaf_id)} saying none was found after N sources"))
    summary = f"{count(len(links), 'link')} ({contradicts} contradicts)" + (
        f", none found after {count(note.none_found_after, 'source')}" if note and not contradicts else "")
    notes = [f"scout request: {request.gap}" for request in (note.scout_requests if note else [])]
    return CheckResult(rejections, summary, notes)

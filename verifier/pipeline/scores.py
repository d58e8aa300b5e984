"""Turning a landing's writes into use-score events (scoring.use), and rescoring a project.

The objects' facts (a link's finding and hypothesis, a report's citations) are parsed from the
bytes being written; the operator is the one the landing is attributed to.
"""

from __future__ import annotations

from collections.abc import Mapping

from verifier.errors import FormatError
from verifier.formats.document import parse_plan, parse_report
from verifier.formats.link import parse_link
from verifier.formats.review import parse_review
from verifier.formats.source import parse_source
from verifier.scoring.use import SCORED_TYPES, ObjectFacts, ScoreBook
from verifier.state.layout import classify
from verifier.state.view import TreeView


def facts_of(path: str, data: bytes, operator: str) -> ObjectFacts | None:
    """Scoring facts of one object file, or None if it is not a scored object."""
    kind = classify(path)
    if kind is None or kind.type not in SCORED_TYPES:
        return None
    try:
        if kind.type == "link":
            # Always the strict model: a line match could be fooled by a key or a multi-line
            # string that a YAML parser reads differently.
            link = parse_link(data, path)
            return ObjectFacts("link", kind.object_id, operator, finding_id=link.finding_id,
                               hypothesis_id=link.hypothesis_id)
        if kind.type == "plan":
            plan, _ = parse_plan(data, path)
            return ObjectFacts("plan", kind.object_id, operator, cites=tuple(plan.cites))
        if kind.type == "source" and parse_source(data, path).status == "failed":
            return None  # a failed source (issue 10) is a record of an attempt, not evidence
        if kind.type == "review":
            review = parse_review(data, path)
            return ObjectFacts("review", kind.object_id, operator,
                               rejects=review.object_id if review.decision == "reject" else None)
        if kind.type == "report":
            report, _ = parse_report(data, path)
            return ObjectFacts("report", kind.object_id, operator, cites=tuple(report.cites),
                               introduced=tuple(report.introduced))
    except FormatError:
        return None  # checks refuse malformed objects; history may hold one a person fixed later
    return ObjectFacts(kind.type, kind.object_id, operator)


def apply_writes(book: ScoreBook, before: TreeView, writes: Mapping[str, bytes | None], operator: str) -> int:
    """Feed one landing's writes to the book (its scores and its index of what rests on what);
    returns how many objects were added."""
    book.rests.ensure(before)  # built by one scan the first time (a project from before it)
    book.ensure_use_index(before)  # the same for the use index (verifier.scoring.useindex)
    book.rests.apply(before, writes)
    added = 0
    # Sources, findings, links, then reviews and documents: what cites or judges must find its object.
    order = {"source": 0, "finding": 1, "link": 2, "review": 3, "plan": 4, "report": 5}

    def rank(item: tuple[str, bytes | None]) -> tuple[int, str]:
        kind = classify(item[0])
        return (order.get(kind.type, 9) if kind else 9, item[0])

    for path, data in sorted(writes.items(), key=rank):
        kind = classify(path)
        if kind is None or kind.type not in SCORED_TYPES:
            continue
        if data is None:
            book.remove(kind.object_id)
            continue
        facts = facts_of(path, data, operator)
        if facts is None:
            continue
        if before.read(path) is None:
            book.add(facts)
            added += 1
        else:
            book.replace(facts)
    return added

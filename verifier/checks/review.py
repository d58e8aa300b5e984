"""The review check (design §5.2): one review of the leaf's one object (a finding or a link),
with accept, reject or amend and a non-empty reason; amendments fit the object's type; and an
agent never reviews an object its own leaf landed (issue 10: another agent of the same operator may)."""

from __future__ import annotations

from verifier.checks.context import CheckContext, CheckResult
from verifier.errors import FormatError, Rejection
from verifier.formats.finding import parse_finding
from verifier.formats.ids import review_id_for
from verifier.formats.link import parse_link
from verifier.formats.review import parse_review
from verifier.state.layout import classify, review_path
from verifier.state.project import ProjectView
from verifier.state.view import TreeView

_AMENDABLE = {"finding": {"statement", "limitation"}, "link": {"stance", "rationale"}}


def author_of(tree: TreeView, object_path: str) -> str | None:
    """The agent (or person) whose leaf landed the object: its leaf_id, confirmed by the leaf's result."""
    data = tree.read(object_path)
    kind = classify(object_path)
    if data is None or kind is None or kind.type not in ("finding", "link"):
        return None
    try:
        parse = parse_finding if kind.type == "finding" else parse_link
        leaf_id = parse(data, object_path).leaf_id
    except FormatError:
        return None
    try:
        result = ProjectView(tree).result(leaf_id) if leaf_id else None
    except FormatError:
        return None
    return result.actor if result is not None else None


def check_review(ctx: CheckContext) -> CheckResult:
    leaf = ctx.leaf
    assert leaf is not None
    target = leaf.inputs.object_path
    assert target is not None  # the contract requires it for review leaves
    reviews = [(path, data) for path, data in ctx.writes.items()]
    if len(reviews) != 1:
        return CheckResult(
            [Rejection("review_count", f"a review leaf adds exactly one review; this adds {len(reviews)}")], "")
    path, data = reviews[0]
    kind = classify(path)
    if data is None or kind is None or kind.type != "review":
        return CheckResult([Rejection("unexpected_file", "a review leaf only adds its review", path)], "")
    try:
        review = parse_review(data, path)
    except FormatError as exc:
        return CheckResult([Rejection("bad_format", exc.message, exc.where)], "")
    problems: list[Rejection] = []
    expected = review_id_for(target, leaf.leaf_id)
    if review.review_id != expected or path != review_path(expected):
        problems.append(Rejection("bad_id", f"this leaf's review is {review_path(expected)} with review_id {expected}",
                                  path))
    target_kind = classify(target)
    if review.object_path != target or target_kind is None or review.object_id != target_kind.object_id:
        problems.append(Rejection("wrong_object", f"this leaf reviews {target}", path))
    if ctx.tree.read(target) is None:
        problems.append(Rejection("unknown_object", f"{target} does not exist (reverted or never landed)", path))
    author = author_of(ctx.tree, target)
    if ctx.actor_type != "human" and author == ctx.actor:
        problems.append(Rejection("own_object", f"{target} is {ctx.actor}'s own; an agent does not review its own "
                                  "objects (another agent may, even of the same operator)", path))
    if review.leaf_id != leaf.leaf_id:
        problems.append(Rejection("wrong_leaf", f"leaf_id is {review.leaf_id}; expected {leaf.leaf_id}", path))
    if review.amendment is not None and target_kind is not None:
        given = {name for name, value in review.amendment.model_dump().items() if value is not None}
        allowed = _AMENDABLE.get(target_kind.type, set())
        if not given or not given <= allowed:
            problems.append(Rejection(
                "bad_amendment", f"an amendment of a {target_kind.type} changes some of: {', '.join(sorted(allowed))}",
                path))
    return CheckResult(problems, f"{review.decision} {target}")

"""Reviews take effect (issue 10): an accepted `amend` review rewrites its object in the same
landing, with exactly the typed fields the amendment gives (a finding's statement or limitation;
a link's stance or rationale). The review check has already held the amendment to the object's
type; this builds the new bytes of the object. `reject` needs no file change: it takes effect in
the use scores (scoring.use) while the review stands.

Pure: reads a TreeView and the landing's writes, returns the extra writes.
"""

from __future__ import annotations

from collections.abc import Mapping

from verifier.errors import FormatError
from verifier.formats.finding import parse_finding
from verifier.formats.link import parse_link
from verifier.formats.review import Review, parse_review
from verifier.formats.yamlout import dump_yaml
from verifier.state.layout import classify
from verifier.state.view import TreeView


def amended(tree: TreeView, review: Review) -> tuple[str, bytes] | None:
    """The reviewed object's path and its amended bytes, or None (not an amend, or nothing to change)."""
    if review.decision != "amend" or review.amendment is None:
        return None
    kind = classify(review.object_path)
    data = tree.read(review.object_path)
    if kind is None or data is None:
        return None
    changes = {name: value for name, value in review.amendment.model_dump().items() if value is not None}
    if kind.type == "finding":
        model = parse_finding(data, review.object_path)
        fields = {"statement", "limitation"}
    elif kind.type == "link":
        model = parse_link(data, review.object_path)  # type: ignore[assignment]
        fields = {"stance", "rationale"}
    else:
        return None
    if not changes or not set(changes) <= fields:
        return None
    new = model.model_copy(update=changes)
    if new == model:
        return None
    return review.object_path, dump_yaml(new.model_dump(mode="json", exclude_none=True))


def amendment_writes(tree: TreeView, writes: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """The object rewrites that the landing's accepted `amend` reviews carry (tree: before the writes)."""
    out: dict[str, bytes | None] = {}
    for path, data in sorted(writes.items()):
        kind = classify(path)
        if data is None or kind is None or kind.type != "review" or tree.read(path) is not None:
            continue
        try:
            review = parse_review(data, path)
            change = amended(tree, review)
        except FormatError:
            continue  # the check refuses malformed reviews; a person's edit may carry a stale one
        if change is not None and change[0] not in writes:
            out[change[0]] = change[1]
    return out

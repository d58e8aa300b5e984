"""Hold routing (design §8): objects of a held type go to queue/<type>/ instead of the
corpus, at the same relative path, so approving one is a move and nothing else. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from verifier.state.layout import HOLD_OF, QUEUE_DIR, classify, queue_path


def route(writes: dict[str, bytes | None], holds: Sequence[str],
          forced: Set[str] = frozenset()) -> tuple[dict[str, bytes | None], list[str]]:
    """Return (routed writes, sorted hold types used). Deletions are never routed. `forced` names
    paths a check wants a person to look at whatever PROJECT.md holds (a source whose live bytes
    differ from the retained ones, or one whose URL could not be checked)."""
    routed: dict[str, bytes | None] = {}
    used: set[str] = set()
    for path, data in writes.items():
        kind = classify(path)
        hold = HOLD_OF.get(kind.type) if kind else None
        if data is not None and hold is not None and (hold in holds or path in forced):
            routed[queue_path(hold, path)] = data
            used.add(hold)
        else:
            routed[path] = data
    return routed, sorted(used)


def count_objects(writes: Mapping[str, bytes | None]) -> int:
    """How many corpus objects the writes bring (a source's record and bytes are one object)."""
    return len(object_ids(writes))


def object_ids(writes: Mapping[str, bytes | None]) -> list[str]:
    """The ids of the corpus objects the writes bring, held ones included, sorted."""
    ids = set()
    for path, data in writes.items():
        corpus_path = path.split("/", 2)[2] if path.startswith(f"{QUEUE_DIR}/") and path.count("/") >= 2 else path
        kind = classify(corpus_path)
        if data is not None and kind is not None:
            ids.add(kind.object_id)
    return sorted(ids)

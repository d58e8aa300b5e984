"""What rests on an object (design §11, issue 10): the cascade a revert withdraws with it.

The evidence graph's edges point one way: a finding quotes a source, a link joins a finding to a
hypothesis, a review judges a finding or a link, a plan or a report cites findings and links.
When a revert withdraws objects, everything that rests on them goes too, in the same landing:
findings of a withdrawn source, links of a withdrawn finding (or hypothesis), reviews of a
withdrawn finding or link, and the held copies of those in queue/, repeated until nothing new
rests on what goes. Plans and reports are people's (or the Planner's) prose: the verifier does not
rewrite them, so a revert that would pull an object a document cites is refused with the list
(edit or revert the document first). A revert that takes a hypothesis back to an earlier wording
withdraws the links made against the later revisions. See docs/adr/0008-graph-meaning.md.

It finds them from the index of what rests on what (verifier.scoring.rests), kept with the
scores, not by scanning the corpus (issue 26). Pure: it reads a TreeView (and the index through
it) and returns the extra deletions and the blockers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from verifier.errors import FormatError
from verifier.formats.document import parse_plan, parse_report
from verifier.formats.finding import parse_finding
from verifier.formats.hypothesis import parse_hypothesis
from verifier.formats.link import parse_link
from verifier.formats.review import parse_review
from verifier.scoring.rests import RestIndex, corpus_path, held_files
from verifier.state.layout import PLANS_DIR, REPORTS_DIR, classify, finding_path, source_record_path
from verifier.state.view import TreeView

LISTED_IN_ROW = 40  # ids named in the ledger row's description (each about 20 characters)


@dataclass(frozen=True)
class Cascade:
    """The deletions a withdrawal drags along, and the documents that block it."""

    withdrawn: dict[str, None] = field(default_factory=dict)  # path -> None, beyond the revert's own
    blockers: list[str] = field(default_factory=list)  # "reports/r.md cites fnd_..." lines

    @property
    def object_ids(self) -> list[str]:
        ids = []
        for path in sorted(self.withdrawn):
            kind = classify(corpus_path(path))
            if kind is not None:
                ids.append(kind.object_id)
        return sorted(set(ids))


def _rests_on(path: str, data: bytes, gone_ids: set[str], gone_paths: set[str]) -> bool:
    kind = classify(corpus_path(path))
    if kind is None:
        return False
    try:
        if kind.type == "finding":
            return parse_finding(data, path).source_id in gone_ids
        if kind.type == "link":
            link = parse_link(data, path)
            return link.finding_id in gone_ids or link.hypothesis_id in gone_ids
        if kind.type == "review":
            review = parse_review(data, path)
            return review.object_path in gone_paths or review.object_id in gone_ids
    except FormatError:
        return False  # malformed history is not evidence; nothing rests on it
    return False


def _gone(tree: TreeView, writes: Mapping[str, bytes | None]) -> tuple[set[str], set[str]]:
    paths = {path for path, data in writes.items() if data is None and tree.read(path) is not None}
    ids = {kind.object_id for kind in map(classify, paths) if kind is not None}
    return ids, paths


def _blockers(tree: TreeView, documents: set[str], gone_ids: set[str]) -> list[str]:
    found: list[str] = []
    for path in sorted(documents):
        data = tree.read(path)
        if data is None:
            continue
        try:
            document = parse_plan(data, path)[0] if path.startswith(f"{PLANS_DIR}/") else parse_report(data, path)[0]
        except FormatError:
            continue
        cited = sorted(set(document.cites) & gone_ids)
        if cited:
            found.append(f"{path} cites {', '.join(cited)}")
    return found


def _revisions_kept(tree: TreeView, writes: Mapping[str, bytes | None]) -> dict[str, int]:
    """Hypotheses whose wording the writes take back to an earlier revision: id -> the revision
    kept. Links made against a later revision rest on a wording that goes."""
    kept: dict[str, int] = {}
    for path, data in writes.items():
        kind = classify(path)
        old = tree.read(path) if kind is not None and kind.type == "hypothesis" else None
        if data is None or old is None or kind is None:
            continue
        try:
            before, after = parse_hypothesis(old, path)[0], parse_hypothesis(data, path)[0]
        except FormatError:
            continue
        if after.revision < before.revision:
            kept[kind.object_id] = after.revision
    return kept


def _on_a_withdrawn_revision(path: str, data: bytes, kept: Mapping[str, int]) -> bool:
    kind = classify(corpus_path(path))
    if kind is None or kind.type != "link":
        return False
    try:
        link = parse_link(data, path)
    except FormatError:
        return False
    return link.hypothesis_id in kept and link.hypothesis_revision > kept[link.hypothesis_id]


def _is_document(path: str) -> bool:
    return path.startswith((f"{PLANS_DIR}/", f"{REPORTS_DIR}/"))


def cascade(tree: TreeView, writes: Mapping[str, bytes | None], index: RestIndex | None = None) -> Cascade:
    """The objects resting on what `writes` deletes from `tree` (the tree before the writes), or
    on a hypothesis wording the writes take back.

    Read from the index of what rests on what (verifier.scoring.rests; built from `tree` by one
    scan when the tree holds none, and then kept in `index` for the landing to write): each file
    it names is read and parsed, and goes only if it really rests on what goes."""
    gone_ids, gone_paths = _gone(tree, writes)
    kept = _revisions_kept(tree, writes)
    if not gone_ids and not kept:
        return Cascade()
    index = RestIndex(tree.read) if index is None else index
    index.ensure(tree)
    try:
        return _from_index(tree, writes, index, gone_ids, gone_paths, kept)
    except FormatError:  # a shard that does not parse: the index is stale
        index.rebuild(tree)
        return _from_index(tree, writes, index, gone_ids, gone_paths, kept)


@dataclass
class _Withdrawal:
    """One cascade's walk: what went so far, and the files already looked at."""

    tree: TreeView
    writes: Mapping[str, bytes | None]
    index: RestIndex
    gone_ids: set[str]
    gone_paths: set[str]
    withdrawn: dict[str, None] = field(default_factory=dict)
    documents: set[str] = field(default_factory=set)
    checked: set[tuple[str, str]] = field(default_factory=set)

    def take(self, path: str) -> list[str]:
        """Withdraw `path`; returns the id that newly went with it (none for a held copy)."""
        self.withdrawn[path] = None
        corpus = corpus_path(path)
        self.gone_paths.add(corpus)
        kind = classify(corpus)
        if kind is None or corpus != path or kind.object_id in self.gone_ids:
            return []
        self.gone_ids.add(kind.object_id)
        return [kind.object_id]

    def skip(self, path: str) -> bool:
        return path in self.writes or path in self.withdrawn

    def held_round(self, held: Mapping[str, bytes], fresh: list[str]) -> list[str]:
        more: list[str] = []
        for path, data in held.items():
            if not self.skip(path) and any(target.encode() in data for target in fresh) and \
                    _rests_on(path, data, self.gone_ids, self.gone_paths):
                more += self.take(path)
        return more

    def index_round(self, fresh: list[str]) -> list[str]:
        more: list[str] = []
        for target in fresh:
            for path in self.index.dependants(target, self.tree):
                if _is_document(path):
                    self.documents.add(path)
                elif not self.skip(path) and (target, path) not in self.checked:
                    self.checked.add((target, path))
                    data = self.tree.read(path)
                    if data is not None and _rests_on(path, data, self.gone_ids, self.gone_paths):
                        more += self.take(path)
        return more


def _from_index(tree: TreeView, writes: Mapping[str, bytes | None], index: RestIndex, gone_ids: set[str],
                gone_paths: set[str], kept: Mapping[str, int]) -> Cascade:
    walk = _Withdrawal(tree, writes, index, set(gone_ids), set(gone_paths))
    fresh = sorted(gone_ids)  # each round looks up only what rests on the ids that just went
    # Held copies are read whole (the queue does not grow with the corpus), once.
    held = {path: data for path in held_files(tree) if path not in writes and (data := tree.read(path)) is not None}
    by_revision = [path for hypothesis in sorted(kept) for path in index.dependants(hypothesis, tree)]
    for path in [*by_revision, *held] if kept else []:
        data = held.get(path) or (None if walk.skip(path) else tree.read(path))
        if data is not None and not walk.skip(path) and _on_a_withdrawn_revision(path, data, kept):
            fresh += walk.take(path)
    while fresh:
        fresh = walk.held_round(held, fresh) + walk.index_round(fresh)
    return Cascade(dict(sorted(walk.withdrawn.items())), _blockers(tree, walk.documents, walk.gone_ids))


def withdrawn_note(resting: Cascade, *, line: bool = False) -> str:
    """How a revert names what it withdrew: a commit-body paragraph, or a ledger-description tail."""
    ids = resting.object_ids
    if not ids:
        return ""
    if line:  # the ledger row's description is bounded: the commit body lists them all
        shown = ", ".join(ids[:LISTED_IN_ROW]) + (f" (+{len(ids) - LISTED_IN_ROW} more, listed in the revert commit)"
                                                  if len(ids) > LISTED_IN_ROW else "")
        return f"; withdrew {len(ids)} dependent object{'s' if len(ids) != 1 else ''}: {shown}"
    return "\n\nWithdrawn with it (they rested on it):\n" + "\n".join(f"- {object_id}" for object_id in ids)


def missing_bases(tree: TreeView, writes: Mapping[str, bytes | None]) -> list[str]:
    """What `writes` would bring back (a revert of a revert) that rests on an object no longer
    there: a finding whose source record, a link whose finding, a review whose object is gone."""
    def present(path: str) -> bool:
        return writes[path] is not None if path in writes else tree.read(path) is not None

    missing: list[str] = []
    for path, data in sorted(writes.items()):
        kind = classify(path)
        if data is None or kind is None or tree.read(path) is not None:
            continue
        try:
            if kind.type == "finding":
                base = source_record_path(parse_finding(data, path).source_id)
            elif kind.type == "link":
                base = finding_path(parse_link(data, path).finding_id)
            elif kind.type == "review":
                base = parse_review(data, path).object_path
            else:
                continue
        except FormatError:
            continue
        if not present(base):
            missing.append(f"{path} rests on {base}, which is no longer in the project")
    return missing

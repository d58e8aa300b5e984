"""Random evidence graphs for the index of what rests on what (verifier.scoring.rests): plain
files in a dict, landed a batch of writes at a time, and the index's shards read back."""

from __future__ import annotations

import json

from verifier.agentkit.objects import finding_file, link_file, review_file
from verifier.scoring.rests import RestIndex
from verifier.state.layout import RESTS_ROOT, source_record_path
from verifier.state.view import DictTree

TEXT = "Seven of eleven teams pay for verification. Two pay for rollouts. Nine teams audit weekly."
EXCERPTS = ("Seven of eleven teams pay for verification.", "Two pay for rollouts.", "Nine teams audit weekly.")
SOURCES = tuple("src_" + digit * 16 for digit in "abc")
HYPOTHESES = ("H1", "H2")


def finding(source: int, excerpt: int, leaf: int) -> tuple[str, bytes]:
    return finding_file(source_id=SOURCES[source], source_text=TEXT, excerpt=EXCERPTS[excerpt], statement="S.",
                        limitation="L.", leaf_id=f"extract-{leaf}")


def link(finding_id: str, hypothesis: int, revision: int) -> tuple[str, bytes]:
    return link_file(finding_id=finding_id, hypothesis_id=HYPOTHESES[hypothesis], revision=revision,
                     stance="supports", rationale="R.", leaf_kind="link", leaf_id="link-1")


def review(object_path: str, leaf: int) -> tuple[str, bytes]:
    object_id = object_path.rsplit("/", 1)[1][:-5]
    return review_file(object_path=object_path, object_id=object_id, decision="accept", reason="Fine.",
                       leaf_id=f"review-{leaf}")


def report(report_id: str, cites: list[str]) -> tuple[str, bytes]:
    return (f"reports/{report_id}.md", (f"---\nreport_id: {report_id}\ntitle: T\ncites: [{', '.join(cites)}]\n"
                                       "author: steward\ncreated_at: '2026-11-30T12:00:00Z'\n---\nBody.\n").encode())


def base_files() -> dict[str, bytes]:
    return {source_record_path(source): b"record\n" for source in SOURCES}


def land(files: dict[str, bytes], writes: dict[str, bytes | None]) -> dict[str, bytes]:
    """Apply the writes and the index's own writes, as a landing does; returns the new files."""
    index = RestIndex(DictTree(files).read)
    index.ensure(DictTree(files))
    index.apply(DictTree(files), writes)
    after = dict(files)
    for path, data in {**writes, **index.writes()}.items():
        if data is None:
            after.pop(path, None)
        else:
            after[path] = data
    return after


def index_files(files: dict[str, bytes]) -> dict[str, object]:
    """The index's shards, parsed, and its marker."""
    return {path: json.loads(data) for path, data in files.items()
            if path.startswith(f"{RESTS_ROOT}/") or path == f"{RESTS_ROOT}.json"}


def rebuilt(files: dict[str, bytes]) -> dict[str, object]:
    """The index a scan of the corpus builds, with nothing of an older one."""
    corpus = {path: data for path, data in files.items() if not path.startswith(RESTS_ROOT)}
    index = RestIndex(DictTree(corpus).read)
    index.rebuild(DictTree(corpus))
    return index_files({path: data for path, data in index.writes().items() if data is not None})

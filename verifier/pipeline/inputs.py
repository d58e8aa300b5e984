"""What the checks need besides the tree, prepared by the pipeline: the outcome of fetching each
new source's URL (before the lock: it can take seconds) and the derived text of every source a
submission quotes."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from verifier.checks.policy import address_problem, url_problem
from verifier.errors import FormatError, Rejected, Rejection
from verifier.formats.fetch import FetchOutcome
from verifier.formats.finding import parse_finding
from verifier.formats.leaf import LeafContract
from verifier.formats.project import ProjectFile
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE, parse_source
from verifier.patch.apply import apply_patch
from verifier.patch.parse import ParsedPatch
from verifier.state.layout import classify, source_bytes_path, source_record_path
from verifier.state.view import TreeView
from verifier.store.fetcher import Fetcher

# The derived text of retained bytes (blob id, bytes, media type -> text): deterministic, so the
# judge may be handed the home's cached extractor (Home.source_text) as a pure function.
TextOf = Callable[[str, bytes, str], str]


def created_files(patch: ParsedPatch) -> dict[str, bytes]:
    """The new files of a patch; they need no base, so they can be read before the lock."""
    creates = ParsedPatch(tuple(c for c in patch.changes if c.op == "create"), patch.size)
    return {path: data for path, data in apply_patch(creates, lambda _path: None).items() if data is not None}


def fetch_new_sources(patch: ParsedPatch, project: ProjectFile, fetcher: Fetcher) -> dict[str, FetchOutcome]:
    """Fetch each new source's URL once (scout leaves), before the lock: it can take seconds."""
    outcomes: dict[str, FetchOutcome] = {}
    policy = project.source_policy

    def allows(url: str) -> str | None:
        return url_problem(url, policy)

    def allows_address(address: str) -> str | None:
        return address_problem(address, policy)

    for path, data in created_files(patch).items():
        kind = classify(path)
        if kind is None or kind.type != "source":
            continue
        try:
            record = parse_source(data, path)
        except FormatError:
            continue  # the scout check reports it with the file and field
        if record.url not in outcomes:
            outcomes[record.url] = fetcher.fetch(record.url, allows, allows_address)
    return outcomes


def source_texts(text_of: TextOf, view: TreeView, leaf: LeafContract | None,
                 writes: Mapping[str, bytes | None]) -> dict[str, str]:
    """Derived text of every source the checks will quote against: the leaf's input source, and
    the source of each finding a person writes by hand."""
    wanted = {leaf.inputs.source_id} if leaf is not None and leaf.inputs.source_id else set()
    if leaf is None:
        for path, data in writes.items():
            kind = classify(path)
            if data is not None and kind is not None and kind.type == "finding":
                try:
                    wanted.add(parse_finding(data, path).source_id)
                except FormatError:
                    continue  # the check reports the malformed finding
    texts: dict[str, str] = {}
    for source_id in sorted(wanted):
        data = view.read(source_record_path(source_id))
        if data is None:
            continue
        try:
            record = parse_source(data, source_record_path(source_id))
        except FormatError:
            continue  # a malformed record (a person's, in this very edit) is reported by the check
        path = source_bytes_path(source_id, EXTENSION_BY_MEDIA_TYPE[record.media_type])
        raw, blob = view.read(path), view.blob_id(path)
        if raw is None or blob is None:
            raise Rejected(Rejection("source_unavailable", f"source {source_id} has no retained bytes", path))
        try:
            texts[source_id] = text_of(blob, raw, record.media_type)
        except ValueError:
            continue  # bytes with no quotable text: the source check says why; findings on it fail
    return texts

"""Failed sources (design §11, issue 10): a scout whose URL does not resolve is still a rejection
for the leaf, but the source is recorded: its record lands with `status: failed` and the reason
(`failure`), without the retained bytes nobody could verify. An extract leaf is never made or
accepted on a failed source (checks.extract.source_problem refuses the findings; `extract_refusal`
refuses the leaf).

Pure: the landing's writes, the rejections and the fetch outcomes in; the record bytes out.
"""

from __future__ import annotations

from collections.abc import Mapping

from verifier.errors import FormatError, Rejection
from verifier.formats.fetch import FetchOutcome
from verifier.formats.leaf import LeafContract
from verifier.formats.source import parse_source
from verifier.formats.yamlout import dump_yaml
from verifier.state.layout import classify, source_record_path
from verifier.state.view import TreeView

UNRESOLVED = "url_unresolved"  # the scout check's code for a URL that did not resolve


def failed_records(writes: Mapping[str, bytes | None], rejections: list[Rejection],
                   fetches: Mapping[str, FetchOutcome]) -> dict[str, bytes | None]:
    """The `status: failed` records of the sources whose URL did not resolve, by path."""
    failed_at = {rejection.where for rejection in rejections if rejection.code == UNRESOLVED}
    out: dict[str, bytes | None] = {}
    for path in sorted(p for p in failed_at if p is not None):
        data = writes.get(path)
        kind = classify(path)
        if data is None or kind is None or kind.type != "source":
            continue
        try:
            record = parse_source(data, path)
        except FormatError:
            continue
        outcome = fetches.get(record.url)
        reason = outcome.reason if outcome is not None and outcome.reason else "the URL did not resolve"
        failed = record.model_copy(update={"status": "failed", "failure": reason[:500]})
        out[path] = dump_yaml(failed.model_dump(mode="json", exclude_none=True))
    return out


def failed_reason(tree: TreeView, source_id: str) -> str | None:
    """Why the source failed, if its record says `status: failed`; else None."""
    data = tree.read(source_record_path(source_id))
    if data is None:
        return None
    try:
        record = parse_source(data, source_record_path(source_id))
    except FormatError:
        return None
    return (record.failure or "no reason recorded") if record.status == "failed" else None


def extract_refusal(tree: TreeView, contract: LeafContract) -> str | None:
    """Why an extract leaf cannot be made on its source (it failed), or None."""
    source_id = contract.inputs.source_id if contract.kind == "extract" else None
    why = failed_reason(tree, source_id) if source_id else None
    return None if why is None else f"source {source_id} has status failed ({why}): no extract leaf is made on it"

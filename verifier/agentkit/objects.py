"""Writing corpus objects the way the verifier expects them: ids derived, offsets located."""

from __future__ import annotations

from datetime import date, datetime

from verifier.checks.citation import ExcerptFound, locate_excerpt
from verifier.formats.base import iso
from verifier.formats.ids import (
    canonical_url,
    finding_id_for,
    link_id_for,
    review_id_for,
    sha256_hex,
    source_id_for,
)
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE
from verifier.formats.yamlout import dump_yaml
from verifier.state.layout import (
    finding_path,
    link_path,
    note_path,
    review_path,
    source_bytes_path,
    source_record_path,
)


def finding_file(*, source_id: str, source_text: str, excerpt: str, statement: str, limitation: str,
                 leaf_id: str, location: tuple[int, int] | None = None) -> tuple[str, bytes]:
    """(path, bytes) of a finding; the location is found in the source text unless given."""
    if location is None:
        match = locate_excerpt(source_text, excerpt)
        if not isinstance(match, ExcerptFound):
            raise ValueError(f"excerpt not in the source text (closest at {match.closest_offset})")
        location = (match.start, match.end)
    finding_id = finding_id_for(source_id, excerpt)
    body = {
        "finding_id": finding_id, "source_id": source_id, "excerpt": excerpt,
        "location": {"start": location[0], "end": location[1]},
        "statement": statement, "limitation": limitation, "leaf_id": leaf_id,
    }
    return finding_path(finding_id), dump_yaml(body)


def source_files(*, url: str, data: bytes, media_type: str, fetched_by: str, retrieved_at: datetime,
                 language: str, rights: str, published: date | None, title: str | None,
                 leaf_id: str | None, status: str = "staged") -> dict[str, bytes]:
    """The record and retained bytes of one source, at their paths."""
    canonical = canonical_url(url)
    source_id = source_id_for(canonical)
    record: dict[str, object] = {
        "source_id": source_id, "url": canonical, "sha256": sha256_hex(data), "media_type": media_type,
        "size": len(data), "retrieved_at": iso(retrieved_at), "fetched_by": fetched_by,
        "language": language, "rights": rights, "status": status,
    }
    if published is not None:
        record["date"] = published.isoformat()
    if title is not None:
        record["title"] = title
    if leaf_id is not None:
        record["leaf_id"] = leaf_id
    return {
        source_record_path(source_id): dump_yaml(record),
        source_bytes_path(source_id, EXTENSION_BY_MEDIA_TYPE[media_type]): data,
    }


def link_file(*, finding_id: str, hypothesis_id: str, revision: int, stance: str, rationale: str,
              leaf_kind: str, leaf_id: str | None) -> tuple[str, bytes]:
    link_id = link_id_for(finding_id, hypothesis_id, revision)
    body: dict[str, object] = {
        "link_id": link_id, "finding_id": finding_id, "hypothesis_id": hypothesis_id,
        "hypothesis_revision": revision, "stance": stance, "rationale": rationale, "leaf_kind": leaf_kind,
    }
    if leaf_id is not None:
        body["leaf_id"] = leaf_id
    return link_path(link_id), dump_yaml(body)


def note_file(*, leaf_id: str, hypothesis_id: str, revision: int, none_found_after: int,
              scout_requests: list[str] | None = None, sources_checked: list[str] | None = None) -> tuple[str, bytes]:
    body: dict[str, object] = {"leaf_id": leaf_id, "hypothesis_id": hypothesis_id, "hypothesis_revision": revision,
                               "none_found_after": none_found_after}
    if sources_checked is not None:
        body["sources_checked"] = sources_checked
    if scout_requests:
        body["scout_requests"] = [{"gap": gap} for gap in scout_requests]
    return note_path(leaf_id), dump_yaml(body)


def review_file(*, object_path: str, object_id: str, decision: str, reason: str, leaf_id: str,
                amendment: dict[str, str] | None = None) -> tuple[str, bytes]:
    review_id = review_id_for(object_path, leaf_id)
    body: dict[str, object] = {"review_id": review_id, "object_path": object_path, "object_id": object_id,
                               "decision": decision, "reason": reason, "leaf_id": leaf_id}
    if amendment is not None:
        body["amendment"] = amendment
    return review_path(review_id), dump_yaml(body)

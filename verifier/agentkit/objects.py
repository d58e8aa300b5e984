"""Writing corpus objects the way the verifier expects them: ids derived, offsets located."""

from __future__ import annotations

from datetime import date, datetime

from verifier.checks.citation import ExcerptFound, locate_excerpt
from verifier.formats.base import iso
from verifier.formats.ids import canonical_url, finding_id_for, sha256_hex, source_id_for
from verifier.formats.layout import finding_path, source_bytes_path, source_record_path
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE
from verifier.formats.yamlout import dump_yaml


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

"""Sources: the record of one retained document (sources/<shard>/<source_id>.yaml) beside its
retained bytes (sources/<shard>/<source_id>.<ext>)."""

from typing import Annotated, Literal

from pydantic import StringConstraints

from verifier.formats.base import Day, Handle, Sha256Hex, Strict, Text, Timestamp, parse_yaml_model

SourceStatus = Literal["staged", "included", "failed"]
MediaType = Literal["text/plain", "text/html", "application/pdf"]
EXTENSION_BY_MEDIA_TYPE: dict[str, str] = {
    "text/plain": "txt",
    "text/html": "html",
    "application/pdf": "pdf",
}
MEDIA_TYPE_BY_EXTENSION = {ext: media for media, ext in EXTENSION_BY_MEDIA_TYPE.items()}
SourceId = Annotated[str, StringConstraints(pattern=r"^src_[0-9a-f]{16}$")]


class SourceRecord(Strict):
    source_id: SourceId
    url: Annotated[str, StringConstraints(min_length=8, max_length=2048)]
    sha256: Sha256Hex
    media_type: MediaType
    size: int
    retrieved_at: Timestamp
    fetched_by: Handle
    language: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")]
    rights: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
    date: Day | None = None
    title: Text | None = None
    status: SourceStatus = "staged"
    leaf_id: str | None = None
    warm: bool | None = None  # a steward's mark: known to yield findings, good for a first-minute leaf
    failure: Text | None = None  # status failed: why the verifier could not fetch the URL


def parse_source(data: bytes | str, where: str) -> SourceRecord:
    return parse_yaml_model(SourceRecord, data, where)

"""The trace store on S3-compatible object storage (AWS S3, MinIO, Ceph, ...), through boto3.

Same behaviour as the local store (verifier.store.traces.TraceStore), other medium:
- one object per bundle, `<prefix><trace_id>.tar` (a plain tar of the bundle's files), so a bundle
  is stored whole or not at all — there is no half-stored state to clean after a crash;
- content-addressed and written once: the object's metadata holds the bundle's full sha256; the
  put is conditional (`If-None-Match: *`, honoured by S3, MinIO and Ceph), so two racing
  submissions of one bundle store it once; only a put refused that way reads the stored digest,
  and a second bundle under the same short id is refused;
- refused attempts' bundles move to `<prefix>.quarantine/<agent>/<trace_id>.tar`, newest
  QUARANTINE_PER_AGENT kept per agent; a bucket lifecycle rule on `<prefix>.quarantine/` may expire
  them sooner (docs/deploy.md).
"""

from __future__ import annotations

import io
import tarfile
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from verifier.constants import QUARANTINE_PER_AGENT
from verifier.errors import ConflictError
from verifier.formats.ids import TRACE_ID_RE
from verifier.formats.trace import BUNDLE_ORDER, TraceRecord
from verifier.store.traces import QUARANTINE_DIR

_MISSING = {"404", "NoSuchKey", "NotFound"}
_TAKEN = {"412", "PreconditionFailed", "409", "ConditionalRequestConflict"}


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def pack(files: dict[str, bytes]) -> bytes:
    """The bundle's files as one tar, in the bundle's order (so one bundle packs to one byte string)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in sorted(files, key=lambda n: (BUNDLE_ORDER.index(n) if n in BUNDLE_ORDER else len(BUNDLE_ORDER), n)):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            archive.addfile(info, io.BytesIO(files[name]))
    return out.getvalue()


def unpack(data: bytes) -> dict[str, bytes]:
    """The files of a packed bundle (only the bundle's known names)."""
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            handle = archive.extractfile(member) if member.isfile() and member.name in BUNDLE_ORDER else None
            if handle is not None:
                files[member.name] = handle.read()
    return files


class ObjectTraceStore:
    def __init__(self, client: Any, bucket: str, *, prefix: str = "traces/") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    @classmethod
    def connect(cls, bucket: str, *, prefix: str = "traces/", endpoint_url: str | None = None,
                region: str | None = None) -> ObjectTraceStore:
        """A store on `bucket`; credentials from the environment (AWS_ACCESS_KEY_ID, a profile, a role)."""
        client = boto3.client("s3", endpoint_url=endpoint_url, region_name=region,
                              config=Config(retries={"mode": "standard", "max_attempts": 5}))
        return cls(client, bucket, prefix=prefix)

    def key(self, trace_id: str) -> str:
        return f"{self.prefix}{trace_id}.tar"

    def _quarantine_key(self, agent: str, trace_id: str) -> str:
        return f"{self.prefix}{QUARANTINE_DIR}/{agent}/{trace_id}.tar"

    def _digest(self, key: str) -> str | None:
        """The digest stored with an object; None when there is no such object."""
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _code(exc) in _MISSING:
                return None
            raise
        return str(head.get("Metadata", {}).get("digest", ""))

    def put(self, record: TraceRecord, files: dict[str, bytes]) -> bool:
        """Store a bundle under its id; idempotent for the same digest, refused on a collision.

        True if this call stored it (False: the same bundle was already there)."""
        key = self.key(record.trace_id)
        # The put first, conditional: one round trip for a new bundle (nearly every put), and the
        # stored digest is read only when the id is taken.
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=pack(files), IfNoneMatch="*",
                                   Metadata={"digest": record.digest}, ContentType="application/x-tar")
            return True
        except ClientError as exc:
            if _code(exc) not in _TAKEN:
                raise
        existing = self._digest(key) or ""
        if existing == record.digest:
            return False
        raise ConflictError(
            f"trace id {record.trace_id} is taken by another bundle (digest {existing[:12]}...); refusing")

    def exists(self, trace_id: str) -> bool:
        return self._digest(self.key(trace_id)) is not None

    def _keys(self, prefix: str) -> list[dict[str, Any]]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [item for page in pages for item in page.get("Contents", [])]

    def ids(self) -> list[str]:
        names = (str(item["Key"])[len(self.prefix):].removesuffix(".tar") for item in self._keys(self.prefix))
        return sorted(name for name in names if TRACE_ID_RE.match(name))

    def quarantine(self, trace_id: str, agent: str, *, keep: int = QUARANTINE_PER_AGENT) -> None:
        """Move a refused attempt's bundle to the agent's quarantine; keep only its newest `keep`."""
        source = self.key(trace_id)
        if self._digest(source) is None:
            return
        self.client.copy_object(Bucket=self.bucket, Key=self._quarantine_key(agent, trace_id),
                                CopySource={"Bucket": self.bucket, "Key": source}, MetadataDirective="COPY")
        self.client.delete_object(Bucket=self.bucket, Key=source)
        held = sorted(self._keys(f"{self.prefix}{QUARANTINE_DIR}/{agent}/"),
                      key=lambda item: (item["LastModified"], str(item["Key"])))
        for old in held[: max(0, len(held) - keep)]:
            self.client.delete_object(Bucket=self.bucket, Key=old["Key"])

    def quarantined(self, agent: str) -> list[str]:
        folder = f"{self.prefix}{QUARANTINE_DIR}/{agent}/"
        return sorted(str(item["Key"])[len(folder):].removesuffix(".tar") for item in self._keys(folder))

    def _get(self, key: str) -> bytes | None:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
        except ClientError as exc:
            if _code(exc) in _MISSING:
                return None
            raise
        return bytes(body.read())

    def read(self, trace_id: str) -> dict[str, bytes]:
        """A stored bundle's files, from the store or its agent's quarantine; {} when gone."""
        data = self._get(self.key(trace_id))
        if data is None and TRACE_ID_RE.match(trace_id):
            held = [item for item in self._keys(f"{self.prefix}{QUARANTINE_DIR}/")
                    if str(item["Key"]).endswith(f"/{trace_id}.tar")]
            data = self._get(str(held[0]["Key"])) if held else None
        return unpack(data) if data is not None else {}

    def purge(self, trace_id: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.key(trace_id))

    def clean_incoming(self) -> int:
        """Nothing to clean: a bundle is one object, stored whole or not at all."""
        return 0

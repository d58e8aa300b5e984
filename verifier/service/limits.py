"""How much a caller may send and how long it may take: bodies are read under a byte cap and two
clocks, and the one multipart form for trace bundles is parsed while it streams in.

Nothing a request sends is written anywhere until the whole body has arrived inside its limits:
a body over its cap is answered 413 the moment it crosses it (or at once, when Content-Length
already says so), a body that stalls or drags is answered 408, and in both cases nothing is
stored and no ledger row is written.

The bundle form (docs/api.md): `multipart/form-data` whose parts are named after the bundle's
files (`manifest.json`, `events.jsonl`, `patch.diff`, `context.md`) plus, optionally, `patch`
when the submitted patch is sent apart from the bundle's copy. The bundle's parts together may
hold at most 20 MB (the trace cap), `patch` at most the patch cap.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header
from starlette.requests import ClientDisconnect

from verifier.constants import MAX_BUNDLE_BYTES, MAX_FORM_BYTES, MAX_PATCH_BYTES
from verifier.formats.strictjson import loads as strict_loads
from verifier.formats.trace import BUNDLE_ORDER
from verifier.service.errors import ApiError

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

PATCH_PART = "patch"
FORM_PARTS = (*BUNDLE_ORDER, PATCH_PART)


def too_large(limit: int, what: str) -> ApiError:
    return ApiError(413, "too_large", f"{what} is larger than {limit} bytes; nothing was stored")


def declared_length(headers: Any) -> int | None:
    raw = headers.get("content-length")
    if raw is None:
        return None
    if not raw.strip().isdigit():
        raise ApiError(400, "bad_content_length", "Content-Length must be a decimal number of bytes")
    return int(raw)


async def chunks(stream: AsyncIterator[bytes], *, cap: int, what: str, idle_s: float,
                 total_s: float) -> AsyncIterator[bytes]:
    """The body's chunks, refusing (413) past `cap` bytes and (408) a pause over `idle_s` or a body
    that takes longer than `total_s` in all."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + total_s
    received = 0
    iterator = stream.__aiter__()
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise ApiError(408, "body_timeout", f"the request body took longer than {total_s:g} s")
        try:
            chunk = await asyncio.wait_for(iterator.__anext__(), timeout=min(idle_s, remaining))
        except StopAsyncIteration:
            return
        except ClientDisconnect as exc:  # nobody is left to answer; nothing was stored
            raise ApiError(400, "client_disconnected", "the client went away before the body was complete") from exc
        except TimeoutError as exc:
            raise ApiError(408, "body_timeout",
                           f"the request body stalled (no data for {min(idle_s, remaining):g} s)") from exc
        received += len(chunk)
        if received > cap:
            raise too_large(cap, what)
        if chunk:
            yield chunk


async def read_json(stream: AsyncIterator[bytes], headers: Any, *, cap: int, idle_s: float,
                    total_s: float) -> dict[str, Any]:
    """A JSON object body (same-origin JSON is the only way to cause a side effect besides the form)."""
    media, params = parse_options_header(headers.get("content-type"))
    if media != b"application/json":
        raise ApiError(415, "unsupported_media_type", "send the body as application/json")
    charset = params.get(b"charset")
    if charset is not None and charset.lower() not in (b"utf-8", b"utf8"):
        # JSON is UTF-8 (RFC 8259): a body said to be in another charset would be read otherwise than sent.
        raise ApiError(415, "unsupported_media_type", "send the JSON body in UTF-8 (charset=utf-8, or no charset)")
    length = declared_length(headers)
    if length is not None and length > cap:
        raise too_large(cap, "the JSON body")
    body = b"".join([chunk async for chunk in chunks(stream, cap=cap, what="the JSON body", idle_s=idle_s,
                                                     total_s=total_s)])
    if not body.strip():
        return {}
    try:
        value = strict_loads(body)
    except ValueError as exc:
        raise ApiError(400, "bad_json", f"the body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ApiError(400, "bad_json", "the body must be a JSON object")
    return value


class BundleForm:
    """A streaming parser of the bundle form that keeps the size of each part in check as it goes."""

    def __init__(self, boundary: bytes) -> None:
        self.files: dict[str, bytearray] = {}
        self.bundle_bytes = 0
        self._name: str | None = None
        self._field = bytearray()
        self._value = bytearray()
        self._disposition: bytes | None = None
        callbacks: MultipartCallbacks = {
            "on_part_begin": self._part_begin,
            "on_header_field": lambda data, start, end: self._field.extend(data[start:end]),
            "on_header_value": lambda data, start, end: self._value.extend(data[start:end]),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
        }
        try:
            self.parser = MultipartParser(boundary, callbacks, max_header_count=8, max_header_size=2048)
        except (MultipartParseError, ValueError) as exc:
            raise ApiError(400, "bad_form", f"bad multipart boundary: {exc}") from exc

    def _part_begin(self) -> None:
        self._name, self._disposition = None, None

    def _header_end(self) -> None:
        if bytes(self._field).lower() == b"content-disposition":
            self._disposition = bytes(self._value)
        self._field.clear()
        self._value.clear()

    def _headers_finished(self) -> None:
        kind, options = parse_options_header(self._disposition)
        name = options.get(b"name", b"").decode("utf-8", "replace")
        if kind != b"form-data" or not name:
            raise ApiError(400, "bad_form", "every part needs `Content-Disposition: form-data; name=...`")
        if name not in FORM_PARTS:
            raise ApiError(400, "bad_form", f"unexpected form part {name[:60]!r}; the parts are "
                                            f"{', '.join(FORM_PARTS)}")
        if name in self.files:
            raise ApiError(400, "bad_form", f"form part {name!r} appears twice")
        self._name = name
        self.files[name] = bytearray()

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        assert self._name is not None
        size = end - start
        if self._name == PATCH_PART:
            if len(self.files[PATCH_PART]) + size > MAX_PATCH_BYTES:
                raise too_large(MAX_PATCH_BYTES, "the patch part")
        else:
            self.bundle_bytes += size
            if self.bundle_bytes > MAX_BUNDLE_BYTES:
                raise too_large(MAX_BUNDLE_BYTES, "the trace bundle")
        self.files[self._name].extend(data[start:end])

    def feed(self, chunk: bytes) -> None:
        try:
            self.parser.write(chunk)
        except MultipartParseError as exc:
            raise ApiError(400, "bad_form", f"the multipart body is malformed: {exc}") from exc

    def finish(self) -> tuple[dict[str, bytes], bytes | None]:
        """(bundle files, the separate patch if sent) once the whole form has arrived."""
        try:
            self.parser.finalize()
        except MultipartParseError as exc:
            raise ApiError(400, "bad_form", f"the multipart body is malformed: {exc}") from exc
        if self.parser.state != MultipartState.END:
            raise ApiError(400, "bad_form", "the multipart body ended before its closing boundary")
        files = {name: bytes(data) for name, data in self.files.items()}
        patch = files.pop(PATCH_PART, None)
        return files, patch


async def read_bundle_form(stream: AsyncIterator[bytes], headers: Any, *, idle_s: float,
                           total_s: float) -> tuple[dict[str, bytes], bytes | None]:
    media, params = parse_options_header(headers.get("content-type"))
    if media != b"multipart/form-data":
        raise ApiError(415, "unsupported_media_type",
                       "submit the trace bundle as multipart/form-data (see docs/api.md)")
    boundary = params.get(b"boundary")
    if not boundary:
        raise ApiError(400, "bad_form", "the multipart Content-Type has no boundary")
    length = declared_length(headers)
    if length is not None and length > MAX_FORM_BYTES:
        raise too_large(MAX_FORM_BYTES, "the submission body")
    form = BundleForm(boundary)
    async for chunk in chunks(stream, cap=MAX_FORM_BYTES, what="the submission body", idle_s=idle_s,
                              total_s=total_s):
        form.feed(chunk)
    return form.finish()

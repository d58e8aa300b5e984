"""Decoded views of bytes, for the disguises a secret can wear: Unicode look-alikes and invisible
characters, JSON escapes, base64 (standard and URL-safe), hex, gzip. Pure.

unicode_view() is what the scanner reads for the Unicode disguises: NFKC (full-width letters,
ligatures and other compatibility forms become their plain letters) after removing format
characters (zero-width spaces and joiners, the soft hyphen, direction marks: category Cf).
token_candidates() finds this verifier's bearer tokens through every view, nested two layers
deep; it runs only on bytes the scanner has already flagged, so it may be thorough rather
than fast.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterator

from verifier.secrets.layers import normalise
from verifier.secrets.tokens import find_tokens

# Layers of encoding undone when hunting tokens: a token in base64 of escaped JSON is two.
MAX_LAYERS = 2
# Never inflate gzip past this many bytes per stream (a zip bomb costs nothing to send).
MAX_INFLATE = 1 << 22


def unicode_view(text: str) -> str:
    """text with invisible characters (Cf, variation selectors) removed, then NFKC-normalised."""
    return normalise(text)


_JSON_ESCAPE = re.compile(rb"\\u([0-9a-fA-F]{4})|\\([\"\\/bfnrt])")
_SIMPLE = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t"}


def _unescape_match(match: re.Match[bytes]) -> bytes:
    if match.group(1) is not None:
        return chr(int(match.group(1), 16)).encode("utf-8", "surrogatepass")
    return _SIMPLE[match.group(2)]


def json_unescaped(data: bytes) -> bytes:
    """data with every JSON string escape replaced by what it stands for."""
    return _JSON_ESCAPE.sub(_unescape_match, data)


_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(rb"(?:[0-9a-fA-F]{2}){12,}")


def _inflated(blob: bytes) -> bytes | None:
    if not blob.startswith(b"\x1f\x8b"):
        return None
    try:
        return zlib.decompressobj(wbits=47).decompress(blob, MAX_INFLATE)
    except zlib.error:
        return None


def base64_decoded(data: bytes) -> Iterator[bytes]:
    """The decoded bytes of each base64 run (either alphabet), gunzipped when it is gzip."""
    for match in _BASE64_RUN.finditer(data):
        whole = match.group().rstrip(b"=").replace(b"+", b"-").replace(b"/", b"_")
        # The run may start mid-word (a diff's "+", a key name): try each of the four alignments.
        for skip in range(4):
            run = whole[skip:]
            run = run[: len(run) - 1] if len(run) % 4 == 1 else run
            try:
                blob = base64.urlsafe_b64decode(run + b"=" * (-len(run) % 4))
            except (binascii.Error, ValueError):
                continue
            yield blob
            inflated = _inflated(blob)
            if inflated is not None:
                yield inflated


def hex_decoded(data: bytes) -> Iterator[bytes]:
    for match in _HEX_RUN.finditer(data):
        yield binascii.unhexlify(match.group())


def decoded_views(data: bytes) -> Iterator[bytes]:
    """One layer of decoding: the Unicode view, JSON-unescaped text, base64 and hex runs."""
    if not data.isascii():
        yield unicode_view(data.decode("utf-8", "replace")).encode("utf-8", "replace")
    if b"\\" in data:
        yield json_unescaped(data)
    yield from base64_decoded(data)
    yield from hex_decoded(data)


def token_candidates(data: bytes, layers: int = MAX_LAYERS) -> set[str]:
    """Every bearer-token-shaped string in data or in any view of it, up to `layers` deep."""
    found = {token for _, token in find_tokens(data)}
    if layers > 0:
        for view in decoded_views(data):
            if view != data:
                found |= token_candidates(view, layers - 1)
    return found

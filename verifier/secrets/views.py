"""Decoded views of bytes, for the disguises a secret can wear: Unicode look-alikes and invisible
characters, JSON escapes, base64 (standard and URL-safe), hex, gzip. Pure.

unicode_view() is what the scanner reads for the Unicode disguises: NFKC (full-width letters,
ligatures and other compatibility forms become their plain letters) after removing format
characters (zero-width spaces and joiners, the soft hyphen, direction marks: category Cf).
token_candidates() finds this verifier's bearer tokens through every view, nested two layers
deep; it runs only on bytes the scanner has already flagged, so it may be thorough rather
than fast. Removing invisible characters is not a layer: every decoded view (JSON escapes,
base64, hex, gzip) is also read through the Unicode view, so a zero-width space written as
`\\u200b` inside a token, or carried in base64, hides it no more than a raw one does.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterator

from verifier.secrets.layers import escaped_char, normalise
from verifier.secrets.tokens import find_tokens

# Layers of encoding undone when hunting tokens: a token in base64 of escaped JSON is two.
MAX_LAYERS = 2
# Never inflate gzip past this many bytes per stream (a zip bomb costs nothing to send).
MAX_INFLATE = 1 << 22


def unicode_view(text: str) -> str:
    """text with invisible characters (Cf, variation selectors) removed, then NFKC-normalised."""
    return normalise(text)


# A surrogate pair (`\ud83d\ude00`) is one character: group 1 holds both halves.
_JSON_ESCAPE = re.compile(rb"\\u([dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|[0-9a-fA-F]{4})"
                          rb"|\\([\"\\/bfnrt])")
_SIMPLE = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t"}


def _unescape_match(match: re.Match[bytes]) -> bytes:
    if match.group(1) is not None:
        return escaped_char(match.group(1)).encode("utf-8", "surrogatepass")
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


def _unicode_bytes(data: bytes) -> bytes:
    return unicode_view(data.decode("utf-8", "replace")).encode("utf-8", "replace")


def _decodings(data: bytes) -> Iterator[bytes]:
    if b"\\" in data:
        yield json_unescaped(data)
    yield from base64_decoded(data)
    yield from hex_decoded(data)


def decoded_views(data: bytes) -> Iterator[bytes]:
    """One layer of decoding: the Unicode view, JSON-unescaped text, base64 and hex runs, each
    decoded view also with its invisible characters removed (decoded first, then cleaned)."""
    if not data.isascii():
        yield _unicode_bytes(data)
    for view in _decodings(data):
        yield view
        if not view.isascii():
            yield _unicode_bytes(view)


def token_candidates(data: bytes, layers: int = MAX_LAYERS) -> set[str]:
    """Every bearer-token-shaped string in data or in any view of it, up to `layers` deep."""
    found = {token for _, token in find_tokens(data)}
    if layers > 0:
        for view in decoded_views(data):
            if view != data:
                found |= token_candidates(view, layers - 1)
    return found

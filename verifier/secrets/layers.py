"""Decoded layers the scanner reads besides plain, JSON-escaped and base64 text. Pure.

Each function returns decoded bytes plus a map back to offsets in its input, so a hit found
in the layer is reported where its disguise starts in the original bytes:
- unicode_layer: text around non-ASCII characters that hide ASCII (full-width letters,
  ligatures, other compatibility forms: NFKC) or hide nothing but break a token (zero-width
  spaces and joiners, soft hyphen, direction marks: Unicode category Cf, removed);
- hex_layer: runs of hex digits decoded to bytes;
- gzip_members: gzip streams (inside decoded base64) inflated, within a byte budget;
- utf8_text_layer: the UTF-8 text runs of decoded bytes (base64, hex) read as unicode_layer
  reads text, so a zero-width space base64 or hex carries inside a key is seen through too.
ESCAPED_DISGUISES names the JSON escapes (`\\u200b`, `\\uff21`, a surrogate pair's first half)
that write a disguising character; the scanner unescapes the text around them before the
Unicode layer reads it, so an escaped invisible character hides no more than a raw one.
All are linear in their input: one mask-and-find pass, Python work per run, not per byte.
"""

from __future__ import annotations

import binascii
import re
import unicodedata
import zlib
from bisect import bisect_right
from dataclasses import dataclass, field

# How far around a disguising character the text is normalised and rescanned: more than a
# token and the context its pattern reads, on the same line.
UNICODE_REACH = 512
# Hex runs shorter than this cannot carry a secret (the shortest, an AWS key id, is 20 bytes).
MIN_HEX_RUN = 32
_SEPARATOR = b"\n\n\n"
_NON_ASCII_MASK = bytes(0x78 if byte >= 0x80 else 0x20 for byte in range(256))


@dataclass
class PieceMap:
    """Maps offsets in decoded text back to the input. Each piece starts at decoded_at in the
    decoded text and original_at in the input, and moves `stride` input bytes per decoded byte:
    1 for text kept as it was, 2 for hex, 0 for a replaced run (every byte maps to its start)."""

    decoded_at: list[int] = field(default_factory=list)
    original_at: list[int] = field(default_factory=list)
    stride: list[int] = field(default_factory=list)

    def add(self, decoded: int, original: int, stride: int) -> None:
        self.decoded_at.append(decoded)
        self.original_at.append(original)
        self.stride.append(stride)

    def origin(self, offset: int) -> int:
        piece = max(0, bisect_right(self.decoded_at, offset) - 1)
        return self.original_at[piece] + (offset - self.decoded_at[piece]) * self.stride[piece]


def invisible_chars() -> str:
    """Format characters (Cf: zero-width space and joiners, soft hyphen, direction marks, tags)
    and variation selectors: they change no letter, so a secret reads the same without them.
    Walks every code point (a tenth of a second): INVISIBLE_RANGES below is its frozen result."""
    codes = [*range(0x80, 0x30000), *range(0xE0000, 0xE1000)]
    chars = "".join(chr(code) for code in codes if unicodedata.category(chr(code)) == "Cf")
    return chars + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0)))


# invisible_chars() as code-point ranges, frozen so a scan's start-up does not walk every code
# point (`rw check` pays it for a few kilobytes, issue 26); tests/secrets/test_start_up.py
# recomputes it from unicodedata, so a new Unicode version that adds one fails there.
INVISIBLE_RANGES = (
    "ad 600-605 61c 6dd 70f 890-891 8e2 180e 200b-200f 202a-202e 2060-2064 2066-206f fe00-fe0f feff "
    "fff9-fffb 110bd 110cd 13430-13438 1bca0-1bca3 1d173-1d17a e0001 e0020-e007f e0100-e01ef"
)


def invisible_class() -> str:
    """A regex character class of the INVISIBLE_RANGES."""
    def char(code: str) -> str:
        return f"\\U{int(code, 16):08x}"

    spans = (item.partition("-") for item in INVISIBLE_RANGES.split())
    return "[" + "".join(char(lo) + (f"-{char(hi)}" if hi else "") for lo, _, hi in spans) + "]"


_FORMAT = re.compile(invisible_class())


def normalise(run: str) -> str:
    """A run of non-ASCII text as a scanner should read it: Cf removed, then NFKC."""
    return unicodedata.normalize("NFKC", _FORMAT.sub("", run))


# The JSON escapes of disguising characters (those normalise() turns into nothing or into text
# with an ASCII letter or digit): in the BMP, first three hex digits then the possible last
# ones; beyond it, the high surrogate of the UTF-16 pair then the low's first two digits.
# Frozen here because computing it walks every code point (a third of a second at each start);
# tests/pipeline/test_catalogue_four.py recomputes it from unicodedata, so a new Unicode version that
# adds a disguise fails there rather than going unseen.
ESCAPED_DISGUISES_BMP = (
    "00a:ad 00b:239acde 013:23f 014:09 017:f 01c:456789abc 01f:123 02b:02378 02e:123 060:012345 "
    "061:c 06d:d 070:f 089:01 08e:2 180:e 1d2:ce 1d3:013456789acef 1d4:0123789df 1d5:02678b "
    "1d6:2345 1d9:c 1da:0 1db:b 1e9:a 200:bcdef 202:abcde 206:012346789abcdef 207:01456789f "
    "208:0123456789 209:012356789abc 20a:8 210:0123569abcde 211:0123569abcd 212:01248acdf "
    "213:01349b 214:56789 215:0123456789abcdef 216:0123456789abcdef 217:0123456789abcdef 218:9 "
    "246:0123456789abcdef 247:0123456789abcdef 248:0123456789abcdef 249:0123456789abcdef "
    "24a:0123456789abcdef 24b:0123456789abcdef 24c:0123456789abcdef 24d:0123456789abcdef "
    "24e:0123456789a 2c7:cd 325:0123456789abcdef 32b:123456789abcdef 32c:0123456789abcdef "
    "335:89abcdef 336:0123456789abcdef 337:0123456789a 338:0123456789abcdef 339:0123456789abcdef "
    "33a:0123456789abcdef 33b:0123456789abcdef 33c:0123456789abcdef 33d:0123456789abcdef "
    "33e:0123456789abcdef 33f:0123456789abcdef a7f:234 fb0:0123456 fe0:0123456789abcdef fef:f "
    "ff1:0123456789 ff2:123456789abcdef ff3:0123456789a ff4:123456789abcdef ff5:0123456789a fff:9ab"
)
ESCAPED_DISGUISES_PAIRS = "d801:df d804:dc d80d:dc d82f:dc d834:dd d835:dc,dd,de,df d83c:dd d83e:df db40:dc,dd"


def disguise_escapes() -> bytes:
    """A regex (bytes, after the backslash) matching the \\u escape of a disguising character,
    or the first half of a surrogate pair that escapes one, from the tables above."""
    bmp = "|".join(f"{head}[{tails}]" for head, tails in (item.split(":") for item in ESCAPED_DISGUISES_BMP.split()))
    pairs = "|".join(f"{high}\\\\u(?:{'|'.join(lows.split(','))})"
                     for high, lows in (item.split(":") for item in ESCAPED_DISGUISES_PAIRS.split()))
    return f"u(?i:{bmp}|{pairs})".encode()


def escaped_char(code: bytes) -> str:
    """The character of a \\u escape's hex digits, or of a surrogate pair's (`d83d\\ude00`)."""
    if len(code) == 4:
        return chr(int(code, 16))
    high, low = int(code[:4], 16), int(code[6:], 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def disguising(char: str) -> bool:
    """Whether normalise() turns `char` into nothing, or into text holding an ASCII letter or digit."""
    seen = normalise(char)
    return seen != char and (not seen or bool(seen.encode("utf-8", "replace").translate(None, _NOT_ALNUM)))


_NOT_ALNUM = bytes(byte for byte in range(256) if not chr(byte).isascii() or not chr(byte).isalnum())
# Lines longer than this are read in pieces that overlap by UNICODE_REACH.
CHUNK = 1 << 16


def _runs(data: bytes, mask_table: bytes, mark: bytes, minimum: int) -> list[tuple[int, int]]:
    mask = data.translate(mask_table)
    runs: list[tuple[int, int]] = []
    pos = 0
    size = len(data)
    needle = mark * minimum
    while (start := mask.find(needle, pos)) >= 0:
        end = mask.find(b" ", start + minimum)
        end = size if end < 0 else end
        runs.append((start, end))
        pos = end
    return runs


_ASCII = bytes(range(0x80))


def _disguising_chars(data: bytes) -> set[str]:
    """The distinct characters in data that normalise to ASCII letters or digits, or to nothing.

    Found from the non-ASCII bytes alone (all ASCII deleted at C speed),
    so an honest trace of prose and typography costs one pass and a set of a few characters."""
    distinct = set(data.translate(None, _ASCII).decode("utf-8", "ignore"))
    return {char for char in distinct if disguising(char)}


def _chunks(data: bytes, chars: set[str]) -> list[tuple[int, int]]:
    """Lines of data that hold one of `chars`; long ones cut into overlapping pieces.

    Walks the runs of non-ASCII bytes (found on a mask by memory search) and skips to the end
    of the line once a run holds one of the characters: Python work per run, not per byte.
    """
    mask = data.translate(_NON_ASCII_MASK)
    spans: list[tuple[int, int]] = []
    pos = 0
    while (start := mask.find(b"x", pos)) >= 0:
        end = mask.find(b" ", start)
        end = len(data) if end < 0 else end
        pos = end
        if chars.isdisjoint(data[start:end].decode("utf-8", "ignore")):
            continue
        lo = data.rfind(b"\n", 0, start) + 1
        if spans and lo < spans[-1][1]:
            lo = spans[-1][1]
        hi = data.find(b"\n", end)
        hi = len(data) if hi < 0 else hi
        spans.extend((at, min(hi, at + CHUNK)) for at in range(lo, hi, CHUNK - UNICODE_REACH))
        pos = hi
    return spans


def unicode_layer(data: bytes) -> tuple[bytes, PieceMap] | None:
    """Normalised text of the lines that hold a Unicode disguise, or None when none does."""
    if data.isascii():
        return None
    chars = _disguising_chars(data)
    if not chars:
        return None
    out: list[bytes] = []
    mapping = PieceMap()
    size = 0
    for lo, hi in _chunks(data, chars):
        chunk = data[lo:hi]
        pos = 0
        for start, end in _runs(chunk, _NON_ASCII_MASK, b"x", 1):
            mapping.add(size, lo + pos, 1)
            out.append(chunk[pos:start])
            size += start - pos
            seen = normalise(chunk[start:end].decode("utf-8", "ignore")).encode("utf-8", "replace")
            mapping.add(size, lo + start, 0)
            out.append(seen)
            size += len(seen)
            pos = end
        mapping.add(size, lo + pos, 1)
        out.append(chunk[pos:] + _SEPARATOR)
        size += len(chunk) - pos + len(_SEPARATOR)
    return (b"".join(out), mapping) if out else None


def _utf8(data: bytes) -> bool:
    # What decoding keeps, measured, rather than a raised error: most runs tried are not UTF-8,
    # and raising costs more than decoding.
    return len(data.decode("utf-8", "ignore").encode()) == len(data)


def hex_layer(data: bytes, runs: list[tuple[int, int]]) -> tuple[bytes, PieceMap] | None:
    """The hex runs of data (found by the base64 pass) decoded and joined, or None.

    A run that decodes to anything but text (ASCII, or UTF-8 that may hold a disguising
    character) is a digest (a sha256, a commit id), not an encoded secret, and is left out: 20
    random bytes are all ASCII one time in a million, and valid UTF-8 hardly more often.
    """
    out: list[bytes] = []
    mapping = PieceMap()
    size = 0
    for start, stop in runs:
        # Hex of ASCII text has a high nibble of 0-7 in every byte: test two before decoding.
        if stop - start < MIN_HEX_RUN or data[start] > 0x37 or data[start + 2] > 0x37:
            continue
        decoded = binascii.unhexlify(data[start : stop - (stop - start) % 2])
        if not decoded.isascii() and not _utf8(decoded):
            continue
        mapping.add(size, start, 2)
        out.append(decoded + _SEPARATOR)
        size += len(decoded) + len(_SEPARATOR)
    return (b"".join(out), mapping) if out else None


_TEXT_MASK = bytes(0x74 if 0x20 <= byte < 0x7F or byte in b"\t\n\r" else 0x20 for byte in range(256))
MIN_TEXT_RUN = 16  # shorter than any secret with the context its detector reads


def text_layer(data: bytes) -> tuple[bytes, PieceMap] | None:
    """Runs of printable ASCII text in (decoded, mostly binary) data, joined, or None.

    Only text can carry a further layer of encoding (base64, escapes, hex): reading the next
    layer in these runs alone keeps the cost of nesting off the bytes of images and archives.
    """
    out: list[bytes] = []
    mapping = PieceMap()
    size = 0
    for start, stop in _runs(data, _TEXT_MASK, b"t", MIN_TEXT_RUN):
        mapping.add(size, start, 1)
        out.append(data[start:stop] + _SEPARATOR)
        size += stop - start + len(_SEPARATOR)
    return (b"".join(out), mapping) if out else None


_GZIP_MAGIC = b"\x1f\x8b\x08"
MAX_GZIP_MEMBERS = 16


def gzip_members(data: bytes, budget: int) -> list[tuple[int, bytes]]:
    """(offset, inflated bytes) of gzip streams in data; at most `budget` bytes inflated in all."""
    members: list[tuple[int, bytes]] = []
    pos = 0
    while budget > 0 and len(members) < MAX_GZIP_MEMBERS and (at := data.find(_GZIP_MAGIC, pos)) >= 0:
        pos = at + 1
        try:
            inflated = zlib.decompressobj(wbits=31).decompress(data[at:], budget)
        except zlib.error:
            continue
        budget -= len(inflated)
        members.append((at, inflated))
    return members


# Printable ASCII, tab and line breaks, and every byte that a multi-byte UTF-8 sequence can
# hold: not 0xC0, 0xC1 or 0xF5-0xFF, which no valid UTF-8 holds. Leaving those out breaks the
# bytes of an image into half as many runs long enough to be tried (measured on base64
# thumbnails), and cuts no valid text.
_UTF8_TEXT_MASK = bytes(0x74 if 0x20 <= byte < 0x7F or byte in b"\t\n\r" or 0x80 <= byte < 0xC0
                        or 0xC2 <= byte <= 0xF4 else 0x20 for byte in range(256))


def utf8_text_layer(data: bytes) -> tuple[bytes, PieceMap] | None:
    """The Unicode layer of the runs of UTF-8 text in (decoded, maybe binary) data, or None.

    text_layer keeps printable ASCII only, so a disguising character splits a key into two runs;
    this reads the runs that hold non-ASCII characters and are valid UTF-8 as a whole (the bytes
    of an image almost never are), through unicode_layer. Python work per long run, not per byte.
    """
    out: list[bytes] = []
    mapping = PieceMap()
    size = 0
    for start, stop in _runs(data, _UTF8_TEXT_MASK, b"t", MIN_TEXT_RUN):
        run = data[start:stop]
        if run.isascii():
            continue  # text_layer reads it
        layer = unicode_layer(run) if _utf8(run) else None
        if layer is None:
            continue
        text, inner = layer
        for decoded_at, original_at, stride in zip(inner.decoded_at, inner.original_at, inner.stride, strict=True):
            mapping.add(size + decoded_at, start + original_at, stride)
        out.append(text)
        size += len(text)
    return (b"".join(out), mapping) if out else None

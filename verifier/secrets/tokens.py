"""This verifier's own bearer tokens: how they are spelt, and how to find them in any text. Pure.

A token is `rwt_` + 37 random base62 characters + a 6-character base62 CRC32 of everything
before it (GitHub's scheme): 43 characters after the prefix, so the spelling of the earlier
tokens (`rwt_` + 43 URL-safe base64 characters, no checksum) still matches and those tokens keep
working unchanged. The checksum lets the scanner say "this is a token of ours" rather than
"this looks random"; the scanner still reports a prefixed 43-character run without a valid
checksum (an older token) as a token, because the prefix alone makes random text that shape
improbable. Decision recorded in docs/secrets.md.
"""

from __future__ import annotations

import re
import secrets
import zlib

PREFIX = "rwt_"
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_RANDOM_CHARS = 37
_CHECK_CHARS = 6
BODY_CHARS = _RANDOM_CHARS + _CHECK_CHARS  # 43, the length of the earlier tokens' body
KIND = "ResearchWiki bearer token"
# A token, not followed by more token characters. Literal-led, so it is found at memory-search
# speed (bytes.find); the byte before is checked per match (a lookbehind would make re try
# every byte).
_TOKEN_AHEAD = re.compile(rb"rwt_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")
_TOKEN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def token_offsets(data: bytes) -> list[int]:
    """Offsets of token-shaped runs in data: `rwt_` + 43 token characters, standing alone."""
    offsets: list[int] = []
    at = data.find(b"rwt_")
    while at >= 0:
        if (not at or data[at - 1] not in _TOKEN_CHARS) and _TOKEN_AHEAD.match(data, at):
            offsets.append(at)
        at = data.find(b"rwt_", at + 1)
    return offsets


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(reversed(digits))


def _checksum(head: str) -> str:
    return _base62(zlib.crc32(head.encode("ascii")), _CHECK_CHARS)


def new_token() -> str:
    """A fresh token: prefix, 37 random base62 characters (~220 bits), checksum."""
    head = PREFIX + "".join(secrets.choice(_BASE62) for _ in range(_RANDOM_CHARS))
    return head + _checksum(head)


def has_checksum(token: str) -> bool:
    """True if the token carries a valid checksum (made since checksums were added)."""
    if len(token) != len(PREFIX) + BODY_CHARS or not token.startswith(PREFIX):
        return False
    head, check = token[:-_CHECK_CHARS], token[-_CHECK_CHARS:]
    return all(char in _BASE62 for char in token[len(PREFIX):]) and _checksum(head) == check


def find_tokens(data: bytes) -> list[tuple[int, str]]:
    """(offset, token) of every token-shaped run in data, with or without a checksum."""
    width = len(PREFIX) + BODY_CHARS
    return [(at, data[at : at + width].decode("ascii")) for at in token_offsets(data)]

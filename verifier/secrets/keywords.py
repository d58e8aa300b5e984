"""The keyword-context detector: a credential that only its name gives away. Pure.

Finds assignments of a value to a credential-named key in the forms a trace carries: code
(`password = "..."`), JSON (`"api_key": "..."`, also JSON-escaped inside a JSON string), env
and shell (`DB_PASSWORD=...`), INI and YAML (`secret: ...`). Reported as detect-secrets' kind
"Secret Keyword", at the value's first byte.

It must stay quiet on what an honest trace is full of, so a value is a credential only if it
could be one: 8-200 characters with no whitespace, and not
- hex (a sha256, a commit id, any digest) or a UUID;
- a reference to a value kept elsewhere: `${VAR}`, `$VAR`, `os.environ[...]`, `getenv(...)`,
  `{{ secret }}`, `<password>`;
- a dotted identifier without a digit (`self.password`, `settings.api_key`, `str`);
- a placeholder (`********`, `xxxxxxxx`, `changeme`, `your-api-key`, `redacted`, `example`).
And a key is credential-named only when the keyword ends it (`db_password`, `apiKey`, not
`password_hash`, `tokens` or `bypass`); the bare word `key` only in compounds (`api_key`,
`secret-access-key`, `private key`).

Speed: the scanner finds where these patterns may match in its one RE2 search
(PREFILTER_SOURCE) and tries them there; find_assignments is the same as one finditer per
pattern. Python runs only per candidate assignment.
"""

from __future__ import annotations

import re

KIND = "Secret Keyword"

_TAIL = rb"(?:\\?[\"'])?\]?[ \t]*(?::=|=>|=|:)[ \t]*"
_VALUE = rb"(?:(\\?[\"'])([^\s\"'\\]{8,200})\\?[\"']|([^\s\"'\\,;&|()<>{}\[\]`]{8,200}))"
# Three passes for five keywords: each pattern leads with a literal ("p", "ke", "secret") that
# CPython's re finds by memory search; "token" is "ke" preceded by "to".
_KEYWORDS = (rb"p(?:ass(?:word|wd|phrase)?|wd)", rb"ke(?:(?<=toke)n|y)", rb"secret")
PATTERNS = tuple(re.compile(keyword + _TAIL + _VALUE) for keyword in _KEYWORDS)
# Each pattern by the byte it starts with, and, for the scanner's one RE2 search (scan.py), a
# lookaround-free pattern matching wherever any of them matches (on the original bytes).
PATTERN_BY_FIRST: dict[int, re.Pattern[bytes]] = {pattern.pattern[0]: pattern for pattern in PATTERNS}
# (Both value forms start with an optional quote and 8 bytes of [^\s"'\\].)
PREFILTER_SOURCE = (rb"(?i:(?:p(?:ass(?:word|wd|phrase)?|wd)|ke[ny]|secret)" + _TAIL
                    + rb"(?:\\?[\"'])?[^\s\"'\\]{8})")

# What may stand right before a keyword inside one key name (lower-cased): a compound that makes
# the name a credential's. After a separator (_ - . space quote) or at the start, any keyword.
_COMPOUNDS = (b"api", b"auth", b"access", b"secret", b"private", b"refresh", b"bearer", b"session",
              b"client", b"master", b"signing", b"encryption", b"admin", b"root", b"user", b"db",
              b"license", b"app", b"bot", b"oauth", b"account", b"service")
_KEY_COMPOUNDS = tuple(c for c in _COMPOUNDS if c not in (b"user", b"db", b"root", b"admin", b"session"))
_SEPARATORS = b"_-. \t\"'"

_HEX = re.compile(rb"[0-9a-fA-F]+")
_UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_REFERENCE = re.compile(rb"^[$%@]|\$\{|\{\{|environ|getenv|process\.env|secrets\.|vault:|^arn:")
_PLACEHOLDER = re.compile(rb"^(.)\1+$|xxxx|\*\*\*|\.\.\.|changeme|change_me|your[-_]|redacted|example|placeholder"
                          rb"|dummy|<|^none$|^null$|^true$|^false$", re.IGNORECASE)


def _named_by(lowered: bytes, data: bytes, start: int, *, bare_key: bool) -> bool:
    """True if the keyword at `start` ends a credential's key name (see module docstring)."""
    before = lowered[start - 1] if start else 0x20
    if before in b"nrt" and start > 1 and lowered[start - 2] == 0x5C:  # after a JSON "\n": a line start
        before = 0x20
    compound = next((c for c in (_KEY_COMPOUNDS if bare_key else _COMPOUNDS)
                     if lowered.endswith(c, 0, start)
                     or (before in _SEPARATORS and lowered.endswith(c, 0, start - 1))), None)
    if bare_key:
        return compound is not None
    if before in _SEPARATORS or not (0x61 <= before <= 0x7A) or compound is not None:
        return True
    return 0x41 <= data[start] <= 0x5A  # camelCase: dbPassword, authToken


def credible(value: bytes) -> bool:
    """Could this value be a credential, rather than a hash, id, reference or placeholder?"""
    if _HEX.fullmatch(value) or _UUID.fullmatch(value) or value.isdigit():
        return False
    if _REFERENCE.search(value) or _PLACEHOLDER.search(value):
        return False
    return not _IDENTIFIER.fullmatch(value)


def assignment(match: re.Match[bytes], data: bytes, lowered: bytes) -> int | None:
    """Offset of the value if a keyword pattern's match (in lowered) is a credential's assignment."""
    group = 2 if match.start(2) >= 0 else 3
    value = data[match.start(group):match.end(group)]
    start = match.start()
    if lowered.startswith(b"ken", start):  # "token": the name starts two bytes earlier
        start -= 2
    bare_key = lowered.startswith(b"key", start)
    if credible(value) and _named_by(lowered, data, start, bare_key=bare_key):
        return match.start(group)
    return None


def find_assignments(data: bytes, lowered: bytes) -> set[tuple[str, int]]:
    """(KIND, offset of the value) for each credential-named assignment of a credible value.

    The scanner does the same from its one prefilter search (scan._scan_plain); this is the
    plain form, one finditer per pattern.
    """
    found: set[tuple[str, int]] = set()
    for pattern in PATTERNS:
        for match in pattern.finditer(lowered):
            offset = assignment(match, data, lowered)
            if offset is not None:
                found.add((KIND, offset))
    return found

"""Content-derived identifiers: a duplicate source or finding is caught by its id alone.

- source_id  = "src_" + sha256(canonical URL)[:16]: one place on the web is one source.
- finding_id = "fnd_" + sha256(source_id NUL normalized excerpt)[:16]: the same quote from the
  same source is the same finding, whatever claim is hung on it.
- trace_id   = "trc_" + sha256(canonical bundle bytes)[:16] (see formats.trace).
Sixteen hex digits keep paths short; the records keep the full digests, and a short-id
collision is refused rather than merged.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import SplitResult, quote, unquote, urlsplit, urlunsplit

from verifier.text.normalize import normalize

SOURCE_ID_RE = re.compile(r"^src_[0-9a-f]{16}$")
FINDING_ID_RE = re.compile(r"^fnd_[0-9a-f]{16}$")
TRACE_ID_RE = re.compile(r"^trc_[0-9a-f]{16}$")
LINK_ID_RE = re.compile(r"^lnk_[0-9a-f]{16}$")

_DEFAULT_PORTS = {"http": 80, "https": 443}
# RFC 3986 unreserved characters never need percent-encoding; decoding them makes two
# spellings of one URL agree. Everything else keeps (or gets) its encoding.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class UrlError(ValueError):
    """A URL that cannot be a source: not http(s), no host, or malformed."""


def canonical_url(url: str) -> str:
    """The one spelling of a URL that source ids are derived from.

    Lower-cases scheme and host (IDNA for non-ASCII hosts), drops a default port, the fragment
    and user info, makes an empty path "/", and normalises percent-encoding of the path and
    query. It does not reorder query parameters or strip tracking ones: they can change content.
    """
    if len(url) > 2048:
        raise UrlError("URL longer than 2048 characters")
    if any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url):
        raise UrlError("URL contains spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UrlError(f"malformed URL: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise UrlError(f"scheme {scheme or '(none)'!r} is not http or https")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UrlError("URL has no host")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise UrlError(f"host {host!r} is not a valid domain name") from exc
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = quote(unquote(parts.path), safe=_PATH_SAFE) or "/"
    query = quote(unquote(parts.query), safe=_QUERY_SAFE + "=&")
    return urlunsplit(SplitResult(scheme, netloc, path, query, ""))


def url_host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def source_id_for(url: str) -> str:
    return "src_" + sha256_hex(canonical_url(url).encode("utf-8"))[:16]


def finding_id_for(source_id: str, excerpt: str) -> str:
    material = f"{source_id}\x00{normalize(excerpt)}".encode()
    return "fnd_" + sha256_hex(material)[:16]


def link_id_for(finding_id: str, hypothesis_id: str, revision: int) -> str:
    material = f"{finding_id}\x00{hypothesis_id}\x00{revision}".encode()
    return "lnk_" + sha256_hex(material)[:16]


def review_id_for(object_path: str, leaf_id: str) -> str:
    return "rev_" + sha256_hex(f"{object_path}\x00{leaf_id}".encode())[:16]


def trace_id_for(digest_hex: str) -> str:
    return "trc_" + digest_hex[:16]

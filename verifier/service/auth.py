"""Who may call, and from where: the bearer header, tokens kept out of URLs, Host and Origin. Pure.

- A token travels only in `Authorization: Bearer <token>`. A request that carries anything that
  looks like a token in its URL (path or query) is refused before anything else happens, valid or
  not, because URLs end up in logs, proxies and browser history.
- The Host header must name this service (loopback names, the bound host, `--allowed-host`): a
  page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) is turned away.
- A request with an Origin header from elsewhere, or that a browser marks cross-site, gets no side
  effect: browsers attach those headers, agents do not.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

from verifier.service.errors import ApiError

_BEARER = re.compile(r"^Bearer +(\S+) *$")
# Names people reach for when they put a credential in a URL.
_TOKEN_PARAMS = frozenset({"token", "access_token", "bearer", "auth", "authorization", "api_key", "apikey",
                           "key", "rw_token", "password", "secret"})
_HOST = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$")
CHALLENGE = {"www-authenticate": 'Bearer realm="researchwiki"'}


def bearer_token(header: str | None) -> str:
    """The token from an Authorization header, or ApiError 401 saying what is wrong with it."""
    if header is None or not header.strip():
        raise ApiError(401, "no_token", "send your token as `Authorization: Bearer rwt_...`", headers=CHALLENGE)
    match = _BEARER.match(header.strip())
    if match is None:
        scheme = header.strip().split(" ", 1)[0][:20]
        raise ApiError(401, "bad_auth_scheme",
                       f"the Authorization header must be `Bearer <token>`, not {scheme!r} ...", headers=CHALLENGE)
    return match.group(1)


def token_in_url(path: str, query: bytes) -> str | None:
    """Why this URL carries a credential, or None. The token itself is never repeated back."""
    if "rwt_" in unquote(path).lower():
        return "the path holds a bearer token"
    try:
        text = query.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        return "the query string is not text"
    if "rwt_" in unquote(text).lower():
        return "the query string holds a bearer token"
    for name, _value in parse_qsl(text, keep_blank_values=True):
        if name.lower() in _TOKEN_PARAMS:
            return f"the query string has a credential parameter {name[:40]!r}"
    return None


def repeated_parameter(query: bytes) -> str | None:
    """A query parameter named twice (`?after=1&after=9`), which one reader takes first and another
    last; None when every name is given once. No endpoint takes a list in its query string."""
    seen: set[str] = set()
    for name, _value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if name in seen:
            return name
        seen.add(name)
    return None


def host_name(header: str | None) -> str | None:
    """The name in a Host header without its port, lower-cased; None if it is not a host."""
    if header is None:
        return None
    match = _HOST.match(header.strip())
    if match is None:
        return None
    return match.group(1).strip("[]").lower()


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_allowed(origin: str, names: frozenset[str], host: str | None) -> bool:
    """True if an Origin header names this service: one of its names, and the host and port the
    request's Host header names (the same origin; the scheme is not compared, as a proxy in front
    may end TLS). An Origin is `scheme://host[:port]` and nothing else."""
    if origin == "null" or host is None:
        return False
    parts = urlsplit(origin)
    try:
        port = parts.port
    except ValueError:  # "http://127.0.0.1:8765.evil.example": no port at all
        return False
    if parts.scheme not in _DEFAULT_PORTS or parts.path or parts.query or parts.fragment or parts.username \
            or parts.password is not None or (parts.hostname or "").lower() not in names:
        return False
    match = _HOST.match(host.strip())
    if match is None or match.group(1).strip("[]").lower() != (parts.hostname or "").lower():
        return False
    default = _DEFAULT_PORTS[parts.scheme]
    asked = int(match.group(2)[1:]) if match.group(2) else None
    return (port or default) == (asked if asked is not None else default)

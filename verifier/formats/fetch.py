"""What one attempt to fetch a source URL observed, as plain frozen data. Pure: no I/O.

The network edge (verifier/store/fetcher.py) produces these; the pure scout check reads them.
Every refusal is an outcome, not an exception, so a refusal can be recorded in the ledger
exactly like a success.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FetchStatus(StrEnum):
    """How a fetch ended. Only OK means the URL resolved and its bytes were hashed."""

    OK = "ok"
    REFUSED_ROBOTS = "refused-robots"  # robots.txt says no, or could not be read (read as no)
    REFUSED_POLICY = "refused-policy"  # outside the project's source policy, or not http(s)
    REFUSED_ADDRESS = "refused-address"  # host resolves to a non-public address (SSRF guard)
    HTTP_ERROR = "http-error"  # the server answered, but not with a usable 2xx body
    NETWORK_ERROR = "network-error"  # DNS, connect, TLS, timeout or a broken response
    TOO_MANY_REDIRECTS = "too-many-redirects"  # the redirect limit was hit, or a loop was seen
    NOT_CHECKED = "not-checked"  # nothing was fetched (offline mode)


@dataclass(frozen=True)
class FetchHop:
    """One URL in the redirect chain: what was requested (or refused) and what came back.

    `status` is the HTTP status of the response, or None when no response was received
    (the URL was refused before any request, or the request failed on the network).
    """

    url: str
    status: int | None
    note: str


@dataclass(frozen=True)
class FetchOutcome:
    """The whole record of one fetch: the chain of hops and, on success, the body's hash.

    `final_url` and `http_status` describe the last response received, if any: for OK the
    2xx response whose body was hashed; for a refusal after a redirect, the redirecting
    response. `sha256`, `size` and `media_type` are set only for OK.
    """

    requested_url: str
    final_url: str | None
    status: FetchStatus
    http_status: int | None
    sha256: str | None  # hex SHA-256 of the final body bytes exactly as received
    size: int | None  # length of those bytes
    media_type: str | None  # from Content-Type, lowercased, parameters stripped
    hops: tuple[FetchHop, ...]
    reason: str  # one human sentence: what was observed versus what was expected

    def __post_init__(self) -> None:
        # A record that claims success without the hash (or a hash without success) would let
        # a caller accept a source whose bytes were never pinned; refuse to build one.
        if self.status is FetchStatus.OK and (self.sha256 is None or self.size is None):
            raise ValueError("an OK fetch outcome needs sha256 and size of the body")
        if self.status is not FetchStatus.OK and self.sha256 is not None:
            raise ValueError("only an OK fetch outcome carries a body hash")
        if not self.reason.strip():
            raise ValueError("a fetch outcome needs a reason")

    @property
    def resolved(self) -> bool:
        """True when the URL resolved to a 2xx body that was read in full and hashed."""
        return self.status is FetchStatus.OK

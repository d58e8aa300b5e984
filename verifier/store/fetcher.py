"""The network edge that checks a scouted URL resolves: one honest, identified GET per URL.

Honest capture means, for every URL in a redirect chain:

* only http and https, and the caller's source policy (`allows`) is asked before anything;
* the host is resolved and, unless private addresses are allowed, every address must be public
  (SSRF guard); the connection then goes to an address that was checked, never to a second
  lookup, so DNS cannot be switched between the check and the connect;
* robots.txt of the URL's origin is fetched first with the same User-Agent and obeyed; an
  unreadable robots.txt (5xx, network error, timeout, oversized, not UTF-8) means no, while a
  4xx robots.txt means there are no rules (RFC 9309);
* exactly one GET with a fixed User-Agent; no retries, no second user agent, no header games;
* every refusal or failure is returned as a FetchOutcome with a reason, never raised.

Only the standard library is used, so what goes on the wire is visible in this file.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.robotparser
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from verifier.constants import FETCH_MAX_REDIRECTS, FETCH_TIMEOUT_S, MAX_SOURCE_BYTES
from verifier.formats.fetch import FetchHop, FetchOutcome, FetchStatus

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# RFC 9309 §2.5: a parser must handle at least 500 KiB; anything larger we refuse to guess at.
_ROBOTS_MAX_BYTES = 500 * 1024
# RFC 9309 §2.3.1.2: follow at least five consecutive redirects for robots.txt.
_ROBOTS_MAX_REDIRECTS = 5
# `timeout_s` bounds each blocking step (DNS, connect, each read). A server dripping one byte
# per interval would never trip that, so a whole exchange also gets this many timeouts in total.
_EXCHANGE_BUDGET_FACTOR = 6
_READ_CHUNK = 64 * 1024
# Characters left as they are when percent-encoding a path or query: RFC 3986 reserved and
# unreserved characters plus "%" (so an already-encoded URL is not encoded twice).
_PATH_SAFE = "/:@!$&'()*+,;=%"
_QUERY_SAFE = _PATH_SAFE + "?"
_NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")


class Fetcher(Protocol):
    """Anything that can check a URL: the live HttpFetcher or the OfflineFetcher."""

    def fetch(self, url: str, allows: Callable[[str], str | None],
              allows_address: Callable[[str], str | None] | None = None) -> FetchOutcome:
        """Fetch `url` if `allows` (the source policy) permits it, and every address its host
        resolves to passes `allows_address` (the deny list, for addresses); always an outcome."""
        ...


# The User-Agent the verifier fetches with unless config.json names another (Settings.user_agent).
DEFAULT_USER_AGENT = "ResearchWiki-Verifier/0.1 (+https://researchwiki.invalid/verifier)"


class OfflineFetcher:
    """A Fetcher for runs without network: it never touches the network and checks nothing."""

    def fetch(self, url: str, allows: Callable[[str], str | None],
              allows_address: Callable[[str], str | None] | None = None) -> FetchOutcome:
        """Return NOT_CHECKED for any URL, so an offline run cannot be mistaken for a check."""
        return FetchOutcome(
            requested_url=url,
            final_url=None,
            status=FetchStatus.NOT_CHECKED,
            http_status=None,
            sha256=None,
            size=None,
            media_type=None,
            hops=(),
            reason="offline mode: URL not checked",
        )


@dataclass(frozen=True)
class _Target:
    """A URL taken apart into exactly what goes on the wire."""

    url: str  # as given (absolute), used for policy, robots matching and records
    scheme: str  # "http" or "https"
    host: str  # ASCII host (IDNA-encoded if needed), IPv6 without brackets
    port: int
    request_target: str  # path and query, percent-encoded ASCII, never empty

    @property
    def origin(self) -> str:
        """scheme://host[:port], the unit robots.txt applies to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return (
            f"{self.scheme}://{host}"
            if self.port == default
            else f"{self.scheme}://{host}:{self.port}"
        )


def _parse_target(url: str) -> _Target | str:
    """Split `url` for a request, or return why it cannot be requested."""
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return "the URL contains whitespace or control characters"
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port  # raises ValueError for a non-numeric or out-of-range port
    except ValueError as exc:
        return f"the URL is not well formed ({exc})"
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        return f"the URL scheme is {scheme or 'missing'!r} but only http and https are fetched"
    host = parts.hostname
    if not host:
        return "the URL has no host"
    if parts.username is not None or parts.password is not None:
        # "http://trusted.example@other.example/" is a classic way to fool a naive policy; we
        # would never send the credentials anyway, so such a URL is refused outright.
        return "the URL carries user credentials before the host"
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return "the URL host is not a valid internationalized domain name"
    path = urllib.parse.quote(parts.path or "/", safe=_PATH_SAFE)
    query = urllib.parse.quote(parts.query, safe=_QUERY_SAFE)
    return _Target(
        url=url,
        scheme=scheme,
        host=host,
        port=port if port is not None else (443 if scheme == "https" else 80),
        request_target=f"{path}?{query}" if query else path,
    )


def _address_refusal(address: str) -> str | None:
    """Why `address` must not be connected to (SSRF guard), or None if it is public."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
        address.split("%", 1)[0]  # an IPv6 zone ("fe80::1%eth0") says nothing about the address
    )
    if isinstance(ip, ipaddress.IPv6Address):
        # IPv6 forms that carry an IPv4 address are judged by the IPv4 address they reach.
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64_PREFIX:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return _address_refusal(str(embedded))
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
    )
    for label, hit in checks:
        if hit:
            return label
    if not ip.is_global:  # e.g. 100.64.0.0/10 shared address space
        return "not globally routable"
    return None


def _resolve(host: str, port: int, timeout_s: float) -> tuple[str, ...]:
    """Every IPv4/IPv6 address `host` resolves to, in resolver order; raises OSError on failure.

    getaddrinfo has no timeout of its own, so the lookup runs in a daemon thread that is
    abandoned (not waited for) once `timeout_s` has passed.
    """
    try:
        return (str(ipaddress.ip_address(host)),)  # a literal address needs no lookup
    except ValueError:
        pass
    box: list[tuple[str, ...] | OSError] = []

    def lookup() -> None:
        try:
            answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            box.append(exc)
            return
        addresses: list[str] = []
        for family, _type, _proto, _name, sockaddr in answers:
            address = str(sockaddr[0])
            if family in {socket.AF_INET, socket.AF_INET6} and address not in addresses:
                addresses.append(address)
        box.append(tuple(addresses))

    worker = threading.Thread(target=lookup, name="fetcher-dns", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not box:
        raise TimeoutError(f"DNS lookup of {host} took longer than {timeout_s:g} s")
    found = box[0]
    if isinstance(found, OSError):
        raise found
    if not found:
        raise OSError(f"{host} has no IPv4 or IPv6 address")
    return found


def _describe_failure(exc: BaseException, timeout_s: float) -> str:
    """A short phrase for what went wrong on the wire."""
    if isinstance(exc, TimeoutError):
        detail = str(exc)
        if detail and detail != "timed out":  # our own budget messages say which limit
            return f"timed out: {detail}"
        return f"timed out (nothing received within {timeout_s:g} s)"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate verification failed ({exc.verify_message})"
    if isinstance(exc, ssl.SSLError):
        return f"the TLS handshake failed ({exc.reason})"
    if isinstance(exc, socket.gaierror):
        return f"the DNS lookup failed ({exc.strerror})"
    if isinstance(exc, ConnectionRefusedError):
        return "the connection was refused"
    if isinstance(exc, http.client.HTTPException):
        return f"the HTTP response was malformed or cut short ({type(exc).__name__})"
    return f"the connection failed ({type(exc).__name__}: {exc})"


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection whose socket goes only to addresses that were already checked.

    http.client would otherwise look the host name up again at connect time, and that second
    answer could be an address the guard never saw (DNS rebinding). The Host header and the
    TLS server name still use the real host name.
    """

    def __init__(
        self,
        target: _Target,
        *,
        addresses: tuple[str, ...],
        timeout_s: float,
        deadline: float,
        tls: ssl.SSLContext | None,
    ) -> None:
        super().__init__(target.host, target.port, timeout=timeout_s)
        if tls is not None:
            self.default_port = 443  # so the Host header omits ":443", as any https client does
        self._addresses = addresses
        self._timeout_s = timeout_s
        self._deadline = deadline
        self._tls = tls
        self._live: socket.socket | None = None  # kept after http.client hands it to a response
        self._cut = threading.Lock()
        self.expired = False

    def connect(self) -> None:
        """Connect to the first checked address that accepts, then wrap in TLS if https."""
        # Trying the next checked address after a failed connect is not a retry: no request
        # has been sent yet. The request itself goes out once, on whichever socket connected.
        failure: OSError = OSError(f"no address to connect to for {self.host}")
        for address in self._addresses:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0 or self.expired:
                raise TimeoutError(f"connecting to {self.host} exceeded the time budget")
            try:
                sock = socket.create_connection(
                    (address, self.port), timeout=min(self._timeout_s, remaining)
                )
            except OSError as exc:
                failure = exc
                continue
            sock.settimeout(self._timeout_s)  # each later read is bounded by the step timeout
            with self._cut:
                self._live = sock
            if self._tls is not None:
                try:
                    sock = self._tls.wrap_socket(sock, server_hostname=self.host)
                except BaseException:
                    sock.close()
                    raise
                with self._cut:
                    self._live = sock
            if self.expired:
                sock.close()
                raise TimeoutError(f"connecting to {self.host} exceeded the time budget")
            self.sock = sock
            return
        raise failure

    def expire(self) -> None:
        """Called by the watchdog at the deadline: cut the socket so a blocked read returns.

        The per-step timeout cannot stop a server that sends one byte just often enough, in
        the headers or the body; shutting the socket down ends any such read at once.
        """
        with self._cut:
            self.expired = True
            if self._live is not None:
                with contextlib.suppress(OSError):
                    # The plain-socket shutdown, also on a TLS socket: it only cuts the
                    # connection and leaves the TLS object to fail on its next use.
                    socket.socket.shutdown(self._live, socket.SHUT_RDWR)


@dataclass(frozen=True)
class _Response:
    """What one GET observed. `body` is read only for a 2xx answer when a body was wanted."""

    status: int
    location: str | None
    media_type: str | None
    body: bytes | None
    too_large: int | None  # bytes seen (or declared) when the body went over the limit


@dataclass(frozen=True)
class _RobotsVerdict:
    """robots.txt of one origin as read once: rules, or a blanket allow / deny with why."""

    parser: urllib.robotparser.RobotFileParser | None  # None: blanket verdict below
    allow_all: bool
    observed: str  # e.g. "robots.txt answered HTTP 404", "robots.txt timed out"
    readable: bool  # False: the file could not be read, which RFC 9309 reads as disallow

    def permits(self, agent_token: str, url: str) -> bool:
        if self.parser is None:
            return self.allow_all
        return self.parser.can_fetch(agent_token, url)


class HttpFetcher:
    """The live Fetcher: honest capture over http.client (see the module docstring)."""

    def __init__(
        self,
        *,
        user_agent: str,
        timeout_s: float = FETCH_TIMEOUT_S,
        max_bytes: int = MAX_SOURCE_BYTES,
        max_redirects: int = FETCH_MAX_REDIRECTS,
        allow_private_addresses: bool = False,
    ) -> None:
        if not user_agent.strip() or not user_agent.isascii() or not user_agent.isprintable():
            raise ValueError("user_agent must be a non-empty, printable ASCII header value")
        if timeout_s <= 0 or max_bytes <= 0 or max_redirects < 0:
            raise ValueError("timeout_s and max_bytes must be positive, max_redirects >= 0")
        self._user_agent = user_agent
        # robots.txt groups are matched on the product token ("ResearchWiki-Verifier"), not on
        # the version or the contact URL that follow it.
        self._agent_token = re.split(r"[/\s]", user_agent.strip(), maxsplit=1)[0]
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._max_redirects = max_redirects
        self._allow_private = allow_private_addresses
        # Built on first https use: loading the system CA store costs tens of milliseconds.
        self._tls: ssl.SSLContext | None = None
        self._robots: dict[str, _RobotsVerdict] = {}
        self._robots_locks: dict[str, threading.Lock] = {}
        self._robots_guard = threading.Lock()

    # --- the one public operation -------------------------------------------------------

    def fetch(self, url: str, allows: Callable[[str], str | None],  # noqa: C901, PLR0912, PLR0915 - one branch per defence (redirects, rebinding, size, type), each named
              allows_address: Callable[[str], str | None] | None = None) -> FetchOutcome:
        """Fetch `url` honestly, following redirects by hand; every ending is an outcome."""
        hops: list[FetchHop] = []
        visited: set[str] = set()
        last_url: str | None = None  # the last response received, for final_url/http_status
        last_status: int | None = None
        current = url
        redirects = 0

        def end(status: FetchStatus, reason: str, note: str | None = None) -> FetchOutcome:
            if note is not None:
                hops.append(FetchHop(url=current, status=None, note=note))
            return FetchOutcome(
                requested_url=url,
                final_url=last_url,
                status=status,
                http_status=last_status,
                sha256=None,
                size=None,
                media_type=None,
                hops=tuple(hops),
                reason=reason,
            )

        while True:
            target = _parse_target(current)
            if isinstance(target, str):
                return end(
                    FetchStatus.REFUSED_POLICY,
                    f"{current} was not requested because {target}; "
                    "expected an absolute http or https URL.",
                    f"not requested: {target}",
                )
            refusal = allows(current)
            if refusal is not None:
                return end(
                    FetchStatus.REFUSED_POLICY,
                    f"{current} is outside the source policy ({refusal}), so it was not "
                    "requested; expected a URL the policy allows.",
                    f"not requested: source policy: {refusal}",
                )
            try:
                addresses = self._checked_addresses(target)
            except OSError as exc:
                why = _describe_failure(exc, self._timeout_s)
                return end(
                    FetchStatus.NETWORK_ERROR,
                    f"Resolving the host of {current} failed: {why}; "
                    "expected it to resolve to an address.",
                    f"not requested: {why}",
                )
            if isinstance(addresses, str):
                return end(
                    FetchStatus.REFUSED_ADDRESS,
                    f"The host of {current} resolves to {addresses}, so it was not "
                    "requested; expected only public internet addresses.",
                    f"not requested: address guard: {addresses}",
                )
            # A denied address is denied under any name (and after every redirect).
            denied = next((why for why in map(allows_address, addresses) if why), None) if allows_address else None
            if denied is not None:
                return end(
                    FetchStatus.REFUSED_POLICY,
                    f"The host of {current} resolves to an address outside the source policy ({denied}), "
                    "so it was not requested; expected addresses the policy allows.",
                    f"not requested: source policy: {denied}",
                )
            robots = self._robots_for(target)
            if not robots.permits(self._agent_token, target.url):
                if robots.readable:
                    reason = (
                        f"robots.txt of {target.origin} disallows {current} for "
                        f"{self._agent_token}, so it was not requested; expected robots.txt "
                        "to permit the fetch."
                    )
                else:
                    reason = (
                        f"robots.txt of {target.origin} could not be read ({robots.observed}), "
                        f"and an unreadable robots.txt means no, so {current} was not "
                        "requested; expected a readable robots.txt that permits the fetch."
                    )
                note = "disallowed by robots.txt" if robots.readable else robots.observed
                return end(FetchStatus.REFUSED_ROBOTS, reason, f"not requested: {note}")
            try:
                response = self._exchange(target, addresses, body_limit=self._max_bytes)
            except (OSError, http.client.HTTPException) as exc:
                why = _describe_failure(exc, self._timeout_s)
                return end(
                    FetchStatus.NETWORK_ERROR,
                    f"GET {current} failed: {why}; expected an HTTP response.",
                    f"requested: {why}",
                )
            last_url, last_status = current, response.status
            visited.add(urllib.parse.urldefrag(current).url)

            if response.status in _REDIRECT_STATUSES:
                if not response.location:
                    hops.append(FetchHop(current, response.status, "redirect without Location"))
                    return end(
                        FetchStatus.HTTP_ERROR,
                        f"GET {current} answered HTTP {response.status} without a Location "
                        "header; expected a 2xx response or a redirect with a target.",
                    )
                following = urllib.parse.urljoin(current, response.location)
                hops.append(FetchHop(current, response.status, f"redirect to {following}"))
                current = following
                if urllib.parse.urldefrag(following).url in visited:
                    return end(
                        FetchStatus.TOO_MANY_REDIRECTS,
                        f"The redirect chain from {url} came back to {following}, a loop; "
                        "expected it to end in a 2xx response.",
                        "not requested: already visited in this redirect chain",
                    )
                redirects += 1
                if redirects > self._max_redirects:
                    return end(
                        FetchStatus.TOO_MANY_REDIRECTS,
                        f"{url} redirected more than {self._max_redirects} times; expected "
                        f"a 2xx response within {self._max_redirects} redirects.",
                        f"not requested: redirect limit of {self._max_redirects} reached",
                    )
                continue

            if not 200 <= response.status < 300:
                hops.append(FetchHop(current, response.status, "final response, not 2xx"))
                return end(
                    FetchStatus.HTTP_ERROR,
                    f"GET {current} answered HTTP {response.status}; expected a 2xx response.",
                )
            if response.too_large is not None or response.body is None:
                hops.append(FetchHop(current, response.status, "body over the size limit"))
                return end(
                    FetchStatus.HTTP_ERROR,
                    f"GET {current} answered HTTP {response.status} with a body over the size "
                    f"limit ({response.too_large} bytes declared or read before stopping); "
                    f"expected at most {self._max_bytes} bytes.",
                )
            body = response.body
            hops.append(FetchHop(current, response.status, "final response, body hashed"))
            return FetchOutcome(
                requested_url=url,
                final_url=current,
                status=FetchStatus.OK,
                http_status=response.status,
                sha256=hashlib.sha256(body).hexdigest(),
                size=len(body),
                media_type=response.media_type,
                hops=tuple(hops),
                reason=(
                    f"GET {current} answered HTTP {response.status} with {len(body)} bytes "
                    f"after {redirects} redirect(s), as expected."
                ),
            )

    # --- address guard ----------------------------------------------------------------------

    def _checked_addresses(self, target: _Target) -> tuple[str, ...] | str:
        """The addresses to connect to, or why the host is refused; OSError if unresolvable.

        A host is refused if any of its addresses is non-public: which one a client ends up
        on is not ours to choose, so one bad answer taints the name.
        """
        addresses = _resolve(target.host, target.port, self._timeout_s)
        if self._allow_private:
            return addresses
        for address in addresses:
            label = _address_refusal(address)
            if label is not None:
                return f"{address} ({label})"
        return addresses

    def _tls_context(self) -> ssl.SSLContext:
        """The TLS settings for https: system CAs, certificates and host names verified."""
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    # --- one GET ------------------------------------------------------------------------------

    def _exchange(
        self, target: _Target, addresses: tuple[str, ...], *, body_limit: int
    ) -> _Response:
        """Send exactly one GET to a checked address and read the answer.

        The body is read only for a 2xx answer, and never beyond `body_limit` bytes.
        Raises OSError (including TimeoutError) or http.client.HTTPException on the wire.
        """
        budget = self._timeout_s * _EXCHANGE_BUDGET_FACTOR
        conn = _PinnedConnection(
            target,
            addresses=addresses,
            timeout_s=self._timeout_s,
            deadline=time.monotonic() + budget,
            tls=self._tls_context() if target.scheme == "https" else None,
        )
        watchdog = threading.Timer(budget, conn.expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            response = self._converse(conn, target, body_limit)
        except (OSError, http.client.HTTPException) as exc:
            if conn.expired:
                raise TimeoutError(f"GET {target.url} exceeded {budget:g} s in total") from exc
            raise
        finally:
            watchdog.cancel()
            conn.close()
        if conn.expired:
            # A cut connection can look like a normal end of a body that runs to the close of
            # the connection, so a body read when the deadline struck is not trusted.
            raise TimeoutError(f"GET {target.url} exceeded {budget:g} s in total")
        return response

    def _converse(self, conn: _PinnedConnection, target: _Target, body_limit: int) -> _Response:
        """The request and the reading of the answer, on a connection the caller cleans up."""
        # Accept-Encoding: identity is added by http.client, so the bytes hashed are the
        # representation itself, not a compressed transfer of it.
        conn.request(
            "GET",
            target.request_target,
            headers={"User-Agent": self._user_agent, "Accept": "*/*", "Connection": "close"},
        )
        response = conn.getresponse()
        try:
            content_type = response.getheader("Content-Type")
            media_type = (content_type or "").split(";", 1)[0].strip().lower() or None
            location = response.getheader("Location")
            if not 200 <= response.status < 300:
                return _Response(response.status, location, media_type, None, None)
            declared = (response.getheader("Content-Length") or "").strip()
            # isascii: str.isdigit also accepts digits such as "²" that int() rejects.
            if declared.isascii() and declared.isdigit() and int(declared) > body_limit:
                # Refuse from the header rather than download what we will not keep.
                return _Response(response.status, location, media_type, None, int(declared))
            chunks: list[bytes] = []
            total = 0
            while True:
                # read1: at most one socket read per call, so the loop sees the watchdog.
                chunk = response.read1(min(_READ_CHUNK, body_limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > body_limit:
                    return _Response(response.status, location, media_type, None, total)
            if response.length:
                # read1 reports a connection closed before Content-Length as a plain end.
                raise http.client.IncompleteRead(b"".join(chunks), response.length)
            return _Response(response.status, location, media_type, b"".join(chunks), None)
        finally:
            response.close()

    # --- robots.txt -----------------------------------------------------------------------

    def _robots_for(self, target: _Target) -> _RobotsVerdict:
        """robots.txt of the target's origin, fetched at most once per origin per instance."""
        origin = target.origin
        with self._robots_guard:
            cached = self._robots.get(origin)
            if cached is not None:
                return cached
            lock = self._robots_locks.setdefault(origin, threading.Lock())
        # One lock per origin: concurrent fetches on one origin wait for a single robots.txt
        # request instead of each making their own, while other origins proceed.
        with lock:
            with self._robots_guard:
                cached = self._robots.get(origin)
            if cached is None:
                cached = self._read_robots(origin)
                with self._robots_guard:
                    self._robots[origin] = cached
            return cached

    def _read_robots(self, origin: str) -> _RobotsVerdict:  # noqa: C901 - robots.txt's grammar, one branch per directive
        """Fetch and interpret robots.txt of `origin` per RFC 9309 (unreadable means no)."""

        def deny(observed: str) -> _RobotsVerdict:
            return _RobotsVerdict(parser=None, allow_all=False, observed=observed, readable=False)

        # The source policy is not applied here: robots.txt is the origin's own protocol file,
        # not a source, and the origin itself already passed the policy. The address guard
        # still applies to every connection, including robots.txt redirects.
        current = f"{origin}/robots.txt"
        for _ in range(_ROBOTS_MAX_REDIRECTS + 1):
            target = _parse_target(current)
            if isinstance(target, str):
                return deny(f"robots.txt redirected to an unusable URL: {target}")
            try:
                addresses = self._checked_addresses(target)
            except OSError as exc:
                return deny(f"robots.txt at {current}: {_describe_failure(exc, self._timeout_s)}")
            if isinstance(addresses, str):
                return deny(f"robots.txt at {current} is on a refused address {addresses}")
            try:
                response = self._exchange(target, addresses, body_limit=_ROBOTS_MAX_BYTES)
            except (OSError, http.client.HTTPException) as exc:
                return deny(f"robots.txt at {current}: {_describe_failure(exc, self._timeout_s)}")
            status = response.status
            if status in _REDIRECT_STATUSES and response.location:
                current = urllib.parse.urljoin(current, response.location)
                continue
            if 400 <= status < 500:
                # RFC 9309 §2.3.1.3: robots.txt unavailable means no rules apply.
                return _RobotsVerdict(
                    parser=None,
                    allow_all=True,
                    observed=f"robots.txt answered HTTP {status} (no rules)",
                    readable=True,
                )
            if not 200 <= status < 300:
                return deny(f"robots.txt answered HTTP {status}")
            if response.body is None:
                return deny(f"robots.txt is larger than {_ROBOTS_MAX_BYTES} bytes")
            try:
                text = response.body.decode("utf-8-sig")  # RFC 9309: robots.txt is UTF-8
            except UnicodeDecodeError:
                return deny("robots.txt is not valid UTF-8")
            parser = urllib.robotparser.RobotFileParser()
            try:
                parser.parse(text.splitlines())
            except ValueError:
                # robotparser checks Crawl-delay with str.isdigit, so a line like
                # "Crawl-delay: ²" makes int() fail: a file we cannot parse is read as no.
                return deny("robots.txt could not be parsed")
            return _RobotsVerdict(
                parser=parser, allow_all=False, observed="robots.txt read", readable=True
            )
        return deny(f"robots.txt redirected more than {_ROBOTS_MAX_REDIRECTS} times")

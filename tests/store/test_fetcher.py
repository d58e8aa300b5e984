"""HttpFetcher against a real HTTP server on loopback: honest capture, refusals, limits.

Every test talks only to 127.0.0.1 (an autouse guard fails any attempt to resolve or connect
elsewhere), and each server records every request with the User-Agent it saw, so the tests can
assert exactly one request per resource: no retries, no second identity.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import ipaddress
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from verifier.formats.fetch import FetchHop, FetchOutcome, FetchStatus
from verifier.store.fetcher import Fetcher, HttpFetcher, OfflineFetcher

UA = "ResearchWiki-Verifier/0.1 (+https://researchwiki.invalid/verifier)"
PAGE = b"<html><body>hello, sources</body></html>"
BIG = 5000
# Our agent may fetch anything but /private/; every other agent is shut out, which proves the
# fetcher reads the group for its own product token rather than the "*" group.
ROBOTS_RULES = (
    "User-agent: ResearchWiki-Verifier\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n"
)


@dataclass
class Site:
    """One origin: a loopback server plus the log of every request it received."""

    robots: str | bytes | int
    server: ThreadingHTTPServer | None = None
    scheme: str = "http"
    host: str = "127.0.0.1"
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, User-Agent)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base(self) -> str:
        assert self.server is not None
        return f"{self.scheme}://{self.host}:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def record(self, path: str, agent: str) -> None:
        with self.lock:
            self.requests.append((path, agent))

    def hits(self, path: str) -> int:
        with self.lock:
            return sum(1 for seen, _ in self.requests if seen == path)


class _SiteServer(ThreadingHTTPServer):
    site: Site

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up on purpose (timeouts, size limits) is expected, not noise.
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _SiteServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: bytes = b"", content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str | None) -> None:
        self.send_response(302)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        site = self.server.site
        site.record(self.path, self.headers.get("User-Agent", ""))
        path, _, query = self.path.partition("?")
        # The fetcher may hang up first (timeouts, size limits); that is what some tests check.
        with contextlib.suppress(OSError):
            self._route(site, path, query)

    def _route(self, site: Site, path: str, query: str) -> None:  # noqa: C901 - a test server's routing table, one branch per hostile reply
        if path == "/robots.txt":
            if site.robots == "slow":
                site.release.wait(5)
            if isinstance(site.robots, int):
                self._reply(site.robots, b"robots unavailable")
            elif isinstance(site.robots, bytes):
                self._reply(200, site.robots)
            else:
                self._reply(200, site.robots.encode())
        elif path in {"/page", "/other", "/private/page", "/denied/page"}:
            self._reply(200, PAGE, "Text/HTML; charset=UTF-8")
        elif path == "/redirect":
            self._redirect(parse_qs(query)["to"][0])
        elif path == "/no-location":
            self._redirect(None)
        elif path == "/loop/a":
            self._redirect("/loop/b")
        elif path == "/loop/b":
            self._redirect("/loop/a")
        elif path.startswith("/chain/"):
            self._redirect(f"/chain/{int(path.rsplit('/', 1)[1]) + 1}")
        elif path == "/slow":
            site.release.wait(5)
            self._reply(200, PAGE)
        elif path == "/big":
            self._reply(200, b"x" * BIG)
        elif path == "/big-unsized":
            # HTTP/1.0 without Content-Length: the body ends when the connection closes.
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"x" * BIG)
        elif path == "/drip":
            # Each byte arrives well inside the per-read timeout; only a total budget stops it.
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            while not site.release.wait(0.02):
                self.wfile.write(b"x")
                self.wfile.flush()
        else:
            self._reply(404, b"not here")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that would resolve or connect to anything but loopback."""
    real_connect = socket.create_connection
    real_lookup = socket.getaddrinfo

    def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        host = address[0].split("%", 1)[0]
        assert ipaddress.ip_address(host).is_loopback, f"tried to connect to {host}"
        return real_connect(address, *args, **kwargs)

    def lookup(host: str, *args: Any, **kwargs: Any) -> Any:
        # create_connection "resolves" the numeric address it is given; that is no lookup.
        literal_loopback = False
        with contextlib.suppress(ValueError):
            literal_loopback = ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
        assert host == "localhost" or literal_loopback, f"tried to resolve {host}"
        return real_lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", connect)
    monkeypatch.setattr(socket, "getaddrinfo", lookup)


@pytest.fixture
def make_site() -> Iterator[Callable[..., Site]]:
    """Start loopback servers on demand; each is its own origin with its own robots.txt."""
    sites: list[Site] = []

    def make(robots: str | bytes | int = ROBOTS_RULES, tls: ssl.SSLContext | None = None) -> Site:
        site = Site(robots=robots)
        server = _SiteServer(("127.0.0.1", 0), _Handler)
        server.site = site
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
            site.scheme = "https"
            site.host = "localhost"
        site.server = server
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        sites.append(site)
        return site

    yield make
    for site in sites:
        site.release.set()
        assert site.server is not None
        site.server.shutdown()
        site.server.server_close()


@pytest.fixture
def site(make_site: Callable[..., Site]) -> Site:
    return make_site()


def policy(url: str) -> str | None:
    """A source policy like PROJECT.md's: one denied domain and one denied path prefix."""
    parts = urlsplit(url)
    if parts.hostname == "denied.example":
        return "deny_domains contains denied.example"
    if parts.path.startswith("/denied/"):
        return "paths under /denied/ are outside the project"
    return None


def fetcher(**overrides: Any) -> HttpFetcher:
    options: dict[str, Any] = {"user_agent": UA, "timeout_s": 2.0, "allow_private_addresses": True}
    options.update(overrides)
    return HttpFetcher(**options)


def test_a_denied_address_is_refused_under_any_name(site: Site) -> None:
    # The site listens on loopback; asked by the name `localhost`, its address is what the deny list names.
    named = site.url("/page").replace("127.0.0.1", "localhost")
    assert "localhost" in named
    outcome = fetcher().fetch(named, policy, lambda address: "denied" if address in ("127.0.0.1", "::1") else None)
    assert outcome.status is FetchStatus.REFUSED_POLICY and not site.requests
    assert fetcher().fetch(named, policy, lambda _address: None).resolved


def redirect_to(site: Site, target: str) -> str:
    return site.url("/redirect?to=" + quote(target, safe=""))


# --- success -----------------------------------------------------------------------------------


def test_page_is_fetched_once_with_our_user_agent_and_hashed(site: Site) -> None:
    outcome = fetcher().fetch(site.url("/page"), policy)

    assert outcome.status is FetchStatus.OK
    assert outcome.resolved
    assert outcome.requested_url == outcome.final_url == site.url("/page")
    assert outcome.http_status == 200
    assert outcome.sha256 == hashlib.sha256(PAGE).hexdigest()
    assert outcome.size == len(PAGE)
    assert outcome.media_type == "text/html"
    assert outcome.hops == (FetchHop(site.url("/page"), 200, "final response, body hashed"),)
    assert "200" in outcome.reason
    # robots.txt first, then the page: one request each, both under our one identity.
    assert site.requests == [("/robots.txt", UA), ("/page", UA)]


def test_robots_txt_is_read_once_per_origin(site: Site) -> None:
    live = fetcher()
    assert live.fetch(site.url("/page"), policy).resolved
    assert live.fetch(site.url("/other"), policy).resolved
    assert site.hits("/robots.txt") == 1


def test_http_fetcher_and_offline_fetcher_satisfy_the_protocol() -> None:
    fetchers: list[Fetcher] = [fetcher(), OfflineFetcher()]
    assert len(fetchers) == 2


# --- robots.txt --------------------------------------------------------------------------------


def test_robots_disallow_for_our_agent_is_obeyed(site: Site) -> None:
    outcome = fetcher().fetch(site.url("/private/page"), policy)

    assert outcome.status is FetchStatus.REFUSED_ROBOTS
    assert not outcome.resolved
    assert site.hits("/private/page") == 0
    assert "disallows" in outcome.reason
    assert outcome.hops == (
        FetchHop(site.url("/private/page"), None, "not requested: disallowed by robots.txt"),
    )
    assert outcome.final_url is None
    assert outcome.http_status is None


@pytest.mark.parametrize(
    ("robots", "observed"),
    [
        (500, "HTTP 500"),
        (503, "HTTP 503"),
        (b"User-agent: *\nDisallow: /\xff\xfe\n", "UTF-8"),
        ("#" * (600 * 1024), "larger than"),
        ("User-agent: *\nCrawl-delay: \u00b2\n", "could not be parsed"),
        ("slow", "timed out"),
    ],
)
def test_unreadable_robots_txt_means_disallow(
    make_site: Callable[..., Site], robots: str | bytes | int, observed: str
) -> None:
    site = make_site(robots=robots)
    live = fetcher(timeout_s=0.3)

    outcome = live.fetch(site.url("/page"), policy)

    assert outcome.status is FetchStatus.REFUSED_ROBOTS
    assert observed in outcome.reason
    assert "unreadable" in outcome.reason
    assert site.hits("/page") == 0
    # The unreadable verdict is kept for the origin: asking again makes no new request.
    assert live.fetch(site.url("/other"), policy).status is FetchStatus.REFUSED_ROBOTS
    assert site.requests == [("/robots.txt", UA)]


@pytest.mark.parametrize("status", [404, 403, 410])
def test_robots_txt_4xx_means_no_rules(make_site: Callable[..., Site], status: int) -> None:
    site = make_site(robots=status)
    outcome = fetcher().fetch(site.url("/private/page"), policy)
    assert outcome.status is FetchStatus.OK
    assert site.requests == [("/robots.txt", UA), ("/private/page", UA)]


# --- redirects ---------------------------------------------------------------------------------


def test_redirect_to_allowed_path_is_followed_and_recorded(site: Site) -> None:
    start = redirect_to(site, "/page")
    outcome = fetcher().fetch(start, policy)

    assert outcome.status is FetchStatus.OK
    assert outcome.requested_url == start
    assert outcome.final_url == site.url("/page")
    assert [(hop.url, hop.status) for hop in outcome.hops] == [
        (start, 302),
        (site.url("/page"), 200),
    ]
    assert site.hits("/page") == 1
    assert site.hits("/robots.txt") == 1  # same origin: robots.txt is not asked twice


def test_redirect_to_denied_domain_is_refused_by_policy(site: Site) -> None:
    start = redirect_to(site, "http://denied.example/page")
    outcome = fetcher().fetch(start, policy)

    assert outcome.status is FetchStatus.REFUSED_POLICY
    assert "deny_domains contains denied.example" in outcome.reason
    assert outcome.hops[-1] == FetchHop(
        "http://denied.example/page",
        None,
        "not requested: source policy: deny_domains contains denied.example",
    )
    # The last response received was the redirect itself.
    assert (outcome.final_url, outcome.http_status) == (start, 302)


def test_redirect_to_denied_path_is_refused_by_policy(site: Site) -> None:
    outcome = fetcher().fetch(redirect_to(site, "/denied/page"), policy)
    assert outcome.status is FetchStatus.REFUSED_POLICY
    assert site.hits("/denied/page") == 0


def test_redirect_target_obeys_robots_txt_of_its_own_origin(
    make_site: Callable[..., Site],
) -> None:
    first = make_site()
    second = make_site(robots=500)

    outcome = fetcher().fetch(redirect_to(first, second.url("/page")), policy)

    assert outcome.status is FetchStatus.REFUSED_ROBOTS
    assert second.requests == [("/robots.txt", UA)]  # its robots.txt was asked, the page not


def test_redirect_loop_stops_without_asking_any_url_twice(site: Site) -> None:
    outcome = fetcher().fetch(site.url("/loop/a"), policy)

    assert outcome.status is FetchStatus.TOO_MANY_REDIRECTS
    assert "loop" in outcome.reason
    assert site.hits("/loop/a") == 1
    assert site.hits("/loop/b") == 1
    assert [hop.status for hop in outcome.hops] == [302, 302, None]


def test_redirect_chain_longer_than_the_limit_is_refused(site: Site) -> None:
    outcome = fetcher(max_redirects=3).fetch(site.url("/chain/0"), policy)

    assert outcome.status is FetchStatus.TOO_MANY_REDIRECTS
    assert [site.hits(f"/chain/{n}") for n in range(5)] == [1, 1, 1, 1, 0]
    assert [hop.status for hop in outcome.hops] == [302, 302, 302, 302, None]
    assert outcome.hops[-1].url == site.url("/chain/4")


def test_redirect_without_location_is_an_http_error(site: Site) -> None:
    outcome = fetcher().fetch(site.url("/no-location"), policy)
    assert outcome.status is FetchStatus.HTTP_ERROR
    assert outcome.http_status == 302


# --- errors and limits -------------------------------------------------------------------------


def test_404_is_an_http_error_asked_once(site: Site) -> None:
    outcome = fetcher().fetch(site.url("/missing"), policy)

    assert outcome.status is FetchStatus.HTTP_ERROR
    assert outcome.http_status == 404
    assert outcome.sha256 is None
    assert "HTTP 404" in outcome.reason
    assert "expected a 2xx" in outcome.reason
    assert site.hits("/missing") == 1


def test_slow_endpoint_times_out_without_retry(site: Site) -> None:
    started = time.monotonic()
    outcome = fetcher(timeout_s=0.5).fetch(site.url("/slow"), policy)

    assert outcome.status is FetchStatus.NETWORK_ERROR
    assert "timed out" in outcome.reason
    assert time.monotonic() - started < 2
    assert site.requests == [("/robots.txt", UA), ("/slow", UA)]


def test_a_body_dripping_in_slowly_hits_the_total_budget(site: Site) -> None:
    started = time.monotonic()
    outcome = fetcher(timeout_s=0.1).fetch(site.url("/drip"), policy)

    assert outcome.status is FetchStatus.NETWORK_ERROR
    assert time.monotonic() - started < 2
    assert site.hits("/drip") == 1


@pytest.mark.parametrize("path", ["/big", "/big-unsized"])
def test_body_over_max_bytes_is_refused(site: Site, path: str) -> None:
    outcome = fetcher(max_bytes=1000).fetch(site.url(path), policy)

    assert outcome.status is FetchStatus.HTTP_ERROR
    assert outcome.http_status == 200
    assert outcome.sha256 is None
    assert "expected at most 1000 bytes" in outcome.reason
    assert site.hits(path) == 1


def test_connection_refused_is_a_network_error() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outcome = fetcher().fetch(f"http://127.0.0.1:{port}/page", policy)
    assert outcome.status is FetchStatus.REFUSED_ROBOTS  # robots.txt is unreadable: no
    assert "connection was refused" in outcome.reason


# --- policy and address guard -----------------------------------------------------------------


def test_policy_is_asked_before_any_request(site: Site) -> None:
    asked: list[str] = []

    def deny_all(url: str) -> str | None:
        asked.append(url)
        return "steward paused scouting"

    outcome = fetcher().fetch(site.url("/page"), deny_all)

    assert outcome.status is FetchStatus.REFUSED_POLICY
    assert "steward paused scouting" in outcome.reason
    assert asked == [site.url("/page")]
    assert site.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/file",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://trusted.example@127.0.0.1/page",
        "http:///nohost",
        "http://127.0.0.1:99999/page",
        "http://127.0.0.1/a page",
    ],
)
def test_urls_that_are_not_plain_http_are_refused(url: str) -> None:
    outcome = fetcher().fetch(url, policy)
    assert outcome.status is FetchStatus.REFUSED_POLICY
    assert outcome.hops[0].status is None


def test_loopback_is_refused_unless_private_addresses_are_allowed(site: Site) -> None:
    outcome = fetcher(allow_private_addresses=False).fetch(site.url("/page"), policy)

    assert outcome.status is FetchStatus.REFUSED_ADDRESS
    assert "127.0.0.1 (loopback)" in outcome.reason
    assert site.requests == []  # not even robots.txt


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("http://localhost/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://100.64.0.1/", "not globally routable"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[64:ff9b::a01:203]/", "private"),
    ],
)
def test_non_public_addresses_are_refused_before_connecting(url: str, label: str) -> None:
    # The autouse guard would fail this test on any connect to a non-loopback address.
    outcome = fetcher(allow_private_addresses=False).fetch(url, policy)
    assert outcome.status is FetchStatus.REFUSED_ADDRESS
    assert f"({label})" in outcome.reason


# --- https --------------------------------------------------------------------------------------


def _self_signed() -> tuple[ssl.SSLContext, bytes]:
    """A server TLS context for "localhost" and the PEM of its certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as tmp:  # load_cert_chain reads only from files
        cert_file, key_file = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
        cert_file.write_bytes(cert_pem)
        key_file.write_bytes(key_pem)
        server.load_cert_chain(cert_file, key_file)
    return server, cert_pem


def test_https_with_an_untrusted_certificate_is_a_network_error(
    make_site: Callable[..., Site],
) -> None:
    server_tls, _ = _self_signed()
    site = make_site(tls=server_tls)

    outcome = fetcher().fetch(site.url("/page"), policy)

    # robots.txt is asked first over the same TLS, cannot be read, and unreadable means no.
    assert outcome.status is FetchStatus.REFUSED_ROBOTS
    assert "certificate verification failed" in outcome.reason
    assert site.requests == []  # no request was ever sent over an unverified connection


def test_https_to_a_trusted_certificate_connects_by_host_name(
    make_site: Callable[..., Site],
) -> None:
    server_tls, cert_pem = _self_signed()
    site = make_site(tls=server_tls)
    live = fetcher()
    # Tests only: trust the throwaway certificate instead of the system store.
    live._tls = ssl.create_default_context(cadata=cert_pem.decode())

    outcome = live.fetch(site.url("/page"), policy)

    assert outcome.status is FetchStatus.OK
    assert outcome.sha256 == hashlib.sha256(PAGE).hexdigest()
    assert site.requests == [("/robots.txt", UA), ("/page", UA)]


# --- offline and data types ----------------------------------------------------------------------


def test_offline_fetcher_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("offline fetcher used the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)

    outcome = OfflineFetcher().fetch("https://example.org/paper.pdf", policy)

    assert outcome.status is FetchStatus.NOT_CHECKED
    assert outcome.reason == "offline mode: URL not checked"
    assert not outcome.resolved
    assert outcome.hops == ()
    assert outcome.sha256 is None


def test_fetch_outcome_cannot_claim_success_without_a_hash() -> None:
    common: dict[str, Any] = {
        "requested_url": "https://example.org/",
        "final_url": "https://example.org/",
        "http_status": 200,
        "size": 3,
        "media_type": "text/plain",
        "hops": (),
        "reason": "observed",
    }
    with pytest.raises(ValueError, match="sha256"):
        FetchOutcome(status=FetchStatus.OK, sha256=None, **common)
    with pytest.raises(ValueError, match="only an OK"):
        FetchOutcome(status=FetchStatus.HTTP_ERROR, sha256="0" * 64, **common)
    assert str(FetchStatus.REFUSED_ROBOTS) == "refused-robots"


def test_user_agent_must_be_one_plain_header_value() -> None:
    with pytest.raises(ValueError, match="user_agent"):
        HttpFetcher(user_agent="Bot/1\r\nX-Extra: 1")

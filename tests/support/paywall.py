"""A paywalled site on loopback: a real HTTP server (a thread of the test process) that answers
every document with HTTP 402 Payment Required, as a news site behind a subscription does, and
/robots.txt with 404 (no rules, so fetching is allowed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from verifier.constants import SERVE_POLL_S


class _Paywall(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = 404 if self.path.startswith("/robots.txt") else 402
        body = b"Subscribe to read this article.\n"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # a quiet test run
        return


@contextmanager
def paywalled_site() -> Iterator[str]:
    """The site's base URL (http://127.0.0.1:PORT), served until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Paywall)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SERVE_POLL_S}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

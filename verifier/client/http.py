"""The service's client (used by `rw ... --server URL` and scripts/load.py): plain HTTP/1.1, the token
only in `Authorization: Bearer`, and patience while the service is down.

A request that cannot reach the service (refused, reset, a proxy's 502/503/504) is retried with
exponential backoff and jitter until `retry_for_s` has passed (design §11: "the skill retries with
backoff"). A submission carries one Idempotency-Key for all its retries, so a retry after a lost
answer returns the verdict of the attempt that landed instead of submitting again; the service
extends leaf expiry by its recorded outage window, so the wait does not cost the agent its leaf.
"""

from __future__ import annotations

import http.client
import json
import random
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from verifier.client.loopback import is_loopback
from verifier.constants import REQUEST_TIMEOUT_S, SUBMIT_RETRY_S
from verifier.errors import FormatError, Unreachable

RETRY_STATUSES = frozenset({502, 503, 504})
TRANSIENT = (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine, socket.timeout,
             TimeoutError)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def error_code(self) -> str | None:
        error = self.body.get("error")
        return str(error.get("code")) if isinstance(error, dict) else None

    @property
    def error_message(self) -> str:
        error = self.body.get("error")
        return str(error.get("message")) if isinstance(error, dict) else json.dumps(self.body)[:500]


def check_server_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a service URL; refuses credentials in it and clear text off this machine."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FormatError(f"server URL {url!r}: expected http://host:port or https://host")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise FormatError("the server URL must not carry credentials, a query or a fragment; the token goes in "
                          "RW_TOKEN and travels as `Authorization: Bearer`")
    if parts.path not in ("", "/"):
        raise FormatError(f"server URL {url!r}: give the service root, without a path")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise FormatError(f"refusing clear-text http to {parts.hostname}: a bearer token must not cross the network "
                          "unencrypted; use https (the service listens on loopback behind a TLS proxy)")
    return parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def encode_form(parts: dict[str, bytes]) -> tuple[bytes, str]:
    """The bundle form (docs/api.md) as (body, Content-Type)."""
    boundary = "rw-" + secrets.token_hex(16)
    while any(boundary.encode() in data for data in parts.values()):
        boundary = "rw-" + secrets.token_hex(16)
    chunks: list[bytes] = []
    for name, data in parts.items():
        chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}"\r\n'
                      "Content-Type: application/octet-stream\r\n\r\n".encode())
        chunks.append(data)
        chunks.append(b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


class Client:
    def __init__(self, url: str, token: str | None = None, *, timeout_s: float = REQUEST_TIMEOUT_S,
                 retry_for_s: float = SUBMIT_RETRY_S,
                 on_retry: Callable[[str, float], None] | None = None, keep_alive: bool = False) -> None:
        self.scheme, self.host, self.port = check_server_url(url)
        self.keep_alive = keep_alive  # keep one connection open between requests (load generators)
        self.token = token
        self.timeout_s = timeout_s
        self.retry_for_s = retry_for_s
        self.on_retry = on_retry
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self.host, self.port, timeout=self.timeout_s)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def once(self, method: str, path: str, *, body: bytes | None = None, content_type: str | None = None,
             headers: dict[str, str] | None = None, auth: bool = True) -> Reply:
        """One request on the kept-alive connection (reconnecting if the service closed it)."""
        sent = dict(headers or {})
        if auth and self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        if content_type is not None:
            sent["Content-Type"] = content_type
        conn = self._connection()
        try:
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            data = response.read()
        except BaseException:
            self.close()
            raise
        if not self.keep_alive or response.getheader("connection", "").lower() == "close":
            self.close()
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = {"error": {"code": "not_json", "message": data[:200].decode("utf-8", "replace")}}
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                     parsed if isinstance(parsed, dict) else {"value": parsed})

    def request(self, method: str, path: str, **kwargs: Any) -> Reply:
        """`once`, retried with backoff while the service is unreachable or busy with the same attempt
        (a write that lands carries an Idempotency-Key, so a retry after a lost answer is answered
        with the first one, never landed twice)."""
        started = time.monotonic()
        deadline = started + self.retry_for_s
        attempt = 0
        while True:
            problem: str
            retry_after: float | None = None
            try:
                reply = self.once(method, path, **kwargs)
            except TRANSIENT as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if reply.status in RETRY_STATUSES:
                    problem = f"HTTP {reply.status}"
                elif reply.status == 409 and reply.error_code == "in_progress":
                    problem = "the same submission is still running"
                    retry_after = float(reply.headers.get("retry-after", "1"))
                else:
                    return reply
            wait = retry_after if retry_after is not None else min(30.0, 0.5 * 2**attempt)
            wait *= random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not a secret
            if time.monotonic() + wait > deadline:
                # The time actually spent, not the window: the next wait would have overrun it.
                waited = time.monotonic() - started
                raise Unreachable(f"the verifier at {self.scheme}://{self.host}:{self.port} did not answer in "
                                  f"{waited:.1f} s of trying ({attempt + 1} attempt{'s' if attempt else ''}; the "
                                  f"next retry, in {wait:.1f} s, would pass the {self.retry_for_s:g} s retry window; "
                                  f"last: {problem})")
            if self.on_retry is not None:
                self.on_retry(problem, wait)
            time.sleep(wait)
            attempt += 1

    # the API ---------------------------------------------------------------------------------------

    def get(self, path: str, params: dict[str, Any] | None = None, *, auth: bool = True) -> Reply:
        query = f"?{urlencode(params)}" if params else ""
        return self.request("GET", path + query, auth=auth)

    def post_json(self, path: str, value: dict[str, Any]) -> Reply:
        return self.request("POST", path, body=json.dumps(value).encode(), content_type="application/json")

    def submit(self, slug: str, leaf_id: str, bundle: dict[str, bytes], patch: bytes | None = None,
               *, key: str | None = None) -> Reply:
        parts = dict(bundle)
        if patch is not None and patch != bundle.get("patch.diff"):
            parts["patch"] = patch
        body, content_type = encode_form(parts)
        return self.request("POST", f"/projects/{quote(slug)}/leaves/{quote(leaf_id)}/submissions", body=body,
                            content_type=content_type,
                            headers={"Idempotency-Key": key or "rwk_" + secrets.token_hex(16)})

    def edit(self, slug: str, patch: bytes, bundle: dict[str, bytes] | None = None, *,
             base: str | None = None, key: str | None = None) -> Reply:
        """A person's edit (POST /projects/SLUG/edits): the patch, a trace bundle's files if any,
        and the commit it was made against (default: the tip). One Idempotency-Key for all its
        retries, as a submission has: a retry after a lost answer gets the first one."""
        body, content_type = encode_form({**(bundle or {}), "patch": patch})
        query = f"?{urlencode({'base': base})}" if base is not None else ""
        return self.request("POST", f"/projects/{quote(slug, safe='')}/edits{query}", body=body,
                            content_type=content_type,
                            headers={"Idempotency-Key": key or "rwk_" + secrets.token_hex(16)})

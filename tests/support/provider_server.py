"""A loopback HTTP server that speaks a model provider's wire format, for the provider backends' tests.

It plays a script of replies in order (the last one repeats): a status, a JSON body, headers, or a
delay before answering (to make the client time out). Every request it gets is kept (method, path,
headers, parsed JSON body) so a test asserts exactly what the real SDK client sent. The bodies are
shaped like the providers' own (an Anthropic Message with a tool_use block; an OpenAI
ChatCompletion), so the SDKs parse them as they would the real thing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from verifier.constants import SERVE_POLL_S


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Mapping[str, Any] | str = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Script:
    replies: list[Reply]
    seen: list[Seen] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)

    def next(self) -> Reply:
        index = min(len(self.seen) - 1, len(self.replies) - 1)
        return self.replies[index]


def anthropic_message(answer: Mapping[str, Any] | None, *, text: str = "", model: str = "claude-sonnet-4-5",
                      input_tokens: int = 1000, output_tokens: int = 200) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    if answer is not None:
        content.append({"type": "tool_use", "id": "toolu_01", "name": "answer", "input": dict(answer)})
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if answer is not None else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}


def openai_completion(content: str, *, model: str = "gpt-4.1", prompt_tokens: int = 1000,
                      completion_tokens: int = 200) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1764590400, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def error_body(provider: str, message: str) -> dict[str, Any]:
    if provider == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    script: Script
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        self.script.seen.append(Seen("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                     json.loads(raw) if raw else {}))
        reply = self.script.next()
        if reply.delay_s and self.script.released.wait(reply.delay_s):
            return  # the test is over: answer nothing
        data = reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def log_message(self, *_args: object) -> None:
        pass


@contextmanager
def provider_server(replies: list[Reply]) -> Iterator[tuple[str, Script]]:
    """Serve `replies` on 127.0.0.1; yields the base URL and the script (with what was seen)."""
    script = Script(list(replies))
    handler = type("Handler", (_Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SERVE_POLL_S}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        script.released.set()
        server.shutdown()
        server.server_close()
        thread.join()

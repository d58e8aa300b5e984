"""The scanner sees through disguises (Unicode look-alikes and invisible characters, two layers of
encoding, URL-safe base64, hex, gzip) and catches credentials that only their name gives away,
while an honest trace full of hashes, commit ids, UUIDs and base64 thumbnails stays quiet."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random
import uuid

import pytest

from tests.support.hostile import FAKE_AWS_KEY
from verifier.secrets import scan_bytes
from verifier.secrets.keywords import KIND as KEYWORD

AWS = "AWS Access Key"
LINE = f"export AWS_ACCESS_KEY_ID={FAKE_AWS_KEY}\n"


def _kinds(data: bytes) -> set[str]:
    return {hit.kind for hit in scan_bytes(data, name="events.jsonl")}


def _event(content: str) -> bytes:
    return json.dumps({"ts": "2026-11-30T12:00:00Z", "type": "tool_result", "content": content},
                      ensure_ascii=False).encode()


@pytest.mark.parametrize("mark", ["\u200b", "\u00ad", "\u200d", "\u2060", "\ufeff", "\u180e", "\ufe0f"])
def test_an_invisible_character_inside_a_key_is_seen_through(mark: str) -> None:
    disguised = FAKE_AWS_KEY[:9] + mark + FAKE_AWS_KEY[9:]
    assert AWS in _kinds(_event(f"AWS_ACCESS_KEY_ID={disguised}"))


def test_full_width_letters_in_a_key_are_seen_through() -> None:
    disguised = "".join(chr(ord(ch) + 0xFEE0) if index % 3 == 0 else ch for index, ch in enumerate(FAKE_AWS_KEY))
    hits = scan_bytes(_event(f"key id {disguised} ok"), name="e")
    assert [(hit.kind, hit.encoding) for hit in hits if hit.kind == AWS] == [(AWS, "unicode")]


@pytest.mark.parametrize("wrap", [
    pytest.param(lambda raw: base64.b64encode(base64.b64encode(raw)), id="base64-of-base64"),
    pytest.param(lambda raw: base64.b64encode(json.dumps({"env": raw.decode()}).encode()), id="base64-of-json"),
    pytest.param(lambda raw: base64.b64encode(gzip.compress(raw, mtime=0)), id="gzip-then-base64"),
    pytest.param(lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"="), id="url-safe-base64"),
    pytest.param(lambda raw: raw.hex().encode(), id="hex"),
    pytest.param(lambda raw: ('{"env": "' + "".join(f"\\u{ord(c):04x}" for c in raw.decode()) + '"}').encode(),
                 id="escapes-inside-escaped-json"),
])
def test_two_layers_of_encoding_are_seen_through(wrap: object) -> None:
    assert callable(wrap)
    blob = wrap(LINE.encode())
    assert AWS in _kinds(_event("$ cat blob\n" + blob.decode()))


@pytest.mark.parametrize("text", [
    'password = "hunter2hunter2"', '{"password": "s3cr3t-Pa55w0rd"}', "DB_PASSWORD=hunter2hunter2",
    "[database]\npassword = Tr0ub4dor-3x", "api_key: Zk3j5LmP9qR2wT", "X-Api-Key: Zk3j5LmP9qR2wT",
    '"client_secret": "aB3dE5gH7jK9"', "authToken = 'Qw3rTy7uI9oP'",
])
def test_credentials_only_their_name_gives_away_are_caught(text: str) -> None:
    assert KEYWORD in _kinds(_event(text))


@pytest.mark.parametrize("text", [
    'password = os.environ["DB_PASSWORD"]', "token = self.token_value", "password: str | None = None",
    '"password_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "secret = 3f786850e387550fdab836ed7e6dc881de23001b", '"token": "123e4567-e89b-12d3-a456-426614174000"',
    'API_KEY="${API_KEY}"', 'password = "********"', '"max_tokens": 4096', "monkey = 'Zk3j5LmP9qR2'",
    "bypass = 'Zk3j5LmP9qR2'", 'password = "your-password-here"',
])
def test_keyword_detector_is_quiet_on_identifiers_and_references(text: str) -> None:
    assert _kinds(_event(text)) == set()


def test_an_honest_trace_full_of_identifiers_has_no_hit() -> None:
    rng = random.Random(5)
    lines = []
    for index in range(400):
        raw = bytes(rng.getrandbits(8) for _ in range(600))
        digest = hashlib.sha256(raw).hexdigest()
        commit = hashlib.sha1(raw).hexdigest()
        lines.append(_event(
            f"commit {commit}\nsha256 {digest}  file_{index}.py\nrequest_id={uuid.UUID(int=rng.getrandbits(128))}\n"
            f"thumbnail: data:image/png;base64,{base64.b64encode(raw).decode()}\n"
            f"url-safe: {base64.urlsafe_b64encode(raw[:90]).decode()}\n"
            f"hex dump {raw[:64].hex()}\nThe caf\u00e9\u2019s r\u00e9sum\u00e9 \u2014 na\u00efve \u2026 \u00bd done\n"
            f"def check(password: str, token: str | None = None) -> bool:\n    return verify_token(token)\n"))
    assert scan_bytes(b"\n".join(lines), name="events.jsonl") == []

"""The service's pure parts: the bearer header, tokens in URLs, Host and Origin, the bundle form and
its caps, the client's URL rules, and the trigger helpers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.client.http import check_server_url, encode_form
from verifier.constants import MAX_BUNDLE_BYTES
from verifier.errors import FormatError
from verifier.messages.triggers import best_kinds, credit_delta, finding_use
from verifier.service.auth import bearer_token, host_name, origin_allowed, token_in_url
from verifier.service.errors import ApiError
from verifier.service.limits import BundleForm, chunks, read_bundle_form

TOKEN = "rwt_" + "a" * 43


def refused(call: object, *args: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_bearer_header() -> None:
    assert bearer_token(f"Bearer {TOKEN}") == TOKEN
    assert bearer_token(f"  Bearer   {TOKEN}  ") == TOKEN
    assert refused(bearer_token, None).code == "no_token"
    assert refused(bearer_token, "").status == 401
    assert refused(bearer_token, f"Basic {TOKEN}").code == "bad_auth_scheme"
    assert refused(bearer_token, f"bearer {TOKEN} extra").code == "bad_auth_scheme"
    assert TOKEN not in refused(bearer_token, f"Token {TOKEN}").message


@pytest.mark.parametrize(("path", "query"), [
    ("/messages", f"access_token={TOKEN}".encode()), ("/messages", b"x=%72wt_abc"), (f"/projects/{TOKEN}", b""),
    ("/p", b"TOKEN=1"), ("/p", b"api_key=k"), ("/p", b"a=1&Authorization=Bearer+x"), ("/p", b"RWT_x=1"),
])
def test_credentials_in_urls_are_spotted(path: str, query: bytes) -> None:
    why = token_in_url(path, query)
    assert why is not None and TOKEN not in why


def test_ordinary_urls_pass() -> None:
    assert token_in_url("/projects/world-model-eval/leaves", b"state=open") is None
    assert token_in_url("/messages", b"after=3&limit=10") is None


def test_host_and_origin() -> None:
    names = frozenset({"127.0.0.1", "localhost", "::1"})
    assert host_name("127.0.0.1:8765") == "127.0.0.1"
    assert host_name("[::1]:8765") == "::1"
    assert host_name("LocalHost") == "localhost"
    assert host_name("evil.example/../x") is None and host_name(None) is None and host_name("a b") is None
    here = "127.0.0.1:8765"
    assert origin_allowed("http://127.0.0.1:8765", names, here) and origin_allowed("https://localhost", names,
                                                                                    "localhost")
    assert origin_allowed("http://[::1]:8765", names, "[::1]:8765")
    assert not origin_allowed("https://evil.example", names, here) and not origin_allowed("null", names, here)
    assert not origin_allowed("file://localhost", names, "localhost")
    # The same origin is this host and port: another port, another name or a look-alike is not.
    for other in ("http://127.0.0.1:9999", "http://127.0.0.1", "http://localhost:8765", "http://127.0.0.1:8765.evil.com",
                  "http://127.0.0.1:8765/path", "http://user@127.0.0.1:8765"):
        assert not origin_allowed(other, names, here), other
    assert not origin_allowed("http://127.0.0.1:8765", names, None)


async def _stream(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def parse(body: bytes, content_type: str, *, split: int = 7) -> tuple[dict[str, bytes], bytes | None]:
    headers = {"content-type": content_type}
    pieces = [body[i:i + split] for i in range(0, len(body), split)] or [b""]
    return asyncio.run(read_bundle_form(_stream(pieces), headers, idle_s=5, total_s=5))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["manifest.json", "events.jsonl", "patch.diff", "context.md", "patch"]),
                       st.binary(max_size=300)), st.integers(min_value=1, max_value=64))
def test_the_form_round_trips_in_any_chunking(parts: dict[str, bytes], split: int) -> None:
    body, content_type = encode_form(parts)
    files, patch = parse(body, content_type, split=split)
    assert patch == parts.get("patch")
    assert files == {name: data for name, data in parts.items() if name != "patch"}


def test_bad_forms() -> None:
    body, content_type = encode_form({"manifest.json": b"{}"})
    with pytest.raises(ApiError, match="closing boundary"):
        parse(body[:-10], content_type)
    twice = body.replace(b"--\r\n", b"\r\n") + body.split(b"\r\n", 1)[1]
    assert refused(parse, twice, content_type).code == "bad_form"
    stray, stray_type = encode_form({"notes.txt": b"x"})
    assert "unexpected form part 'notes.txt'" in refused(parse, stray, stray_type).message
    assert refused(parse, body, "application/json").status == 415
    assert refused(parse, body, "multipart/form-data").code == "bad_form"


def test_the_bundle_cap_holds_while_streaming() -> None:
    form = BundleForm(b"b")
    form.feed(b'--b\r\nContent-Disposition: form-data; name="context.md"\r\n\r\n')
    chunk = b"x" * (1024 * 1024)
    with pytest.raises(ApiError) as caught:
        for _ in range(MAX_BUNDLE_BYTES // len(chunk) + 2):
            form.feed(chunk)
    assert caught.value.status == 413
    assert form.bundle_bytes <= MAX_BUNDLE_BYTES + len(chunk)


def test_stalled_and_oversize_bodies() -> None:
    async def stall() -> AsyncIterator[bytes]:
        yield b"x"
        await asyncio.sleep(5)
        yield b"y"

    async def drain(stream: AsyncIterator[bytes], cap: int) -> bytes:
        return b"".join([c async for c in chunks(stream, cap=cap, what="the body", idle_s=0.05, total_s=5)])

    assert asyncio.run(drain(_stream([b"ab", b"cd"]), 10)) == b"abcd"
    with pytest.raises(ApiError) as caught:
        asyncio.run(drain(stall(), 10))
    assert (caught.value.status, caught.value.code) == (408, "body_timeout")
    with pytest.raises(ApiError) as caught:
        asyncio.run(drain(_stream([b"abc", b"def"]), 4))
    assert caught.value.status == 413


def test_server_urls() -> None:
    assert check_server_url("http://127.0.0.1:8765") == ("http", "127.0.0.1", 8765)
    assert check_server_url("https://verifier.example.org") == ("https", "verifier.example.org", 443)
    for bad in (f"http://agent:{TOKEN}@127.0.0.1:8765", f"http://127.0.0.1:8765/?token={TOKEN}",
                "http://verifier.example.org", "ftp://127.0.0.1", "http://127.0.0.1:8765/api"):
        with pytest.raises(FormatError):
            check_server_url(bad)


def test_best_kind_and_score_readers() -> None:
    stats = {("a", "extract"): (3, 4), ("a", "link"): (1, 1), ("b", "extract"): (1, 2), ("b", "scout"): (1, 2),
             ("c", "review"): (0, 5)}
    assert best_kinds(stats) == {"a": "link", "b": "extract"}  # c never had one accepted
    shard = b'{"fnd_aa00000000000000": {"type": "finding", "operator": "op-a", "u": 1.25, "present": true},' \
            b' "fnd_aa00000000000001": {"type": "finding", "operator": "op-a", "u": 2.0, "present": false},' \
            b' "lnk_aa00000000000000": {"type": "link", "operator": "op-b", "u": 1.0, "present": true,' \
            b' "finding": "fnd_aa00000000000000", "hypothesis": "H1"}}'
    assert finding_use(shard) == {"fnd_aa00000000000000": 1.25}
    assert finding_use(b"not json") == {} and finding_use(None) == {}
    before = b'{"operators": [{"operator": "op-a", "link_credit": 1, "finding_credit": 0}]}'
    after = b'{"operators": [{"operator": "op-a", "link_credit": 2, "finding_credit": 0},' \
            b' {"operator": "op-b", "link_credit": -1}]}'
    assert credit_delta(before, after) == {"op-a": {"link_credit": 1.0}, "op-b": {"link_credit": -1.0}}

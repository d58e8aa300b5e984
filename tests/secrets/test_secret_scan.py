"""verifier.secrets.scan_bytes: every stock detector found plain, JSON-escaped and base64, at the
right offset; honest trace text (hashes, commit ids, uuids, base64 of prose) gives no hit; a hit
never carries the secret.

No secret-shaped literal appears in this file: every fake secret is generated from a seeded RNG.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import random
import uuid

import pytest
from detect_secrets.plugins.base import RegexBasedDetector
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.secret_cases import Case, make_cases
from verifier.secrets import SecretHit, scan_bytes
from verifier.secrets import scan as scan_module
from verifier.secrets.patterns import DETECTORS, KINDS, SKIPPED, value_group
from verifier.secrets.patterns import _regex_detector_classes as stock_detector_classes
from verifier.secrets.scan import FLOOD

CASES = make_cases(20261130)
CASE_IDS = [case.name for case in CASES]


def json_body(text: str) -> str:
    """text as the inside of a JSON string literal."""
    return json.dumps(text)[1:-1]


def event_line(body: str) -> bytes:
    """One events.jsonl line whose content string literal is `body` (already escaped)."""
    return f'{{"ts": "2026-11-30T12:00:00Z", "type": "tool_result", "content": "{body}"}}'.encode()


def hits_of(data: bytes) -> set[tuple[str, int, str]]:
    return {(hit.kind, hit.offset, hit.encoding) for hit in scan_bytes(data, name="events.jsonl")}


# ---- each kind, each encoding, exact offsets ------------------------------------------------


def test_cases_cover_every_detector_we_run() -> None:
    assert {case.kind for case in CASES} == KINDS


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_plain_secret_found_at_its_offset(case: Case) -> None:
    prefix = b"notes: see below\n"
    data = prefix + case.context.encode() + b"\nmore notes\n"
    assert (case.kind, len(prefix) + case.value_at, "plain") in hits_of(data)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_plain_secret_inside_a_json_event(case: Case) -> None:
    # As a runtime logs it: after a "\n" escape, with quotes written as \".
    before = json_body("$ cat deploy/.env\n" + case.context[: case.value_at])
    body = before + json_body(case.context[case.value_at :]) + json_body("\nexit 0")
    line = event_line(body)
    assert (case.kind, line.index(b'"content": "') + 12 + len(before), "plain") in hits_of(line)


def u_escape(text: str) -> str:
    """The first character and every third one written as \\u00XX; the rest JSON-escaped."""
    return "".join(f"\\u{ord(char):04x}" if i % 3 == 0 else json_body(char)
                   for i, char in enumerate(text))


def escaped_encoding(case: Case) -> str:
    """A password in a URL may hold any byte but a delimiter, so the stock pattern matches its
    \\u-escaped text as it is: that hit, same kind and offset, is reported as plain."""
    return "plain" if case.kind == "Basic Auth Credentials" else "json-escape"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_json_escaped_secret_found_at_its_escape(case: Case) -> None:
    before = json_body("$ cat deploy/.env\n" + case.context[: case.value_at])
    hidden = u_escape(case.value)
    line = event_line(before + hidden + json_body(case.context[case.value_at + len(case.value):]))
    at = line.index(hidden.encode())
    assert line[at : at + 2] == b"\\u"
    assert (case.kind, at, escaped_encoding(case)) in hits_of(line)


def b64_lines(text: str, width: int | None) -> list[str]:
    blob = base64.b64encode(text.encode()).decode()
    return [blob] if width is None else [blob[i : i + width] for i in range(0, len(blob), width)]


@pytest.mark.parametrize("width", [None, 76, 64], ids=["one-line", "wrapped76", "wrapped64"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_base64_secret_found_at_its_quad(case: Case, width: int | None) -> None:
    payload = f"# deploy env\n{case.context}\n"
    lines = b64_lines(payload, width)
    line = event_line("$ base64 deploy/.env\\n" + "\\n".join(lines) + "\\n")
    blob_at = line.index(lines[0].encode())
    # The quad holding the value's first byte, counted across the wrapped lines.
    quad = payload.index(case.value) // 3
    per_line = (width or 1 << 30) // 4
    expected = blob_at + (quad // per_line) * ((width or 0) + 2) + 4 * (quad % per_line)
    assert (case.kind, expected, "base64") in hits_of(line)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_base64_inside_escaped_json_found(case: Case) -> None:
    # A PHP-style encoder writes every "/" of the blob as "\/", splitting the base64 run.
    blob = base64.b64encode(f"{case.context}\n".encode()).decode()
    line = event_line("blob: " + blob.replace("/", "\\/") + " end")
    assert any(kind == case.kind and encoding == "base64" for kind, _, encoding in hits_of(line))


def test_padded_base64_glued_to_a_path_is_aligned_by_its_padding() -> None:
    case = next(c for c in CASES if c.name == "aws_key_id")
    payload = case.context + "\n"
    while len(payload) % 3 == 0:
        payload += "x"  # so that the blob ends in padding
    blob = base64.b64encode(payload.encode()).decode()
    assert blob.endswith("=")
    data = f"GET /v1/secrets/{blob} 200\n".encode()
    start = data.index(blob.encode())
    assert (case.kind, start + 4 * (payload.index(case.value) // 3), "base64") in hits_of(data)


# ---- honest traces --------------------------------------------------------------------------


def honest_trace(seed: int) -> bytes:
    """A small trace full of what stock's heuristics flag but is no secret: quoted sha256 hex,
    commit ids, uuids, base64 of prose and of random bytes, public IPs, `password` in code."""
    rng = random.Random(seed)
    prose = ("We checked the patch against the frozen verifier \u2014 the hash matched, the "
             "commit is pinned, and the API key is read from the environment, never logged. "
             "Keep the token out of the trace; pass tests: 12 passed.")
    lines: list[str] = []
    for i in range(40):
        sha = hashlib.sha256(f"file-{seed}-{i}".encode()).hexdigest()
        commit = hashlib.sha1(f"commit-{seed}-{i}".encode()).hexdigest()
        text_b64 = base64.encodebytes((prose * 2).encode()).decode()
        content = {
            0: prose,
            1: f"{sha}  verifier/secrets/scan.py\n{sha[::-1]}  tests/secrets/test_secret_scan.py",
            2: f"commit {commit}\nAuthor: eun-ji <eun-ji@example.org>\n\n    fix offsets",
            3: json.dumps({"id": str(random.Random(i).getrandbits(128)), "sha256": sha,
                           "request_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                           "html": "<div class=\"ok\">&amp;</div>"}, indent=2),
            4: f"$ base64 docs/notes.md\n{text_b64}",
            5: "data:image/png;base64," + base64.b64encode(rng.randbytes(600)).decode(),
            6: "\x1b[32mPASSED\x1b[0m tests/secrets/test_secret_scan.py::test_offsets [100%]",
            7: "Downloading https://files.pythonhosted.org/packages/ab/cd/"
               f"{sha[:60]}/pydantic-2.9.2-py3-none-any.whl (434 kB)\n"
               "Connecting to 151.101.1.63:443... connected.",
            8: "api_key = os.environ[\"API_KEY\"]\npassword: str | None = None\n"
               f"EXPECTED = \"{sha}\"\nkey = {{\"rev\": \"{commit}\"}}",
            9: f"docker: ghcr.io/acme/verifier@sha256:{sha} Up 3 minutes (container {sha[:12]})",
        }[i % 10]
        line = json.dumps({"ts": "2026-11-30T12:00:00Z", "type": "tool_result",
                           "content": content}, ensure_ascii=i % 3 != 0)
        if i % 7 == 0:  # a Go encoder's \u003c-style escapes
            line = line.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        if i % 11 == 0:  # a PHP encoder's \/
            line = line.replace("/", "\\/")
        lines.append(line)
    return ("\n".join(lines) + "\n").encode()


def test_honest_trace_has_no_hits() -> None:
    for seed in range(3):
        assert scan_bytes(honest_trace(seed), name="events.jsonl") == []


def test_empty_and_tiny_inputs() -> None:
    assert scan_bytes(b"", name="patch.diff") == []
    assert scan_bytes(b"\\", name="patch.diff") == []
    assert scan_bytes(b"\\u00", name="patch.diff") == []
    assert scan_bytes(b"=" * 30, name="patch.diff") == []


# ---- what a hit carries ---------------------------------------------------------------------


def test_hit_carries_kind_file_offset_encoding_and_never_the_secret() -> None:
    assert [field.name for field in dataclasses.fields(SecretHit)] == [
        "kind", "file", "offset", "encoding"]
    data = b"\n".join(case.context.encode() for case in CASES) + b"\n"
    hits = scan_bytes(data, name="context.md")
    assert len(hits) >= len(CASES)
    for hit in hits:
        assert hit.file == "context.md"
        assert hit.encoding in ("plain", "json-escape", "base64")
        text = repr(hit) + str(hit)
        for case in CASES:
            assert case.value not in text
            assert case.value[-12:] not in text


def test_hits_are_ordered_and_deterministic() -> None:
    data = b"\n".join(case.context.encode() for case in reversed(CASES)) + b"\n"
    first = scan_bytes(data, name="x")
    assert first == scan_bytes(data, name="x")
    assert first == sorted(first, key=lambda hit: (hit.offset, hit.kind))
    assert len({(hit.kind, hit.offset) for hit in first}) == len(first)


def test_one_long_line() -> None:
    # A 600 KB line full of triggers (detect-secrets is quadratic on such lines): the secret at
    # its end is still seen.
    case = next(c for c in CASES if c.name == "github")
    filler = " ".join(f"https://example.org/{i} key {i}\\n" for i in range(20_000))
    line = event_line(filler + " " + json_body(case.context))
    assert (case.kind, line.index(case.value.encode()), "plain") in hits_of(line)


def test_a_flood_of_candidates_fails_closed_fast() -> None:
    # Every "eyJ" starts a JWT candidate that runs to the end of the line: checking each would
    # take quadratic time, so the scan gives up within its work budget and reports the flood.
    hits = scan_bytes(b"eyJ" * 100_000 + b"\n", name="events.jsonl")
    assert [(hit.kind, hit.encoding) for hit in hits] == [("JSON Web Token" + FLOOD, "plain")]


def test_honest_trace_stays_far_inside_the_work_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # With no floor, the budget is WORK_PER_BYTE per byte; an honest trace needs well under 1.
    monkeypatch.setattr(scan_module, "WORK_FLOOR", 0)
    monkeypatch.setattr(scan_module, "WORK_PER_BYTE", 1)
    assert scan_bytes(honest_trace(1), name="events.jsonl") == []


# ---- the detectors come from detect-secrets -------------------------------------------------


def test_every_stock_regex_detector_runs_unless_skipped() -> None:
    stock = {cls.__name__: cls for cls in stock_detector_classes()}
    assert all(issubclass(cls, RegexBasedDetector) for cls in stock.values())
    assert set(SKIPPED) <= set(stock)
    assert {d.kind for d in DETECTORS} == {
        str(cls.secret_type) for name, cls in stock.items() if name not in SKIPPED}
    # The patterns are detect-secrets' own, recompiled for bytes.
    for cls in stock.values():
        if cls.__name__ in SKIPPED:
            continue
        ours = next(d for d in DETECTORS if d.kind == cls.secret_type)
        assert [p.pattern.decode() for p in ours.patterns] == [p.pattern for p in cls.denylist]


@pytest.mark.parametrize(("pattern", "group"), [
    (r"(ghp|gho)_[A-Za-z0-9_]{36}", 0),  # a leading prefix group: the token is the secret
    (r"glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\-]{20,50}(?!\w)", 0),  # an optional part
    (r"://[^:/\?\#\[\]@\s]+:([^:/\?\#\[\]@\s]+)@", 1),  # the password
    (r"(?:(?<=\W)|(?<=^))(?:\[|)key(?: *)(?:=|:)(?: *)([a-z]{24})", 1),
    (r"AKIA[0-9A-Z]{16}", 0),
    (r"[(]x(y)", 1),  # a parenthesis inside a class is not a group
])
def test_value_group(pattern: str, group: int) -> None:
    assert value_group(pattern) == group


# ---- properties -----------------------------------------------------------------------------

# No "key", "pass", "pwd" or "token" here: such a keyword right before a 44-character token is
# exactly IBM Cloud IAM's pattern, and stock flags it too.
WORDS = ("the", "patch", "hash", "commit", "verdict", "source", "quote", "offset", "file",
         "leaf", "ledger", "frozen", "checked", "matches", "release", "notes", "and", "of")
honest_token = st.one_of(
    st.binary(min_size=1, max_size=64).map(lambda b: hashlib.sha256(b).hexdigest()),
    st.binary(min_size=20, max_size=20).map(bytes.hex),  # a commit id
    st.uuids().map(str),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(
        lambda words: base64.b64encode(" ".join(words).encode()).decode()),
    st.sampled_from(WORDS),
    st.integers(min_value=0, max_value=10**12).map(str),
)
separator = st.sampled_from((" ", "\n", "  ", ": ", ", ", "\\n", '"', "/"))
honest_text = st.lists(st.tuples(honest_token, separator), max_size=25).map(
    lambda pairs: "".join(token + sep for token, sep in pairs))


@settings(max_examples=100, deadline=None)
@given(text=honest_text)
def test_honest_text_never_hits(text: str) -> None:
    assert scan_bytes(text.encode(), name="events.jsonl") == []
    assert scan_bytes(event_line(json_body(text)), name="events.jsonl") == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), text=honest_text, cut=st.floats(0, 1),
       encoding=st.sampled_from(("plain", "json-escape", "base64")))
def test_secret_inserted_anywhere_is_found_at_its_offset(case: Case, text: str, cut: float,
                                                         encoding: str) -> None:
    at = int(len(text) * cut)
    head, tail = text[:at] + " ", " " + text[at:]
    if encoding == "plain":
        data = (head + case.context + tail).encode()
        expected = len(head.encode()) + case.value_at
    elif encoding == "json-escape":
        hidden = u_escape(case.value)
        body = (json_body(head + case.context[: case.value_at]) + hidden
                + json_body(case.context[case.value_at + len(case.value) :] + tail))
        data = event_line(body)
        expected = data.index(hidden.encode())
        encoding = escaped_encoding(case)
    else:
        blob = base64.b64encode(f"{case.context}\n".encode()).decode()
        data = (head + blob + tail).encode()
        expected = len(head.encode()) + 4 * (case.value_at // 3)
    assert (case.kind, expected, encoding) in hits_of(data)


# Every stock pattern, for strings generated from the pattern itself: proves each trigger is
# implied by every match (the JWT detector adds a JSON check that random strings fail).
STOCK_PATTERNS = [
    (detector.kind, pattern)
    for detector in DETECTORS if detector.validate is None
    for pattern in detector.patterns
]


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_stock_match_is_found(data: st.DataObject) -> None:
    kind, pattern = data.draw(st.sampled_from(STOCK_PATTERNS))
    sample = data.draw(st.from_regex(pattern, fullmatch=True))
    # detect-secrets reads one line at a time, so a match never holds a line break.
    assume(b"\n" not in sample and b"\r" not in sample and len(sample) < 2000)
    document = b"first line\n" + sample + b"\nlast line\n"
    assume(pattern.search(document) is not None)
    assert kind in {hit.kind for hit in scan_bytes(document, name="x")}

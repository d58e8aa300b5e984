"""The leak test decodes payloads before searching: a baseline, its canary or its ciphertext
under JSON escapes, percent-encoding, base64 or hex (two layers deep) is found; clean payloads,
however encoded, stay clean."""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime

import pytest

from verifier.seal import (
    Baseline,
    SealedBaseline,
    baseline_context,
    find_leaks,
    generate_keypair,
    labelled_needles,
    seal,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PRIVATE, PUBLIC = generate_keypair()


def _pair() -> tuple[SealedBaseline, Baseline]:
    value = Baseline.model_validate({
        "hypothesis_id": "H1", "revision": 1, "verdict": "true", "confidence": 0.72, "model": "frontier-1",
        "request_sha256": "a" * 64, "answer_sha256": "5e1f" * 16, "sealed_at": NOW,
    })
    return seal(PUBLIC, value, context=baseline_context("world-model-eval", "H1")), value


def _every_char_escaped(text: str) -> bytes:
    return "".join(f"\\u{ord(char):04x}" for char in text).encode()


def _percent_every_byte(data: bytes) -> bytes:
    return "".join(f"%{byte:02X}" for byte in data).encode()


SEALED, VALUE = _pair()
PLAIN = VALUE.canonical()
CIPHER = base64.b64decode(SEALED.ciphertext)


@pytest.mark.parametrize(("payload", "secret"), [
    pytest.param(base64.b64encode(json.dumps({"msg": PLAIN.decode()}).encode()), "plaintext", id="base64-of-json"),
    pytest.param(b'{"note": "' + _every_char_escaped(VALUE.canary) + b'"}', "canary", id="every-char-escaped"),
    pytest.param(_percent_every_byte(PLAIN.hex().encode()), "plaintext", id="percent-encoded-hex"),
    pytest.param(base64.b64encode(base64.b64encode(b"id=" + VALUE.canary.encode())), "canary", id="base64-twice"),
    pytest.param(json.dumps({"msg": PLAIN.decode()}).encode().hex().encode(), "plaintext", id="hex-of-json"),
    pytest.param(b"blob: " + base64.b64encode(CIPHER).hex().encode(), "ciphertext", id="hex-of-base64-ciphertext"),
])
def test_a_baseline_is_found_after_decoding(payload: bytes, secret: str) -> None:
    leaks = find_leaks({"payload": payload}, labelled_needles(SEALED, VALUE))
    assert secret in {leak.secret for leak in leaks}
    assert all("decoded" in leak.encoding or "JSON-unescaped" in leak.encoding for leak in leaks
               if leak.secret == secret) or secret == "ciphertext"


def test_clean_encoded_payloads_stay_clean() -> None:
    random = os.urandom(3000)
    clean = {"b64": base64.b64encode(random), "hex": random.hex().encode(),
             "json": json.dumps({"msg": base64.b64encode(random).decode()}).encode(),
             "percent": _percent_every_byte(b"leaf_id: extract-1\n")}
    assert find_leaks(clean, labelled_needles(SEALED, VALUE)) == []

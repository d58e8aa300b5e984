"""Sealed baselines: only the private key opens a seal, tampering is caught, seals are randomized
and fixed-length, key files are kept private, and the leak needles find a planted baseline."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from verifier.seal import (
    MODEL_MAX,
    PADDED_SIZE,
    Baseline,
    KeyFileError,
    SealContextError,
    SealedBaseline,
    SealFormatError,
    SealOpenError,
    baseline_context,
    find_leaks,
    generate_keypair,
    key_id,
    labelled_needles,
    leak_needles,
    read_private_key,
    read_public_key,
    seal,
    unseal,
    write_keypair,
)

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CONTEXT = baseline_context("world-model-eval", "H1")
PRIVATE, PUBLIC = generate_keypair()


def baseline(**overrides: object) -> Baseline:
    fields: dict[str, object] = {
        "hypothesis_id": "H1", "revision": 1, "verdict": "true", "confidence": 0.72, "model": "frontier-1",
        "request_sha256": "a" * 64, "answer_sha256": "5e1f" * 16, "sealed_at": NOW,
    }
    fields.update(overrides)
    return Baseline.model_validate(fields)


def test_round_trip_through_the_file_form() -> None:
    original = baseline()
    sealed = seal(PUBLIC, original, context=CONTEXT)
    again = SealedBaseline.from_json(sealed.to_json())
    assert again == sealed
    assert unseal(PRIVATE, again, context=CONTEXT) == original
    assert sealed.recipient == key_id(PUBLIC)
    # The file is plain JSON with exactly the documented fields.
    assert set(json.loads(sealed.to_json())) == {"version", "algorithm", "context", "recipient",
                                                  "ephemeral_public_key", "nonce", "ciphertext"}


def test_microseconds_are_dropped_so_round_trip_is_exact() -> None:
    original = baseline(sealed_at=datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC))
    assert original.sealed_at.microsecond == 0
    assert unseal(PRIVATE, seal(PUBLIC, original, context=CONTEXT), context=CONTEXT) == original


def test_two_seals_of_the_same_verdict_differ() -> None:
    value = baseline()
    first, second = seal(PUBLIC, value, context=CONTEXT), seal(PUBLIC, value, context=CONTEXT)
    assert first.ciphertext != second.ciphertext
    assert first.ephemeral_public_key != second.ephemeral_public_key
    assert first.nonce != second.nonce
    # And two baselines made separately carry different canaries.
    assert baseline().canary != baseline().canary


def test_sealed_length_does_not_depend_on_verdict_confidence_or_model() -> None:
    lengths = set()
    for verdict in ("true", "false"):
        for confidence in (0.0, 1.0, 0.5, 0.1234567890123, 2.2250738585072014e-308):
            for model in ("m", "frontier-1", "x" * MODEL_MAX):
                sealed = seal(PUBLIC, baseline(verdict=verdict, confidence=confidence, model=model), context=CONTEXT)
                lengths.add((len(sealed.to_json()), len(sealed.ciphertext)))
    assert len(lengths) == 1


def test_the_largest_baseline_fits_the_padding() -> None:
    largest = baseline(hypothesis_id="H999999", revision=999_999_999, verdict="false",
                       confidence=2.2250738585072014e-308, model="m" * MODEL_MAX)
    assert len(largest.canonical()) < 600 < PADDED_SIZE
    assert unseal(PRIVATE, seal(PUBLIC, largest, context=CONTEXT), context=CONTEXT) == largest


def test_a_model_name_past_the_bound_is_refused_not_sealed_longer() -> None:
    with pytest.raises(ValidationError):
        baseline(model="m" * (MODEL_MAX + 1))
    with pytest.raises(ValidationError):
        baseline(model="has space")


def test_wrong_key_fails() -> None:
    other_private, other_public = generate_keypair()
    sealed = seal(PUBLIC, baseline(), context=CONTEXT)
    with pytest.raises(SealOpenError, match="made for Resolver key"):
        unseal(other_private, sealed, context=CONTEXT)
    # Even with the recipient field rewritten to name the other key, authentication fails.
    forged = sealed.model_copy(update={"recipient": key_id(other_public)})
    with pytest.raises(SealOpenError, match="does not authenticate"):
        unseal(other_private, forged, context=CONTEXT)


def test_wrong_context_fails() -> None:
    sealed = seal(PUBLIC, baseline(), context=CONTEXT)
    with pytest.raises(SealContextError, match="H1"):
        unseal(PRIVATE, sealed, context=baseline_context("world-model-eval", "H2"))
    # Relabelled to claim the other context: the associated data no longer matches.
    moved = sealed.model_copy(update={"context": baseline_context("world-model-eval", "H2")})
    with pytest.raises(SealOpenError, match="does not authenticate"):
        unseal(PRIVATE, moved, context=baseline_context("world-model-eval", "H2"))


def _flip(text: str, index: int) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[index % len(raw)] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


@settings(max_examples=60, deadline=None)
@given(field=st.sampled_from(["ciphertext", "nonce", "ephemeral_public_key"]), index=st.integers(0, 2000))
def test_any_flipped_bit_fails(field: str, index: int) -> None:
    sealed = seal(PUBLIC, baseline(), context=CONTEXT)
    tampered = sealed.model_copy(update={field: _flip(getattr(sealed, field), index)})
    with pytest.raises(SealOpenError):
        unseal(PRIVATE, tampered, context=CONTEXT)


def test_malformed_files_are_format_errors() -> None:
    good = json.loads(seal(PUBLIC, baseline(), context=CONTEXT).to_json())
    cases: list[bytes] = [
        b"not json", b"[]",
        json.dumps({**good, "version": 2}).encode(),
        json.dumps({**good, "extra": 1}).encode(),
        json.dumps({**good, "nonce": "!!!"}).encode(),
        json.dumps({**good, "ciphertext": base64.b64encode(b"short").decode()}).encode(),
        json.dumps({k: v for k, v in good.items() if k != "nonce"}).encode(),
    ]
    for data in cases:
        with pytest.raises(SealFormatError):
            SealedBaseline.from_json(data)


def test_truncated_ciphertext_is_refused() -> None:
    sealed = seal(PUBLIC, baseline(), context=CONTEXT)
    short = base64.b64encode(base64.b64decode(sealed.ciphertext)[:-1]).decode()
    with pytest.raises(SealFormatError, match="ciphertext"):
        unseal(PRIVATE, sealed.model_copy(update={"ciphertext": short}), context=CONTEXT)


def test_the_public_key_cannot_open_a_seal() -> None:
    sealed = seal(PUBLIC, baseline(), context=CONTEXT)
    with pytest.raises(SealFormatError, match="private key"):
        unseal(PUBLIC, sealed, context=CONTEXT)


def test_a_process_holding_only_the_public_key_cannot_open_it(tmp_path: Path) -> None:
    """The verifier's position: the seal and the public key, nothing else, in another process."""
    sealed = seal(PUBLIC, baseline(), context=CONTEXT)
    (tmp_path / "public.pem").write_bytes(PUBLIC)
    (tmp_path / "H1.sealed").write_bytes(sealed.to_json())
    script = tmp_path / "attempt.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from verifier.seal import SealError, SealedBaseline, unseal
        here = Path({str(tmp_path)!r})
        public = (here / "public.pem").read_bytes()
        sealed = SealedBaseline.from_json((here / "H1.sealed").read_bytes())
        try:
            unseal(public, sealed, context={CONTEXT!r})
        except SealError as exc:
            print(type(exc).__name__, exc)
            sys.exit(7)
        print("OPENED")
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT,
                            timeout=60, check=False)
    assert result.returncode == 7, result.stdout + result.stderr
    assert "OPENED" not in result.stdout
    assert "SealFormatError" in result.stdout


def test_key_files_are_private_and_never_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "resolver"
    private_path, public_path = write_keypair(folder)
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(public_path.stat().st_mode) == 0o644
    private_pem, public_pem = read_private_key(private_path), read_public_key(public_path)
    value = baseline()
    assert unseal(private_pem, seal(public_pem, value, context=CONTEXT), context=CONTEXT) == value
    with pytest.raises(KeyFileError, match="refusing to replace"):
        write_keypair(folder)
    private_path.chmod(0o640)
    with pytest.raises(KeyFileError, match="0600"):
        read_private_key(private_path)
    with pytest.raises(KeyFileError, match="no Resolver public key"):
        read_public_key(tmp_path / "missing.pem")


# --- the leak needles ---------------------------------------------------------------------


def _sealed_pair() -> tuple[SealedBaseline, Baseline]:
    value = baseline()
    return seal(PUBLIC, value, context=CONTEXT), value


def test_needles_cover_every_documented_form() -> None:
    sealed, value = _sealed_pair()
    needles = leak_needles(sealed, value)
    plain = value.canonical()
    raw_cipher = base64.b64decode(sealed.ciphertext)
    for expected in (plain, value.canary.encode(), value.canary.upper().encode(), raw_cipher,
                     json.dumps(plain.decode())[1:-1].encode(), plain.hex().encode(),
                     raw_cipher.hex().upper().encode()):
        assert expected in needles
    assert any(needle in base64.b64encode(plain) for needle in needles)
    assert any(needle in base64.urlsafe_b64encode(value.canary.encode()) for needle in needles)
    assert needles == sorted(set(needles))
    labels = {(n.secret, n.encoding) for n in labelled_needles(sealed, value)}
    assert ("canary", "raw") in labels and ("ciphertext", "base64 (alignment 0)") in labels


@pytest.mark.parametrize("prefix", [b"", b"x", b"xy", b"xyz"])
def test_a_planted_baseline_is_found_in_every_encoding(prefix: bytes) -> None:
    sealed, value = _sealed_pair()
    needles = labelled_needles(sealed, value)
    plain = value.canonical()
    reformatted = json.dumps(json.loads(plain), indent=4).encode()  # the canary survives reformatting
    payloads = {
        "raw": b"leaf body " + plain,
        "reformatted": reformatted,
        "base64": base64.b64encode(prefix + reformatted),
        "urlsafe": base64.urlsafe_b64encode(prefix + plain),
        "hex": (prefix + plain).hex().upper().encode(),
        "json log": json.dumps({"msg": plain.decode()}).encode(),
        "double json": json.dumps({"msg": json.dumps({"msg": plain.decode()})}).encode(),
        "shouting": b"ERROR " + value.canary.upper().encode(),
        "mixed case": b"Canary: " + value.canary.title().encode(),
        "cipher": b"payload " + sealed.ciphertext.encode(),
        "cipher url": base64.urlsafe_b64encode(prefix + base64.b64decode(sealed.ciphertext)),
        "answer hash": b'{"answer_sha256": "' + value.answer_sha256.upper().encode() + b'"}',
        "answer hash b64": base64.b64encode(prefix + bytes.fromhex(value.answer_sha256)),
    }
    found = {leak.where for leak in find_leaks(payloads, needles)}
    assert found == set(payloads)


def test_clean_payloads_and_the_repository_seal_file() -> None:
    sealed, value = _sealed_pair()
    needles = labelled_needles(sealed, value)
    clean = {"leaf": b"leaf_id: extract-1\nkind: extract\n", "digest": json.dumps({"H1": "active"}).encode()}
    assert find_leaks(clean, needles) == []
    # The sealed file lives in the repository: it holds the ciphertext, never the plaintext.
    in_repo = find_leaks({"scores/baseline/H1.sealed": sealed.to_json()}, needles)
    assert in_repo and {leak.secret for leak in in_repo} == {"ciphertext"}
    plaintext_only = [n for n in needles if n.secret != "ciphertext"]
    assert find_leaks({"scores/baseline/H1.sealed": sealed.to_json()}, plaintext_only) == []

"""Seal and open baseline verdicts: public-key, randomized, authenticated, fixed-length. Pure.

The verifier holds only the Resolver's X25519 public key, so it can seal a baseline but never
open one (design §3.5.1). Each seal is an ephemeral-static ECDH box:

    eph        = fresh X25519 key pair (one per seal, discarded after sealing)
    shared     = X25519(eph.private, recipient.public)
    key        = HKDF-SHA256(shared, salt = eph.public || recipient.public, info = INFO)
    nonce      = 12 random bytes
    ciphertext = ChaCha20-Poly1305(key, nonce, padded plaintext, associated data = header)

`header` binds the format version, the algorithm, the recipient key id, the context (project and
hypothesis), the ephemeral public key and the nonce, so moving a seal to another hypothesis or
editing any field fails authentication. The plaintext is canonical JSON padded to PADDED_SIZE
bytes, so the length of a seal says nothing about the verdict, the confidence or the model name.
Every Baseline carries a random canary, so a leak test can search for it exactly (leaks.py).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import secrets
import struct
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, ValidationError

from verifier.errors import VerifierError
from verifier.formats.base import Sha256Hex, Strict, iso, timestamp_text
from verifier.formats.project import HypothesisId

SEAL_VERSION: Final = 1
ALGORITHM: Final = "X25519-HKDF-SHA256-ChaCha20Poly1305"
INFO = b"researchwiki/sealed-baseline/v1"
# Every plaintext is padded to exactly this many bytes (a 4-byte length, the JSON, zeros). The
# largest valid Baseline is under 600 bytes (tests/seal/test_seal.py checks the worst case), so the
# room left is for fields added later without changing the sealed length.
PADDED_SIZE = 1024
_LENGTH = struct.Struct(">I")
_TAG_SIZE = 16
_NONCE_SIZE = 12
_KEY_SIZE = 32
CIPHERTEXT_SIZE = PADDED_SIZE + _TAG_SIZE
# The model name is bounded so that every valid Baseline fits the padding: a longer name is
# refused when the Baseline is made, never silently lengthening the seal.
MODEL_MAX = 128
REVISION_MAX = 999_999_999
CANARY_RE = r"^cny_[0-9a-f]{32}$"
_CONTEXT_RE = re.compile(r"^[\x21-\x7e]{1,200}$")
KEY_ID_RE = r"^key_[0-9a-f]{16}$"


class SealError(VerifierError):
    """Base of every sealing failure."""


class SealFormatError(SealError):
    """A sealed file, a key or a plaintext is malformed (not a seal of this version at all)."""


class SealOpenError(SealError):
    """A seal could not be opened: tampered, sealed for another key, or for another context."""


class SealContextError(SealOpenError):
    """The seal belongs to another project or hypothesis than the one asked for."""


def new_canary() -> str:
    """A random marker, unique per baseline, that a leak test can search for exactly."""
    return "cny_" + secrets.token_hex(16)


def _whole_seconds(value: datetime) -> datetime:
    # The plaintext spells timestamps to the second; dropping microseconds here keeps
    # unseal(seal(b)) == b exactly.
    if value.tzinfo is None:
        raise ValueError("sealed_at needs a timezone, e.g. 2026-11-30T12:00:00Z")
    return value.astimezone(UTC).replace(microsecond=0)


ModelName = Annotated[str, StringConstraints(pattern=rf"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{{0,{MODEL_MAX - 1}}}$")]


class Baseline(Strict):
    """What the frontier model said from the statement and criterion alone, before any corpus."""

    hypothesis_id: HypothesisId
    revision: int = Field(ge=1, le=REVISION_MAX, strict=True)
    verdict: Literal["true", "false"]
    confidence: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    model: ModelName
    request_sha256: Sha256Hex
    answer_sha256: Sha256Hex
    sealed_at: Annotated[datetime, BeforeValidator(timestamp_text), AfterValidator(_whole_seconds)]
    canary: Annotated[str, StringConstraints(pattern=CANARY_RE)] = Field(default_factory=new_canary)

    def canonical(self) -> bytes:
        """The exact plaintext that is sealed: sorted keys, no spaces, ASCII, timestamps as ...Z."""
        data = self.model_dump(mode="json")
        data["sealed_at"] = iso(self.sealed_at)
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


B64Field = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]*={0,2}$", max_length=4096)]


class SealedBaseline(Strict):
    """The on-disk form of a seal (scores/baseline/<H>.sealed): JSON, binary fields in base64.

    `context` and `recipient` are public (which hypothesis, which Resolver key); they are in the
    clear so a mismatch can be reported plainly, and authenticated so they cannot be edited.
    """

    version: Literal[1]
    algorithm: Literal["X25519-HKDF-SHA256-ChaCha20Poly1305"]
    context: Annotated[str, StringConstraints(pattern=_CONTEXT_RE.pattern)]
    recipient: Annotated[str, StringConstraints(pattern=KEY_ID_RE)]
    ephemeral_public_key: B64Field
    nonce: B64Field
    ciphertext: B64Field

    def to_json(self) -> bytes:
        """Stable bytes for the file: sorted keys, two-space indent, trailing newline."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=2).encode("ascii") + b"\n"

    @classmethod
    def from_json(cls, data: bytes, where: str = "sealed baseline") -> SealedBaseline:
        try:
            value = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SealFormatError(f"{where}: not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise SealFormatError(f"{where}: expected a JSON object, found {type(value).__name__}")
        try:
            sealed = cls.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "(document)"
            raise SealFormatError(f"{where}: field {field}: {first['msg']}") from exc
        sealed.parts()  # decode now, so a malformed file fails here and not at open time
        return sealed

    def parts(self) -> tuple[bytes, bytes, bytes]:
        """(ephemeral public key, nonce, ciphertext) as bytes, each checked for its exact size."""
        eph = _b64decode(self.ephemeral_public_key, "ephemeral_public_key")
        nonce = _b64decode(self.nonce, "nonce")
        ciphertext = _b64decode(self.ciphertext, "ciphertext")
        for name, value, size in (("ephemeral_public_key", eph, _KEY_SIZE), ("nonce", nonce, _NONCE_SIZE),
                                  ("ciphertext", ciphertext, CIPHERTEXT_SIZE)):
            if len(value) != size:
                raise SealFormatError(f"{name} is {len(value)} bytes, expected {size}")
        return eph, nonce, ciphertext


def _b64decode(text: str, field: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SealFormatError(f"{field} is not valid base64 ({exc})") from exc


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def baseline_context(project: str, hypothesis_id: str) -> str:
    """The associated-data context of a project's hypothesis baseline."""
    return f"researchwiki/baseline/{project}/{hypothesis_id}"


def _check_context(context: str) -> None:
    if not _CONTEXT_RE.match(context):
        raise SealFormatError(f"context {context!r} must be 1-200 printable ASCII characters without spaces")


def generate_keypair() -> tuple[bytes, bytes]:
    """A fresh Resolver key pair as (private PEM, public PEM). The private PEM is unencrypted:
    protect it with file permissions (keys.py writes it 0600)."""
    private = X25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private_pem, public_pem


def _raw_public(key: X25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public_pem: bytes) -> str:
    """A short public fingerprint of a Resolver key, recorded in every seal made for it."""
    return _key_id(_raw_public(load_public_key(public_pem)))


def _key_id(raw_public: bytes) -> str:
    return "key_" + hashlib.sha256(b"researchwiki/key-id\x00" + raw_public).hexdigest()[:16]


def load_public_key(public_pem: bytes) -> X25519PublicKey:
    try:
        key: Any = serialization.load_pem_public_key(public_pem)
    except (ValueError, TypeError) as exc:
        raise SealFormatError(f"not a PEM public key ({exc})") from exc
    if not isinstance(key, X25519PublicKey):
        raise SealFormatError(f"the public key is {type(key).__name__}, expected an X25519 public key")
    return key


def load_private_key(private_pem: bytes) -> X25519PrivateKey:
    try:
        key: Any = serialization.load_pem_private_key(private_pem, password=None)
    except (ValueError, TypeError) as exc:
        raise SealFormatError(
            f"not an unencrypted PEM private key ({exc}); only the Resolver's private key opens a seal"
        ) from exc
    if not isinstance(key, X25519PrivateKey):
        raise SealFormatError(f"the private key is {type(key).__name__}, expected an X25519 private key")
    return key


def _header(context: str, recipient: str, eph: bytes, nonce: bytes) -> bytes:
    # Length-prefixed fields: no two different headers can serialize to the same bytes.
    fields = [b"researchwiki-sealed-baseline", str(SEAL_VERSION).encode(), ALGORITHM.encode(),
              recipient.encode(), context.encode(), eph, nonce]
    return b"".join(_LENGTH.pack(len(field)) + field for field in fields)


def _derive_key(shared: bytes, eph: bytes, recipient_raw: bytes) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=_KEY_SIZE, salt=eph + recipient_raw, info=INFO)
    return hkdf.derive(shared)


def _pad(plaintext: bytes) -> bytes:
    room = PADDED_SIZE - _LENGTH.size
    if len(plaintext) > room:
        raise SealFormatError(f"baseline plaintext is {len(plaintext)} bytes; at most {room} fit the padding")
    return _LENGTH.pack(len(plaintext)) + plaintext + b"\x00" * (room - len(plaintext))


def _unpad(padded: bytes) -> bytes:
    (length,) = _LENGTH.unpack_from(padded)
    end = _LENGTH.size + length
    if end > len(padded) or any(padded[end:]):
        raise SealOpenError("the opened plaintext has bad padding")
    return padded[_LENGTH.size:end]


def seal(public_pem: bytes, baseline: Baseline, *, context: str) -> SealedBaseline:
    """Seal `baseline` for the holder of the private key matching `public_pem`.

    Randomized: sealing the same baseline twice gives two unrelated seals.
    """
    _check_context(context)
    recipient = load_public_key(public_pem)
    recipient_raw = _raw_public(recipient)
    ephemeral = X25519PrivateKey.generate()
    eph = _raw_public(ephemeral.public_key())
    try:
        shared = ephemeral.exchange(recipient)
    except ValueError as exc:  # a low-order public key gives an all-zero secret
        raise SealFormatError(f"the public key is unusable for sealing ({exc})") from exc
    nonce = os.urandom(_NONCE_SIZE)
    recipient_id = _key_id(recipient_raw)
    ciphertext = ChaCha20Poly1305(_derive_key(shared, eph, recipient_raw)).encrypt(
        nonce, _pad(baseline.canonical()), _header(context, recipient_id, eph, nonce)
    )
    return SealedBaseline(version=SEAL_VERSION, algorithm=ALGORITHM, context=context, recipient=recipient_id,
                          ephemeral_public_key=_b64(eph), nonce=_b64(nonce), ciphertext=_b64(ciphertext))


def unseal(private_pem: bytes, sealed: SealedBaseline, *, context: str) -> Baseline:
    """Open a seal with the Resolver's private key; raises SealOpenError unless it is intact,
    made for this key and for this context."""
    _check_context(context)
    private = load_private_key(private_pem)
    recipient_raw = _raw_public(private.public_key())
    recipient_id = _key_id(recipient_raw)
    if sealed.context != context:
        raise SealContextError(f"the seal is for {sealed.context!r}, expected {context!r}")
    if sealed.recipient != recipient_id:
        raise SealOpenError(f"the seal was made for Resolver key {sealed.recipient}, this key is {recipient_id}")
    eph, nonce, ciphertext = sealed.parts()
    try:
        shared = private.exchange(X25519PublicKey.from_public_bytes(eph))
        padded = ChaCha20Poly1305(_derive_key(shared, eph, recipient_raw)).decrypt(
            nonce, ciphertext, _header(context, recipient_id, eph, nonce)
        )
    except (InvalidTag, ValueError) as exc:
        raise SealOpenError(
            "the seal does not authenticate: it was altered, or made for another key or context"
        ) from exc
    plaintext = _unpad(padded)
    try:
        return Baseline.model_validate(json.loads(plaintext))
    except (ValueError, ValidationError) as exc:
        # Authenticated but not a Baseline: only a buggy sealer could make this.
        raise SealFormatError(f"the opened plaintext is not a baseline ({exc})") from exc

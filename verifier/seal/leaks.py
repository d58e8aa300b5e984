"""What a baseline leak looks like, and finding one in a payload (design §11, §13). Pure.

A leak test holds the opened baseline and its seal, and searches every agent-visible payload
(leaf files, task bodies, the digest, UI data, error messages, logs) for each secret in every
spelling it could travel in. The secrets are the plaintext JSON, its canary and the ciphertext.
The canary is what makes the search exact: it is random per baseline and survives
re-serialization, so a copied baseline is found even when its JSON was reformatted.

Base64 is searched at all three byte alignments: a secret inside a larger base64-encoded payload
encodes differently depending on its offset mod 3, but for one of x, x[1:], x[2:] (cut to whole
3-byte groups) the encoding appears verbatim in the payload's base64.

The sha256 of the model's answer is a secret too: the answer is a short, low-entropy JSON
object, so anyone holding its hash can find the verdict by hashing the few likely answers. It
lives only inside the seal until resolution, and the leak test searches for it.

The ciphertext is a secret of a different kind: the sealed file itself lives in the project
repository (scores/baseline/), so a search of the repository tree should use only the
`plaintext` and `canary` needles, and the ciphertext needles are for payloads that have no reason
to carry a seal at all.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

import re2  # type: ignore[import-untyped]

from verifier.seal.decoded import payload_views
from verifier.seal.sealing import Baseline, SealedBaseline

Secret = Literal["plaintext", "canary", "ciphertext", "answer_sha256"]
# Needles are bytes, matched byte for byte (LATIN1: no UTF-8 decoding of the payload); the
# memory cap fits every needle of two baselines' seals.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.encoding = re2.Options.Encoding.LATIN1
_RE2_OPTIONS.max_mem = 64 << 20


@dataclass(frozen=True, order=True)
class Needle:
    """One spelling of one secret. `fold_case` needles are searched case-insensitively."""

    secret: Secret
    encoding: str
    value: bytes
    fold_case: bool


@dataclass(frozen=True, order=True)
class Leak:
    """A needle found in a payload: which payload, which secret, in which spelling."""

    where: str
    secret: Secret
    encoding: str


def _aligned(data: bytes) -> list[tuple[int, bytes]]:
    """x, x[1:], x[2:], each cut to whole 3-byte groups: one of them is aligned in any stream."""
    out = []
    for shift in range(3):
        part = data[shift:]
        part = part[: len(part) - len(part) % 3]
        if part:
            out.append((shift, part))
    return out


def _binary_forms(secret: Secret, data: bytes) -> list[Needle]:
    needles = [
        Needle(secret, "hex", data.hex().encode(), True),
        Needle(secret, "hex upper", data.hex().upper().encode(), True),
    ]
    for shift, part in _aligned(data):
        std = base64.b64encode(part)
        needles += [
            Needle(secret, f"base64 (alignment {shift})", std, False),
            Needle(secret, f"urlsafe base64 (alignment {shift})", base64.urlsafe_b64encode(part), False),
            # Standard base64 inside a URL has its '+' and '/' percent-encoded.
            Needle(secret, f"percent-encoded base64 (alignment {shift})", quote(std, safe="").encode(), True),
        ]
    return needles


def _text_forms(secret: Secret, text: str) -> list[Needle]:
    once = json.dumps(text)[1:-1]
    twice = json.dumps(once)[1:-1]
    forms = {"raw": text, "JSON-escaped": once, "JSON-escaped twice": twice,
             "percent-encoded": quote(text, safe="")}
    needles = []
    for name, form in forms.items():
        needles += [
            Needle(secret, name, form.encode(), True),
            Needle(secret, f"{name}, lower case", form.lower().encode(), True),
            Needle(secret, f"{name}, upper case", form.upper().encode(), True),
        ]
    return needles + _binary_forms(secret, text.encode())


def labelled_needles(sealed: SealedBaseline, baseline: Baseline) -> list[Needle]:
    """Every spelling of the baseline's plaintext, canary, answer hash and ciphertext a leak test
    looks for."""
    _, _, ciphertext = sealed.parts()
    digest = bytes.fromhex(baseline.answer_sha256)
    needles = (_text_forms("plaintext", baseline.canonical().decode("ascii"))
               + _text_forms("canary", baseline.canary)
               + [Needle("answer_sha256", "raw", digest, False)]
               + _binary_forms("answer_sha256", digest)
               + [Needle("ciphertext", "raw", ciphertext, False)]
               + _binary_forms("ciphertext", ciphertext))
    unique: dict[tuple[Secret, bytes, bool], Needle] = {}
    for needle in needles:  # generation order: the plainest label of a repeated value wins
        unique.setdefault((needle.secret, needle.value, needle.fold_case), needle)
    return sorted(unique.values())


def leak_needles(sealed: SealedBaseline, baseline: Baseline) -> list[bytes]:
    """The byte strings of labelled_needles, sorted and without repeats."""
    return sorted({needle.value for needle in labelled_needles(sealed, baseline)})


def _may_hold(needles: list[tuple[Needle, bytes]]) -> Callable[[bytes, bytes], bool]:
    """Whether any of `needles` (each with the value it is searched by) occurs in a view or, for
    the case-folding ones, in its folded copy: one RE2 automaton for each kind, one pass each.
    Needles too many to compile make every view a candidate (then each is searched one by one)."""
    try:
        exact, folding = (re2.compile(b"|".join(re2.escape(value) for needle, value in needles
                                                if needle.fold_case is fold), _RE2_OPTIONS)
                          if any(needle.fold_case is fold for needle, _ in needles) else None
                          for fold in (False, True))
    except re2.error:
        return lambda _view, _folded: True

    def may_hold(view: bytes, folded: bytes) -> bool:
        return ((exact is not None and exact.search(view) is not None)
                or (folding is not None and folding.search(folded) is not None))

    return may_hold


def find_leaks(payloads: Mapping[str, bytes], needles: Iterable[Needle]) -> list[Leak]:
    """Every (payload, secret, spelling) found; empty means no leak. Sorted, one entry each.

    Each payload is searched as it is and in every decoded view (seal.decoded: JSON escapes,
    percent, base64, hex, two layers deep); a find in a decoded view says how it was decoded.
    A view is first searched for all needles at once by one RE2 pass (almost no view holds one,
    and a payload has thousands of small decoded views); only a view where one occurs is searched
    needle by needle, so what is found is exactly what the needle-by-needle search finds.
    """
    needle_list = [(needle, needle.value.lower() if needle.fold_case else needle.value)
                   for needle in needles if needle.value]
    may_hold = _may_hold(needle_list)
    found: set[Leak] = set()
    for where, payload in payloads.items():
        for decoding, view in payload_views(payload):
            folded = view.lower()
            if not may_hold(view, folded):
                continue
            for needle, value in needle_list:
                if value in (folded if needle.fold_case else view):
                    encoding = f"{needle.encoding} in the {decoding} payload" if decoding else needle.encoding
                    found.add(Leak(where, needle.secret, encoding))
    return sorted(found)

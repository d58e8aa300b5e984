"""The decoded views of a payload a leak test searches, besides the payload itself. Pure.

A baseline can travel inside a payload under encodings the needles do not spell out one by one:
escaped JSON inside base64, percent-encoded hex, every character `\\u`-escaped. So before
searching, each payload is decoded: JSON escapes (all of them), percent-encoding, base64 runs
(standard and URL-safe, every alignment) and hex runs, up to LAYERS deep. Case is handled by
the needles (`fold_case`). Decoding only ever adds views; the raw payload is always searched.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from verifier.secrets.views import base64_decoded, hex_decoded, json_unescaped

LAYERS = 2
# Views a single payload may add, in all: a payload of many short runs cannot multiply the work
# past this.
MAX_VIEWS = 4096
_PERCENT = re.compile(rb"%[0-9A-Fa-f]{2}")


def _one_layer(data: bytes) -> list[tuple[str, bytes]]:
    views: list[tuple[str, bytes]] = []
    if b"\\" in data:
        views.append(("JSON-unescaped", json_unescaped(data)))
    if _PERCENT.search(data):
        views.append(("percent-decoded", unquote_to_bytes(data)))
    views += [("base64-decoded", blob) for blob in base64_decoded(data) if blob]
    views += [("hex-decoded", blob) for blob in hex_decoded(data)]
    return [(label, view) for label, view in views if view != data]


def payload_views(payload: bytes) -> list[tuple[str, bytes]]:
    """(how it was decoded, bytes): the payload itself first, then every decoded view."""
    views: list[tuple[str, bytes]] = [("", payload)]
    frontier = [("", payload)]
    for _ in range(LAYERS):
        following: list[tuple[str, bytes]] = []
        for label, data in frontier:
            for step, view in _one_layer(data):
                following.append((f"{label}, {step}" if label else step, view))
        views += following[: MAX_VIEWS - len(views)]
        frontier = following
        if len(views) >= MAX_VIEWS:
            break
    return views

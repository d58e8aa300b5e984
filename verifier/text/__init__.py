"""Deterministic source text: the normalized text that cited excerpts are checked against.

The extractor's names are loaded on first use (PEP 562): `verifier.text.normalize` alone must not
pull in the PDF and HTML parsers, which cost more start-up time than the rest of a check.
"""

from typing import Any

from verifier.text.normalize import NORMALIZATION, normalize

_EXTRACT_NAMES = frozenset({"EXTRACTOR_VERSION", "SUPPORTED_MEDIA_TYPES", "TextExtractionError", "extract_text"})

__all__ = [
    "EXTRACTOR_VERSION",
    "NORMALIZATION",
    "SUPPORTED_MEDIA_TYPES",
    "TextExtractionError",
    "extract_text",
    "normalize",
]


def __getattr__(name: str) -> Any:
    if name in _EXTRACT_NAMES:
        from verifier.text import extract  # noqa: PLC0415 - the point of this function

        return getattr(extract, name)
    raise AttributeError(f"module 'verifier.text' has no attribute {name!r}")

"""Deterministic source text: the normalized text that cited excerpts are checked against."""

from verifier.text.extract import (
    EXTRACTOR_VERSION,
    SUPPORTED_MEDIA_TYPES,
    TextExtractionError,
    extract_text,
)
from verifier.text.normalize import NORMALIZATION, normalize

__all__ = [
    "EXTRACTOR_VERSION",
    "NORMALIZATION",
    "SUPPORTED_MEDIA_TYPES",
    "TextExtractionError",
    "extract_text",
    "normalize",
]

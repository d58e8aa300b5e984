"""The verifier's version as the ledger records it: the package version plus a digest of the
verifier's own source, so it changes whenever the rules do (design: the frozen evaluator).

The digest is the sha256 of every file under the `verifier` package that shapes a verdict (its
Python modules and the built-in templates), each as its path relative to the package, a NUL, its
bytes and a NUL, in path order; the first 12 hex digits are kept: `0.1.0+src.<12 hex>`.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from verifier import VERSION

PACKAGE = Path(__file__).resolve().parent
_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".json", ".txt"}


def source_digest(root: Path = PACKAGE) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _SUFFIXES
                       and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@cache
def verifier_version() -> str:
    """`<package version>+src.<digest of the source>`, computed once per process."""
    return f"{VERSION}+src.{source_digest()}"

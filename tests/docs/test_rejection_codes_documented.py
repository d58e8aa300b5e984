"""Every rejection and API error code the verifier can give is in skill/rejection-codes.md, with
what it means and what to do: the table is read by agents, so a new code without a row fails."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from verifier.errors import AuthError, ConflictError, FormatError, LedgerIntegrityError, NotFound

ROOT = Path(__file__).resolve().parents[2]
TABLE = (ROOT / "skill" / "rejection-codes.md").read_text(encoding="utf-8")
CODE = re.compile(r"^[a-z][a-z0-9_]+$")
# The helpers that raise a rejection take the code first; ApiError takes the status first.
FIRST_ARG = frozenset({"Rejection", "_reject", "reject", "_fail"})
# Error classes a service raise may give a code of its own (`code=`).
ERROR_CLASSES = frozenset(cls.__name__ for cls in (NotFound, ConflictError, FormatError, AuthError,
                                                   LedgerIntegrityError))


def codes_in(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        position = 0 if name in FIRST_ARG else 1 if name == "ApiError" else None
        argument = node.args[position] if position is not None and len(node.args) > position else None
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str) and CODE.match(argument.value):
            found.add(argument.value)
        # An error class raised with a code of its own: NotFound(..., code="no_leaf").
        for keyword in node.keywords if name in ERROR_CLASSES else []:
            value = keyword.value
            if keyword.arg == "code" and isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(value.value)
    return found


def test_every_code_has_a_row() -> None:
    codes: set[str] = set()
    for path in (ROOT / "verifier").rglob("*.py"):
        codes |= codes_in(path.read_text(encoding="utf-8"))
    assert len(codes) > 80  # the scan found the codes, not nothing
    missing = sorted(code for code in codes if f"`{code}`" not in TABLE)
    assert not missing, f"add these codes to skill/rejection-codes.md: {missing}"


def test_the_scan_finds_codes_in_each_form() -> None:
    source = 'Rejection("a_code", "m")\n_reject("b_code", "m")\n_fail("c_code", "m", 1)\nApiError(404, "d_code", "m")\n'
    assert codes_in(source) == {"a_code", "b_code", "c_code", "d_code"}

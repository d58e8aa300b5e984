"""The ground floors are typed through (issue 20): no `Any` in state/, checks/, scoring/ or
formats/. A JSON or YAML value is `object` (or formats.strictjson.Json) until a reader narrows it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "verifier"
TYPED_ROOMS = ("state", "checks", "scoring", "formats")


def _any_uses(source: str) -> list[int]:
    """Lines naming typing's Any (as a bare name or typing.Any)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Name) and node.id == "Any") or (
                isinstance(node, ast.Attribute) and node.attr == "Any"):
            lines.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "Any" for alias in node.names):
            lines.append(node.lineno)
    return lines


def test_the_typed_rooms_never_say_any() -> None:
    found = {f"{path.relative_to(PACKAGE.parent)}:{line}"
             for room in TYPED_ROOMS for path in sorted((PACKAGE / room).rglob("*.py"))
             for line in _any_uses(path.read_text(encoding="utf-8"))}
    assert found == set()


def test_the_any_finder_sees_an_import_and_an_annotation() -> None:
    assert sorted(_any_uses("from typing import Any\nx: Any = 1\ny: typing.Any = 2\n")) == [1, 2, 3]

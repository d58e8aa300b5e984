"""The ground floors are typed through (issue 20): no `Any` in state/, checks/, scoring/ or
formats/. A JSON or YAML value is `object` (or formats.strictjson.Json) until a reader narrows it."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tests.support.sources import nodes, python_files

PACKAGE = Path(__file__).resolve().parents[2] / "verifier"
TYPED_ROOMS = ("state", "checks", "scoring", "formats")


def _any_uses(tree_nodes: Iterable[ast.AST]) -> list[int]:
    """Lines naming typing's Any (as a bare name or typing.Any)."""
    lines = []
    for node in tree_nodes:
        if (isinstance(node, ast.Name) and node.id == "Any") or (
                isinstance(node, ast.Attribute) and node.attr == "Any"):
            lines.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "Any" for alias in node.names):
            lines.append(node.lineno)
    return lines


def test_the_typed_rooms_never_say_any() -> None:
    found = {f"{path.relative_to(PACKAGE.parent)}:{line}"
             for room in TYPED_ROOMS for path in python_files(PACKAGE / room)
             for line in _any_uses(nodes(path))}
    assert found == set()


def test_the_any_finder_sees_an_import_and_an_annotation() -> None:
    tree = ast.parse("from typing import Any\nx: Any = 1\ny: typing.Any = 2\n")
    assert sorted(_any_uses(ast.walk(tree))) == [1, 2, 3]

"""The state room's floor (issue 20): state/ stands on formats/, patch/, text/ and errors alone, and
formats/ (the ground floor) never reaches up into state/."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.sources import nodes, python_files

PACKAGE = Path(__file__).resolve().parents[2] / "verifier"
STATE_MAY_IMPORT = ("verifier.state", "verifier.formats", "verifier.patch", "verifier.text", "verifier.errors")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("verifier")}


def _room_imports(room: str) -> dict[str, set[str]]:
    return {str(path.relative_to(PACKAGE.parent)): _imports(path) for path in python_files(PACKAGE / room)}


def test_state_imports_only_the_floors_below_it() -> None:
    above = {module: sorted(name for name in names if not name.startswith(STATE_MAY_IMPORT))
             for module, names in _room_imports("state").items()}
    assert {module: names for module, names in above.items() if names} == {}


def test_formats_never_imports_state() -> None:
    up = {module: sorted(n for n in names if n.startswith("verifier.state"))
          for module, names in _room_imports("formats").items()}
    assert {module: names for module, names in up.items() if names} == {}


def test_the_import_finder_sees_what_a_module_imports() -> None:
    assert "verifier.formats.leaf" in _imports(PACKAGE / "state" / "layout.py")

"""The suite mirrors the house: every test module sits in the folder of the verifier room it
tests (or docs/, deploy/, suite/), helpers come only from tests.support, no module imports conftest
or another test module, and the product package never imports the tests."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.sources import nodes, python_files

TESTS = Path(__file__).resolve().parents[1]
VERIFIER = TESTS.parent / "verifier"
ROOMS = {path.name for path in VERIFIER.iterdir() if (path / "__init__.py").exists()}
EXTRA_ROOMS = {"docs", "deploy", "suite"}  # the docs agree with the code; deployment; this file


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_every_test_module_sits_in_a_room() -> None:
    misplaced = [str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py")
                 if path.parent == TESTS or path.relative_to(TESTS).parts[0] not in ROOMS | EXTRA_ROOMS]
    assert not misplaced, f"test modules outside a room folder: {misplaced}"


def test_helpers_come_from_tests_support_only() -> None:
    bad = {}
    for path in python_files(TESTS):
        wrong = sorted(name for name in imported(path)
                       if name.startswith(".") or "conftest" in name
                       or any(part.startswith("test_") for part in name.split(".")))
        if wrong:
            bad[str(path.relative_to(TESTS))] = wrong
    assert not bad, f"imports of conftest, test modules or relative imports: {bad}"


def test_the_product_never_imports_the_tests() -> None:
    bad = [str(path.relative_to(VERIFIER)) for path in python_files(VERIFIER)
           if any(name == "tests" or name.startswith("tests.") for name in imported(path))]
    assert not bad, f"verifier modules importing tests: {bad}"

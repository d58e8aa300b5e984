"""The repository's Python sources read, parsed and walked once per test process.

The suite's structure checks (tests/suite/) each look at every module of verifier/ or tests/:
parsing the package's ~300 files costs about a second and one `ast.walk` over all of them several
more, so a check that walked afresh paid that again and again. The sources do not change while
the suite runs, so each file is read, parsed and walked once here and every check shares the
result. The trees and node lists handed out are shared: callers only read them.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

__all__ = ["nodes", "python_files", "source_text", "syntax_tree"]


@functools.cache
def python_files(folder: Path) -> tuple[Path, ...]:
    """Every .py file under `folder`, sorted."""
    return tuple(sorted(folder.rglob("*.py")))


@functools.cache
def source_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def syntax_tree(path: Path) -> ast.Module:
    return ast.parse(source_text(path), str(path))


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in `ast.walk`'s order."""
    return tuple(ast.walk(syntax_tree(path)))

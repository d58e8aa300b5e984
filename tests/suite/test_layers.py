"""The house's floors (docs/adr/0012-layers.md): no import runs back up a floor, and no two modules
import each other, however lazily (an import inside a function counts as much as one at the top).

The floors are written down here once, top to bottom; each module of verifier/ belongs to exactly
one. A module may import its own floor and the floors below it.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

from tests.support.sources import nodes, python_files

VERIFIER = Path(__file__).resolve().parents[2] / "verifier"

_SHELLS = ("runner", "planner", "resolver", "maintainer", "proposer", "validation", "skillgate", "liveskill",
           "opswiki", "traceindex", "evidence", "agentworker", "processes")
# The agent CLIs' transcript parsers: pure (lines in, events and a disclosure out), so below the kit's floor.
_TRANSCRIPTS = tuple(f"verifier.agentkit.transcripts{name}" for name in ("", ".model", ".claude", ".codex"))

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # doors: the processes' faces and mains, and the seams the wiring root picks
    ("faces", ("verifier.cli", "verifier.cli.*", "verifier.mcp", "verifier.mcp.*", "verifier.demo",
               "verifier.__main__")),
    ("mains", ("verifier.service", "verifier.service.*", "verifier.deploy", "verifier.deploy.*", "verifier.gitdoor",
               "verifier.gitdoor.*", "verifier.wiring", "verifier.devservers")),
    ("roles' shells", (*(f"verifier.roles.{name}" for name in _SHELLS), "verifier.evaluation",
                       "verifier.evaluation.*", "verifier.agentkit", "verifier.agentkit.*")),
    ("audits", ("verifier.audits.leaks", "verifier.audits.replay", "verifier.audits")),
    ("views", ("verifier.ui", "verifier.ui.*", "verifier.messages", "verifier.messages.*")),
    ("writes", ("verifier.writes", "verifier.writes.*")),
    # decide: pure rules, and the submission row
    ("decide", ("verifier.pipeline", "verifier.pipeline.*", "verifier.checks", "verifier.checks.*",
                "verifier.scoring", "verifier.scoring.*", "verifier.seal", "verifier.seal.*", "verifier.roles",
                "verifier.roles.*", "verifier.audits.audit", *_TRANSCRIPTS)),
    # state: the typed project state and the one writer
    ("state", ("verifier.state", "verifier.state.*", "verifier.pipeline.writer", "verifier.pipeline.ledger",
               "verifier.pipeline.landing")),
    # edges: git, disk, network, the Commons, models
    ("edges", ("verifier.store", "verifier.store.*", "verifier.commons", "verifier.commons.*", "verifier.model",
               "verifier.model.*", "verifier.client", "verifier.client.*")),
    # the pure ground floors: every file a strict model, patches, text, the secret scanner
    ("ground", ("verifier.formats", "verifier.formats.*", "verifier.secrets", "verifier.secrets.*",
                "verifier.patch", "verifier.patch.*", "verifier.text", "verifier.text.*", "verifier.errors",
                "verifier.version", "verifier.constants", "verifier")),
)
# Checked before the floor list: modules of a room that sit on a lower floor than the room's pattern.
_EXACT_FIRST = ("verifier.pipeline.writer", "verifier.pipeline.ledger", "verifier.pipeline.landing",
                "verifier.audits.audit", *(f"verifier.roles.{name}" for name in _SHELLS), *_TRANSCRIPTS)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in python_files(VERIFIER):
        parts = list(path.relative_to(VERIFIER.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def floor_of(module: str) -> int:
    """The index of the floor `module` is on (0 is the top)."""
    for index, (_name, patterns) in enumerate(FLOORS):
        if module in _EXACT_FIRST and module in patterns:
            return index
    if module in _EXACT_FIRST:
        raise AssertionError(f"{module} is named as an exception but on no floor")
    for index, (_name, patterns) in enumerate(FLOORS):
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return index
    raise AssertionError(f"{module} is on no floor: add it to FLOORS in {Path(__file__).name}")


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The verifier modules `module` imports anywhere in its file (lazy imports included)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in nodes(path):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            candidates = [target, *(f"{target}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in candidates if name in known and name != module}
    return found


def graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {module: imports_of(module, path, known) for module, path in modules.items()}


def test_every_module_is_on_exactly_one_floor() -> None:
    for module in _modules():
        floor_of(module)


def test_no_import_runs_back_up_a_floor() -> None:
    upward = sorted(f"{module} ({FLOORS[floor_of(module)][0]}) imports {target} ({FLOORS[floor_of(target)][0]})"
                    for module, targets in graph().items() for target in targets
                    if floor_of(target) < floor_of(module))
    assert upward == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_two_modules_import_each_other_even_lazily() -> None:
    assert _cycles(graph()) == []


@pytest.mark.parametrize(("edges", "expected"), [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_circle_finder_finds_circles(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(edges) == expected


def test_the_floor_check_sees_an_import_that_runs_back_up() -> None:
    assert floor_of("verifier.formats.leaf") > floor_of("verifier.pipeline.submit") > floor_of("verifier.cli.app")
    assert floor_of("verifier.roles.records") > floor_of("verifier.ui.pages")  # a rule under the views
    assert floor_of("verifier.roles.resolver") < floor_of("verifier.audits.leaks")  # a shell above the audits

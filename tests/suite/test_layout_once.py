"""Every repository path, the Commons database's file name and the ledger subject's format are
spelled in exactly one module of verifier/ (issue 20): a second spelling is a second layout that
drifts from the first. Docstrings and comments may name paths; code may not."""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from tests.support.sources import nodes, python_files

PACKAGE = Path(__file__).resolve().parents[2] / "verifier"
# The top-level places of a project repository; a literal opening with one of them and a slash is
# a repository path (the public site's pages, ending in .html, are the site's layout, not this one).
ROOTS = ("ledger", "leaves", "queue", "scores", "hypotheses", "sources", "findings", "links", "reviews",
         "notes", "plans", "reports")
_REPOSITORY_PATH = re.compile(rf"^({'|'.join(ROOTS)})/")
FILES = ("PROJECT.md", "FIELD-GUIDE.md")
HOME_FILES = ("commons.sqlite3",)
LEDGER_SUBJECT = "ledger: "


def _docstrings(tree_nodes: Sequence[ast.AST]) -> set[int]:
    """ids of the string nodes that are docstrings (module, class, function)."""
    found: set[int] = set()
    for node in tree_nodes:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _literals(tree_nodes: Sequence[ast.AST]) -> list[str]:
    """Every string the code spells: plain constants, and f-strings with `{}` for each hole (the
    nodes of one tree in `ast.walk` order)."""
    skip = _docstrings(tree_nodes)
    out: list[str] = []
    inside_fstring: set[int] = set()
    for node in tree_nodes:
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                inside_fstring.add(id(value))
                parts.append(value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else "{}")
            out.append("".join(parts))
    for node in tree_nodes:
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                and id(node) not in inside_fstring):
            out.append(node.value)
    return out


@functools.cache
def _spellings() -> dict[str, frozenset[str]]:
    """What each module spells: a path root, a file name, the home's database, the subject (found
    once per process: three checks read it)."""
    where: dict[str, set[str]] = defaultdict(set)
    for path in python_files(PACKAGE):
        module = str(path.relative_to(PACKAGE.parent))
        for literal in _literals(nodes(path)):
            match = _REPOSITORY_PATH.match(literal)
            if match and not literal.endswith(".html"):
                where[match.group(1) + "/"].add(module)
            for name in FILES:
                if literal == name:
                    where[name].add(module)
            for name in HOME_FILES:
                if name in literal:
                    where[name].add(module)
            if literal.startswith(LEDGER_SUBJECT):
                where[LEDGER_SUBJECT].add(module)
    return {key: frozenset(modules) for key, modules in where.items()}


def test_each_repository_path_is_spelled_in_the_layout_module_only() -> None:
    where = _spellings()
    layout = "verifier/state/layout.py"
    for key in [*(f"{root}/" for root in ROOTS), *FILES]:
        assert where.get(key, set()) <= {layout}, f"{key} is spelled outside {layout}: {sorted(where[key])}"
    assert where["findings/"] == {layout} and where[FILES[0]] == {layout}  # the finder does see them


def test_the_commons_database_file_is_named_by_the_home_layout_only() -> None:
    assert _spellings()["commons.sqlite3"] == {"verifier/store/home.py"}


def test_the_ledger_subject_is_written_and_parsed_in_one_module() -> None:
    assert _spellings()[LEDGER_SUBJECT] == {"verifier/formats/ledger.py"}


def _hand_walks(tree_nodes: Sequence[ast.AST]) -> list[str]:
    """Folders named by hand where a tree is listed or walked (`view.walk("links")`)."""
    found = []
    for node in tree_nodes:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("walk", "list_dir", "is_dir") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and node.args[0].value.split("/", 1)[0] in ROOTS):
            found.append(node.args[0].value)
    return found


def test_no_room_walks_a_repository_folder_named_by_hand() -> None:
    walks = {str(path.relative_to(PACKAGE.parent)): found for path in python_files(PACKAGE)
             if (found := _hand_walks(nodes(path)))}
    assert walks == {}


def test_the_spelling_finder_sees_fstrings_and_skips_docstrings() -> None:
    # The finder itself must be able to fail: an f-string path counts, a docstring does not.
    tree = ast.parse('"""leaves/x.yaml"""\nA = f"leaves/{x}.yaml"\nB = "ledger: #1"\n')
    assert _literals(tuple(ast.walk(tree))) == ["leaves/{}.yaml", "ledger: #1"]
    assert _hand_walks(tuple(ast.walk(ast.parse('view.walk("links")\nview.list_dir(LEAVES_DIR)\n')))) == ["links"]

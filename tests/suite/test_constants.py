"""Every policy number lives in verifier/constants.py with its reason, and no module keeps a copy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.sources import python_files, source_text, syntax_tree
from verifier import constants

ROOT = Path(__file__).resolve().parents[2]
CONSTANTS = ROOT / "verifier" / "constants.py"
# How the numbers were written before they moved (and would be written again by a copy).
LITERALS = (
    "20 * 1024 * 1024", "20 << 20", "20_971_520", "20971520", "8 * 1024 * 1024", "256 * 1024 * 1024",
    "16 * 1024 * 1024  #", "2 * 1024 * 1024", '"retry-after": "', "7 * 86400", "claim_ttl_s: int = 1800",
    "default=8.0", "6 * 3600", '"10m"', '"30m"', '"30s"', "30_000", "timedelta(hours=24)", "= 600.0", "= 3600.0",
)


def sources() -> dict[Path, str]:
    return {path: source_text(path) for path in python_files(ROOT / "verifier") if path != CONSTANTS}


def test_no_module_writes_a_policy_number_of_its_own() -> None:
    found = [f"{path.relative_to(ROOT)}: {literal}" for path, text in sources().items()
             for literal in LITERALS if literal in text]
    assert not found, f"import these from verifier.constants instead: {found}"


def test_no_module_defines_a_constant_the_module_of_constants_holds() -> None:
    names = {name for name in vars(constants) if name.isupper()}
    copies = []
    for path in sources():
        for node in syntax_tree(path).body:
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                continue
            copies += [f"{path.relative_to(ROOT)}: {t.id}" for t in targets
                       if isinstance(t, ast.Name) and t.id in names]
    assert not copies


def test_every_constant_says_why_it_has_its_value() -> None:
    lines = CONSTANTS.read_text(encoding="utf-8").splitlines()
    assignment = re.compile(r"^([A-Z][A-Z0-9_]*): Final = ")
    names = []
    for number, line in enumerate(lines):
        found = assignment.match(line)
        if not found:
            continue
        names.append(found[1])
        above = number - 1
        while above >= 0 and assignment.match(lines[above]):  # a group shares the comment above it
            above -= 1
        assert lines[above].startswith("# ") and len(lines[above]) > 20, f"{found[1]} has no reason above it"
    assert sorted(names) == sorted(name for name in vars(constants) if name.isupper())
    assert len(names) >= 24

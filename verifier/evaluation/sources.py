"""The evaluation's edge: which projects of a home to read, their tip trees, and the validation
results file (`$RW_HOME/eval/validation.json` unless another path is given; docs/eval.md)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from verifier.errors import NotFound
from verifier.evaluation.history import read_history
from verifier.evaluation.rows import ProjectHistory, ValidationResult, parse_validation
from verifier.store.home import Home

VALIDATION_FILE = Path("eval") / "validation.json"


def histories_from_home(home: Home, slugs: Iterable[str]) -> list[ProjectHistory]:
    histories = []
    for slug in slugs:
        repo = home.project(slug)
        tip = repo.tip()
        if tip is None:
            raise NotFound(f"project {slug} has no commits")
        histories.append(read_history(repo.view(tip), slug))
    return histories


def validation_from_home(home: Home, path: Path | None) -> list[ValidationResult]:
    """The validation results: the given file (which must exist), else the home's default one if
    the improvement loop has written it, else none."""
    chosen = path if path is not None else home.root / VALIDATION_FILE
    if not chosen.exists():
        if path is not None:
            raise NotFound(f"no validation results file at {path}")
        return []
    return parse_validation(chosen.read_bytes(), str(chosen))

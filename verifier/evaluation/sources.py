"""The evaluation's edge: which projects of a home to read, their tip trees, and the validation
results file (`$RW_HOME/eval/validation.json` unless another path is given; docs/eval.md)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator
from pathlib import Path

from verifier.errors import NotFound
from verifier.evaluation.history import read_history
from verifier.evaluation.report import EvalOptions, evaluate
from verifier.evaluation.rows import ProjectHistory, ValidationResult, parse_validation
from verifier.store.home import Home


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
    chosen = path if path is not None else home.layout.validation_set
    if not chosen.exists():
        if path is not None:
            raise NotFound(f"no validation results file at {path}")
        return []
    return parse_validation(chosen.read_bytes(), str(chosen))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one batch computation. Reading a platform's
    ledgers makes hundreds of thousands of small objects, none in cycles; the collector would
    walk all of them again and again as they are made (a third of the run), and frees nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def evaluate_home(home: Home, slugs: Iterable[str], options: EvalOptions) -> dict[str, object]:
    """`rw eval`: read the projects and compute the document."""
    with collector_paused():
        return evaluate(histories_from_home(home, slugs), options)

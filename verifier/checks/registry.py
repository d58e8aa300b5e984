"""Which deterministic check runs for which leaf kind. New kinds register here, nowhere else.

Each kind names the module and function of its check, imported when the kind is first checked:
`rw check` on an extract leaf loads the extract check, not the scout's fetch rules or the
review's (issue 26: the local check's start-up). tests/checks/test_registry.py imports every one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from verifier.checks.context import CheckContext, CheckResult
from verifier.errors import Rejection

Check = Callable[[CheckContext], CheckResult]

# kind -> (module under verifier.checks, function)
CHECKS: dict[str, tuple[str, str]] = {
    "extract": ("extract", "check_extract"),
    "scout": ("scout", "check_scout"),
    "skeptic": ("links", "check_links"),
    "link": ("links", "check_links"),
    "review": ("review", "check_review"),
    "guide": ("guide", "check_guide"),
    # Not a leaf kind: a person's edit outside any leaf (steward, maintainer).
    "human": ("human", "check_human"),
}


def _not_yet(kind: str) -> Check:
    def check(_ctx: CheckContext) -> CheckResult:
        return CheckResult([Rejection("no_check", f"this verifier has no check for {kind} leaves yet")], "")

    return check


def check_for(kind: str) -> Check:
    """The check of a kind; a kind without one is refused (fail closed), never waved through."""
    if kind not in CHECKS:
        return _not_yet(kind)
    module, function = CHECKS[kind]
    return cast(Check, getattr(importlib.import_module(f"verifier.checks.{module}"), function))

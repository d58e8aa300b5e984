"""Which deterministic check runs for which leaf kind. New kinds register here, nowhere else."""

from __future__ import annotations

from collections.abc import Callable

from verifier.checks.context import CheckContext, CheckResult
from verifier.checks.extract import check_extract
from verifier.checks.guide import check_guide
from verifier.checks.human import check_human
from verifier.checks.links import check_links
from verifier.checks.review import check_review
from verifier.checks.scout import check_scout
from verifier.errors import Rejection

Check = Callable[[CheckContext], CheckResult]

CHECKS: dict[str, Check] = {
    "extract": check_extract,
    "scout": check_scout,
    "skeptic": check_links,
    "link": check_links,
    "review": check_review,
    "guide": check_guide,
    # Not a leaf kind: a person's edit outside any leaf (steward, maintainer).
    "human": check_human,
}


def _not_yet(kind: str) -> Check:
    def check(_ctx: CheckContext) -> CheckResult:
        return CheckResult([Rejection("no_check", f"this verifier has no check for {kind} leaves yet")], "")

    return check


def check_for(kind: str) -> Check:
    """The check of a kind; a kind without one is refused (fail closed), never waved through."""
    return CHECKS.get(kind) or _not_yet(kind)

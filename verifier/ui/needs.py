"""The "needs you" page's view-model (issue 22): for each project, what waits for a person. Pure.

Per project: the held objects with the files approving would add (the diff of a held object is
its new files, shown whole), the Resolver's verdict proposals, the hypotheses awaiting a date
(loose: no criterion, measure and check date yet, or not targeted since), every hypothesis not yet
resolved (a person may set its verdict), the newest contributions a person may revert, and a
project that refuses writes with why. Whether the signed-in person may decide each is not
answered here: the writes decide that, and the page shows their refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier.checks.hypotheses import loose_problem
from verifier.state.layout import hypothesis_path
from verifier.ui import pages
from verifier.ui.readmodel import ProjectReader

REVERTABLE_SHOWN = 10
REVERTABLE_ACTIONS = ("submit", "human")


@dataclass(frozen=True)
class ProjectNeeds:
    """One project as the page sees it: read at its tip, or refusing writes (and why)."""

    slug: str
    reader: ProjectReader | None
    broken: str | None = None


def _awaiting_date(reader: ProjectReader) -> list[dict[str, Any]]:
    out = []
    for hypothesis in reader.hypotheses:
        problem = loose_problem(reader.view, hypothesis.hypothesis_id)
        if problem is not None:
            out.append({"hypothesis_id": hypothesis.hypothesis_id, "revision": hypothesis.revision,
                        "why": problem.message, "path": hypothesis_path(hypothesis.hypothesis_id)})
    return out


def _revertable(reader: ProjectReader) -> list[dict[str, Any]]:
    """The newest accepted contributions not reverted yet (a revert row names its target first)."""
    reverted = {row.description.split(" ", 2)[1].rstrip(":") for row in reader.rows
                if row.action == "revert" and row.description.startswith("reverted ")}
    rows = [row for row in reversed(reader.rows)
            if row.action in REVERTABLE_ACTIONS and row.outcome == "accepted" and row.commit
            and row.commit not in reverted]
    return [{"seq": row.seq, "commit": row.commit, "leaf_id": row.leaf_id, "kind": row.kind, "actor": row.actor,
             "description": row.description[:300]} for row in rows[:REVERTABLE_SHOWN]]


def _project(needs: ProjectNeeds, handle: str) -> dict[str, Any]:
    if needs.reader is None:
        return {"slug": needs.slug, "broken": needs.broken, "steward": None, "yours": False, "held": [],
                "verdicts": [], "awaiting_date": [], "open_hypotheses": [], "revertable": [], "count": 1}
    reader = needs.reader
    holds = pages.holds_page(reader)
    steward = reader.project.steward
    open_hypotheses = [{"hypothesis_id": h.hypothesis_id, "revision": h.revision, "status": h.status,
                        "statement": h.statement[:300]}
                       for h in reader.hypotheses if h.status != "resolved"]
    model = {"slug": needs.slug, "broken": needs.broken, "steward": steward, "yours": steward == handle,
             "held": holds["entries"], "verdicts": holds["verdicts"], "awaiting_date": _awaiting_date(reader),
             "open_hypotheses": open_hypotheses, "revertable": _revertable(reader)}
    model["count"] = len(model["held"]) + len(model["verdicts"]) + len(model["awaiting_date"]) + \
        (1 if needs.broken else 0)
    return model


def needs_you_page(projects: list[ProjectNeeds], handle: str, csrf: str) -> dict[str, Any]:
    """The page: the projects whose steward is the signed-in person first, then the rest by name."""
    shown = [_project(needs, handle) for needs in projects]
    shown.sort(key=lambda p: (not p["yours"], p["slug"]))
    return {"title": "Needs you", "handle": handle, "csrf": csrf, "projects": shown,
            "total": sum(p["count"] for p in shown)}


def sign_in_page(handle: str | None) -> dict[str, Any]:
    return {"title": "Sign in", "handle": handle}

"""Which active hypotheses have no current sealed baseline, and why (design §3.5.1). Pure.

Every path that can make a hypothesis active (a person's edit by `rw submit`, a push, the
service's git endpoint, `rw init` from a template, the Planner's plan, a person approving a
held plan) seals its baseline right after the landing when a model and the Resolver's key are
set up. When they are not, the verifier lands a `resolve` row (kind `baseline`, outcome
`rejected`, reason `baseline_not_sealed`) whose description is `not sealed: <H>: <why>`, so the
gap is on the record; the next path that can seal does. This module reads those rows and the
tree and says, for each active hypothesis whose baseline is missing or answers an older wording,
the latest reason recorded. The digest, the UI, `rw eval` and `rw seal` all read it here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from verifier.formats.ledger import LedgerRow
from verifier.model.schema import BaselineRequest, request_sha256
from verifier.state.layout import HYPOTHESES_DIR, SEAL_DIR
from verifier.state.project import current_hypothesis
from verifier.state.view import TreeView

NOT_SEALED = "baseline_not_sealed"  # the reason code of a "not sealed: why" row
NOT_SEALED_PREFIX = "not sealed: "
NEVER_TRIED = "no path that could seal it has run since it became active; run `rw seal SLUG`"
_NOT_SEALED_ROW = re.compile(r"^not sealed: (H[1-9][0-9]{0,5}): (.+)$", re.DOTALL)
_FAILED_ROW = re.compile(r"^baseline call for (H[1-9][0-9]{0,5}) failed: (.+)$", re.DOTALL)
_SEALED_ROW = re.compile(r"^sealed a baseline for (H[1-9][0-9]{0,5}) ")


@dataclass(frozen=True)
class Unsealed:
    """An active hypothesis without a current baseline: what is missing, and the latest reason."""

    hypothesis_id: str
    missing: str  # "no baseline was sealed yet" | "the statement or criterion changed since the last seal"
    why: str  # the latest recorded reason it was not sealed (NEVER_TRIED when none was recorded)

    def line(self) -> str:
        return f"{self.hypothesis_id}: not sealed ({self.missing}): {self.why}"

    def to_json(self) -> dict[str, str]:
        return {"hypothesis_id": self.hypothesis_id, "missing": self.missing, "why": self.why}


def not_sealed_description(hypothesis_id: str, why: str) -> str:
    return f"{NOT_SEALED_PREFIX}{hypothesis_id}: {why}"[:4000]


def recorded_reasons(rows: Iterable[LedgerRow]) -> dict[str, str | None]:
    """Hypothesis -> the latest baseline row's reason it is not sealed (None: the latest sealed it)."""
    latest: dict[str, str | None] = {}
    for row in rows:
        if row.action != "resolve" or row.kind != "baseline":
            continue
        if row.outcome == "accepted" and (sealed := _SEALED_ROW.match(row.description)) is not None:
            latest[sealed.group(1)] = None
        elif row.outcome == "rejected":
            match = _NOT_SEALED_ROW.match(row.description) or _FAILED_ROW.match(row.description)
            if match is not None:
                latest[match.group(1)] = match.group(2) if row.reason_code == NOT_SEALED \
                    else f"the baseline call failed: {match.group(2)}"
    return latest


def _missing(tree: TreeView, hypothesis_id: str, request: BaselineRequest) -> str | None:
    if tree.read(f"{SEAL_DIR}/{hypothesis_id}.sealed") is None:
        return "no baseline was sealed yet"
    try:
        record = json.loads(tree.read(f"{SEAL_DIR}/{hypothesis_id}.request.json") or b"")
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get("request_sha256") != request_sha256(request):
        return "the statement or criterion changed since the last seal"
    return None


def unsealed(tree: TreeView, hypothesis_ids: Iterable[str], rows: Iterable[LedgerRow]) -> list[Unsealed]:
    """Every active hypothesis among `hypothesis_ids` whose baseline is missing or stale, with the
    latest recorded reason, in the order given."""
    reasons = recorded_reasons(rows)
    found = []
    for hypothesis_id in dict.fromkeys(hypothesis_ids):
        hypothesis = current_hypothesis(tree, hypothesis_id)
        if hypothesis is None or hypothesis.status != "active" or hypothesis.resolution is None:
            continue
        request = BaselineRequest(hypothesis_id=hypothesis_id, revision=hypothesis.revision,
                                  statement=hypothesis.statement, criterion=hypothesis.resolution.criterion)
        missing = _missing(tree, hypothesis_id, request)
        if missing is not None:
            found.append(Unsealed(hypothesis_id, missing, reasons.get(hypothesis_id) or NEVER_TRIED))
    return found


def hypothesis_ids(tree: TreeView) -> list[str]:
    """Every hypothesis file's id, in id order."""
    return sorted((name[:-3] for name in tree.list_dir(HYPOTHESES_DIR) if name.endswith(".md")),
                  key=lambda h: (len(h), h))

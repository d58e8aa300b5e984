"""The straightforward computation of the per-kind and per-model leaf metrics, row by row and
group by group (each group's units sorted on their own), for tests to hold rw eval's fast path
(verifier.evaluation.metrics.scope_metrics: one sort of the scope's arrays, groups by label codes,
the platform joined from its projects) to the same document."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from verifier.evaluation.intervals import canonical_order, wilson
from verifier.evaluation.metrics import Context, facts_of, leaf_metrics, model_of
from verifier.evaluation.rows import Attempt


def reference_by_kind_and_model(attempts: Sequence[Attempt], context: Context, scope: str) -> dict[str, Any]:
    rows = [row for row in attempts if row.is_agent_submission]

    def metrics(by: Callable[[Attempt], str], name: str) -> dict[str, Any]:
        groups: dict[str, list[Attempt]] = defaultdict(list)
        for row in rows:
            groups[by(row)].append(row)
        out: dict[str, Any] = {}
        for label in sorted(groups):
            facts = [facts_of(row, context) for row in groups[label]]
            units = np.asarray([unit for unit, _ in facts], dtype=np.float64).reshape(-1, 6)
            totals = [sum(counts[column] for _, counts in facts) for column in range(9)]
            out[label] = leaf_metrics(units[canonical_order(units)], totals, f"{scope}/{name}/{label}")
        return out

    crossed: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for row in rows:
        cell = crossed[row.kind or ""][model_of(row)]
        cell[0] += row.accepted
        cell[1] += 1
    return {"by_kind": metrics(lambda r: r.kind or "", "kind"), "by_model": metrics(model_of, "model"),
            "by_kind_and_model": {kind: {model: {"attempts": n, "accepted": k,
                                                 "acceptance_rate": wilson(k, n).to_json()}
                                         for model, (k, n) in sorted(models.items())}
                                  for kind, models in sorted(crossed.items())}}

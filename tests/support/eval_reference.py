"""The straightforward computation of the per-kind and per-model leaf metrics, row by row and
group by group (each group's units sorted on their own), for tests to hold rw eval's fast path
(verifier.evaluation.metrics.project_scope and platform_metrics: one sort of the scope's arrays,
groups by label codes, the platform joined from its projects) to the same document."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from verifier.evaluation.intervals import canonical_order, resampled_sums, resamples_for, wilson
from verifier.evaluation.metrics import UNIT_COLUMNS, Context, facts_of, leaf_metrics, model_of
from verifier.evaluation.rows import Attempt

Grouping = tuple[Callable[[Attempt], str], str]
GROUPINGS: tuple[Grouping, ...] = ((lambda r: r.kind or "", "kind"), (model_of, "model"))


def _groups(rows: Sequence[Attempt], by: Callable[[Attempt], str]) -> dict[str, list[Attempt]]:
    groups: dict[str, list[Attempt]] = defaultdict(list)
    for row in rows:
        if row.is_agent_submission:
            groups[by(row)].append(row)
    return groups


def _units_and_totals(rows: Sequence[Attempt], context: Context) -> tuple[np.ndarray, list[int]]:
    facts = [facts_of(row, context) for row in rows]
    units = np.asarray([unit for unit, _ in facts], dtype=np.float64).reshape(-1, UNIT_COLUMNS)
    return units[canonical_order(units)], [sum(counts[column] for _, counts in facts) for column in range(9)]


def _crossed(rows: Sequence[Attempt]) -> dict[str, Any]:
    crossed: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for row in rows:
        if row.is_agent_submission:
            cell = crossed[row.kind or ""][model_of(row)]
            cell[0] += row.accepted
            cell[1] += 1
    return {kind: {model: {"attempts": n, "accepted": k, "acceptance_rate": wilson(k, n).to_json()}
                   for model, (k, n) in sorted(models.items())}
            for kind, models in sorted(crossed.items())}


def reference_by_kind_and_model(attempts: Sequence[Attempt], context: Context, scope: str) -> dict[str, Any]:
    """One project's document: each group resampled on its own, seeded by scope/kind|model/label."""
    out: dict[str, Any] = {}
    for by, name in GROUPINGS:
        block = {}
        for label, rows in sorted(_groups(attempts, by).items()):
            units, totals = _units_and_totals(rows, context)
            block[label] = leaf_metrics(units, totals, resampled_sums(units, f"{scope}/{name}/{label}"))
        out[f"by_{name}"] = block
    return {**out, "by_kind_and_model": _crossed(attempts)}


def reference_platform(projects: dict[str, Sequence[Attempt]], context: Context) -> dict[str, Any]:
    """The platform's document: each group's resample r the sum, over the projects holding that
    group, of the project's own resample r of it (stratified by project)."""
    everything = [row for rows in projects.values() for row in rows]
    out: dict[str, Any] = {}
    for by, name in GROUPINGS:
        block = {}
        for label, rows in sorted(_groups(everything, by).items()):
            units, totals = _units_and_totals(rows, context)
            wanted = resamples_for(len(units))
            sums = np.zeros((wanted, UNIT_COLUMNS))
            for project, own in projects.items():
                mine = _groups(own, by).get(label)
                if mine:
                    sums += resampled_sums(_units_and_totals(mine, context)[0], f"{project}/{name}/{label}")[:wanted]
            block[label] = leaf_metrics(units, totals, sums)
        out[f"by_{name}"] = block
    return {**out, "by_kind_and_model": _crossed(everything)}

"""Estimates with their sample size and a 95% interval: Wilson for proportions, a seeded
percentile bootstrap for means and ratios. Pure and deterministic.

Order independence: the bootstrap sorts its sample before resampling and seeds its generator from
the metric's name, so the same multiset of values gives the same interval whatever order the rows
landed in; sums use `math.fsum`, which is exactly rounded and so independent of order too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
RESAMPLES = 1000
# Resampling is done in slices of at most this many drawn indices, so memory stays flat on a
# platform-wide group of 100,000 rows.
_CHUNK_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class Estimate:
    """A number with what it rests on. `value` is None when nothing was measured (never 0);
    `excluded` counts the rows left out because their input was unknown (undisclosed cost, a leaf
    without its opening row, an object without a use score)."""

    value: float | None
    n: int
    low: float | None = None
    high: float | None = None
    excluded: int = 0
    method: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"value": _round(self.value), "n": self.n,
                "interval": None if self.low is None or self.high is None else [_round(self.low), _round(self.high)],
                "excluded": self.excluded, "method": self.method}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def wilson(successes: int, trials: int, *, excluded: int = 0) -> Estimate:
    """A proportion with its Wilson score interval (well behaved at 0, 1 and small n)."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"wilson: {successes} successes out of {trials} trials")
    if trials == 0:
        return Estimate(None, 0, excluded=excluded, method="wilson")
    p = successes / trials
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return Estimate(p, trials, max(0.0, centre - half), min(1.0, centre + half), excluded, "wilson")


def _seed(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def _resampled_sums(columns: Sequence[np.ndarray], key: str) -> list[np.ndarray]:
    """For each column, RESAMPLES sums of a with-replacement resample of its rows (same rows for
    every column, so ratios stay paired)."""
    n = len(columns[0])
    rng = np.random.Generator(np.random.PCG64(_seed(key)))
    per_chunk = max(1, _CHUNK_ELEMENTS // max(n, 1))
    out: list[list[np.ndarray]] = [[] for _ in columns]
    done = 0
    while done < RESAMPLES:
        size = min(per_chunk, RESAMPLES - done)
        picks = rng.integers(0, n, size=(size, n))
        for index, column in enumerate(columns):
            out[index].append(column[picks].sum(axis=1))
        done += size
    return [np.concatenate(parts) for parts in out]


def _percentiles(samples: np.ndarray) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return math.nan, math.nan
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def bootstrap_mean(values: Iterable[float], key: str, *, excluded: int = 0) -> Estimate:
    """The mean with a percentile-bootstrap interval; `key` names the metric and seeds the draw."""
    sample = sorted(float(v) for v in values)
    if not sample:
        return Estimate(None, 0, excluded=excluded, method="bootstrap")
    mean = math.fsum(sample) / len(sample)
    (sums,) = _resampled_sums([np.asarray(sample)], key)
    low, high = _percentiles(sums / len(sample))
    return Estimate(mean, len(sample), low, high, excluded, "bootstrap")


def bootstrap_ratio(pairs: Iterable[tuple[float, float]], key: str, *, excluded: int = 0) -> Estimate:
    """Σ numerator / Σ denominator over units (e.g. cost over accepted objects, per attempt),
    with a percentile-bootstrap interval that resamples whole units. None when Σ denominator is 0."""
    sample = sorted((float(a), float(b)) for a, b in pairs)
    total = math.fsum(b for _, b in sample)
    if not sample or total == 0:
        return Estimate(None, len(sample), excluded=excluded, method="bootstrap-ratio")
    value = math.fsum(a for a, _ in sample) / total
    numerators, denominators = _resampled_sums(
        [np.asarray([a for a, _ in sample]), np.asarray([b for _, b in sample])], key)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(denominators > 0, numerators / np.where(denominators > 0, denominators, 1), np.nan)
    low, high = _percentiles(ratios)
    return Estimate(value, len(sample), None if math.isnan(low) else low, None if math.isnan(high) else high,
                    excluded, "bootstrap-ratio")

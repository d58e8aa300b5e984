"""Estimates with their sample size and a 95% interval: Wilson for proportions, a seeded
percentile bootstrap for means and ratios. Pure and deterministic.

Order independence: the bootstrap sorts its sample before resampling and seeds its generator from
the metric's name, so the same multiset of values gives the same interval whatever order the rows
landed in; sums use `math.fsum`, which is exactly rounded and so independent of order too.

The resampled indices are numpy's `Generator(PCG64(seed)).integers(0, n)`, replayed in bulk from
the bit generator's raw outputs (`_Draws`): the same numbers, drawn for less.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
RESAMPLES = 1000
# Large samples get fewer resamples, never fewer than MIN_RESAMPLES: the work of one interval is
# about resamples x n, and a platform-wide group of 10,000 attempts has a narrow interval whose
# ends 200 resamples already place well. Samples up to WORK_CAP / RESAMPLES (100) get all 1,000.
MIN_RESAMPLES = 200
WORK_CAP = 100_000
# Resampling is done in slices of about this many drawn indices (256 KiB as int64): a slice's
# draws, their counts and the counts as floats stay in the core's cache from the draw to the
# product, where one slice of every resample at once went through memory three times over (a
# platform-wide group of 10,000 units draws 2,000,000 indices). The draws keep the words drawn
# past a slice for the next one (`_Draws.spare`), so the indices drawn do not depend on how they
# are sliced: the same seed gives the same resamples as one draw of them all.
_SLICE_ELEMENTS = 32_768
# The resampled sums are one thin matrix product per slice of at most this much work (rows x n x
# columns): OpenBLAS runs a product that small on one thread. A bigger one it spreads over every
# core, and on a shared machine the threads mostly wait for each other: 4-10x the CPU time for
# the same sums (measured on the 2-core CI machine, eval's n of 2,000-20,000).
_ONE_THREAD_WORK = 262_144


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


def resamples_for(n: int) -> int:
    return max(MIN_RESAMPLES, min(RESAMPLES, WORK_CAP // max(n, 1)))


class _Draws:
    """The indices `Generator(PCG64(seed)).integers(0, n, dtype=np.int64)` draws, in the same
    order, replayed in bulk: the same numbers, at about half the cost of numpy's own bounded draw,
    which makes one call into the bit generator per index.

    numpy draws an index below n < 2**32 from the generator's 32-bit stream (for PCG64: each
    64-bit output's low half, then its high half) by Lemire's method: a 32-bit word w gives
    (w * n) >> 32, unless (w * n) mod 2**32 falls below 2**32 mod n, when w is rejected and the
    next word tried. Here the words come from `random_raw` (the 64-bit outputs, seen as pairs of
    32-bit words), the rejected ones are dropped, and the words drawn past the indices asked for
    wait for the next call. A test holds this to numpy's own draw.
    """

    def __init__(self, seed: int, n: int) -> None:
        self.bits = np.random.PCG64(seed)
        self.n = n
        self.threshold = (1 << 32) % n
        self.spare = np.zeros(0, dtype=np.uint32)

    def into(self, out: np.ndarray) -> None:
        """Fill `out` (int64, 1-d) with the next len(out) indices."""
        want = out.size
        if self.n == 1 or want == 0:  # numpy draws nothing for a range of one value
            out[:] = 0
            return
        parts = [self.spare] if self.spare.size else []
        got = self.spare.size
        while got < want:
            fresh = self.bits.random_raw((want - got + 1) // 2).view(np.uint32)
            if self.threshold:
                rejected = np.multiply(fresh, np.uint32(self.n)) < self.threshold  # wraps: mod 2**32
                if rejected.any():
                    fresh = fresh[~rejected]
            parts.append(fresh)
            got += fresh.size
        words = parts[0] if len(parts) == 1 else np.concatenate(parts)
        self.spare = words[want:]
        # (w * n) >> 32 in int64: w < 2**32 and n < 2**31, so the product cannot overflow.
        np.multiply(words[:want], np.int64(self.n), out=out, casting="unsafe")
        np.right_shift(out, 32, out=out)


def resampled_sums(units: np.ndarray, key: str) -> np.ndarray:
    """`resamples_for(n)` resamples (with replacement) of the n rows of `units` (n x k, in their
    canonical order), each summed per column: a (resamples x k) array. Whole rows are drawn, so
    the columns of one unit stay together (cost with its objects, an attempt's objects with each
    other)."""
    n, columns = units.shape
    if n >= 1 << 31:
        raise ValueError(f"bootstrap: {n} units; at most 2**31 - 1 can be resampled")
    resamples = resamples_for(n)
    draws = _Draws(_seed(key), n)
    per_slice = max(1, min(resamples, _SLICE_ELEMENTS // max(n, 1)))
    # Resample r of a slice counts into r*n...(r+1)*n-1: one bincount counts the whole slice.
    offsets = (np.arange(per_slice, dtype=np.int64) * n)[:, None]
    picked = np.empty(per_slice * n, dtype=np.int64)
    # A unit count so large that one resample's product would be threaded is summed in parts.
    part = max(1, _ONE_THREAD_WORK // max(1, columns))
    out = np.empty((resamples, columns), dtype=np.float64)
    done = 0
    while done < resamples:
        size = min(per_slice, resamples - done)
        picks = picked[:size * n]
        draws.into(picks)
        picks.reshape(size, n)[:] += offsets[:size]
        # How often each unit was drawn in each resample, then one matrix product: far less
        # memory traffic than gathering every column of every drawn unit.
        counts = np.bincount(picks, minlength=size * n).reshape(size, n).astype(np.float64)
        target = out[done:done + size]
        if n <= part:
            np.matmul(counts, units, out=target)
        else:
            target[:] = 0.0
            for first in range(0, n, part):
                target += counts[:, first:first + part] @ units[first:first + part]
        done += size
    return out


def _percentiles(samples: np.ndarray) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return math.nan, math.nan
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def bootstrap_ratios(units: Iterable[Sequence[float]], ratios: Sequence[tuple[int, int]], key: str) -> list[
        tuple[float | None, float | None, float | None]]:
    """For each (numerator column, denominator column): Σ numerator / Σ denominator over the units
    with a percentile-bootstrap interval from one shared resampling of whole units; (value, low,
    high), all None when Σ denominator is 0. Units are sorted first, so their order never matters."""
    rows = units if isinstance(units, list) else list(units)
    if not rows:
        return [(None, None, None) for _ in ratios]
    widths = set(map(len, rows))
    width = len(rows[0])
    if len(widths) != 1:
        raise ValueError(f"bootstrap_ratios: units of {width} and of other widths")
    # A flat stream of numbers: numpy reads it far faster than a list of tuples.
    array = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=width * len(rows)).reshape(-1, width)
    return ratios_of_sorted(array[canonical_order(array)], ratios, key)


def canonical_order(array: np.ndarray) -> np.ndarray:
    """The permutation that sorts the rows of an n x k array lexicographically (first column
    first): the same order whatever order the rows came in."""
    if array.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return np.lexsort(array.T[::-1])


def ratios_of_sorted(sample: Sequence[Sequence[float]] | np.ndarray, ratios: Sequence[tuple[int, int]],
                     key: str) -> list[tuple[float | None, float | None, float | None]]:
    """`bootstrap_ratios` over units the caller has already put in their canonical (sorted) order
    (rows of an n x k array, or a list of rows)."""
    if len(sample) == 0:
        return [(None, None, None) for _ in ratios]
    array = np.asarray(sample, dtype=np.float64)
    totals = column_totals(array)
    if all(totals[b] == 0 for _, b in ratios):
        return [(None, None, None) for _ in ratios]
    return ratios_of_sums(totals, resampled_sums(array, key), ratios)


def column_totals(units: np.ndarray) -> list[float]:
    """Each column's exactly rounded sum (`math.fsum`: the same whatever order the rows are in)."""
    return [math.fsum(units[:, column].tolist()) for column in range(units.shape[1])]


def stratified_sums(strata: Sequence[np.ndarray], resamples: int) -> np.ndarray:
    """A stratified bootstrap's resampled sums: each stratum's units resampled among themselves
    (`resampled_sums`, with its own seed), and resample r of the whole the sum of every stratum's
    resample r. Each stratum must have drawn at least `resamples`: its first ones are used."""
    if not strata:
        raise ValueError("stratified_sums: no strata")
    short = [len(sums) for sums in strata if len(sums) < resamples]
    if short:
        raise ValueError(f"stratified_sums: a stratum drew {short[0]} resamples, {resamples} are needed")
    out = strata[0][:resamples].copy()
    for sums in strata[1:]:
        out += sums[:resamples]
    return out


def ratios_of_sums(totals: Sequence[float], sums: np.ndarray, ratios: Sequence[tuple[int, int]]) -> list[
        tuple[float | None, float | None, float | None]]:
    """For each (numerator column, denominator column): the ratio of the totals with the
    percentile interval of the resampled sums' ratios (`resampled_sums`, `stratified_sums`);
    all None when the denominator's total is 0."""
    out: list[tuple[float | None, float | None, float | None]] = []
    wanted = [(a, b) for a, b in ratios if totals[b] != 0]
    if not wanted:
        return [(None, None, None) for _ in ratios]
    numerators = sums[:, [a for a, _ in wanted]]
    denominators = sums[:, [b for _, b in wanted]]
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(denominators > 0, numerators / np.where(denominators > 0, denominators, 1), np.nan)
    # Every ratio's ends in one call when no resample left a denominator at 0 (the usual case);
    # numpy's percentile along an axis is its percentile of each column, to the bit.
    if np.isfinite(values).all():
        ends = np.percentile(values, [2.5, 97.5], axis=0)
        intervals = [(float(ends[0, column]), float(ends[1, column])) for column in range(len(wanted))]
    else:
        intervals = [_percentiles(values[:, column]) for column in range(len(wanted))]
    found = dict(zip(wanted, intervals, strict=True))
    for a, b in ratios:
        if totals[b] == 0:
            out.append((None, None, None))
            continue
        low, high = found[(a, b)]
        out.append((totals[a] / totals[b], None if math.isnan(low) else low, None if math.isnan(high) else high))
    return out


def bootstrap_mean(values: Iterable[float], key: str, *, excluded: int = 0) -> Estimate:
    """The mean with a percentile-bootstrap interval; `key` names the metric and seeds the draw."""
    sample = [(float(v), 1.0) for v in values]
    ((value, low, high),) = bootstrap_ratios(sample, [(0, 1)], key)
    return Estimate(value, len(sample), low, high, excluded, "bootstrap")


def bootstrap_ratio(pairs: Iterable[tuple[float, float]], key: str, *, excluded: int = 0) -> Estimate:
    """Σ numerator / Σ denominator over units (e.g. cost over accepted objects, per attempt),
    with a percentile-bootstrap interval that resamples whole units. None when Σ denominator is 0."""
    sample = list(pairs)
    ((value, low, high),) = bootstrap_ratios(sample, [(0, 1)], key)
    return Estimate(value, len(sample), low, high, excluded, "bootstrap-ratio")

"""The bootstrap's replayed draw (verifier.evaluation.intervals._Draws) gives exactly the indices
numpy's own `Generator(PCG64(seed)).integers(0, n)` gives, in the same order, however the draws
are sliced: the seeded intervals, and so every printed number, stay what they were. Ranges where
numpy's rejection step fires often (n near a power of two, large n) are drawn on purpose."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.evaluation.intervals import _Draws, _seed, resampled_sums, resamples_for

RANGES = st.one_of(st.integers(1, 40), st.integers(1, 200_000),
                   st.sampled_from([2**20 + 1, 2**30 + 7, 2**32 // 3 + 1, 2**31 - 1]))


def _numpy_draws(seed: int, n: int, count: int) -> np.ndarray:
    return np.random.Generator(np.random.PCG64(seed)).integers(0, n, size=count, dtype=np.int64)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), n=RANGES, slices=st.lists(st.integers(0, 5_000), min_size=1, max_size=6))
def test_replayed_draws_equal_numpys_bounded_draws_in_any_slicing(seed: int, n: int, slices: list[int]) -> None:
    draws = _Draws(seed, n)
    got = []
    for size in slices:
        out = np.empty(size, dtype=np.int64)
        draws.into(out)
        got.append(out)
    assert np.array_equal(np.concatenate(got), _numpy_draws(seed, n, sum(slices)))


def test_replayed_draws_survive_many_rejections_in_one_slice() -> None:
    # 2**32 mod n is n - 2 here, a third of 2**32: about a third of all words are rejected.
    n = 2**32 // 3 + 1
    assert (1 << 32) % n == n - 2
    draws = _Draws(11, n)
    out = np.empty(100_000, dtype=np.int64)
    draws.into(out)
    assert np.array_equal(out, _numpy_draws(11, n, 100_000))


def testresampled_sums_are_the_sums_of_numpys_resamples() -> None:
    units = np.random.default_rng(3).random((57, 3))
    sums = resampled_sums(units, "some/metric")
    picks = _numpy_draws(_seed("some/metric"), 57, resamples_for(57) * 57).reshape(-1, 57)
    assert np.allclose(sums, units[picks].sum(axis=1), rtol=1e-12, atol=0)

"""``stats.sums.exact_sum`` is ``math.fsum``, bit for bit: the readouts' sums moved to it
without moving a number (issue 31). Reference: Python's ``math.fsum`` (Shewchuk's exactly
rounded summation) on the same arrays."""

import math

import numpy as np
import pytest

from langchef_core.stats.sums import FSUM_BELOW, exact_sum


def _arrays(rng, n):
    """Arrays a readout sums, and ones built to catch a wrong rounding or a lost bit."""
    yield rng.random(n)  # per-query metrics in [0, 1]
    yield rng.random(n) - rng.random(n)  # paired differences
    yield (rng.random(n) < 0.3).astype(float)  # pass/fail and hits
    yield rng.integers(0, 11, n).astype(float)  # counts
    yield rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)  # every scale at once
    values = rng.random(n) - rng.random(n)
    yield np.concatenate([values, -values[: n // 2]])  # heavy cancellation
    yield rng.choice([0.1, 0.2, 0.3, -0.3, 1 / 3, 2 / 3, 2.0 ** -53, 1.0, -0.0], n)  # rounding ties
    yield rng.integers(-5, 5, n) * 2.0 ** rng.integers(-1074, -1000, n)  # subnormals
    yield np.concatenate([[1.0], np.full(n, 2.0 ** -54)])  # many halves of the last bit
    yield np.concatenate([[2.0 ** 60], rng.random(n), [-(2.0 ** 60)]])  # a huge pair cancels


@pytest.mark.parametrize("seed", range(40))
def test_equals_fsum_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(FSUM_BELOW, 20_000))
    for values in _arrays(rng, n):
        assert exact_sum(values).hex() == math.fsum(values).hex()
        assert exact_sum(values[::-1]).hex() == math.fsum(values).hex()  # any order


def test_equals_fsum_on_a_million_values():
    rng = np.random.default_rng(31)
    for values in _arrays(rng, 1_000_000):
        assert exact_sum(values).hex() == math.fsum(values).hex()


@pytest.mark.parametrize("values", [
    np.full(1000, -0.0),  # an exact zero: fsum says which zero
    np.concatenate([np.ones(500), -np.ones(500)]),
    np.concatenate([[np.inf], np.ones(999)]),
    np.concatenate([[np.nan], np.ones(999)]),
    np.ones(10),  # fewer than FSUM_BELOW
    np.empty(0),
])
def test_edges_as_fsum_gives_them(values):
    expected = math.fsum(values)
    got = exact_sum(values)
    assert (math.isnan(got) and math.isnan(expected)) or got.hex() == expected.hex()


def test_errors_as_fsum_raises_them():
    opposite = np.concatenate([[np.inf, -np.inf], np.ones(998)])
    with pytest.raises(ValueError):
        math.fsum(opposite)
    with pytest.raises(ValueError):
        exact_sum(opposite)
    near_the_top = np.concatenate([[1e308, 1e308, -1e308], np.ones(997)])
    with pytest.raises(OverflowError):
        math.fsum(near_the_top)  # an intermediate overflow, though the sum is finite
    with pytest.raises(OverflowError):
        exact_sum(near_the_top)


def test_accepts_lists_and_two_dimensional_arrays():
    values = np.random.default_rng(3).random((40, 30))
    assert exact_sum(values) == math.fsum(values.ravel())
    assert exact_sum(values.ravel().tolist()) == math.fsum(values.ravel())

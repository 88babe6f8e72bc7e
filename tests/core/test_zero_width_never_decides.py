"""A zero-width interval is no evidence: it never decides a verdict or non-inferiority (issue 28).

Degenerate runs are where it appears: every pair differs by the same amount (with the float
noise of 0.4 − 0.3 against 0.3 − 0.2), nothing flipped, every cluster with the same mean
difference, slices and seeds with no spread. 1,000 random degenerate inputs of these kinds go
through every comparison; whenever the interval reported is zero width (to within rounding
of the data's scale), the verdict must be inconclusive and non-inferiority unresolved.
"""

import math

import numpy as np
import pytest

import langchef_core as lc
from langchef_core.stats.slices import compare_slices

CASES = 1000


def _is_zero_width(low, high, *arrays):
    scale = max(float(np.max(np.abs(a))) for a in arrays)
    return high - low <= 1e-9 * max(scale, 1e-300)


def _scores(rng, n):
    """Scores on a grid or in [0, 1] or on a larger scale, so differences carry float noise."""
    kind = rng.integers(0, 3)
    if kind == 0:
        return np.round(rng.integers(0, 11, n) * 0.1, 12)
    if kind == 1:
        return rng.random(n)
    return rng.random(n) * 10.0 ** rng.integers(1, 6)


def _degenerate(rng):
    """One random degenerate run: (kind, baseline, variant, clusters)."""
    n = int(rng.integers(40, 400))
    clusters = None
    if rng.random() < 0.5:
        k = int(rng.integers(5, 40))
        clusters = rng.integers(0, k, n)
        clusters[:k] = np.arange(k)  # every label used
    kind = rng.integers(0, 3)
    if kind == 0:  # nothing flipped
        base = rng.random(n) < rng.random()
        return "binary", base, base.copy(), clusters
    base = _scores(rng, n)
    if kind == 1:  # one shift for every pair, rounding noise included
        return "continuous", base, base + rng.choice([-0.3, -0.1, 0.0, 0.05, 0.2]), clusters
    # Clusters whose mean differences are all equal though pairs differ within them.
    k = int(rng.integers(5, 30))
    clusters = np.repeat(np.arange(k), 4)
    step = np.tile([-0.1, 0.1, -0.05, 0.05], k)
    base = _scores(rng, 4 * k) + 1.0
    return "continuous", base, base + 0.02 + step, clusters


def _check(result, *arrays):
    if _is_zero_width(result.low, result.high, *arrays):
        assert result.verdict == "inconclusive", result
        assert result.noninferiority in (None, "unresolved"), result


def test_no_zero_width_interval_decides_on_a_thousand_degenerate_runs():
    rng = np.random.default_rng(20261203)
    zero_width_seen = 0
    for _ in range(CASES):
        kind, base, var, clusters = _degenerate(rng)
        margin = float(rng.choice([0.001, 0.01, 0.05]))
        compare = lc.compare_binary if kind == "binary" else lc.compare_continuous
        result = compare(base, var, clusters=clusters, margin=margin, resamples=1000)
        zero_width_seen += _is_zero_width(result.low, result.high, base, var)
        _check(result, base.astype(float), var.astype(float))
        if kind == "continuous" and np.ptp(var - base) < 1e-9:
            assert result.verdict == "inconclusive" and result.p_value == 1.0
    assert zero_width_seen > 100  # the test does meet the case it is about


@pytest.mark.parametrize("outcome", ["binary", "continuous"])
@pytest.mark.parametrize("clustered", [False, True])
def test_slices_with_no_spread_do_not_decide(outcome, clustered):
    rng = np.random.default_rng(3)
    n = 150
    slices = np.array(["a", "b", "c"])[np.arange(n) % 3]
    clusters = np.arange(n) // 5 if clustered else None
    if outcome == "binary":
        base = rng.random(n) < 0.6
        var = base.copy()
    else:
        base = rng.integers(2, 9, n) * 0.1
        var = base + 0.1
    result = compare_slices(base, var, slices, column="segment", outcome=outcome,
                            target_weights={"a": 0.5, "b": 0.3, "c": 0.2}, clusters=clusters,
                            margin=0.01, resamples=1000).to_dict()
    for population in ("observed", "target"):
        weighted = result[population]
        if _is_zero_width(weighted["low"], weighted["high"], base.astype(float), var.astype(float)):
            assert weighted["verdict"] == "inconclusive"
            assert weighted["noninferiority"] == "unresolved"
            assert "not read" in weighted["interval_method"]  # and says why


def test_seeds_with_no_spread_do_not_decide():
    """Two seeds per arm with the same mean but different goldens, and the same shift per
    golden: no golden-level and no seed-level spread, so the seed interval has zero width."""
    base = np.tile([0.2, 0.3, 0.4, 0.5], 30)
    other = np.roll(base, 1)
    baseline = {"s1": base, "s2": other}
    variant = {"s1": base + 0.1, "s2": other + 0.1}
    comparison = lc.compare_seeds(baseline, variant, margin=0.01, resamples=1000).comparison
    assert _is_zero_width(comparison.low, comparison.high, base)
    assert comparison.verdict == "inconclusive"
    assert comparison.noninferiority == "unresolved"
    assert "zero-width interval is not evidence" in comparison.note


def test_a_clustered_run_with_equal_cluster_means_falls_back_to_the_pairs_interval():
    k = 12
    clusters = np.repeat(np.arange(k), 4)
    base = np.tile([0.2, 0.4, 0.6, 0.8], k)
    var = base + 0.05 + np.tile([-0.1, 0.1, -0.05, 0.05], k)
    result = lc.compare_continuous(base, var, clusters=clusters, margin=0.01, resamples=1000)
    independent = lc.compare_continuous(base, var, margin=0.01, resamples=1000)
    assert (result.low, result.high) == pytest.approx((independent.low, independent.high))
    assert result.high - result.low > 0.01
    assert "in place of a zero-width cluster-robust interval" in result.interval_method
    assert any("every cluster has the same difference" in w for w in result.warnings)


def test_a_clustered_run_where_nothing_flipped_reads_the_score_interval():
    """The issue's case: 6 users, nothing flipped, margin 1 point: no longer "held" on [0, 0]."""
    result = lc.compare_binary(np.zeros(12), np.zeros(12), clusters=np.repeat(np.arange(6), 2),
                               margin=0.01)
    tango = lc.compare_binary(np.zeros(12), np.zeros(12), margin=0.01)
    # At every number of clusters the score interval is also taken at the effective n and the
    # t quantile (issue 28), so it contains the unclustered one.
    assert result.low <= tango.low and result.high >= tango.high
    assert "in place of a zero-width cluster-robust interval" in result.interval_method
    ten = lc.compare_binary(np.zeros(20), np.zeros(20), clusters=np.repeat(np.arange(10), 2))
    unclustered = lc.compare_binary(np.zeros(20), np.zeros(20))
    assert ten.low <= unclustered.low and ten.high >= unclustered.high
    assert "(no variation between clusters), joined with" in ten.interval_method
    assert result.noninferiority == "unresolved"
    assert result.verdict == "inconclusive"
    assert math.isclose(result.p_value, 1.0)

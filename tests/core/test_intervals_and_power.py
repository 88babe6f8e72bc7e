"""Wilson interval and the detection limit / sample-size planning."""

import math

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

import langchef_core as lc
from langchef_core.stats.power import wilson_formula_limit


@pytest.mark.parametrize("seed", range(5))
def test_wilson_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    for _ in range(30):
        n = int(rng.integers(1, 500))
        k = int(rng.integers(0, n + 1))
        alpha = float(rng.choice([0.01, 0.05, 0.1, 0.025]))
        # statsmodels: proportion_confint(k, n, alpha=alpha, method="wilson")
        expected = proportion_confint(k, n, alpha=alpha, method="wilson")
        np.testing.assert_allclose(lc.wilson_interval(k, n, alpha=alpha), expected, atol=1e-12)


def test_wilson_edges_are_exact():
    low, high = lc.wilson_interval(0, 90)
    assert low == 0.0 and 0 < high < 0.05
    low, high = lc.wilson_interval(90, 90)
    assert high == 1.0 and low > 0.95


def test_detection_limit_when_nothing_flipped_is_the_one_way_flips_limit():
    # The reference page's quiet run of 90 reports 6.0% from the normal formula, where the
    # exact gate (6 one-way flips at alpha 0.05) reads a direction only 45% of the time. The
    # limit is the effect with 80% power to show 6 flips:
    # scipy.optimize.brentq(lambda d: stats.binom.sf(5, 90, d) - 0.8, 0.01, 0.5) = 0.086426.
    assert round(wilson_formula_limit(90, 0), 3) == 0.060
    expected = optimize.brentq(lambda d: stats.binom.sf(5, 90, d) - 0.8, 0.01, 0.5, xtol=1e-14)
    assert lc.detection_limit(90, 0) == pytest.approx(expected, rel=1e-8)
    assert round(lc.detection_limit(90, 0), 4) == 0.0864


def _decision_power_by_scipy(n, rate, effect, alpha=0.05):
    """P(exact McNemar p < alpha and Tango excludes 0, in the effect's direction), summed
    with scipy.stats.binomtest for the exact test and the score statistic for Tango's."""
    z2 = stats.norm.ppf(1 - alpha / 2) ** 2
    losing = (rate - effect) / (2 * rate)
    total = 0.0
    for d in range(1, n + 1):
        weight = stats.binom.pmf(d, n, rate)
        if weight < 1e-15:
            continue
        for k in range(d // 2 + 1):
            if stats.binomtest(k, d, 0.5).pvalue < alpha and (d - 2 * k) ** 2 > z2 * d:
                total += weight * stats.binom.pmf(k, d, losing)
    return total


def test_detection_limit_is_where_the_readouts_rule_reaches_its_power():
    # 20 flips of 200: U = Wilson upper bound of 0.1 (statsmodels proportion_confint) = 0.1417,
    # larger than the limit, so the discordant rate at the limit is U.
    upper = proportion_confint(20, 200, alpha=0.05, method="wilson")[1]
    limit = lc.detection_limit(200, 20)
    assert limit < upper
    assert _decision_power_by_scipy(200, upper, limit) == pytest.approx(0.80, abs=1e-6)
    assert _decision_power_by_scipy(200, upper, 0.99 * limit) < 0.80
    # The spec's normal formula, kept for comparison, is the smaller, optimistic number.
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert wilson_formula_limit(200, 20) == pytest.approx(z * math.sqrt(upper / 200), rel=1e-12)
    assert wilson_formula_limit(200, 20) < limit


def test_more_flips_mean_less_sensitivity():
    assert lc.detection_limit(200, 4) < lc.detection_limit(200, 40)


def test_goldens_needed_is_the_smallest_n_reaching_the_effect():
    n = lc.goldens_needed(0.05, 0.2)
    assert lc.limit_at_rate(n, 0.2) <= 0.05 < lc.limit_at_rate(n - 1, 0.2)


def test_halving_the_effect_needs_about_four_times_the_goldens():
    ratio = lc.goldens_needed(0.025, 0.2) / lc.goldens_needed(0.05, 0.2)
    # Slightly under 4: the Wilson bound on the flip rate tightens as n grows.
    assert 3.5 < ratio < 4.2


def test_continuous_limit_and_sample_size():
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert lc.continuous_detection_limit(0.3, 100) == pytest.approx(z * 0.03)
    n = lc.goldens_needed_continuous(0.05, 0.3)
    assert n == math.ceil((z * 0.3 / 0.05) ** 2)


@pytest.mark.parametrize("call, message", [
    (lambda: lc.wilson_interval(5, 0), "n must be at least 1"),
    (lambda: lc.wilson_interval(6, 5), "k must not exceed n"),
    (lambda: lc.wilson_interval(1, 5, alpha=1.5), "alpha must be a number strictly between 0 and 1"),
    (lambda: lc.detection_limit(10, 11), "discordant must not exceed n"),
    (lambda: lc.detection_limit(0, 0), "n must be at least 1"),
    (lambda: lc.detection_limit(10, 1, power=1.0), "power must be a number strictly between 0 and 1"),
    (lambda: lc.goldens_needed(0.3, 0.1), "needs at least that share of goldens to flip"),
    (lambda: lc.goldens_needed(0, 0.1), "effect must be a difference in pass rate"),
    (lambda: lc.limit_at_rate(10, 1.5), "discordant_rate must be a share between 0 and 1"),
    (lambda: lc.continuous_detection_limit(-1.0, 10), "sd must be a finite non-negative number"),
])
def test_rejects_bad_planning_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()

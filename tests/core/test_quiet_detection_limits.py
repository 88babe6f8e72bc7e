"""Detection limits of quiet real-valued runs (issue 15): never 0, never near 0.

A run whose per-query differences are all equal (retriever-swap's hit@5) or nearly equal
used to report a limit of 0.000 or close to it — a claim that any effect could have been
seen. Two rules prevent it: scores that are all 0 or 1 get the binary limit from the
Wilson bound on their flips, and any other run's sd is bounded from above by at least
what n pairs cannot rule out (``hidden_spread_bound``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

import langchef_core as lc
from langchef_core.stats.power import (continuous_detection_limit_from_differences,
                                       hidden_spread_bound, rare_change_limit)

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)   # 2.8016


def test_zero_one_scores_get_the_binary_limit_of_their_flips():
    # hit@5 on 87 queries, 79 hits in both arms and nothing flipped: the pass/fail limit of a
    # quiet run, the effect at which the exact gate's 6 one-way flips show up 80% of the time:
    # scipy.optimize.brentq(lambda d: stats.binom.sf(5, 87, d) - 0.8, 0.01, 0.5) = 0.089356.
    # (The normal formula gave 6.18 points, with 45% power.)
    hits = np.r_[np.ones(79), np.zeros(8)]
    result = lc.compare_continuous(hits, hits)
    expected = optimize.brentq(lambda d: stats.binom.sf(5, 87, d) - 0.8, 0.01, 0.5, xtol=1e-14)
    assert result.detection_limit == pytest.approx(expected, rel=1e-8)
    assert result.detection_limit == pytest.approx(0.089356, abs=1e-6)
    assert result.detection_limit == pytest.approx(lc.detection_limit(87, 0), rel=1e-12)
    # Three flips: the same as a pass/fail comparison with three discordant pairs.
    variant = hits.copy()
    variant[:3] = 0
    assert lc.compare_continuous(hits, variant).detection_limit == pytest.approx(
        lc.detection_limit(87, 3), rel=1e-12)


def test_near_zero_spread_is_no_more_sensitive_than_zero_spread():
    # 86 equal differences and one moved by 0.001: the chi-square bound alone would give
    # 2.8016 · 0.000108 · 1.15 / sqrt(87) ≈ 0.00004, "limit 0.000" on the page.
    flat = np.full(87, 0.5)
    nudged = flat.copy()
    nudged[0] += 0.001
    zero = lc.compare_continuous(flat, flat).detection_limit
    near = lc.compare_continuous(flat, nudged).detection_limit
    # Rare changes of the whole 0-1 scale (R = 1, median difference 0) read once 6 land:
    # 1 · 0.089356, the one-way flip limit of 87 (above). The rule-of-three sd bound gives
    # less, 2.8016 · sqrt(1 − 0.05^(1/87)) / sqrt(87) = 0.055260, and no longer decides.
    assert zero == pytest.approx(lc.detection_limit(87, 0), rel=1e-12)
    assert zero > Z * math.sqrt(1 - 0.05 ** (1 / 87)) / math.sqrt(87) == pytest.approx(0.055260,
                                                                                       abs=1e-6)
    assert near >= zero
    assert round(near, 3) > 0


def test_the_bound_seen_in_the_data_wins_when_the_spread_is_real():
    rng = np.random.default_rng(5)
    d = rng.normal(0, 0.5, 87)
    chi = d.std(ddof=1) * math.sqrt(86 / stats.chi2.ppf(0.05, 86))
    assert chi > hidden_spread_bound(d, score_range=1.0)
    rare = rare_change_limit(d, score_range=1.0)
    assert Z * chi / math.sqrt(87) > rare
    assert continuous_detection_limit_from_differences(d, score_range=1.0) == pytest.approx(
        Z * chi / math.sqrt(87), rel=1e-12)


def test_rare_changes_win_when_the_spread_is_small():
    rng = np.random.default_rng(5)
    d = rng.normal(0, 0.3, 87)
    # reach: the farthest a difference can lie from the median c, max(|1 − c|, |1 + c|).
    reach = 1 + abs(float(np.median(d)))
    assert continuous_detection_limit_from_differences(d, score_range=1.0) == pytest.approx(
        reach * lc.detection_limit(87, 0), rel=1e-12)


def test_hidden_spread_bound_reference_values():
    # 40 × 0.1 on a 0–1 metric: the farthest a difference can lie from 0.1 is 1.1;
    # 1.1 · sqrt(1 − 0.05^(1/40)) = 1.1 · 0.268622 = 0.295484 (python: math.sqrt).
    assert hidden_spread_bound(np.full(40, 0.1), score_range=1.0) == pytest.approx(0.295484,
                                                                                   abs=1e-6)
    with pytest.raises(ValueError, match="at least one value"):
        hidden_spread_bound([], score_range=1.0)


def _quiet_differences(rng, n: int, share: float, reps: int) -> np.ndarray:
    """Mostly zero, with a rare departure anywhere in [−0.5, 0.5]: the regime of a retriever
    change that moves a handful of queries."""
    departs = rng.random((reps, n)) < share
    return np.where(departs, rng.uniform(-0.5, 0.5, (reps, n)), 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.005, 0.02, 0.05])
def test_the_sd_bound_covers_in_quiet_runs_where_the_chi_square_bound_does_not(share):
    """Simulation: how often each upper bound on the sd reaches the true sd, over 4,000 quiet
    runs of 87 pairs. The level is 95%; the Monte Carlo standard error of a coverage near
    0.95 over 4,000 runs is sqrt(.95·.05/4000) = 0.0034, so 0.95 − 3·0.0034 = 0.94 is the bar.
    The chi-square bound alone falls far short where most runs show 0–4 departures."""
    rng = np.random.default_rng(15)
    n, reps, alpha = 87, 4000, 0.05
    true_sd = math.sqrt(share / 12)      # Var = share · E[U²], U ~ Uniform(−0.5, 0.5)
    runs = _quiet_differences(rng, n, share, reps)
    chi_factor = math.sqrt((n - 1) / stats.chi2.ppf(alpha, n - 1))
    chi_only = runs.std(axis=1, ddof=1) * chi_factor
    ours = np.array([continuous_detection_limit_from_differences(run, score_range=1.0)
                     for run in runs]) * math.sqrt(n) / Z
    covered = float(np.mean(ours >= true_sd))
    chi_covered = float(np.mean(chi_only >= true_sd))
    assert covered >= 0.94, f"share {share}: coverage {covered:.3f}"
    assert chi_covered < 0.90, f"share {share}: chi-square alone covered {chi_covered:.3f}"
    assert np.all(ours > 0)


@pytest.mark.slow
def test_at_the_reported_limit_a_rare_flip_run_is_detected():
    """Simulation: 0/1 scores (hit@k) where 2% of queries flip, all one way at the reported
    limit's size: with the limit read from the Wilson bound the exact paired test rejects in
    at least 80% of 2,000 runs (MC s.e. ≤ 0.009)."""
    rng = np.random.default_rng(16)
    n, reps = 200, 2000
    quiet = lc.detection_limit(n, 4)     # a run with 4 of 200 flips, as planning would see it
    rate = quiet                         # every flip is a fix: difference = flip rate
    detected = 0
    for _ in range(reps):
        fixed = int(rng.binomial(n, rate))
        detected += lc.mcnemar_exact(0, fixed) < 0.05
    assert detected / reps >= 0.80

"""Simulations for protected slices: a regression hidden under an overall improvement is
caught, and protected slices that did not regress rarely breach (family-wise, Holm).

Seeded, so deterministic. Three slices of independent pairs with planted flip rates.
"""

import numpy as np
import pytest

import langchef_core as lc

pytestmark = pytest.mark.slow


def test_planted_protected_regression_under_an_overall_improvement_is_caught():
    rng = np.random.default_rng(7)
    caught, improved = [], []
    for replicate in range(300):
        baseline, variant, labels = _three_slices(rng, new_broke=0.25, new_fixed=0.05)
        result = lc.compare_slices(baseline, variant, labels, column="segment",
                                   target_weights={"established": 0.5, "new": 0.2,
                                                   "returning": 0.3},
                                   protected=["new", "returning"], resamples=1000,
                                   seed=replicate)
        improved.append(result.observed.verdict == "improvement")
        caught.append(result.breaches == ("new",) and not result.passed)
    # Overall +4.4 points (z ≈ 4.4) hides new users at −20 points (z ≈ 4, Holm over 2).
    assert np.mean(improved) >= 0.95
    assert np.mean(caught) >= 0.90


def test_protected_slices_without_a_regression_rarely_breach():
    rng = np.random.default_rng(8)
    false_breaches = []
    for replicate in range(600):
        baseline, variant, labels = _three_slices(rng, new_broke=0.10, new_fixed=0.10)
        result = lc.compare_slices(baseline, variant, labels, column="segment",
                                   target_weights={"established": 0.5, "new": 0.2,
                                                   "returning": 0.3},
                                   protected=["new", "returning"], resamples=1000,
                                   seed=replicate)
        false_breaches.append(not result.passed)
    # Family-wise: a breach needs one side of zero and Holm p < 0.05 over both slices.
    assert np.mean(false_breaches) <= 0.05


def _three_slices(rng, *, new_broke, new_fixed):
    """1200 established (+8 points), 120 new (as given), 300 returning (no change)."""
    plan = [("established", 1200, 0.04, 0.12), ("new", 120, new_broke, new_fixed),
            ("returning", 300, 0.06, 0.06)]
    baseline, variant, labels = [], [], []
    for name, n, p_broke, p_fixed in plan:
        u = rng.random(n)
        change = np.where(u < p_broke, -1, np.where(u < p_broke + p_fixed, 1, 0))
        before = np.where(change == -1, True, np.where(change == 1, False, rng.random(n) < 0.6))
        baseline.append(before)
        variant.append(np.where(change == 0, before, ~before))
        labels += [name] * n
    return np.concatenate(baseline), np.concatenate(variant), np.array(labels)

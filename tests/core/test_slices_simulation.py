"""Simulations for slices: the stratified cluster interval keeps its coverage.

Seeded, so deterministic. The data-generating model has real intra-cluster correlation:
each user has an ability a_u ~ N(0, 1) shared by both arms and a personal treatment effect
b_u ~ N(0, 1); each golden a difficulty e ~ N(0, 0.5²) shared by both arms. A golden passes
when μ + a_u (+ b_u for the variant) + e + ε > 0 with ε ~ N(0, 1), so the true pass rate of
slice g is Φ(μ_g / √(1 + Σ variances)) and the true weighted difference is known exactly.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import langchef_core as lc
from langchef_core.stats.cluster_robust import weighted_cluster_robust_t

pytestmark = pytest.mark.slow

NAMES = ["a", "b"]
MU = {"a": (0.3, 0.5), "b": (0.0, -0.2)}  # (baseline, variant) probit means per slice
ABILITY, EFFECT, DIFFICULTY = 1.0, 1.0, 0.5
TARGET = np.array([0.3, 0.7])


def true_weighted_difference(weights):
    baseline_scale = np.sqrt(1 + ABILITY**2 + DIFFICULTY**2)
    variant_scale = np.sqrt(1 + ABILITY**2 + EFFECT**2 + DIFFICULTY**2)
    return sum(w * (norm.cdf(MU[g][1] / variant_scale) - norm.cdf(MU[g][0] / baseline_scale))
               for w, g in zip(weights, NAMES))


def users_with_slices(rng, users, share_a, nested):
    """Per-golden paired differences, slice index and user; 2-10 goldens per user.

    Nested: each user belongs to one slice. Crossed: each golden draws its own slice, so a
    user's goldens fall in both slices and their correlation crosses slices.
    """
    sizes = rng.integers(2, 11, users)
    user = np.repeat(np.arange(users), sizes)
    ability = rng.normal(0, ABILITY, users)[user]
    effect = rng.normal(0, EFFECT, users)[user]
    if nested:
        stratum = (user >= int(users * share_a)).astype(int)
    else:
        stratum = (rng.random(user.size) >= share_a).astype(int)
    mu_before = np.array([MU[g][0] for g in NAMES])[stratum]
    mu_after = np.array([MU[g][1] for g in NAMES])[stratum]
    difficulty = rng.normal(0, DIFFICULTY, user.size)
    before = mu_before + ability + difficulty + rng.normal(0, 1, user.size) > 0
    after = mu_after + ability + effect + difficulty + rng.normal(0, 1, user.size) > 0
    return after.astype(float) - before.astype(float), stratum, user


def weighted_interval(change, stratum, clusters):
    """The target-weighted CR2 interval; ``clusters`` None treats every golden as its own."""
    codes = np.arange(change.size) if clusters is None else clusters
    differences = np.array([change[stratum == g].mean() for g in range(len(NAMES))])
    robust = weighted_cluster_robust_t(change, stratum, codes, TARGET, differences)
    return robust.low, robust.high


def test_stratified_cluster_interval_keeps_its_coverage_under_intra_cluster_correlation():
    truth = true_weighted_difference(TARGET)
    rng = np.random.default_rng(7)
    hits, naive_hits = [], []
    for replicate in range(4000):
        change, stratum, user = users_with_slices(rng, 300, 0.6, nested=True)
        low, high = weighted_interval(change, stratum, user)
        hits.append(low <= truth <= high)
        if replicate < 500:  # goldens treated as independent: visibly too narrow
            low, high = weighted_interval(change, stratum, None)
            naive_hits.append(low <= truth <= high)
    # 4000 replicates: Monte-Carlo error about 0.35 points. The stratified cluster percentile
    # bootstrap this replaced (issue 12) sat near 94.7% here, a little under nominal; the
    # interval treating goldens as independent covered 0.841.
    assert 0.94 <= np.mean(hits) <= 0.96
    assert np.mean(naive_hits) < 0.90


def test_weighted_estimates_equal_a_hand_computation_on_random_data():
    rng = np.random.default_rng(9)
    for replicate in range(20):
        n = int(rng.integers(50, 400))
        frame = pd.DataFrame({"slice": rng.choice(["p", "q", "r", "s"], n, p=[0.4, 0.3, 0.2, 0.1]),
                              "baseline": rng.random(n) < 0.6, "variant": rng.random(n) < 0.65})
        frame.loc[:3, "slice"] = ["p", "q", "r", "s"]  # every slice present
        weights = dict(zip(["p", "q", "r", "s"], rng.dirichlet(np.ones(4))))
        result = lc.compare_slices(frame["baseline"], frame["variant"], frame["slice"],
                                   column="slice", target_weights=weights, resamples=1000,
                                   seed=replicate)
        rates = frame.groupby("slice")[["baseline", "variant"]].mean()
        by_hand = sum(weights[g] * (rates.loc[g, "variant"] - rates.loc[g, "baseline"])
                      for g in weights)
        shares = frame["slice"].value_counts(normalize=True)
        observed = sum(shares[g] * (rates.loc[g, "variant"] - rates.loc[g, "baseline"])
                       for g in weights)
        assert result.target.difference == pytest.approx(by_hand, abs=1e-12)
        assert result.observed.difference == pytest.approx(observed, abs=1e-12)
        assert result.target.baseline == pytest.approx(
            sum(weights[g] * rates.loc[g, "baseline"] for g in weights), abs=1e-12)

"""Paired comparison of two arms scored on the same goldens.

The verdict comes from a seeded percentile bootstrap interval of the difference
(variant − baseline); the p-value is reported beside it and never decides. Every comparison
also reports the smallest effect the run could have seen, so "inconclusive" always says how
large a change could have hidden in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import bootstrap
from ._validation import (as_binary, as_cluster_codes, as_finite, as_rng, check_alpha,
                          check_margin, check_power, check_resamples, check_same_length)
from .mcnemar import mcnemar_clustered, mcnemar_exact
from .power import continuous_detection_limit, detection_limit
from .records import Record

IMPROVEMENT, REGRESSION, INCONCLUSIVE = "improvement", "regression", "inconclusive"
HELD, FAILED, UNRESOLVED = "held", "failed", "unresolved"


@dataclass(frozen=True)
class Comparison(Record):
    """What every paired comparison reports (ARCHITECTURE §5): the difference variant −
    baseline, its percentile interval, the p-value beside it, the verdict read from the
    interval, the smallest detectable effect, and the non-inferiority outcome."""

    n: int
    difference: float
    low: float
    high: float
    p_value: float
    verdict: str
    detection_limit: float
    noninferiority: str | None
    margin: float | None
    alpha: float
    power: float
    resamples: int
    seed: int | None
    n_clusters: int | None
    design_effect: float
    p_value_method: str


@dataclass(frozen=True)
class ContinuousComparison(Comparison):
    """Paired comparison of a real-valued score (recall, nDCG, a 1-5 rating …)."""

    baseline_mean: float
    variant_mean: float


@dataclass(frozen=True)
class BinaryComparison(Comparison):
    """Paired comparison of pass/fail outcomes; ``broke`` and ``fixed`` are the flips."""

    broke: int
    fixed: int
    both_pass: int
    both_fail: int
    baseline_rate: float
    variant_rate: float


def verdict_from_interval(low: float, high: float) -> str:
    """Regression when the whole interval is below zero, improvement when above, else inconclusive."""
    if high < 0:
        return REGRESSION
    if low > 0:
        return IMPROVEMENT
    return INCONCLUSIVE


def noninferiority_from_interval(low: float, high: float, margin: float | None) -> str | None:
    """Held when the whole interval clears −margin, failed when wholly beyond it, else unresolved."""
    if margin is None:
        return None
    if low > -margin:
        return HELD
    if high < -margin:
        return FAILED
    return UNRESOLVED


def compare_binary(baseline, variant, *, alpha: float = 0.05, power: float = 0.80,
                   resamples: int = 10_000, seed: int | np.random.Generator = 0, clusters=None,
                   margin: float | None = None) -> BinaryComparison:
    """Paired comparison of pass rates: exact McNemar, bootstrap interval, detection limit.

    ``baseline`` and ``variant`` hold one pass/fail outcome per golden, in the same order.
    With ``clusters`` (one label per golden, e.g. the user), clusters are resampled instead
    of goldens and the p-value is Durkalski's clustered McNemar.
    """
    settings = _check_settings(alpha, power, resamples, seed, margin)
    before = as_binary(baseline, "baseline")
    after = as_binary(variant, "variant")
    check_same_length(before, after)
    codes = as_cluster_codes(clusters, before.size)
    change = after.astype(np.int8) - before.astype(np.int8)  # +1 fixed, −1 broke
    n = int(change.size)
    broke, fixed = int(np.count_nonzero(change < 0)), int(np.count_nonzero(change > 0))
    both_pass = int(np.count_nonzero(before & after))
    difference = (fixed - broke) / n
    if codes is None:
        p_value, method, effect = mcnemar_exact(broke, fixed), "exact McNemar", 1.0
        # Three profiles only: broke (−1), unchanged (0), fixed (+1); no pass over the pairs.
        counts = np.array([broke, n - broke - fixed, fixed])
        kept = counts > 0
        profiles = bootstrap.Profiles(np.array([-1.0, 0.0, 1.0])[kept], np.ones(int(kept.sum())),
                                      counts[kept])
    else:
        sizes = np.bincount(codes).astype(float)
        totals = np.bincount(codes, weights=change).astype(float)
        broke_k = np.bincount(codes, weights=change < 0)
        fixed_k = np.bincount(codes, weights=change > 0)
        p_value, method = mcnemar_clustered(broke_k, fixed_k, sizes), "clustered McNemar (Durkalski)"
        effect = design_effect(change.astype(float), totals, sizes)
        profiles = bootstrap.profiles_of_clusters(totals, sizes)
    low, high = bootstrap.percentile_interval(profiles, alpha=settings.alpha,
                                              resamples=settings.resamples, rng=settings.rng)
    limit = detection_limit(n, broke + fixed, alpha=settings.alpha, power=settings.power)
    return BinaryComparison(
        **_common(n, difference, low, high, p_value, limit * math.sqrt(effect), settings,
                  None if codes is None else int(profiles.units), effect, method),
        broke=broke, fixed=fixed, both_pass=both_pass, both_fail=n - both_pass - broke - fixed,
        baseline_rate=float(np.count_nonzero(before)) / n,
        variant_rate=float(np.count_nonzero(after)) / n,
    )


def compare_continuous(baseline, variant, *, alpha: float = 0.05, power: float = 0.80,
                       resamples: int = 10_000, seed: int | np.random.Generator = 0, clusters=None,
                       margin: float | None = None) -> ContinuousComparison:
    """Paired comparison of real-valued scores: Wilcoxon signed-rank, bootstrap interval of
    the mean difference, detection limit (z₁₋α/₂ + z_power)·sd/√n.

    Zeros and ties: Pratt's method (zero differences are ranked, then dropped), so a metric
    that is unchanged on most queries does not inflate the evidence; the normal
    approximation with tie correction is used unless there are at most 50 pairs with no
    zeros and no ties, where the exact distribution is used. All differences zero gives
    p = 1. With ``clusters``, the signed-rank test runs on per-cluster totals (independent
    units) and clusters are resampled for the interval.

    References: Wilcoxon (1945); Pratt (1959), JASA 54:655-667; scipy.stats.wilcoxon.
    """
    settings = _check_settings(alpha, power, resamples, seed, margin)
    before = as_finite(baseline, "baseline")
    after = as_finite(variant, "variant")
    check_same_length(before, after)
    if before.size < 2:
        raise ValueError("a continuous comparison needs at least 2 pairs to estimate their spread")
    codes = as_cluster_codes(clusters, before.size)
    change = after - before
    order = np.lexsort((change,) if codes is None else (change, codes))
    change_sorted = change[order]  # a fixed order makes every float sum order-invariant
    n = int(change.size)
    difference = math.fsum(change_sorted) / n
    spread = float(np.std(change_sorted if codes is None else np.sort(change), ddof=1))
    if codes is None:
        p_value, method = signed_rank_p_value(change_sorted)
        effect, profiles = 1.0, bootstrap.profiles_of_pairs(change_sorted)
    else:
        codes_sorted = codes[order]
        starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
        totals = np.add.reduceat(change_sorted, starts)
        sizes = np.diff(np.r_[starts, n]).astype(float)
        p_value, method = signed_rank_p_value(np.sort(totals))
        method += " on cluster totals"
        effect = design_effect(change_sorted, totals, sizes)
        profiles = bootstrap.profiles_of_clusters(totals, sizes)
    low, high = bootstrap.percentile_interval(profiles, alpha=settings.alpha,
                                              resamples=settings.resamples, rng=settings.rng)
    limit = continuous_detection_limit(spread, n, alpha=settings.alpha, power=settings.power)
    return ContinuousComparison(
        **_common(n, difference, low, high, p_value, limit * math.sqrt(effect), settings,
                  None if codes is None else int(profiles.units), effect, method),
        baseline_mean=math.fsum(np.sort(before)) / n,
        variant_mean=math.fsum(np.sort(after)) / n,
    )


def signed_rank_p_value(differences: np.ndarray) -> tuple[float, str]:
    """Two-sided Wilcoxon signed-rank p-value with Pratt zeros; 1.0 when nothing moved."""
    nonzero = differences[differences != 0]
    if nonzero.size == 0:
        return 1.0, "Wilcoxon signed-rank (no pair differed)"
    exact = differences.size <= 50 and nonzero.size == differences.size and \
        np.unique(np.abs(nonzero)).size == nonzero.size
    method = "exact" if exact else "asymptotic"
    result = stats.wilcoxon(differences, zero_method="pratt", correction=False, method=method)
    return float(result.pvalue), f"Wilcoxon signed-rank ({method}, Pratt zeros)"


def design_effect(differences: np.ndarray, totals: np.ndarray, sizes: np.ndarray) -> float:
    """Variance inflation of the mean difference from clustering, never below 1.

    Ratio of the cluster-robust variance of the mean (Σ_k (t_k − d̄·n_k)² · G/(G−1) / n²)
    to the variance that independent pairs would give (s²/n). It scales the detection limit
    by √deff. A value below 1 (clusters that cancel internally) is floored at 1: with few
    clusters it is mostly noise, and the limit should not claim more than independent pairs.
    """
    n, clusters = differences.size, totals.size
    mean = math.fsum(totals) / n
    independent = float(np.var(differences, ddof=1)) / n if n > 1 else 0.0
    if independent == 0.0:
        return 1.0
    residual = np.sort((totals - mean * sizes) ** 2)
    clustered = float(np.sum(residual)) * clusters / (clusters - 1) / n**2
    return max(1.0, clustered / independent)


@dataclass(frozen=True)
class _Settings:
    alpha: float
    power: float
    resamples: int
    seed: int | None
    rng: np.random.Generator
    margin: float | None


def _check_settings(alpha, power, resamples, seed, margin) -> _Settings:
    return _Settings(alpha=check_alpha(alpha), power=check_power(power),
                     resamples=check_resamples(resamples),
                     seed=None if isinstance(seed, np.random.Generator) else seed,
                     rng=as_rng(seed), margin=check_margin(margin))


def _common(n, difference, low, high, p_value, limit, settings: _Settings, n_clusters,
            effect, method) -> dict:
    return dict(
        n=n, difference=float(difference), low=low, high=high, p_value=float(p_value),
        verdict=verdict_from_interval(low, high), detection_limit=float(limit),
        noninferiority=noninferiority_from_interval(low, high, settings.margin),
        margin=settings.margin, alpha=settings.alpha, power=settings.power,
        resamples=settings.resamples, seed=None if settings.seed is None else int(settings.seed),
        n_clusters=n_clusters, design_effect=float(effect), p_value_method=method,
    )

"""Paired comparison of two arms scored on the same goldens.

The verdict is read from one interval of the difference (variant − baseline): improvement
when it lies wholly above zero, regression when wholly below, else inconclusive. Which
interval depends on the regime, because the percentile bootstrap that would serve
everywhere in large samples undercovers where real runs live — few flips, few clusters,
skewed scores — and each comparison names the one it used in ``interval_method``:

* pass/fail, independent goldens — Tango's score interval (``score_interval``), at every n:
  its coverage holds from a handful of flips to millions of goldens, so one method serves
  where the percentile bootstrap covers and where it does not;
* real-valued scores — the union of Student t and bootstrap-t (``mean_interval``);
* clustered goldens, either outcome — the CR2 cluster-robust t with Imbens–Kolesár df
  (``cluster_robust``); with pass/fail outcomes (or scores that are all 0 or 1), at every
  number of clusters, joined with Tango's interval at the effective sample size n/deff and
  the t quantile at the same df (``design_effect_tango``, ``effective_tango_join``).

The p-value beside the interval tests the same null with the same weighting (exact
McNemar; the larger of the t and bootstrap-t p-values; the cluster-robust t test).

Minimum evidence. A verdict also needs evidence that no interval can fake, and when it is
missing the verdict is inconclusive by rule and ``evidence`` says why:

* pass/fail: a direction needs the exact McNemar p < α as well (the conditional size of an
  asymptotic interval given few flips exceeds α: 4 fixed / 0 broke excludes zero, exact
  p = 0.125). At α = 0.05 that takes at least 6 flips, all one way.
* real-valued: at least ``MIN_PAIRS`` (10) pairs and a spread wider than the rounding of the
  scores' own scale (0.4 − 0.3 and 0.3 − 0.2 are the same difference); a zero-width interval
  never decides a verdict or non-inferiority, and its p-value is 1.
* clustered: at least ``MIN_CLUSTERS`` (5) clusters (fewer: refused, the verdict and
  non-inferiority are not read); a warning below 10. When no cluster's difference varies from
  another's (often: nothing flipped anywhere) the cluster-robust variance is 0 and says
  nothing, so the unclustered interval (Tango's, or the pairs' mean interval) is used instead,
  named in ``interval_method`` and explained in a warning.

Every comparison also reports the smallest effect the run could have seen, so
"inconclusive" always says how large a change could have hidden in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import (Settings, as_binary, as_cluster_codes, as_finite, check_same_length,
                          check_settings)
from .cluster_robust import ClusterRobust, cluster_robust_t, cluster_sums
from .mcnemar import mcnemar_exact
from .floors import MIN_CLUSTERS, MIN_PAIRS, WARN_CLUSTERS
from .mean_interval import mean_interval, skew_warning
from .power import continuous_detection_limit_from_differences, detection_limit
from .records import Record, json_ready
from .score_interval import design_effect_tango, tango_interval
from .sums import exact_sum
from .display import p_text

IMPROVEMENT, REGRESSION, INCONCLUSIVE = "improvement", "regression", "inconclusive"
HELD, FAILED, UNRESOLVED = "held", "failed", "unresolved"
TANGO = "Tango score interval"


@dataclass(frozen=True)
class Comparison(Record):
    """What every paired comparison reports (ARCHITECTURE §5): the difference variant −
    baseline, the interval the verdict is read from and its method, the p-value beside it,
    the verdict, the smallest detectable effect, and the non-inferiority outcome.
    ``evidence`` says why the verdict is inconclusive by rule (minimum evidence not met),
    else None; ``warnings`` name regimes where the interval is known to be fragile."""

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
    interval_method: str
    evidence: str | None
    warnings: tuple[str, ...]

    def to_dict(self) -> dict:
        return json_ready(super().to_dict())


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


def exact_gate(broke: int, fixed: int, p_value: float, alpha: float) -> str | None:
    """Why a pass/fail direction is not read (exact McNemar p ≥ α), or None when it may be."""
    if broke + fixed == 0:
        return "no golden flipped: no evidence of a difference either way"
    if p_value < alpha:
        return None
    needed = math.ceil(math.log2(2 / alpha))
    return (f"{broke} broke and {fixed} fixed: the exact McNemar {p_text(p_value)} is not "
            f"below {alpha:g}, so no direction is read (with {broke + fixed} flips an asymptotic "
            f"interval can exclude zero by chance; at least {needed} flips, all one way, are "
            "needed)")


def cluster_floor(clusters: int) -> str | None:
    """Why a clustered comparison is refused (too few clusters), or None."""
    if clusters >= MIN_CLUSTERS:
        return None
    return (f"only {clusters} clusters: a clustered verdict needs at least {MIN_CLUSTERS} "
            "(with fewer, the cluster-robust degrees of freedom fall to about 1 and the "
            "interval rests on a guess); refused, add clusters")


def cluster_warning(clusters: int, joined: bool = False) -> str | None:
    """Why a clustered interval with fewer than ``WARN_CLUSTERS`` clusters is wide, or None.
    ``joined``: the interval is the effective-n Tango join (``effective_tango_join``), which
    ``interval_method`` names at every number of clusters; the warning is only about width."""
    if not MIN_CLUSTERS <= clusters < WARN_CLUSTERS:
        return None
    interval = ("the interval (the cluster-robust t joined with Tango's score interval at the "
                "effective sample size)" if joined else "the cluster-robust interval")
    return (f"only {clusters} clusters: {interval} is honest but wide; "
            f"{WARN_CLUSTERS} or more clusters give useful precision")


def effective_tango_join(clusters: int, zero_one: bool) -> bool:
    """Whether a clustered interval is joined with the effective-n Tango interval: pass/fail
    differences (or 0/1 scores) from at least ``MIN_CLUSTERS`` clusters, at every number of
    clusters. Where a few clusters hold most of the flips, the cluster-robust t alone held
    non-inferiority at the boundary in 6-18% of simulated runs at K = 5-9 and 3.5-13.5% at
    K = 10-40 (README "Statistics", issue 28)."""
    return zero_one and clusters >= MIN_CLUSTERS


def compare_binary(baseline, variant, *, alpha: float = 0.05, power: float = 0.80,
                   resamples: int = 10_000, seed: int | np.random.Generator = 0, clusters=None,
                   margin: float | None = None) -> BinaryComparison:
    """Paired comparison of pass rates: exact McNemar, Tango interval, detection limit.

    ``baseline`` and ``variant`` hold one pass/fail outcome per golden, in the same order.
    With ``clusters`` (one label per golden, e.g. the user), the interval is the CR2
    cluster-robust t of the mean paired difference (``cluster_robust``) joined with Tango's
    interval at the effective sample size (``effective_tango_join``), the p-value the larger
    of their two tests, and the exact McNemar gate applies to the pooled flips. The
    interval is analytic, so
    ``resamples`` and ``seed`` are recorded but not used here.
    """
    settings = check_settings(alpha, power, resamples, seed, margin)
    before = as_binary(baseline, "baseline")
    after = as_binary(variant, "variant")
    check_same_length(before, after)
    codes = as_cluster_codes(clusters, before.size)
    change = after.astype(np.int8) - before.astype(np.int8)  # +1 fixed, −1 broke
    n = int(change.size)
    broke, fixed = int(np.count_nonzero(change < 0)), int(np.count_nonzero(change > 0))
    both_pass = int(np.count_nonzero(before & after))
    difference = (fixed - broke) / n
    exact_p = mcnemar_exact(broke, fixed)
    warnings: list[str] = []
    if codes is None:
        p_value, method, effect, n_clusters = exact_p, "exact McNemar", 1.0, None
        low, high = tango_interval(broke, fixed, n, alpha=settings.alpha)
        interval_method, refused = TANGO, None
    else:
        robust, effect, n_clusters = _clustered(change.astype(float), codes, settings.alpha)
        p_value = robust.p_value
        method = "cluster-robust t test (CR2), weighting pairs as the difference does"
        low, high = max(-1.0, robust.low), min(1.0, robust.high)
        interval_method = _cluster_method(robust)
        if _zero_width(low, high, 1.0, n):
            # No cluster differs from another (often: nothing flipped anywhere), so the
            # cluster-robust variance is 0 and says nothing; the score interval of the pooled
            # flips is the honest width, and the exact test its p-value.
            tango_low, tango_high = tango_interval(broke, fixed, n, alpha=settings.alpha)
            low, high = min(low, tango_low), max(high, tango_high)
            p_value, method = exact_p, "exact McNemar"
            interval_method = f"{TANGO}{_NO_CLUSTER_VARIATION}"
            warnings.append(_NO_CLUSTER_VARIATION_WARNING)
        joined = effective_tango_join(n_clusters, True)
        if joined:
            low, high, p_value, method, interval_method = _join_effective_tango(
                low, high, p_value, method, interval_method, broke, fixed, n, effect,
                flip_design_effect(change, codes), robust.df, settings.alpha)
        refused = cluster_floor(n_clusters)
        warnings += [w for w in [cluster_warning(n_clusters, joined)] if w]
    # The exact gate is reported where it decides: the interval excludes zero but the
    # exact test does not reject (or nothing flipped at all).
    gated = broke + fixed == 0 or (low > 0 or high < 0)
    evidence = refused or (exact_gate(broke, fixed, exact_p, settings.alpha) if gated else None)
    limit = detection_limit(n, broke + fixed, alpha=settings.alpha, power=settings.power)
    return BinaryComparison(
        **_common(n, difference, low, high, p_value, limit * math.sqrt(effect), settings,
                  n_clusters, effect, method, interval_method, evidence, refused, warnings),
        broke=broke, fixed=fixed, both_pass=both_pass, both_fail=n - both_pass - broke - fixed,
        baseline_rate=float(np.count_nonzero(before)) / n,
        variant_rate=float(np.count_nonzero(after)) / n,
    )


def compare_continuous(baseline, variant, *, alpha: float = 0.05, power: float = 0.80,
                       resamples: int = 10_000, seed: int | np.random.Generator = 0, clusters=None,
                       margin: float | None = None) -> ContinuousComparison:
    """Paired comparison of real-valued scores: interval and p-value of the mean difference
    (``mean_interval``: union of Student t and bootstrap-t, p the larger of the two, both
    testing a zero mean), detection limit from an upper confidence bound on the spread (the
    binary limit on the flips when every score is 0 or 1).

    Minimum evidence: ``MIN_PAIRS`` pairs and a non-zero spread. With ``clusters`` the
    interval and p-value are the CR2 cluster-robust t (``cluster_robust``), joined as in
    ``compare_binary`` when every score is 0 or 1. The bootstrap-t
    draws from ``seed``; the same inputs and seed give the same interval in any row order.
    """
    settings = check_settings(alpha, power, resamples, seed, margin)
    before = as_finite(baseline, "baseline")
    after = as_finite(variant, "variant")
    check_same_length(before, after)
    if before.size < 2:
        raise ValueError("a continuous comparison needs at least 2 pairs to estimate their spread")
    codes = as_cluster_codes(clusters, before.size)
    change = after - before
    change_sorted = np.sort(change)  # a fixed order makes every float sum order-invariant
    n = int(change.size)
    difference = exact_sum(change_sorted) / n
    # The scale of the rounding in the differences: equal differences of 0.4 − 0.3 and
    # 0.3 − 0.2 differ in their last bits, and np.std of them is 1e-17, not 0.
    scale = float(max(np.max(np.abs(before)), np.max(np.abs(after))))
    all_equal = _zero_width(change_sorted[0], change_sorted[-1], scale, 1)
    warnings: list[str] = []
    refused = None
    if codes is None:
        interval = mean_interval(change_sorted, alpha=settings.alpha,
                                 resamples=settings.resamples, rng=settings.rng)
        reach = _score_range(before, after)
        low, high = max(-reach, interval.low), min(reach, interval.high)
        p_value, method = interval.p_value, _MEAN_P_METHOD
        interval_method, effect, n_clusters = interval.method, 1.0, None
        warnings += [w for w in [skew_warning(interval.skewness, n)] if w and not all_equal]
    else:
        robust, effect, n_clusters = _clustered(change, codes, settings.alpha)
        low, high, p_value = robust.low, robust.high, robust.p_value
        method = "cluster-robust t test (CR2), weighting pairs as the difference does"
        interval_method = _cluster_method(robust)
        if not all_equal and _zero_width(low, high, scale, n):
            # Every cluster has the same mean difference, though pairs differ within them:
            # the cluster-robust variance is 0 and says nothing, so the pairs' own interval.
            interval = mean_interval(change_sorted, alpha=settings.alpha,
                                     resamples=settings.resamples, rng=settings.rng)
            low, high = min(low, interval.low), max(high, interval.high)
            p_value, method = interval.p_value, _MEAN_P_METHOD
            interval_method = f"{interval.method}{_NO_CLUSTER_VARIATION}"
            warnings.append(_NO_CLUSTER_VARIATION_WARNING)
        joined = effective_tango_join(n_clusters, zero_one(before) and zero_one(after))
        if joined:  # 0/1 scores are pass/fail outcomes: the same rule
            low, high, p_value, method, interval_method = _join_effective_tango(
                low, high, p_value, method, interval_method,
                int(np.count_nonzero(change_sorted < 0)), int(np.count_nonzero(change_sorted > 0)),
                n, effect, flip_design_effect(change, codes), robust.df, settings.alpha)
        refused = cluster_floor(n_clusters)
        warnings += [w for w in [cluster_warning(n_clusters, joined)] if w]
    if all_equal:
        p_value = 1.0  # as mean_interval says of no spread: a point is no evidence either way
    evidence = refused or _continuous_floor(n, all_equal)
    limit = _continuous_limit(before, after, change_sorted, settings)
    return ContinuousComparison(
        **_common(n, difference, low, high, p_value, limit * math.sqrt(effect), settings,
                  n_clusters, effect, method, interval_method, evidence,
                  refused or evidence, warnings),
        baseline_mean=exact_sum(before) / n,  # exactly rounded in any order: no sort needed
        variant_mean=exact_sum(after) / n,
    )


def _continuous_floor(n: int, all_equal: bool) -> str | None:
    if n < MIN_PAIRS:
        return (f"only {n} pairs: a verdict on a real-valued score needs at least {MIN_PAIRS} "
                "(with fewer, no interval keeps its coverage on skewed scores)")
    if all_equal:
        return ("every pair differs by the same amount (to within rounding): a zero-width "
                "interval is not evidence; the detection limit bounds what could have been "
                "missed")
    return None


_MEAN_P_METHOD = "larger of the Student t and bootstrap-t p-values (tests a zero mean)"
# How many units in the last place of the data's scale, per summed term, an interval may be
# wide and still count as zero width: float rounding, not spread.
_ROUNDING_ULPS = 16
_NO_CLUSTER_VARIATION = (", in place of a zero-width cluster-robust interval (no variation "
                         "between clusters)")
_NO_CLUSTER_VARIATION_WARNING = (
    "every cluster has the same difference, so the cluster-robust interval had zero width and "
    "is no evidence; the interval shown treats the goldens as independent instead, which "
    "may be too narrow if they are not")


def _zero_width(low: float, high: float, scale: float, terms: int) -> bool:
    """True when ``high − low`` is within the rounding of ``terms`` sums at ``scale``."""
    return high - low <= _ROUNDING_ULPS * max(terms, 1) * np.finfo(float).eps * max(scale, 0.0)


def zero_width(low: float, high: float, values: np.ndarray) -> bool:
    """True when an interval computed from ``values`` is only as wide as their rounding: such
    an interval is no evidence and never decides a verdict or non-inferiority."""
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    return _zero_width(low, high, scale, int(values.size))


def _continuous_limit(before: np.ndarray, after: np.ndarray, change_sorted: np.ndarray,
                      settings: Settings) -> float:
    """The smallest detectable effect of a real-valued comparison. Scores that are all 0 or 1
    (hit@k, a recall with one relevant document) are pass/fail outcomes in all but name: their
    limit is the binary one, from the Wilson bound on the share of pairs that flipped, so a
    run where nothing flipped gets the same finite limit as a quiet pass/fail run."""
    if zero_one(before) and zero_one(after):
        flips = int(np.count_nonzero(change_sorted))
        return detection_limit(change_sorted.size, flips, alpha=settings.alpha,
                               power=settings.power)
    return continuous_detection_limit_from_differences(
        change_sorted, score_range=_score_range(before, after), alpha=settings.alpha,
        power=settings.power)


def zero_one(scores: np.ndarray) -> bool:
    """Every score is 0 or 1: pass/fail outcomes written as numbers."""
    return bool(np.all((scores == 0) | (scores == 1)))


def _score_range(before: np.ndarray, after: np.ndarray) -> float:
    """The largest possible |difference| assumed when every difference is equal: the span of
    the observed scores, and at least 1 (the span of a 0–1 metric)."""
    values = np.concatenate([before, after])
    return max(1.0, float(values.max() - values.min()))


def _clustered(change: np.ndarray, codes: np.ndarray, alpha: float):
    change_sorted, totals, sumsq, sizes = cluster_sums(change, codes)
    robust = cluster_robust_t(totals, sizes, sumsq, alpha=alpha)
    return robust, design_effect(change_sorted, totals, sizes), int(totals.size)


def clustered_design_effect(change: np.ndarray, codes: np.ndarray) -> float:
    """``design_effect`` of the differences in their clusters (what ``_clustered`` returns
    beside the cluster-robust t, with the same bits)."""
    change_sorted, totals, _, sizes = cluster_sums(change, codes)
    return design_effect(change_sorted, totals, sizes)


def flip_design_effect(change: np.ndarray, codes: np.ndarray) -> float:
    """The design effect of whether a golden flipped (``design_effect`` of |d|)."""
    flipped = np.abs(change)
    per_cluster = np.bincount(codes, weights=flipped)  # whole counts: exact in any row order
    return design_effect(np.sort(flipped), per_cluster, np.bincount(codes).astype(float))


def design_effect_at(delta: float, flip_share: float, effect: float, flip_effect: float) -> float:
    """The design effect of the mean difference at a true difference ``delta``.

    Clusters differ in how often goldens flip as well as in which way. With flip share π and
    μ = Δ/π the mean of a flip, a cluster's total has variance E[f](1 − μ²) + μ² Var(f), f its
    flips; with Var(f) inflated by the flips' design effect D_f this is the independent
    variance π − Δ² times 1 + μ²(1 − π)(D_f − 1)/(1 − μ²π). The differences' own design
    effect sees the second term only at the observed μ̂ — near 0 when flips go both ways,
    although a difference near −margin needs one-way flips — so each bound of the score
    interval takes the larger of the two at that bound (issue 28: with the differences'
    design effect alone, held at the boundary 3.7–3.8% at K = 8–9, 20 goldens per user, ICC
    0.5; with D_f throughout, intervals 4× as wide as the cluster-robust t at no effect).
    """
    if flip_share <= 0:
        return effect
    mean_flip = min(1.0, abs(delta) / flip_share) ** 2
    # At |Δ| = π = 1 the independent variance is 0: no finite factor, so the flips' own.
    spare = 1 - mean_flip * flip_share
    flips = flip_effect if spare <= 0 else \
        1 + mean_flip * (1 - flip_share) * (flip_effect - 1) / spare
    return max(effect, flips)


def _join_effective_tango(low, high, p_value, method, interval_method, broke, fixed, n, effect,
                          flip_effect, df, alpha):
    """The clustered interval joined with ``design_effect_tango`` (pass/fail differences,
    at every number of clusters), each bound at the design effect of its own difference
    (``design_effect_at``, from a first pass at the differences' design effect); the
    p-value the larger of the two tests (at Δ = 0 the flips add nothing), and both named."""
    first = design_effect_tango(broke, fixed, n, effect, df, alpha=alpha)
    share = (broke + fixed) / n
    at_low = design_effect_at(first.low, share, effect, flip_effect)
    at_high = design_effect_at(first.high, share, effect, flip_effect)
    score_low = design_effect_tango(broke, fixed, n, at_low, df, alpha=alpha).low
    score_high = design_effect_tango(broke, fixed, n, at_high, df, alpha=alpha).high
    return (min(low, score_low), max(high, score_high), max(p_value, first.p_value),
            f"larger of: {method}; the effective-n Tango score test at {df:.1f} df",
            f"{interval_method}, joined with {TANGO} at effective n {n / max(at_low, 1.0):.1f} "
            f"(lower bound) and {n / max(at_high, 1.0):.1f} (upper; n / design effect at each "
            f"bound) and the t quantile at {df:.1f} df (clustered pass/fail outcomes)")


def _cluster_method(robust: ClusterRobust) -> str:
    return (f"cluster-robust t (CR2 variance, Imbens–Kolesár {robust.df:.1f} df at "
            f"ICC {robust.icc:.2f})")


def design_effect(differences: np.ndarray, totals: np.ndarray, sizes: np.ndarray) -> float:
    """Variance inflation of the mean difference from clustering, never below 1.

    Ratio of the cluster-robust variance of the mean (Σ_k (t_k − d̄·n_k)² · G/(G−1) / n²)
    to the variance that independent pairs would give (s²/n). It scales the detection limit
    by √deff. A value below 1 (clusters that cancel internally) is floored at 1: with few
    clusters it is mostly noise, and the limit should not claim more than independent pairs.
    """
    n, clusters = differences.size, totals.size
    mean = exact_sum(totals) / n
    independent = float(np.var(differences, ddof=1)) / n if n > 1 else 0.0
    if independent == 0.0:
        return 1.0
    residual = np.sort((totals - mean * sizes) ** 2)
    clustered = float(np.sum(residual)) * clusters / (clusters - 1) / n**2
    return max(1.0, clustered / independent)


def _common(n, difference, low, high, p_value, limit, settings: Settings, n_clusters,
            effect, method, interval_method, evidence, refused, warnings) -> dict:
    """The shared fields; ``evidence`` blocks the verdict, ``refused`` also non-inferiority."""
    verdict = INCONCLUSIVE if evidence else verdict_from_interval(low, high)
    noninferiority = noninferiority_from_interval(low, high, settings.margin)
    if refused and noninferiority is not None:
        noninferiority = UNRESOLVED
    return dict(
        n=n, difference=float(difference), low=float(low), high=float(high),
        p_value=float(p_value), verdict=verdict, detection_limit=float(limit),
        noninferiority=noninferiority,
        margin=settings.margin, alpha=settings.alpha, power=settings.power,
        resamples=settings.resamples, seed=None if settings.seed is None else int(settings.seed),
        n_clusters=n_clusters, design_effect=float(effect), p_value_method=method,
        interval_method=interval_method, evidence=evidence, warnings=tuple(warnings),
    )

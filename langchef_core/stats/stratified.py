"""Weighted slice differences D_w = Σ_g w_g d_g and their intervals.

Without clusters the interval is the stratified Wald interval D_w ± z √(Σ_g w_g² s_g²/n_g)
(t with Satterthwaite df for real-valued scores), where for pass/fail outcomes each slice's
per-golden variance s_g² is Agresti–Min adjusted — half a flip added each way, two goldens
added — so a thin slice with few or no flips still carries variance. A percentile
bootstrap of D_w undercovers when a thin slice gets a large target weight (180 + 20
goldens weighted 50/50 with 10% flips: 8.6% false positives); the adjusted Wald interval
held 1.4% there and ≥ 95.5% coverage with effects (it errs wide). Kish's effective sample
size n_eff = 1/Σ_g (w_g²/n_g) says how many goldens the weighted estimate is worth; the
readout warns when it is below half the goldens or when a slice with target weight ≥ 0.2,
at least twice its share of the goldens, has fewer than 10 flips.

With clusters (users), D_w is a contrast of the slice means and its interval is the
cluster-robust CR2 t interval of ``cluster_robust.weighted_cluster_robust_t``, whether the
clusters lie inside slices or span them, with Bell–McCaffrey degrees of freedom. The
stratified percentile bootstrap it replaced over-rejected with few or unequal clusters
(ICC 0.3, lognormal sizes, 50/50 target weights: 12.5 / 7.5 / 9.0% false positives at
K = 10 / 20 / 40 clusters spanning slices, 16.3 / 11.3 / 8.8% nested in them). For pass/fail
outcomes (or 0/1 scores) the CR2 interval is joined with the stratified Wald interval at the
effective sample size (``_join_effective_wald``), the analogue of the unweighted effective-n
Tango join: where a few users hold most of the flips the CR2 t alone held a target-weighted
non-inferiority at the boundary in 5.7–12.0% of runs at K = 10–40.

References: Cochran (1977), Sampling Techniques §5.4 and §5A.5 (Satterthwaite df for a
stratified mean); Kish (1965), Survey Sampling §11.7 (effective sample size); Agresti &
Min (2005), Statistics in Medicine 24:729-740 (adding ½ to the cells of a paired 2×2 table);
Bell & McCaffrey (2002), Survey Methodology 28:169-181 (CR2 for a linear contrast).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .cluster_robust import weighted_cluster_robust_t
from .distributions import normal_quantile, t_quantile
from .floors import WARN_CLUSTERS
from .paired import (clustered_design_effect, design_effect_at, effective_tango_join,
                     flip_design_effect, noninferiority_from_interval, verdict_from_interval,
                     zero_one, zero_width)
from .records import Record
from .sums import exact_sum


@dataclass(frozen=True)
class WeightedDifference(Record):
    """The overall difference Σ_g w_g · d_g under one set of slice weights, with its interval."""

    population: str           # "observed" (the goldens' own shares) or "target"
    weights: dict             # slice → weight, every slice present in the goldens
    baseline: float           # Σ_g w_g · (baseline mean in g)
    variant: float            # Σ_g w_g · (variant mean in g)
    difference: float         # variant − baseline
    low: float
    high: float
    verdict: str
    noninferiority: str | None
    margin: float | None
    alpha: float
    resamples: int
    seed: int | None
    resampling: str           # "none: …": both intervals are analytic since issue 12
    redrawn: int              # always 0 now; kept so readout.json keeps its keys
    interval_method: str
    effective_n: float        # Kish: 1 / Σ_g w_g²/n_g (slices with weight > 0)




# ── weighted overall estimates ──────────────────────────────────────────────────────────

def weighted_difference(population, weights_by_slice, *, names, stratum, before, after,
                        cluster_codes: np.ndarray | None, settings,
                        binary: bool) -> WeightedDifference:
    """D_w = Σ_g w_g · d_g (summed slice by slice, exactly rounded: ``sums.exact_sum``) and
    its interval: the stratified (Agresti–Min) Wald interval without clusters, the CR2
    cluster-robust t interval with them (module docstring)."""
    weights = np.array([weights_by_slice[name] for name in names], dtype=float)
    means_before = _slice_means(before.astype(float), stratum, len(names))
    means_after = _slice_means(after.astype(float), stratum, len(names))
    change = after.astype(float) - before.astype(float)
    differences = _slice_means(change, stratum, len(names))
    difference = exact_sum(weights * differences)
    sizes = np.bincount(stratum, minlength=len(names)).astype(float)
    used = weights > 0
    effective_n = 1.0 / exact_sum(weights[used] ** 2 / sizes[used])
    unread = None
    if cluster_codes is None:
        low, high, method = _stratified_wald(change, stratum, weights, differences, sizes,
                                             binary, settings.alpha)
        resampling = "none: analytic stratified variance"
    else:
        robust = weighted_cluster_robust_t(change, stratum, cluster_codes, weights, differences,
                                           alpha=settings.alpha, names=names)
        low, high = robust.low, robust.high
        clusters = _distinct_count(cluster_codes)
        layout = "spanning slices" if _clusters_span_slices(cluster_codes, stratum) else \
            "nested in slices"
        method = (f"cluster-robust t (CR2) over {clusters} clusters {layout}, Bell–McCaffrey "
                  f"{robust.df:.1f} df")
        resampling = "none: cluster-robust variance"
        # A zero-width cluster-robust interval (no variation between clusters) is left as it
        # is and never decides (below), as before the join.
        pass_fail = _zero_one(binary, before, after)
        if effective_tango_join(clusters, pass_fail) and \
                not zero_width(low, high, np.r_[before, after]):
            low, high, joined = _join_effective_wald(low, high, robust.df, change, stratum,
                                                     cluster_codes, weights, differences, sizes,
                                                     settings.alpha)
            method += joined
        unread = _few_clusters_unread(clusters, pass_fail)
        method += unread or ""
    # No difference of means can leave the metric's own range: ±1 for pass/fail, ±the span of
    # the scores (at least 1) otherwise; a Wald interval of one golden per slice would.
    reach = 1.0 if binary else max(1.0, float(np.ptp(np.r_[before, after])))
    low, high = max(-reach, low), min(reach, high)
    # A zero-width interval (no spread, or clusters whose residuals all vanish, to within
    # rounding) never decides (issues 12 and 28).
    flat = zero_width(low, high, np.r_[before, after])
    if flat and not unread:
        method += ("; not read for a verdict or non-inferiority: zero width (no spread between "
                   "the clusters or goldens it rests on)")
    decisive = (-math.inf, math.inf) if unread or flat else (low, high)
    return WeightedDifference(
        population=population, weights=dict(zip(names, weights.tolist())),
        baseline=exact_sum(weights * means_before), variant=exact_sum(weights * means_after),
        difference=difference, low=low, high=high, verdict=verdict_from_interval(*decisive),
        noninferiority=noninferiority_from_interval(*decisive, settings.margin),
        margin=settings.margin, alpha=settings.alpha, resamples=settings.resamples,
        seed=settings.seed, resampling=resampling, redrawn=0, interval_method=method,
        effective_n=effective_n)


def _few_clusters_unread(clusters: int, pass_fail: bool) -> str | None:
    """Why a clustered weighted pass/fail difference is shown but not read, or None.

    With fewer than ``WARN_CLUSTERS`` clusters and pass/fail outcomes (or 0/1 scores), the
    weighted cluster-robust t held a 5-point margin at the boundary in 11–14% of simulated
    runs where a few users hold most of the flips (issue 28, K = 6–8). The join with the
    effective-n stratified Wald interval (``_join_effective_wald``) is measured at K = 10–40
    only, so below 10 clusters the verdict and non-inferiority are still not read."""
    if not pass_fail or clusters >= WARN_CLUSTERS:
        return None
    return (f"; not read for a verdict or non-inferiority: fewer than {WARN_CLUSTERS} "
            "clusters with pass/fail outcomes (its coverage is not established there)")


def _zero_one(binary: bool, before, after) -> bool:
    """Pass/fail outcomes, or scores that are all 0 or 1."""
    return binary or (zero_one(before) and zero_one(after))


def _join_effective_wald(low, high, df, change, stratum, codes, weights, differences, sizes,
                         alpha) -> tuple[float, float, str]:
    """The weighted CR2 interval joined with the stratified Agresti–Min Wald interval at the
    effective sample size: its variance Σ_g w_g² s_g²/n_g times the design effect at each
    bound, with the t quantile at the CR2 df (clustered pass/fail differences).

    As in the unweighted join (``paired._join_effective_tango``), a first pass at the design
    effect of the differences gives each bound, and the bound is then recomputed at the design
    effect of its own difference (``paired.design_effect_at``: the flips' design effect,
    ``paired.flip_design_effect``, weighs in as the difference moves away from 0), with the
    flip share weighted like the difference, Σ_g w_g π_g. Where a few users hold most of the
    flips, the weighted CR2 t alone held non-inferiority at the boundary in 5.7–12.0% of
    simulated runs and covered 87.3–93.8% (K = 10–40, README "Statistics")."""
    codes = np.asarray(codes, dtype=np.int64)
    variance = exact_sum(_stratified_parts(change, stratum, weights, sizes, True))
    estimate = exact_sum(weights * differences)
    quantile = float(t_quantile(1 - alpha / 2, df))
    effect = clustered_design_effect(change, codes)
    flip_effect = flip_design_effect(change, codes)
    flipped = _slice_means((change != 0).astype(float), stratum, weights.size)
    share = exact_sum(weights * flipped)

    def bound(sign, design):
        return estimate + sign * quantile * math.sqrt(variance * design)

    at_low = design_effect_at(bound(-1, effect), share, effect, flip_effect)
    at_high = design_effect_at(bound(1, effect), share, effect, flip_effect)
    method = (f", joined with the stratified Wald interval (Agresti–Min slice variances) with "
              f"its variance times the clusters' design effect at each bound, {at_low:.2f} "
              f"(lower) and {at_high:.2f} (upper), and the t quantile at {df:.1f} df "
              "(clustered pass/fail outcomes)")
    return min(low, bound(-1, at_low)), max(high, bound(1, at_high)), method


def _stratified_parts(change, stratum, weights, sizes, binary) -> np.ndarray:
    """w_g² s_g²/n_g per slice: Agresti–Min adjusted s_g² (pass/fail) or the sample
    variance (scores)."""
    strata = weights.size
    variances = np.empty(strata)
    for index in range(strata):
        inside = np.sort(change[stratum == index])
        size = inside.size
        if binary:
            fixed = float(np.count_nonzero(inside > 0)) + 0.5
            broke = float(np.count_nonzero(inside < 0)) + 0.5
            adjusted = size + 2.0
            variances[index] = ((fixed + broke) / adjusted - ((fixed - broke) / adjusted) ** 2) \
                * size / max(size - 1, 1)
        else:
            variances[index] = float(np.var(inside, ddof=1)) if size > 1 else 0.0
    return weights**2 * variances / sizes


def _stratified_wald(change, stratum, weights, differences, sizes, binary, alpha):
    """Stratified interval of Σ w_g d_g: z with Agresti–Min slice variances (pass/fail),
    t with Satterthwaite df and sample variances (scores)."""
    parts = _stratified_parts(change, stratum, weights, sizes, binary)
    variance = exact_sum(parts)
    if binary:
        quantile = float(normal_quantile(1 - alpha / 2))
        method = "stratified Wald interval, Agresti–Min adjusted slice variances (z)"
    else:
        denominator = exact_sum(parts**2 / np.maximum(sizes - 1, 1))
        df = max(1.0, variance**2 / denominator) if denominator > 0 else float(sizes.sum() - 1)
        quantile = float(t_quantile(1 - alpha / 2, df))
        method = f"stratified t interval, Satterthwaite {df:.1f} df"
    estimate = exact_sum(weights * differences)
    se = math.sqrt(variance)
    return estimate - quantile * se, estimate + quantile * se, method


def thin_slice_warnings(population: str, result: WeightedDifference, *, n: int,
                        observed_share: dict, flips_by_slice: dict | None) -> list[str]:
    """Warnings for a weighted estimate carried by few goldens (Kish n_eff < n/2), or by a
    slice weighted at least 0.2 and at least twice its share of the goldens that has fewer
    than 10 flips (pass/fail)."""
    out = []
    if result.effective_n < n / 2:
        out.append(f"the {population} weights make {n} goldens worth about "
                   f"{result.effective_n:.0f} (Kish effective sample size): the weighted "
                   "difference rests mostly on the thinner, up-weighted slices")
    for name, weight in result.weights.items():
        share = observed_share.get(name, 0.0)
        # Up-weighted (target ≥ twice the slice's share of the goldens), heavy and thin.
        if flips_by_slice is not None and weight >= 0.2 and weight >= 2 * share and \
                flips_by_slice.get(name, 0) < 10:
            out.append(f"slice {name!r} carries {weight:.0%} of the {population} weight but has "
                       f"only {flips_by_slice[name]} flipped goldens: its share of the "
                       "difference is poorly measured")
    return out


def _slice_means(values: np.ndarray, stratum: np.ndarray, strata: int) -> np.ndarray:
    """Mean per slice, each an exactly rounded sum, so the result ignores row order."""
    return np.array([exact_sum(values[stratum == index]) /
                     np.count_nonzero(stratum == index) for index in range(strata)])


def _distinct_count(codes: np.ndarray) -> int:
    """How many distinct values small non-negative integer codes hold. A bincount is one pass
    over the codes; np.unique would sort (or hash) all of them."""
    return int(np.count_nonzero(np.bincount(codes)))


def _clusters_span_slices(cluster_codes: np.ndarray, stratum: np.ndarray) -> bool:
    """Whether some cluster has goldens in two slices: more distinct (cluster, slice) pairs
    than clusters. Each pair is coded as one integer, cluster · slices + slice."""
    strata = int(stratum.max()) + 1
    pairs = _distinct_count(cluster_codes.astype(np.int64) * strata + stratum)
    return pairs > _distinct_count(cluster_codes)


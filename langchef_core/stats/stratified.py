"""Weighted slice differences D_w = Σ_g w_g d_g and their intervals.

Without clusters the interval is the stratified Wald interval D_w ± z √(Σ_g w_g² s_g²/n_g)
(t with Satterthwaite df for real-valued scores), where for pass/fail outcomes each slice's
per-golden variance s_g² is Agresti–Min adjusted — half a flip added each way, two goldens
added — so a thin slice with few or no flips still carries variance. A percentile
bootstrap of D_w undercovers when a thin slice gets a large target weight (180 + 20
goldens weighted 50/50 with 10% flips: 8.6% false positives); the adjusted Wald interval
held 1.4% there and ≥ 95.5% coverage with effects (it errs wide). Kish's effective sample
size n_eff = 1/Σ_g (w_g²/n_g) says how many goldens the weighted estimate is worth; the
readout warns when it is below half the goldens or when a slice with target weight ≥ 0.2
has fewer than 10 flips.

With clusters, the stratified bootstrap is kept: resample within each slice (or whole
clusters when clusters span slices) and recombine the slice means under any weights.

References: Cochran (1977), Sampling Techniques §5.4 and §5A.5 (Satterthwaite df for a
stratified mean); Kish (1965), Survey Sampling §11.7 (effective sample size); Agresti &
Min (2005), Statistics in Medicine 24:729-740 (adding ½ to the cells of a paired 2×2 table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import bootstrap
from .bootstrap import resampled_counts
from .distributions import normal_quantile, t_quantile
from .paired import noninferiority_from_interval, verdict_from_interval
from .records import Record

# Crossed clusters: refuse when more than this share of resamples would miss some slice.
_MAX_MISS_PROBABILITY = 0.05


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
    resampling: str           # how units were redrawn (stratified, clustered, crossed)
    redrawn: int              # crossed clusters only: resamples drawn again for missing a slice
    interval_method: str
    effective_n: float        # Kish: 1 / Σ_g w_g²/n_g (slices with weight > 0)



@dataclass(frozen=True, eq=False)
class StratifiedDraws:
    """Bootstrap draws of every slice's mean difference, from one set of resamples."""

    draws: np.ndarray         # resamples × slices
    resampling: str           # how the units were redrawn
    redrawn: int              # crossed clusters: resamples drawn again for missing a slice

    def weighted(self, weights) -> np.ndarray:
        """Σ_g w_g · d*_g for every resample: the bootstrap distribution of D_w."""
        return self.draws @ np.asarray(weights, dtype=float)


def stratified_differences(change: np.ndarray, stratum: np.ndarray, names: list[str],
                           cluster_codes: np.ndarray | None, *, resamples: int,
                           rng: np.random.Generator) -> StratifiedDraws:
    """Resampled mean paired difference per slice, all slices from the same resamples.

    Without clusters, or with clusters nested in slices, each slice's units are redrawn
    inside the slice with ``bootstrap.resampled_ratios`` (exact multinomial profiles, so a
    slice costs O(resamples × distinct unit profiles)); slices are visited in sorted order
    from one generator. With clusters that span slices, see ``_crossed_differences``.
    ``stratum`` holds each golden's index into ``names`` (the sorted slice names).
    """
    strata = len(names)
    if cluster_codes is not None and _clusters_span_slices(cluster_codes, stratum):
        draws, redrawn = _crossed_differences(change, stratum, names, cluster_codes,
                                              resamples, rng)
        clusters = int(cluster_codes.max()) + 1
        return StratifiedDraws(draws, f"whole clusters across slices ({clusters} clusters "
                                      "span slices)", redrawn)
    draws = np.empty((resamples, strata))
    for index in range(strata):
        inside = stratum == index
        profiles = _unit_profiles(change[inside],
                                  None if cluster_codes is None else cluster_codes[inside])
        draws[:, index] = bootstrap.resampled_ratios(profiles, resamples=resamples, rng=rng)
    if cluster_codes is None:
        return StratifiedDraws(draws, "stratified by slice, goldens resampled within each slice", 0)
    clusters = int(np.unique(cluster_codes).size)
    return StratifiedDraws(draws, f"stratified by slice, {clusters} clusters resampled within "
                                  "their slice", 0)


# ── weighted overall estimates ──────────────────────────────────────────────────────────

def weighted_difference(population, weights_by_slice, *, names, stratum, before, after,
                        draws: StratifiedDraws | None, settings,
                        binary: bool) -> WeightedDifference:
    """D_w = Σ_g w_g · d_g (summed slice by slice with fsum) and its interval: the
    stratified (Agresti–Min) Wald interval without clusters, the stratified bootstrap's
    percentile interval with them (module docstring)."""
    weights = np.array([weights_by_slice[name] for name in names], dtype=float)
    means_before = _slice_means(before.astype(float), stratum, len(names))
    means_after = _slice_means(after.astype(float), stratum, len(names))
    change = after.astype(float) - before.astype(float)
    differences = _slice_means(change, stratum, len(names))
    difference = math.fsum(weights * differences)
    sizes = np.bincount(stratum, minlength=len(names)).astype(float)
    used = weights > 0
    effective_n = 1.0 / math.fsum(weights[used] ** 2 / sizes[used])
    if draws is None:
        low, high, method = _stratified_wald(change, stratum, weights, differences, sizes,
                                             binary, settings.alpha)
        resampling, redrawn = "none: analytic stratified variance", 0
    else:
        low, high = (float(bound) for bound in np.quantile(
            draws.weighted(weights), [settings.alpha / 2, 1 - settings.alpha / 2]))
        method, resampling, redrawn = "stratified percentile bootstrap", draws.resampling, \
            int(draws.redrawn)
    return WeightedDifference(
        population=population, weights=dict(zip(names, weights.tolist())),
        baseline=math.fsum(weights * means_before), variant=math.fsum(weights * means_after),
        difference=difference, low=low, high=high, verdict=verdict_from_interval(low, high),
        noninferiority=noninferiority_from_interval(low, high, settings.margin),
        margin=settings.margin, alpha=settings.alpha, resamples=settings.resamples,
        seed=settings.seed, resampling=resampling, redrawn=redrawn, interval_method=method,
        effective_n=effective_n)


def _stratified_wald(change, stratum, weights, differences, sizes, binary, alpha):
    """Stratified interval of Σ w_g d_g: z with Agresti–Min slice variances (pass/fail),
    t with Satterthwaite df and sample variances (scores)."""
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
    parts = weights**2 * variances / sizes
    variance = math.fsum(parts)
    if binary:
        quantile = float(normal_quantile(1 - alpha / 2))
        method = "stratified Wald interval, Agresti–Min adjusted slice variances (z)"
    else:
        denominator = math.fsum(parts**2 / np.maximum(sizes - 1, 1))
        df = max(1.0, variance**2 / denominator) if denominator > 0 else float(sizes.sum() - 1)
        quantile = float(t_quantile(1 - alpha / 2, df))
        method = f"stratified t interval, Satterthwaite {df:.1f} df"
    estimate = math.fsum(weights * differences)
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
    """Mean per slice, each summed in sorted order so the result ignores row order."""
    return np.array([math.fsum(np.sort(values[stratum == index])) /
                     np.count_nonzero(stratum == index) for index in range(strata)])


def _unit_profiles(change: np.ndarray, codes: np.ndarray | None) -> bootstrap.Profiles:
    if codes is None:
        return bootstrap.profiles_of_pairs(change)
    order = np.lexsort((change, codes))  # a fixed order makes the float sums order-invariant
    codes_sorted, change_sorted = codes[order], change[order]
    starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
    totals = np.add.reduceat(change_sorted, starts)
    sizes = np.diff(np.r_[starts, codes_sorted.size]).astype(float)
    return bootstrap.profiles_of_clusters(totals, sizes)


def _clusters_span_slices(cluster_codes: np.ndarray, stratum: np.ndarray) -> bool:
    pairs = np.unique(np.stack([cluster_codes, stratum]), axis=1).shape[1]
    return pairs > np.unique(cluster_codes).size


def _crossed_differences(change, stratum, names, cluster_codes, resamples, rng):
    """Whole clusters redrawn across slices; each carries its total and size in every slice.

    A resample is K clusters drawn with replacement; slice g's difference is
    Σ_k c_k · T_kg / Σ_k c_k · S_kg. A resample with no golden of some slice has no value
    for it and is drawn again; the expected share of such resamples is bounded by
    Σ_g (1 − K_g/K)^K (K_g clusters touch slice g), and the run is refused above
    ``_MAX_MISS_PROBABILITY`` because the redraws would then distort the interval.
    """
    strata, codes = len(names), cluster_codes  # dense codes 0 … K−1 from as_cluster_codes
    clusters = int(codes.max()) + 1
    order = np.lexsort((change, stratum, codes))
    key = codes[order] * strata + stratum[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    cells = key[starts]
    totals = np.zeros((clusters, strata))
    sizes = np.zeros((clusters, strata))
    totals[cells // strata, cells % strata] = np.add.reduceat(change[order], starts)
    sizes[cells // strata, cells % strata] = np.diff(np.r_[starts, key.size])
    touching = np.count_nonzero(sizes > 0, axis=0)
    miss = float(np.sum((1 - touching / clusters) ** clusters))
    if miss > _MAX_MISS_PROBABILITY:
        thinnest = int(np.argmin(touching))
        raise ValueError(
            f"clusters span slices, and slice {names[thinnest]!r} has goldens from "
            f"only {int(touching[thinnest])} of {clusters} clusters: about {miss:.0%} of cluster "
            "resamples would miss a slice entirely; add clusters to the thin slices, declare "
            "coarser slices, or choose a cluster column nested in the slice column")
    profiles, multiplicity = np.unique(np.hstack([totals, sizes]), axis=0, return_counts=True)
    profile_totals, profile_sizes = profiles[:, :strata], profiles[:, strata:]
    draws = np.empty((resamples, strata))
    filled, redrawn = 0, 0
    while filled < resamples:
        for rows, counts in resampled_counts(multiplicity, resamples - filled, rng,
                                             columns_per_row=strata):
            counts = counts.astype(float)
            denominators = counts @ profile_sizes
            complete = np.all(denominators > 0, axis=1)
            kept = (counts @ profile_totals)[complete] / denominators[complete]
            draws[filled:filled + kept.shape[0]] = kept
            filled += kept.shape[0]
            redrawn += int(np.count_nonzero(~complete))
    return draws, redrawn

"""Target-weighted slice differences with clusters where a few users hold most flips.

Issue 28 follow-up: ``compare_slices(..., clusters=..., target_weights=..., margin=...)``
reads the target-weighted difference (``SliceAnalysis.target``, a ``WeightedDifference``:
``.noninferiority``, ``.low``, ``.high``). Before this benchmark it came from the weighted
CR2 t alone, which was never measured where a few users hold most flips; here it is, at K = 10 / 20 / 40 with the uneven flip-rate generator of
``test_small_k_clusters_simulation`` (each user's flip rate Beta with mean 0.2; ICC 0.5 with
geometric sizes of mean 20, or ICC 0.3 with 20 goldens each), two slices laid out as in
``test_small_sample_simulation::test_clustered_weighted_slices`` ('spanning': 15% of each
user's goldens in the thin slice; 'nested': 30% of the users), target weights 50/50 (the
observed shares are about 15/85 or 30/70). Flips are fixes with a slice's own probability,
so the slices differ: thin Δ = −8, big Δ = −2 points, and the true target-weighted
difference is 0.5 · (−8) + 0.5 · (−2) = −5 points = −margin.

Per cell, on the same runs:

* held: share of runs reading target non-inferiority "held" (target ≤ 3.5%);
* coverage of −margin by the target interval (target ≥ 93.5%);
* the median width of each rule's interval over the CR2 t's.

Rules, each a union with the weighted CR2 t (cf. ``paired._join_effective_tango``):

* "CR2": the weighted CR2 t alone (the join switched off), the rule before this benchmark;
* "join": what ``compare_slices`` does now (``stratified._join_effective_wald``): the
  stratified Agresti–Min Wald interval with each bound's variance times the design effect
  at that bound (``paired.design_effect_at``, flip share weighted by the target weights,
  from a first pass at the differences' design effect) and the t quantile at the CR2 df;
* alternatives measured and not taken: "wald·Df", the Wald variance times the flips' design
  effect ``paired.flip_design_effect`` throughout (2–3.6× as wide as the CR2 t);
  "wald·Dg@bound", the join with each slice's own design effects (no better where the join
  is weakest, K = 40 nested); "wald·D@fixed", the design effect at each bound iterated to
  its fixed point (wider, no better there either).

Rates carry their Monte Carlo standard error √(p(1 − p)/R).

    python benchmarks/weighted_clustered_slices.py [--reps 600] [--clusters 10 20 40]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

import langchef_core as lc
from langchef_core.stats import paired, stratified
from langchef_core.stats.distributions import normal_quantile, t_quantile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.core.test_small_k_clusters_simulation import MARGIN  # noqa: E402
from tests.core.test_small_sample_simulation import mc_se  # noqa: E402
from tests.core.test_weighted_clustered_flip_rates_simulation import (  # noqa: E402
    TARGET, TRUE, weighted_flip_rates)

GENERATORS = {"ICC 0.5 geometric": (0.5, "geometric"), "ICC 0.3 equal": (0.3, "equal")}


def prototypes(b, v, codes, labels, cr2_low, cr2_high, df, alpha=0.05):
    """The alternatives to the join (low, high), each a union with the CR2 interval."""
    names = sorted(TARGET)
    stratum = np.searchsorted(names, labels)
    weights = np.array([TARGET[name] for name in names])
    change = v.astype(float) - b.astype(float)
    differences = stratified._slice_means(change, stratum, len(names))
    sizes = np.bincount(stratum, minlength=len(names)).astype(float)
    low, high, _ = stratified._stratified_wald(change, stratum, weights, differences, sizes,
                                               True, alpha)
    z = float(normal_quantile(1 - alpha / 2))
    se = (high - low) / (2 * z)
    estimate = (high + low) / 2
    quantile = float(t_quantile(1 - alpha / 2, df))
    codes_int = codes.astype(np.int64)
    flip_effect = paired.flip_design_effect(change, codes_int)
    out = {}
    s = se * math.sqrt(flip_effect)
    out["wald·Df"] = (min(cr2_low, estimate - quantile * s), max(cr2_high, estimate + quantile * s))
    # The differences' own design effect (paired.clustered_design_effect), then each bound at its own.
    effect = paired.clustered_design_effect(change, codes_int)
    flip_share = float(sum(weights[i] * np.mean(change[stratum == i] != 0)
                           for i in range(len(names))))
    first_low = estimate - quantile * se * math.sqrt(effect)
    first_high = estimate + quantile * se * math.sqrt(effect)
    at_low = paired.design_effect_at(first_low, flip_share, effect, flip_effect)
    at_high = paired.design_effect_at(first_high, flip_share, effect, flip_effect)
    # The design effect at each bound iterated to its fixed point (3 passes).
    lo, hi = estimate - quantile * se * math.sqrt(at_low), estimate + quantile * se * math.sqrt(at_high)
    for _ in range(3):
        lo = estimate - quantile * se * math.sqrt(
            paired.design_effect_at(lo, flip_share, effect, flip_effect))
        hi = estimate + quantile * se * math.sqrt(
            paired.design_effect_at(hi, flip_share, effect, flip_effect))
    out["wald·D@fixed"] = (min(cr2_low, lo), max(cr2_high, hi))
    # Per slice: each slice's variance part times its own design effect at the bound.
    parts = stratified._stratified_parts(change, stratum, weights, sizes, True)
    per_slice = []
    for i in range(len(names)):
        inside = stratum == i
        c = np.unique(codes_int[inside], return_inverse=True)[1]
        if np.unique(c).size < 2:
            per_slice.append((1.0, 1.0, 0.0))
            continue
        e = paired.clustered_design_effect(change[inside], c)
        per_slice.append((e, paired.flip_design_effect(change[inside], c),
                          float(np.mean(change[inside] != 0))))

    def var_at(bound):
        return sum(parts[i] * paired.design_effect_at(bound, flip_share, e, f)
                   for i, (e, f, _) in enumerate(per_slice))
    first = sum(parts[i] * e for i, (e, _, _) in enumerate(per_slice))
    lo = estimate - quantile * math.sqrt(var_at(estimate - quantile * math.sqrt(first)))
    hi = estimate + quantile * math.sqrt(var_at(estimate + quantile * math.sqrt(first)))
    out["wald·Dg@bound"] = (min(cr2_low, lo), max(cr2_high, hi))
    return out


def cell(clusters, generator, layout, reps, seed):
    icc, sizes = GENERATORS[generator]
    rng = np.random.default_rng(seed)
    held = {"CR2": 0, "join": 0, "wald·Df": 0, "wald·Dg@bound": 0,
            "wald·D@fixed": 0}
    covered = dict.fromkeys(held, 0)
    ratios = {"join": [], "wald·Df": [], "wald·Dg@bound": [],
              "wald·D@fixed": []}
    method = ""
    for _ in range(reps):
        b, v, g, labels = weighted_flip_rates(rng, clusters, icc, sizes, layout)
        with mock.patch.object(stratified, "effective_tango_join", return_value=False):
            target = lc.compare_slices(b, v, labels, column="s", clusters=g,
                                       target_weights=TARGET, margin=MARGIN).target
        joined = lc.compare_slices(b, v, labels, column="s", clusters=g, target_weights=TARGET,
                                   margin=MARGIN).target
        method = joined.interval_method
        df = float(method.split("Bell–McCaffrey ")[1].split(" df")[0])
        intervals = {"CR2": (target.low, target.high), "join": (joined.low, joined.high)}
        intervals.update(prototypes(b, v, g, labels, target.low, target.high, df))
        readings = {"CR2": target.noninferiority, "join": joined.noninferiority}
        for name, (low, high) in intervals.items():
            low, high = max(-1.0, low), min(1.0, high)
            # CR2 and the join: the library's own reading; prototypes: the lower bound.
            held[name] += readings[name] == "held" if name in readings else low > -MARGIN
            covered[name] += low <= TRUE <= high
            if name in ratios and target.high > target.low:   # a zero-width CR2 has no ratio
                ratios[name].append((high - low) / (target.high - target.low))
    return held, covered, {k: float(np.median(r)) for k, r in ratios.items()}, method


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=600)
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--generators", nargs="+", default=list(GENERATORS))
    parser.add_argument("--layouts", nargs="+", default=["nested", "spanning"])
    parser.add_argument("--seed", type=int, default=2830)
    args = parser.parse_args(argv)
    reps = args.reps
    print(f"true target-weighted Δ = {TRUE:+.3f} (margin {MARGIN}), target weights {TARGET}, "
          f"R = {reps} per cell")
    print(f"{'K':>3} {'generator':<18} {'layout':<9} {'rule':<13} {'held %':>14} "
          f"{'coverage %':>14} {'width×':>7}")
    for clusters in args.clusters:
        for generator in args.generators:
            for layout in args.layouts:
                start = time.process_time()
                seed = args.seed + clusters + 7 * list(GENERATORS).index(generator) + \
                    (100 if layout == "spanning" else 0)
                held, covered, ratios, method = cell(clusters, generator, layout, reps, seed)
                for name in held:
                    h, c = held[name] / reps, covered[name] / reps
                    width = f"{ratios[name]:7.2f}" if name in ratios else f"{'1':>7}"
                    print(f"{clusters:>3} {generator:<18} {layout:<9} {name:<13} "
                          f"{100 * h:6.1f} ± {100 * mc_se(h, reps):4.2f} "
                          f"{100 * c:6.1f} ± {100 * mc_se(c, reps):4.2f} {width}", flush=True)
                print(f"    ({time.process_time() - start:.1f} s CPU; {method})", flush=True)


if __name__ == "__main__":
    main()

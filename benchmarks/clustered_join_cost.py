"""What the effective-n Tango join costs clustered pass/fail comparisons at K = 10/20/40.

Issue 28: ``compare_binary`` with clusters joins the CR2 cluster-robust t with Tango's score
interval at the effective sample size at every number of clusters (``effective_tango_join``).
This prints, side by side for the join and for the CR2 t alone (the join switched off), on
the same simulated runs:

* NI held at the boundary (true Δ = −margin, margin 5 points) and coverage there;
* the median width of the joined interval over the CR2 t's (same runs);
* power: the share of runs with a true improvement of +14 points that read "improvement".

The generators are those of the simulation tests: uneven flip rates (each user's flip rate
Beta with mean 0.2, ICC 0.5 with geometric sizes of mean 20 or ICC 0.3 with 20 goldens
each; a few users hold most flips; ``test_small_k_clusters_simulation``) and uneven flip
directions (ICC 0.3, lognormal sizes, median 8; ``test_small_sample_simulation``). Rates carry their Monte Carlo standard error
√(p(1 − p)/R).

    .venv/bin/python benchmarks/clustered_join_cost.py [--reps 600] [--clusters 10 20 40]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

import langchef_core as lc
from langchef_core.stats import paired

# The generators are the simulation tests' own, so the figures here are theirs.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.core.test_small_k_clusters_simulation import (  # noqa: E402
    MARGIN, _boundary_share, _clustered_flip_rates)
from tests.core.test_small_sample_simulation import _clustered_binary, mc_se  # noqa: E402

# Power is read at a planted improvement Δ = 0.2 · (2 · 0.85 − 1) = +0.14 (85% of flips are
# fixes) in every generator; at K = 10 with ICC 0.5 almost nothing reaches it either way.
GENERATORS = {
    "uneven flip rates (ICC 0.5, geometric sizes)": (
        lambda rng, k, share: _clustered_flip_rates(rng, k, share, 0.5), _boundary_share()),
    "uneven flip rates (ICC 0.3, 20 goldens each)": (
        lambda rng, k, share: _clustered_flip_rates(rng, k, share, 0.3, "equal"),
        _boundary_share()),
    "uneven flip directions (ICC 0.3, lognormal sizes)": (
        lambda rng, k, share: _clustered_binary(rng, k, share), 0.5 - MARGIN / 0.4),
}
EFFECT_SHARE = 0.85


def cr2_alone(*args, **kwargs):
    """``compare_binary`` as it reads with the join switched off (the CR2 t alone)."""
    with mock.patch.object(paired, "effective_tango_join", lambda clusters, zero_one: False):
        return lc.compare_binary(*args, **kwargs)


def measure(generate, boundary_share, clusters, reps, seed):
    rng = np.random.default_rng(seed)
    held = np.zeros((reps, 2), bool)
    covered = np.zeros((reps, 2), bool)
    found = np.zeros((reps, 2), bool)
    ratio = np.empty(reps)
    for rep in range(reps):
        b, v, g = generate(rng, clusters, boundary_share)
        joined = lc.compare_binary(b, v, clusters=g, margin=MARGIN)
        alone = cr2_alone(b, v, clusters=g, margin=MARGIN)
        for column, result in enumerate((joined, alone)):
            held[rep, column] = result.noninferiority == "held"
            covered[rep, column] = result.low <= -MARGIN <= result.high
        ratio[rep] = (joined.high - joined.low) / max(alone.high - alone.low, 1e-12)
        b, v, g = generate(rng, clusters, EFFECT_SHARE)
        found[rep] = [lc.compare_binary(b, v, clusters=g).verdict == "improvement",
                      cr2_alone(b, v, clusters=g).verdict == "improvement"]
    return held.mean(axis=0), covered.mean(axis=0), found.mean(axis=0), float(np.median(ratio))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=600)
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 20, 40])
    args = parser.parse_args()
    reps = args.reps

    def rate(p):
        return f"{100 * p:5.1f} ± {100 * mc_se(p, reps):.1f}"

    print(f"R = {reps} runs per cell; joined | CR2 t alone; rates in % ± MC se")
    for index, (label, (generate, boundary)) in enumerate(GENERATORS.items()):
        print(f"\n{label}")
        print(f"{'K':>3}  {'NI held at boundary':>25}  {'coverage at boundary':>25}  "
              f"{'width ratio':>11}  {'power':>25}  {'s':>4}")
        for clusters in args.clusters:
            start = time.perf_counter()
            held, covered, found, ratio = measure(generate, boundary, clusters, reps,
                                                  seed=4000 + 100 * index + clusters)
            print(f"{clusters:>3}  {rate(held[0])} | {rate(held[1])}  "
                  f"{rate(covered[0])} | {rate(covered[1])}  {ratio:10.2f}×  "
                  f"{rate(found[0])} | {rate(found[1])}  {time.perf_counter() - start:4.0f}")


if __name__ == "__main__":
    main()

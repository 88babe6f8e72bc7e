"""Paired comparison speed: langchef_core against scipy.stats.bootstrap(paired=True).

Both compute a 95% percentile interval of the paired mean difference from 10,000
resamples. scipy resamples pairs (O(resamples × n)); langchef draws how many pairs of each
distinct profile were picked (O(resamples × profiles)), which is exact in distribution.
langchef's time includes everything a readout needs (interval, p-value, detection limit);
scipy's covers the interval alone.

scipy at 10^6 pairs × 10,000 resamples would run for many minutes, so its resamples are
capped (``--scipy-cell-cap`` resample×pair cells) and its time is scaled linearly to 10,000
resamples; the cap is printed beside every scaled figure.

    .venv/bin/python benchmarks/bench_compare.py [--sizes 1000 100000 1000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

import langchef_core as lc

RESAMPLES = 10_000


def timed(function, repeat: int = 3) -> float:
    """Best of ``repeat`` wall-clock runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def scipy_paired_bootstrap(baseline, variant, resamples):
    def difference(b, v, axis=-1):
        return np.mean(v, axis=axis) - np.mean(b, axis=axis)
    return stats.bootstrap((baseline, variant), difference, paired=True, vectorized=True,
                           n_resamples=resamples, method="percentile", batch=max(1, 2_000_000 // baseline.size),
                           random_state=np.random.default_rng(0))


def scipy_time(baseline, variant, cap: int) -> tuple[float, int]:
    resamples = max(10, min(RESAMPLES, cap // baseline.size))
    seconds = timed(lambda: scipy_paired_bootstrap(baseline, variant, resamples), repeat=1)
    return seconds * RESAMPLES / resamples, resamples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--scipy-cell-cap", type=int, default=200_000_000)
    arguments = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'kind':<26}{'n':>10}{'langchef s':>12}{'scipy s':>12}{'scipy resamples':>17}{'ratio':>10}")
    for n in arguments.sizes:
        cases = {
            "binary (pass/fail)": (rng.random(n) < 0.80, rng.random(n) < 0.78, lc.compare_binary),
            "continuous (recall grid)": (rng.integers(0, 11, n) / 10, rng.integers(0, 11, n) / 10,
                                         lc.compare_continuous),
            "continuous (distinct)": (rng.random(n), rng.random(n), lc.compare_continuous),
        }
        for kind, (baseline, variant, compare) in cases.items():
            baseline_f, variant_f = baseline.astype(float), variant.astype(float)
            ours = timed(lambda: compare(baseline, variant, resamples=RESAMPLES),
                         repeat=1 if kind == "continuous (distinct)" and n >= 100_000 else 3)
            theirs, used = scipy_time(baseline_f, variant_f, arguments.scipy_cell_cap)
            capped = "" if used == RESAMPLES else " (scaled)"
            print(f"{kind:<26}{n:>10}{ours:>12.4f}{theirs:>12.2f}{used:>10}{capped:<7}{theirs / ours:>10.1f}x",
                  flush=True)


if __name__ == "__main__":
    main()

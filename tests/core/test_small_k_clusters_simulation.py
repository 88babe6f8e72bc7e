"""Issue 28: clustered pass/fail comparisons with 5–9 clusters.

Targets (nominal 5% / 95%): non-inferiority "held" at the boundary (true difference =
−margin) ≤ 3.5%, coverage ≥ 93.5%, false positives ≤ 6%. Two ways for clusters to differ:

* flip rates: each cluster's share of flipped goldens is Beta with mean 0.2 and ICC 0.3 or
  0.5 and the direction of a flip is the same coin everywhere, geometric sizes (mean 20) or
  20 each: a few clusters hold most of the flips. This is the regime of the issue, where the
  cluster-robust t alone held non-inferiority at the boundary in 6–18% of runs (K = 5–9)
  and covered 82–93%;
* flip directions: each cluster's share of fixes among its flips is Beta (ICC 0.3 or 0.5),
  lognormal sizes (median 8), the generator of ``test_small_sample_simulation``.

Monte Carlo error √(p(1 − p)/R): at R = 600 about 0.64 points at 3.5%, 1.0 at 93.5%. The
whole module runs in under a minute on one core.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import langchef_core as lc
from tests.core.test_small_sample_simulation import _clustered_binary, mc_se

pytestmark = pytest.mark.slow
MARGIN = 0.05
REPS = 600


def _clustered_flip_rates(rng, clusters, share_fixed, icc, sizes="geometric", rate=0.2):
    """Pairs in clusters whose flip rate is Beta(mean ``rate``, ICC ``icc``); every flip is
    a fix with probability ``share_fixed`` wherever it falls. Δ = rate · (2 share − 1)."""
    if sizes == "geometric":
        counts = rng.geometric(1 / 20, clusters)
    else:
        counts = np.full(clusters, 20)
    spread = (1 - icc) / icc
    flip_rate = rng.beta(rate * spread, (1 - rate) * spread, clusters)
    codes = np.repeat(np.arange(clusters), counts)
    return (*flip_pairs(rng, flip_rate[codes], share_fixed), codes)


def flip_pairs(rng, flip_rate, share_fixed):
    """Baseline and variant outcomes of pairs that flip with probability ``flip_rate`` (one
    per pair), a flip being a fix with probability ``share_fixed`` (a number or one per pair);
    a pair that does not flip passes in both arms."""
    flipped = rng.random(flip_rate.size) < flip_rate
    fixed = flipped & (rng.random(flip_rate.size) < share_fixed)
    baseline = ~fixed
    variant = baseline.copy()
    variant[fixed] = True
    variant[flipped & ~fixed] = False
    return baseline, variant


def _boundary_share(rate=0.2):
    return 0.5 - MARGIN / (2 * rate)   # Δ = rate · (2 share − 1) = −MARGIN


def _check(label, fpr, coverage, held, reps):
    print(f"{label}: FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f}, coverage {coverage:.4f} ± "
          f"{mc_se(coverage, reps):.4f}, NI held at the boundary {held:.4f} ± "
          f"{mc_se(held, reps):.4f} (R={reps})")
    assert fpr <= 0.06, f"{label}: FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f}"
    assert coverage >= 0.935, f"{label}: coverage {coverage:.4f} ± {mc_se(coverage, reps):.4f}"
    assert held <= 0.035, f"{label}: NI held {held:.4f} ± {mc_se(held, reps):.4f}"


@pytest.mark.parametrize("clusters, icc, sizes", [
    (5, 0.5, "geometric"), (6, 0.5, "geometric"), (8, 0.5, "geometric"), (9, 0.3, "geometric"),
    (6, 0.3, "equal"), (8, 0.5, "equal"), (9, 0.5, "equal")])
def test_few_clusters_with_uneven_flip_rates(clusters, icc, sizes):
    """The issue's regime. Coverage is read at the boundary (Δ = −margin), where the
    cluster-robust t alone covered 88.2% (K = 6) and 92.3% (K = 8) in the issue."""
    rng = np.random.default_rng(2800 + 10 * clusters + int(10 * icc))
    false = covered = held = 0
    for _ in range(REPS):
        b, v, g = _clustered_flip_rates(rng, clusters, 0.5, icc, sizes)
        false += lc.compare_binary(b, v, clusters=g).verdict != "inconclusive"
        b, v, g = _clustered_flip_rates(rng, clusters, _boundary_share(), icc, sizes)
        result = lc.compare_binary(b, v, clusters=g, margin=MARGIN)
        covered += result.low <= -MARGIN <= result.high
        held += result.noninferiority == "held"
    assert "effective n" in result.interval_method
    _check(f"flip rates K={clusters} ICC {icc} {sizes}", false / REPS, covered / REPS,
           held / REPS, REPS)


@pytest.mark.parametrize("clusters, icc", [(6, 0.3), (8, 0.5)])
def test_few_clusters_with_uneven_flip_directions(clusters, icc):
    """Lognormal sizes; coverage under an effect Δ = 0.06 and NI at Δ = −margin."""
    rng = np.random.default_rng(2900 + 10 * clusters + int(10 * icc))
    false = covered = held = 0
    for _ in range(REPS):
        b, v, g = _clustered_binary(rng, clusters, 0.5, icc=icc)
        false += lc.compare_binary(b, v, clusters=g).verdict != "inconclusive"
        b, v, g = _clustered_binary(rng, clusters, 0.65, icc=icc)   # Δ = 0.2 · 0.3 = 0.06
        result = lc.compare_binary(b, v, clusters=g)
        covered += result.low <= 0.06 <= result.high
        b, v, g = _clustered_binary(rng, clusters, 0.5 - MARGIN / 0.4, icc=icc)
        held += lc.compare_binary(b, v, clusters=g, margin=MARGIN).noninferiority == "held"
    _check(f"flip directions K={clusters} ICC {icc}", false / REPS, covered / REPS,
           held / REPS, REPS)


def test_zero_one_scores_take_the_same_rule():
    """0/1 scores through compare_continuous (hit@k): the issue's regime at K = 6, ICC 0.5."""
    rng = np.random.default_rng(2999)
    covered = held = 0
    for _ in range(REPS):
        b, v, g = _clustered_flip_rates(rng, 6, _boundary_share(), 0.5)
        result = lc.compare_continuous(b.astype(float), v.astype(float), clusters=g,
                                       margin=MARGIN)
        covered += result.low <= -MARGIN <= result.high
        held += result.noninferiority == "held"
    coverage, boundary = covered / REPS, held / REPS
    print(f"0/1 scores K=6 ICC 0.5: coverage {coverage:.4f} ± {mc_se(coverage, REPS):.4f}, "
          f"NI held {boundary:.4f} ± {mc_se(boundary, REPS):.4f} (R={REPS})")
    assert coverage >= 0.935 and boundary <= 0.035, (coverage, boundary)
    assert not math.isnan(result.p_value)

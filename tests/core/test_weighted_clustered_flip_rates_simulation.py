"""Issue 28 for weighted slices at 10–40 clusters: a few users hold most flips.

The flip-rate generator is ``test_small_k_clusters_simulation``'s (each user's flip rate
Beta with mean 0.2: ICC 0.5 with geometric sizes of mean 20, or ICC 0.3 with 20 goldens
each), with two slices laid out as in ``test_small_sample_simulation``'s clustered weighted
test: 15% of each user's goldens in the thin slice ('spanning') or 30% of the users in it
('nested'). A flip is a fix with its slice's own probability, so the thin slice's difference
is −8 points and the big slice's −2; under target weights 50/50 (the goldens split about
15/85 or 30/70) the true target-weighted difference is −5 points = −margin. The target
reading is ``compare_slices(...).target`` (a ``stratified.WeightedDifference``).

With the weighted CR2 t joined with the effective-n stratified Wald interval
(``stratified._join_effective_wald``) a cell must read target non-inferiority as held in at
most 3.5% of runs and cover −margin in at least 93.5%; the weighted CR2 t alone held 5.7–12.0%
and covered 87.3–93.8% in 11 of the 12 cells of ``benchmarks/weighted_clustered_slices.py``
(3.0% and 96.5% at K = 40, ICC 0.3, spanning), R = 600. Measured with these seeds: held
0.4–4.4% (the 4.4%, 22 of 500, at K = 40, ICC 0.5, nested: nested slices at K = 40 are the
edge of the rule), coverage 95.2–99.6%.

Monte Carlo error: R = 500 runs per cell, √(p(1 − p)/R) = 0.82 points at 3.5% and 1.1 at
93.5%. A cell fails when its count is significantly beyond the target (one-sided exact
binomial test at 2.5%, ``scipy.stats.binomtest``, as in
``test_clustered_flip_rates_simulation``): 27 or more held of 500 (5.4%), or 455 or fewer
covered (91.0%). About 20 s on one core.
"""

from __future__ import annotations

import numpy as np
import pytest

import langchef_core as lc
from tests.core.test_clustered_flip_rates_simulation import check_targets
from tests.core.test_small_k_clusters_simulation import MARGIN, flip_pairs
from tests.core.test_small_sample_simulation import _two_slices

pytestmark = pytest.mark.slow
REPS = 500
RATE = 0.2
TARGET = {"big": 0.5, "thin": 0.5}
SLICE_DELTA = {"thin": -0.08, "big": -0.02}   # 0.5 · (−0.08) + 0.5 · (−0.02) = −MARGIN
TRUE = sum(TARGET[name] * SLICE_DELTA[name] for name in TARGET)


def weighted_flip_rates(rng, clusters, icc, sizes, layout):
    """``_clustered_flip_rates`` with slice labels ('thin', 'big'); a flip is a fix with
    probability 0.5 + Δ_slice / (2 · rate) in its slice, so slice Δ = ``SLICE_DELTA``."""
    counts = rng.geometric(1 / 20, clusters) if sizes == "geometric" else np.full(clusters, 20)
    spread = (1 - icc) / icc
    flip_rate = rng.beta(RATE * spread, (1 - RATE) * spread, clusters)
    codes = np.repeat(np.arange(clusters), counts)
    labels = _two_slices(rng, codes, clusters, layout)
    share = np.where(labels == "thin", 0.5 + SLICE_DELTA["thin"] / (2 * RATE),
                     0.5 + SLICE_DELTA["big"] / (2 * RATE))
    return (*flip_pairs(rng, flip_rate[codes], share), codes, labels)


@pytest.mark.parametrize("clusters, icc, sizes, layout", [
    (10, 0.5, "geometric", "nested"), (20, 0.5, "geometric", "spanning"),
    (40, 0.5, "geometric", "nested"), (10, 0.3, "equal", "spanning"),
    (20, 0.3, "equal", "nested"), (40, 0.3, "equal", "nested")])
def test_weighted_slices_with_uneven_flip_rates(clusters, icc, sizes, layout):
    rng = np.random.default_rng(2860 + clusters + int(10 * icc) + len(layout))
    covered = held = 0
    for _ in range(REPS):
        b, v, g, labels = weighted_flip_rates(rng, clusters, icc, sizes, layout)
        target = lc.compare_slices(b, v, labels, column="s", clusters=g, target_weights=TARGET,
                                   margin=MARGIN).target
        covered += target.low <= TRUE <= target.high
        held += target.noninferiority == "held"
    assert "joined with the stratified Wald interval" in target.interval_method
    check_targets(f"weighted flip rates K={clusters} ICC {icc} {sizes} {layout}", held, covered,
                  REPS)

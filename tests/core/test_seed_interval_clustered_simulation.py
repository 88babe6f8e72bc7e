"""Issue 28: the seed interval with clustered goldens (its golden part CR2) over a grid of
seed sds. Generator: that of test_small_sample_simulation's
test_clustered_seeds_false_positive_rate with the seed sd varied per arm ((0, 0),
(0.1, 0.1), (0.3, 0.3), and 0.3 in the variant only) and the cluster sizes drawn once per
cell. Target coverage ≥ 93.5% (FPR ≤ 6.5%) in every cell; R = 800
per cell (MC se ≈ 0.8 point at 95%). Truth 0 under the null: coverage = 1 − FPR.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.core.test_seed_interval_simulation import coverage_and_width
from tests.core.test_small_sample_simulation import _cluster_sizes, mc_se

pytestmark = pytest.mark.slow


def clustered_arms(clusters):
    """The generator of test_clustered_seeds_false_positive_rate, seed sd varied; the
    cluster sizes are drawn once per cell so that the codes stay fixed."""
    def draw(rng, seeds, seed_sds):
        shared = rng.normal(0, 1, clusters.size) + rng.normal(0, 0.7, clusters.max() + 1)[clusters]
        arms = []
        for sd in seed_sds:
            own = shared + rng.normal(0, 0.3, clusters.size) + \
                rng.normal(0, 0.3, clusters.max() + 1)[clusters]
            arms.append(np.array([own + rng.normal(0, sd) + rng.normal(0, 0.5, clusters.size)
                                  + rng.normal(0, 0.2, clusters.max() + 1)[clusters]
                                  for _ in range(seeds)]))
        return arms
    return draw


@pytest.mark.parametrize("n_clusters", [10, 20])
@pytest.mark.parametrize("seeds", [2, 3, 5])
def test_clustered_coverage_over_the_seed_variance_grid(n_clusters, seeds):
    reps = 800
    rng = np.random.default_rng(2900 + 10 * n_clusters + seeds)
    codes = np.repeat(np.arange(n_clusters), _cluster_sizes(rng, n_clusters))
    for seed_sds in ((0, 0), (0.1, 0.1), (0.3, 0.3), (0, 0.3)):
        cover, _ = coverage_and_width(rng, clustered_arms(codes), seeds, seed_sds, reps,
                                      codes=codes)
        print(f"clustered K={n_clusters} {seeds}v{seeds} seed sds {seed_sds}: coverage "
              f"{cover:.3f} ± {mc_se(cover, reps):.3f} (R={reps})")
        assert cover >= 0.935, f"coverage {cover:.3f} ± {mc_se(cover, reps):.3f} at {seed_sds}"

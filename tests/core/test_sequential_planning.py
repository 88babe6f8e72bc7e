"""Sequential planning states what the readout at N will resolve (issue 29, point 1).

The plan is made from the interval the readout reads: the empirical-Bernstein confidence
sequence over goldens, or over cluster means when the design names a cluster. Simulated
readouts at N (``compare_sequential``, the readout's own function) check both numbers the
plan states: the sequence's half-width at N and the smallest difference it resolves with
the design's power. Monte Carlo errors are the binomial or sample standard errors of the
simulated share or mean; figures measured on this machine are in the comments.
"""

import math

import numpy as np
import pytest

from langchef_core.stats.sequential import (budget_needed, compare_sequential,
                                            plan_sequence, planned_detection_limit,
                                            sequence_units)


def simulated_readouts(rate, budget, per_cluster, effect, runs, seed):
    """Readouts at N of pass/fail pairs at discordant ``rate`` and true difference ``effect``
    (fixes at (rate + effect)/2, breaks at (rate − effect)/2), clusters of ``per_cluster``."""
    rng = np.random.default_rng(seed)
    units = sequence_units(budget, per_cluster or 1)
    half_widths, decided, limits = [], [], []
    for _ in range(runs):
        draw = rng.random(budget)
        flip = np.where(draw < (rate + effect) / 2, 1, np.where(draw < rate, -1, 0))
        before = np.where(flip == 1, 0, np.where(flip == -1, 1, rng.integers(0, 2, budget)))
        clusters = None if per_cluster is None else np.arange(budget) // per_cluster
        result = compare_sequential(before, before + flip, binary=True, clusters=clusters,
                                    max_n=units)
        half_widths.append((result.high - result.low) / 2)
        decided.append(result.verdict == "improvement")
        limits.append(result.detection_limit)
    return np.array(half_widths), np.array(decided), np.array(limits)


@pytest.mark.parametrize("rate, budget, per_cluster", [(0.2, 400, None), (0.2, 600, 6)])
def test_the_planned_width_and_limit_are_what_readouts_at_n_give(rate, budget, per_cluster):
    plan = plan_sequence(rate, budget, goldens_per_cluster=per_cluster)
    # Width under no effect. Measured: 0.0760 ± 0.0003 against 0.0773 planned (400
    # goldens); 0.1538 ± 0.0001 against 0.1540 (100 clusters of 6).
    widths, _, limits = simulated_readouts(rate, budget, per_cluster, 0.0, 200, seed=1)
    error = widths.std(ddof=1) / math.sqrt(widths.size)
    # The plan states the bound at N; the running intersection read out is at most that.
    assert widths.mean() <= plan.half_width + 3 * error
    assert widths.mean() >= 0.95 * plan.half_width
    # The readout reports its own limit at N from the spread it saw: the plan's, in the mean.
    assert limits.mean() == pytest.approx(plan.detection_limit, rel=0.02)
    # Power at the planned limit. Measured over 600 runs: 0.805–0.825 ± 0.016 (clusters),
    # 0.81–0.84 ± 0.016 (1000 goldens at rate 0.1); without the drift check's share it fell
    # to 0.69–0.77.
    _, decided, _ = simulated_readouts(rate, budget, per_cluster, plan.detection_limit, 300,
                                       seed=2)
    share = decided.mean()
    error = math.sqrt(0.8 * 0.2 / decided.size)
    assert share >= 0.80 - 3 * error, (share, error)
    assert share <= 0.80 + 5 * error, (share, error)   # not needlessly conservative


def test_twenty_users_as_clusters_resolve_almost_nothing_by_120_goldens():
    # The workspace: 120 goldens, 20 users. The readout resolved 78.8 points at N; the
    # plan gave 19.6 (goldens as units). Planned over clusters, it says what N will give.
    clustered = plan_sequence(0.2, 120, goldens_per_cluster=6)
    assert clustered.unit == "cluster" and clustered.units == 20
    assert 0.74 < clustered.half_width < 0.76 and 0.78 < clustered.detection_limit < 0.81
    widths, _, limits = simulated_readouts(0.2, 120, 6, 0.0, 100, seed=3)
    assert limits.mean() == pytest.approx(clustered.detection_limit, rel=0.02)
    assert widths.mean() == pytest.approx(clustered.half_width, rel=0.02)
    # Ten users: the sequence can never exclude zero, however the goldens flip.
    assert not plan_sequence(0.2, 120, goldens_per_cluster=12).resolves_anything


def test_criteria_at_alpha_over_k_resolve_less_and_the_budget_search_reaches_the_target():
    primary = plan_sequence(0.1, 2000)
    criterion = plan_sequence(0.1, 2000, alpha=0.05 / 3)
    assert criterion.detection_limit > primary.detection_limit
    needed = budget_needed(0.02, 0.1, start=2000)
    assert planned_detection_limit(0.1, needed) <= 0.02 < planned_detection_limit(
        0.1, int(needed * 0.98))
    assert budget_needed(0.02, 0.1, goldens_per_cluster=5, start=2000) > needed
    with pytest.raises(ValueError, match="at least one golden"):
        plan_sequence(0.1, 2000, goldens_per_cluster=0.5)

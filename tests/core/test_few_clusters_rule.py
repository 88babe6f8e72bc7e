"""The clustered pass/fail rule (issue 28): at every number of clusters (5 or more) the
cluster-robust t is joined with Tango's interval at the effective sample size n/deff and the
t quantile at the same df. Its calibration is in test_small_k_clusters_simulation.py (K =
5–9) and test_clustered_flip_rates_simulation.py (K = 10–40)."""

import numpy as np
import pytest

import langchef_core as lc
from langchef_core.stats.cluster_robust import cluster_robust_t
from langchef_core.stats.score_interval import (design_effect_tango, tango_interval,
                                                tango_statistic)

# R: qt(0.975, 4)
T_975_4 = 2.7764451051977987


def _arms(flips_per_cluster, size=20):
    """One cluster per entry of (broke, fixed), each of ``size`` goldens."""
    baseline, variant, labels = [], [], []
    for k, (broke, fixed) in enumerate(flips_per_cluster):
        same = size - broke - fixed
        baseline += [1] * broke + [0] * fixed + [1] * same
        variant += [0] * broke + [1] * fixed + [1] * same
        labels += [f"u{k}"] * size
    return np.array(baseline, bool), np.array(variant, bool), np.array(labels)


def test_effective_tango_bounds_solve_the_score_equation_at_the_t_quantile():
    score = design_effect_tango(4, 10, 60, 2.0, 4.0)
    assert score.effective_n == 30.0
    assert tango_statistic(2.0, 5.0, 30.0, score.low) == pytest.approx(T_975_4, abs=1e-9)
    assert tango_statistic(2.0, 5.0, 30.0, score.high) == pytest.approx(-T_975_4, abs=1e-9)
    assert 0 < score.p_value < 1


def test_effective_tango_is_tango_without_clustering_and_many_df():
    score = design_effect_tango(4, 10, 60, 1.0, 1e9)
    assert (score.low, score.high) == pytest.approx(tango_interval(4, 10, 60), abs=1e-7)
    wider = design_effect_tango(4, 10, 60, 1.0, 4.0)
    assert wider.low < score.low and wider.high > score.high


def test_design_effect_below_one_is_not_allowed_to_narrow_it():
    assert design_effect_tango(4, 10, 60, 0.5, 4.0) == design_effect_tango(4, 10, 60, 1.0, 4.0)


def _cluster_robust_alone(b, v, g):
    change = v.astype(float) - b.astype(float)
    codes = np.unique(g, return_inverse=True)[1]
    return cluster_robust_t(np.bincount(codes, change), np.bincount(codes).astype(float),
                            np.bincount(codes, change**2))


def test_six_clusters_join_the_effective_tango_and_say_so():
    # Three clusters hold every flip: the cluster-robust t alone, [−5.4, 0.4] points,
    # would hold a 6-point margin; the joined interval does not.
    b, v, g = _arms([(0, 0), (0, 0), (1, 0), (0, 0), (2, 1), (3, 2)])
    assert _cluster_robust_alone(b, v, g).low > -0.06
    result = lc.compare_binary(b, v, clusters=g, margin=0.06)
    assert result.noninferiority == "unresolved" and result.low < -0.10
    assert "joined with Tango score interval at effective n" in result.interval_method
    assert "clustered pass/fail outcomes" in result.interval_method
    assert "effective-n Tango score test" in result.p_value_method
    assert result.warnings == ("only 6 clusters: the interval (the cluster-robust t joined "
                               "with Tango's score interval at the effective sample size) is "
                               "honest but wide; 10 or more clusters give useful precision",)
    assert result.evidence is None  # not refused: the verdict is read from the joined interval


def test_the_joined_interval_contains_the_cluster_robust_one():
    rng = np.random.default_rng(28)
    for _ in range(50):
        flips = [tuple(rng.integers(0, 6, 2)) for _ in range(int(rng.integers(5, 10)))]
        b, v, g = _arms(flips)
        result = lc.compare_binary(b, v, clusters=g)
        robust = _cluster_robust_alone(b, v, g)
        if robust.high > robust.low:
            assert result.low <= robust.low + 1e-12 and result.high >= robust.high - 1e-12


def test_zero_one_scores_take_the_binary_rule():
    b, v, g = _arms([(0, 0), (1, 0), (0, 2), (3, 1), (0, 0), (2, 2)])
    binary = lc.compare_binary(b, v, clusters=g, margin=0.05)
    scores = lc.compare_continuous(b.astype(float), v.astype(float), clusters=g, margin=0.05)
    assert (scores.low, scores.high) == (binary.low, binary.high)
    assert "effective n" in scores.interval_method


def test_real_valued_scores_keep_the_cluster_robust_t():
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(6), 10)
    scores = lc.compare_continuous(np.zeros(60), rng.normal(0, 1, 60), clusters=g)
    assert "joined" not in scores.interval_method
    assert scores.warnings == ("only 6 clusters: the cluster-robust interval is honest but "
                               "wide; 10 or more clusters give useful precision",)


@pytest.mark.parametrize("clusters", [10, 20, 40])
def test_ten_or_more_clusters_join_too_without_a_warning(clusters):
    # The rule is the same at every number of clusters: uneven flip rates mislead the
    # cluster-robust t alone at K = 10–40 as well (test_clustered_flip_rates_simulation).
    b, v, g = _arms([(1, 2), (2, 1), (0, 0), (4, 0), (0, 1)] * (clusters // 5))
    result = lc.compare_binary(b, v, clusters=g, margin=0.05)
    robust = _cluster_robust_alone(b, v, g)
    assert result.interval_method.startswith("cluster-robust t (CR2")
    assert "joined with Tango score interval at effective n" in result.interval_method
    assert "effective-n Tango score test" in result.p_value_method
    assert result.low <= robust.low and result.high >= robust.high
    assert result.warnings == () and result.evidence is None


def test_four_clusters_are_still_refused():
    b, v, g = _arms([(0, 3), (0, 4), (0, 5), (1, 6)])
    result = lc.compare_binary(b, v, clusters=g, margin=0.05)
    assert result.verdict == "inconclusive" and "at least 5" in result.evidence
    assert "joined" not in result.interval_method


def test_clustered_flip_rates_raise_the_design_effect_the_score_interval_uses():
    # One user flips 12 of 20 goldens, evenly both ways; the others flip none. The differences
    # do not vary by cluster, the share of flips does: at the interval's bounds (a difference
    # that needs mostly one-way flips) the effective n is cut by the flips' design effect.
    b, v, g = _arms([(6, 6), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)])
    result = lc.compare_binary(b, v, clusters=g)
    effective = float(result.interval_method.split("at effective n ")[1].split(" ")[0])
    assert result.design_effect == 1.0 and effective < 20   # of 120 goldens
    spread = lc.compare_binary(*_arms([(6, 6)] * 6)[:2], clusters=np.repeat(np.arange(6), 20))
    assert "at effective n 120.0 (lower bound)" in spread.interval_method  # no flip clustering
    assert result.high - result.low > 2 * (spread.high - spread.low)


def test_a_clustered_weighted_pass_fail_target_with_few_clusters_is_not_read():
    # 8 users, every flip a fix: the weighted cluster-robust t excludes zero, but with fewer
    # than 10 clusters its verdict and non-inferiority are not read (README "Statistics").
    b, v, g = _arms([(0, 3), (0, 4), (0, 2), (0, 5), (0, 3), (0, 4), (0, 3), (0, 2)])
    labels = np.where(np.arange(b.size) % 4 == 0, "thin", "big")
    weights = {"big": 0.5, "thin": 0.5}
    target = lc.compare_slices(b, v, labels, column="s", clusters=g, target_weights=weights,
                               margin=0.05).target
    assert target.low > 0
    assert target.verdict == "inconclusive" and target.noninferiority == "unresolved"
    assert "not read for a verdict or non-inferiority: fewer than 10 clusters" in \
        target.interval_method
    more = _arms([(0, 3), (0, 4), (0, 2), (0, 5), (0, 3)] * 2)
    labels = np.where(np.arange(more[0].size) % 4 == 0, "thin", "big")
    ten = lc.compare_slices(more[0], more[1], labels, column="s", clusters=more[2],
                            target_weights=weights, margin=0.05).target
    assert ten.verdict == "improvement" and ten.noninferiority == "held"
    assert "not read" not in ten.interval_method


def test_the_joined_interval_ignores_row_order():
    b, v, g = _arms([(0, 0), (1, 0), (0, 2), (3, 1), (0, 0), (2, 2), (4, 0)])
    first = lc.compare_binary(b, v, clusters=g, margin=0.05).to_dict()
    order = np.random.default_rng(4).permutation(b.size)
    assert lc.compare_binary(b[order], v[order], clusters=g[order], margin=0.05).to_dict() == first

"""Exact and clustered McNemar against reference values and peer implementations."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from langchef_core import mcnemar_clustered, mcnemar_exact


def test_textbook_table():
    # statsmodels: mcnemar([[23, 15], [19, 31]], exact=True).pvalue -> 0.60759136127308
    assert mcnemar_exact(15, 19) == pytest.approx(0.60759136127308, abs=1e-13)
    assert mcnemar_exact(19, 15) == pytest.approx(0.60759136127308, abs=1e-13)


def test_spec_tutorial_values():
    # Tutorial §3: comparison A (60 gained, 40 lost) and B (20 gained, none lost).
    assert mcnemar_exact(40, 60) == pytest.approx(0.0568879336409808, abs=1e-12)
    assert mcnemar_exact(0, 20) == 2 / 2**20


def test_nothing_flipped_is_no_evidence():
    assert mcnemar_exact(0, 0) == 1.0


def test_balanced_flips_cap_at_one():
    assert mcnemar_exact(7, 7) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_scipy_binomtest_and_statsmodels(seed):
    rng = np.random.default_rng(seed)
    for broke, fixed in rng.integers(0, 300, size=(40, 2)):
        ours = mcnemar_exact(int(broke), int(fixed))
        if broke + fixed:
            scipy_p = stats.binomtest(int(broke), int(broke + fixed), 0.5).pvalue
            assert ours == pytest.approx(scipy_p, rel=1e-9, abs=1e-300)
        table = [[int(rng.integers(0, 50)), int(broke)], [int(fixed), int(rng.integers(0, 50))]]
        assert ours == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-9, abs=1e-300)


def test_stable_for_a_million_discordant_pairs():
    balanced = mcnemar_exact(500_000, 500_000)
    slightly_off = mcnemar_exact(499_000, 501_000)
    # Normal approximation: z = 2000 / sqrt(1e6) = 2 -> two-sided p ≈ 0.0455 (continuity ~0.0455).
    assert balanced == 1.0
    assert slightly_off == pytest.approx(2 * stats.norm.sf(1999.5 / 1000), rel=2e-3)
    assert 0.0 <= mcnemar_exact(0, 1_000_000) < 1e-300 or mcnemar_exact(0, 1_000_000) == 0.0


def test_clustered_with_singleton_clusters_is_the_uncorrected_chi_square():
    # With one pair per cluster Durkalski's statistic equals McNemar's (b - c)^2 / (b + c);
    # statsmodels: mcnemar(table, exact=False, correction=False).pvalue
    broke, fixed = 30, 14
    sizes = np.ones(broke + fixed + 40)
    broke_k = np.r_[np.ones(broke), np.zeros(fixed + 40)]
    fixed_k = np.r_[np.zeros(broke), np.ones(fixed), np.zeros(40)]
    expected = sm_mcnemar([[40, broke], [fixed, 0]], exact=False, correction=False).pvalue
    assert mcnemar_clustered(broke_k, fixed_k, sizes) == pytest.approx(expected, rel=1e-12)


def test_clustered_matches_durkalski_formula_on_the_clust_bin_pair_example():
    # R clust.bin.pair: durkalski.test(c(1,3,0,1,2), c(51,67,44,58,47), c(18,26,43,21,28), c(0,2,1,3,4))
    # computes sum((b-c)/n)^2 / sum(((b-c)/n)^2) with n = a+b+c+d; evaluated here by hand.
    a, b, c, d = (np.array(v, float) for v in ([1, 3, 0, 1, 2], [51, 67, 44, 58, 47],
                                                [18, 26, 43, 21, 28], [0, 2, 1, 3, 4]))
    n = a + b + c + d
    balance = [(bi - ci) / ni for bi, ci, ni in zip(b, c, n)]
    statistic = sum(balance) ** 2 / sum(x * x for x in balance)
    assert mcnemar_clustered(b, c, n) == pytest.approx(stats.chi2.sf(statistic, 1), rel=1e-12)


def test_clustered_with_no_unbalanced_cluster_is_one():
    assert mcnemar_clustered([1, 0], [1, 0], [3, 2]) == 1.0


@pytest.mark.parametrize("broke, fixed, message", [
    (-1, 3, "broke must be a non-negative whole number"),
    (2.5, 3, "broke must be a non-negative whole number"),
    (True, 3, "broke must be a non-negative whole number"),
    (3, None, "fixed must be a non-negative whole number"),
])
def test_rejects_counts_that_are_not_counts(broke, fixed, message):
    with pytest.raises(ValueError, match=message):
        mcnemar_exact(broke, fixed)

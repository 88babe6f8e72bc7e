"""Judge calibration against independent implementations (test-only dependencies).

κ against scikit-learn's ``cohen_kappa_score``; its standard error and interval against
statsmodels' ``cohens_kappa`` (Fleiss, Cohen & Everitt 1969); the rates' Wilson intervals
against statsmodels' ``proportion_confint(method="wilson")``; the drift test against
statsmodels' exact ``mcnemar``; the length probe's AUC against scikit-learn's
``roc_auc_score`` and its exact p-value against a brute-force enumeration of all splits.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

import langchef_core as lc


def verdicts_from_table(tp, fp, fn, tn):
    """Human and judge verdicts (True = pass) realising a 2×2 table, fail as positive."""
    human = np.array([False] * (tp + fn) + [True] * (fp + tn))
    judge = np.array([False] * tp + [True] * fn + [False] * fp + [True] * tn)
    return human, judge


def random_tables(count, seed):
    """Random 2×2 tables of varied size and shape, the degenerate ones included."""
    rng = np.random.default_rng(seed)
    tables = []
    for _ in range(count):
        n = int(rng.integers(2, 400))
        cells = rng.multinomial(n, rng.dirichlet(np.full(4, 0.7)))
        tables.append(tuple(int(c) for c in cells))
    return tables


@pytest.mark.parametrize("table", random_tables(300, seed=11))
def test_kappa_matches_sklearn_and_its_interval_matches_statsmodels(table):
    tp, fp, fn, tn = table
    human, judge = verdicts_from_table(*table)
    result = lc.agreement([f"a{i}" for i in range(human.size)], human, judge)
    assert (result.tp, result.fp, result.fn, result.tn) == table
    single_class = len(set(human)) == 1 or len(set(judge)) == 1
    if single_class:
        # Documented divergence: sklearn gives 0 (or NaN when both raters use one class);
        # langchef reports None with a reason, since κ then says nothing about agreement.
        reference = cohen_kappa_score(human, judge)
        assert math.isnan(reference) or reference == pytest.approx(0.0, abs=1e-12)
        assert result.kappa is None and result.kappa_undefined
        assert result.kappa_low is None and result.kappa_high is None
        return
    # sklearn.metrics.cohen_kappa_score(human_labels, judge_labels)
    assert result.kappa == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    # statsmodels.stats.inter_rater.cohens_kappa(table) — rows human, columns judge;
    # its default interval is at alpha = 0.05 (alpha_ci reports 0.025 per tail).
    reference = cohens_kappa(np.array([[tp, fn], [fp, tn]]))
    assert result.kappa == pytest.approx(reference.kappa, abs=1e-12)
    assert result.kappa_se == pytest.approx(reference.std_kappa, rel=1e-9, abs=1e-12)
    # Issue 12: the interval is no longer statsmodels' Wald interval (it covers 74-92% at
    # 20-50 anchors) but the smoothed percentile bootstrap; it still brackets κ̂ loosely.
    assert -1 <= result.kappa_low <= result.kappa_high <= 1


@pytest.mark.parametrize("alpha", [0.01, 0.1, 0.2])
def test_kappa_interval_narrows_with_alpha(alpha):
    for tp, fp, fn, tn in random_tables(20, seed=int(alpha * 1000)):
        if min(tp + fn, fp + tn, tp + fp, fn + tn) == 0:
            continue
        human, judge = verdicts_from_table(tp, fp, fn, tn)
        result = lc.agreement(list(range(human.size)), human, judge, alpha=alpha)
        wider = lc.agreement(list(range(human.size)), human, judge, alpha=alpha / 2)
        assert wider.kappa_low <= result.kappa_low and result.kappa_high <= wider.kappa_high


def test_kappa_pinned_value():
    # statsmodels 0.14: cohens_kappa(np.array([[20, 5], [3, 30]])) →
    # kappa 0.716034271725826, std_kappa 0.09286411917838101,
    # kappa_low 0.5340239426801638, kappa_upp 0.8980446007714882
    human, judge = verdicts_from_table(tp=20, fp=3, fn=5, tn=30)
    result = lc.agreement(list(range(58)), human, judge)
    assert result.kappa == pytest.approx(0.716034271725826, abs=1e-12)
    assert result.kappa_se == pytest.approx(0.09286411917838101, abs=1e-12)
    # The interval is the smoothed percentile bootstrap (issue 12), not statsmodels' Wald
    # kappa_low/kappa_upp above. Reproduce independently:
    #   rng = np.random.default_rng(0)
    #   d = rng.multinomial(58, (np.array([20, 3, 5, 30]) + 0.5) / 60, size=10_000)
    #   κ* = sklearn-style κ of each row (tp, fp, fn, tn), NaN dropped;
    #   np.quantile(κ*, [0.025, 0.975])
    rng = np.random.default_rng(0)
    d = rng.multinomial(58, (np.array([20, 3, 5, 30]) + 0.5) / 60, size=10_000).astype(float)
    tp, fp, fn, tn = d.T
    po, h, j = (tp + tn) / 58, (tp + fn) / 58, (tp + fp) / 58
    pe = h * j + (1 - h) * (1 - j)
    kappas = ((po - pe) / (1 - pe))[(h > 0) & (h < 1) & (j > 0) & (j < 1)]
    low, high = np.quantile(kappas, [0.025, 0.975])
    assert (result.kappa_low, result.kappa_high) == pytest.approx((low, high), abs=1e-12)
    assert result.kappa_low < 0.5340239426801638  # wider than Wald at the bottom


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_rate_intervals_match_statsmodels_wilson(alpha):
    for table in random_tables(80, seed=int(alpha * 997) + 3):
        human, judge = verdicts_from_table(*table)
        result = lc.agreement(list(range(human.size)), human, judge, alpha=alpha)
        for rate in (result.observed, result.tpr, result.tnr, result.ppv, result.npv):
            if rate.n == 0:
                assert rate.value is rate.low is rate.high is None
                continue
            # statsmodels.stats.proportion.proportion_confint(k, n, alpha, method="wilson")
            low, high = proportion_confint(rate.k, rate.n, alpha=alpha, method="wilson")
            assert rate.value == pytest.approx(rate.k / rate.n)
            assert rate.low == pytest.approx(low, abs=1e-12)
            assert rate.high == pytest.approx(high, abs=1e-12)


def test_drift_p_value_matches_statsmodels_exact_mcnemar():
    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(10, 120))
        human = rng.random(n) < 0.5
        then = np.where(rng.random(n) < 0.8, human, ~human)
        now = np.where(rng.random(n) < rng.uniform(0.6, 0.95), human, ~human)
        result = lc.drift(list(range(n)), human, then, now, resamples=1000)
        agreed_then, agreed_now = then == human, now == human
        table = [[np.sum(agreed_then & agreed_now), np.sum(agreed_then & ~agreed_now)],
                 [np.sum(~agreed_then & agreed_now), np.sum(~agreed_then & ~agreed_now)]]
        # statsmodels.stats.contingency_tables.mcnemar(table, exact=True).pvalue
        assert result.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
        assert result.kappa_then == pytest.approx(cohen_kappa_score(human, then), abs=1e-12)
        assert result.kappa_now == pytest.approx(cohen_kappa_score(human, now), abs=1e-12)


def test_length_auc_matches_sklearn_roc_auc():
    rng = np.random.default_rng(9)
    for _ in range(30):
        n = int(rng.integers(20, 150))
        human = rng.random(n) < 0.3           # mostly human failures
        judge = rng.random(n) < 0.4
        lengths = rng.integers(10, 60, n)     # narrow range: many ties
        result = lc.length_bias(human, judge, lengths)
        failed = ~human
        if result.auc is None:
            continue
        # sklearn.metrics.roc_auc_score(judge_passed, length) over human failures: the
        # probability a passed failure is longer than a caught one, ties one half.
        reference = roc_auc_score(judge[failed], lengths[failed])
        assert result.auc == pytest.approx(reference, abs=1e-12)
        assert result.rank_biserial == pytest.approx(2 * reference - 1, abs=1e-12)


def brute_force_p_values(passed, failed):
    """Exact permutation p-values of U by enumerating every split of the pooled lengths."""
    pooled = np.concatenate([passed, failed])
    ranks = stats.rankdata(pooled)
    k = passed.size
    observed = ranks[:k].sum()
    sums = np.array([ranks[list(chosen)].sum()
                     for chosen in itertools.combinations(range(pooled.size), k)])
    greater = np.mean(sums >= observed - 1e-9)
    two_sided = min(1.0, 2 * min(greater, np.mean(sums <= observed + 1e-9)))
    return greater, two_sided


def test_exact_length_p_values_match_brute_force_enumeration_with_ties():
    passed = np.array([120, 90, 90, 300])
    failed = np.array([40, 90, 55, 60, 75, 40, 110])
    human = [False] * 11
    judge = [True] * 4 + [False] * 7
    result = lc.length_bias(human, judge, np.concatenate([passed, failed]))
    assert "exact" in result.method
    greater, two_sided = brute_force_p_values(passed, failed)
    assert result.p_value_greater == pytest.approx(greater, abs=1e-12)
    assert result.p_value_two_sided == pytest.approx(two_sided, abs=1e-12)

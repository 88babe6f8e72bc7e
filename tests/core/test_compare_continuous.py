"""compare_continuous: a zero-mean p-value, the t ∪ bootstrap-t interval, minimum evidence, limit."""

import math

import numpy as np
import pytest
from scipy import stats

import langchef_core as lc


def test_spec_tutorial_eight_scores():
    # Tutorial §3: the mean gains 0.05 on eight queries, but the interval includes zero.
    old = [0.6, 0.6, 0.5, 0.5, 0.4, 0.4, 0.3, 0.3]
    new = [0.4, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6]
    result = lc.compare_continuous(old, new)
    assert result.difference == pytest.approx(0.05, abs=1e-12)
    assert result.low <= 0 <= result.high and result.verdict == "inconclusive"


def test_p_value_tests_a_zero_mean_and_matches_the_interval():
    rng = np.random.default_rng(0)
    baseline = rng.integers(0, 5, 120) / 4
    variant = np.clip(baseline + rng.integers(-1, 3, 120) / 4, 0, 1)
    result = lc.compare_continuous(baseline, variant)
    # The Student t part: scipy.stats.ttest_1samp(d, 0).pvalue; the reported p is the
    # larger of it and the bootstrap-t p, so it is never below the t-test p.
    t_p = stats.ttest_1samp(variant - baseline, 0).pvalue
    assert result.p_value >= t_p - 1e-15
    assert "zero mean" in result.p_value_method and "Wilcoxon" not in result.p_value_method
    assert (result.p_value < 0.05) == (result.low > 0 or result.high < 0)


def test_mean_zero_skewed_differences_are_not_significant_by_symmetry():
    # Issue 12: the signed-rank test rejects for mean-zero skewed differences (it tests
    # symmetry). The zero-mean p-value does not.
    rng = np.random.default_rng(4)
    d = rng.exponential(1.0, 400) - 1.0
    d -= d.mean()
    result = lc.compare_continuous(np.zeros(400), d)
    assert stats.wilcoxon(d).pvalue < 0.001
    assert result.p_value > 0.5 and result.verdict == "inconclusive"


def test_few_pairs_are_inconclusive_by_rule():
    # n = 2 used to be an "improvement" with a detection limit of 0.
    result = lc.compare_continuous([0.1, 0.2], [0.5, 0.61])
    assert result.verdict == "inconclusive" and "at least 10" in result.evidence
    assert result.detection_limit > 0
    nine = lc.compare_continuous(np.zeros(9), np.linspace(0.5, 0.6, 9), margin=0.1)
    assert nine.verdict == "inconclusive" and nine.noninferiority == "unresolved"
    ten = lc.compare_continuous(np.zeros(10), np.linspace(0.5, 0.6, 10))
    assert ten.verdict == "improvement" and ten.evidence is None


def test_all_differences_zero_is_no_evidence():
    scores = np.linspace(0, 1, 30)
    result = lc.compare_continuous(scores, scores)
    assert (result.p_value, result.low, result.high, result.verdict) == (1.0, 0.0, 0.0, "inconclusive")
    assert "zero-width" in result.evidence
    # Never a limit of 0: 30 identical differences on a 0-1 metric could hide rare changes of
    # the whole scale, read once 6 land (the exact gate's count, a bound on the safe side), so
    # the limit is the one-way flip limit of 30 goldens, 25.1 points:
    # scipy.optimize.brentq(lambda d: stats.binom.sf(5, 30, d) - 0.8, 0.01, 0.9) = 0.250748.
    # (The rule-of-three sd bound alone gave 16.1 points.)
    assert result.detection_limit == pytest.approx(0.250748, abs=1e-6)
    assert result.detection_limit > (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * \
        math.sqrt(1 - 0.05 ** (1 / 30)) / math.sqrt(30)


def test_interval_honours_the_requested_level():
    rng = np.random.default_rng(1)
    baseline, variant = rng.random(400), rng.random(400)
    wide = lc.compare_continuous(baseline, variant, alpha=0.01)
    narrow = lc.compare_continuous(baseline, variant, alpha=0.2)
    assert wide.low < narrow.low < narrow.high < wide.high
    # Close to the normal-theory interval at this size.
    d = variant - baseline
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert narrow.high - narrow.low == pytest.approx(2 * stats.norm.ppf(0.9) * se, rel=0.08)


def test_detection_limit_formula():
    rng = np.random.default_rng(2)
    baseline, variant = rng.random(250), rng.random(250)
    d = variant - baseline
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    result = lc.compare_continuous(baseline, variant)
    # Issue 12: the sd is replaced by its one-sided 95% chi-square upper bound,
    # s * sqrt((n - 1) / scipy.stats.chi2.ppf(0.05, n - 1)), so the limit is never 0.
    upper = d.std(ddof=1) * math.sqrt(249 / stats.chi2.ppf(0.05, 249))
    assert result.detection_limit == pytest.approx(z * upper / math.sqrt(d.size), rel=1e-12)


def test_row_order_and_seed_determinism():
    rng = np.random.default_rng(3)
    baseline, variant = rng.random(500), rng.random(500)
    users = rng.integers(0, 60, 500)
    for clusters in (None, users):
        first = lc.compare_continuous(baseline, variant, clusters=clusters, seed=9).to_dict()
        order = rng.permutation(500)
        again = lc.compare_continuous(baseline[order], variant[order], seed=9,
                                      clusters=None if clusters is None else clusters[order])
        assert again.to_dict() == first


def test_few_distinct_differences_take_the_profile_path():
    # Recall-style differences on 200,000 queries: a handful of values, so the bootstrap
    # draws profile counts instead of 200,000 indices per resample.
    rng = np.random.default_rng(4)
    baseline = rng.integers(0, 5, 200_000) / 4
    variant = rng.integers(0, 5, 200_000) / 4
    result = lc.compare_continuous(baseline, variant, resamples=2000)
    assert result.low < result.difference < result.high


def test_noninferiority_on_scores():
    rng = np.random.default_rng(5)
    baseline = rng.random(2000)
    variant = baseline - 0.005 + rng.normal(0, 0.05, 2000)
    assert lc.compare_continuous(baseline, variant, margin=0.02).noninferiority == "held"
    assert lc.compare_continuous(baseline, variant - 0.05, margin=0.02).noninferiority == "failed"


@pytest.mark.parametrize("kwargs, message", [
    (dict(baseline=[0.1, 0.2], variant=[0.1]), "got lengths 2 and 1"),
    (dict(baseline=[], variant=[]), "baseline is empty"),
    (dict(baseline=[0.1], variant=[0.2]), "at least 2 pairs"),
    (dict(baseline=[0.1, float("nan")], variant=[0.1, 0.2]), "missing or infinite value"),
    (dict(baseline=[0.1, 0.2], variant=[0.1, float("inf")]), "missing or infinite value"),
    (dict(baseline=["a", "b"], variant=[0.1, 0.2]), "must hold real-valued scores"),
    (dict(baseline=[0.1, 0.2], variant=[0.1, 0.3], resamples=10), "resamples must be at least 1000"),
    (dict(baseline=[0.1, 0.2], variant=[0.1, 0.3], alpha=-0.1), "alpha must be a number"),
])
def test_rejected_inputs_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lc.compare_continuous(**kwargs)

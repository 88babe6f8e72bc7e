"""compare_continuous: Wilcoxon p-value, bootstrap interval at the requested level, limit."""

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


def test_p_value_is_wilcoxon_signed_rank_with_pratt_zeros():
    rng = np.random.default_rng(0)
    baseline = rng.integers(0, 5, 120) / 4
    variant = np.clip(baseline + rng.integers(-1, 3, 120) / 4, 0, 1)
    result = lc.compare_continuous(baseline, variant)
    # scipy.stats.wilcoxon(d, zero_method="pratt", correction=False, method="asymptotic")
    expected = stats.wilcoxon(variant - baseline, zero_method="pratt", correction=False,
                              method="asymptotic").pvalue
    assert result.p_value == pytest.approx(expected, rel=1e-12)
    assert "Pratt" in result.p_value_method


def test_small_tie_free_samples_use_the_exact_distribution():
    baseline = np.zeros(10)
    variant = np.arange(1, 11) * 0.01 * np.r_[1, 1, 1, 1, 1, 1, 1, 1, -1, 1]
    result = lc.compare_continuous(baseline, variant)
    expected = stats.wilcoxon(variant, method="exact").pvalue
    assert result.p_value == pytest.approx(expected)
    assert "exact" in result.p_value_method


def test_all_differences_zero_is_no_evidence():
    scores = np.linspace(0, 1, 30)
    result = lc.compare_continuous(scores, scores)
    assert (result.p_value, result.low, result.high, result.verdict) == (1.0, 0.0, 0.0, "inconclusive")


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
    assert result.detection_limit == pytest.approx(z * d.std(ddof=1) / math.sqrt(d.size), rel=1e-12)


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

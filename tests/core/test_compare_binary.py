"""compare_binary: the paired verdict, its interval, p-value, limit and input checks."""

import numpy as np
import pytest
from scipy import stats

import langchef_core as lc
from langchef_core.stats import bootstrap


def paired_arms(both_pass, broke, fixed, both_fail):
    """Pass/fail outcomes for the four cells of the paired 2x2 table."""
    baseline = np.r_[np.ones(both_pass + broke), np.zeros(fixed + both_fail)].astype(bool)
    variant = np.r_[np.ones(both_pass), np.zeros(broke), np.ones(fixed), np.zeros(both_fail)]
    return baseline, variant.astype(bool)


def test_counts_rates_and_difference():
    baseline, variant = paired_arms(57, 18, 0, 15)
    result = lc.compare_binary(baseline, variant)
    assert (result.n, result.broke, result.fixed, result.both_pass, result.both_fail) == (90, 18, 0, 57, 15)
    assert result.baseline_rate == pytest.approx(75 / 90)
    assert result.variant_rate == pytest.approx(57 / 90)
    assert result.difference == pytest.approx(-0.2)
    assert result.p_value == lc.mcnemar_exact(18, 0)
    assert result.detection_limit == pytest.approx(lc.detection_limit(90, 18))


def test_a_direction_needs_the_exact_test_too():
    # Five fixes and nothing broken: the Tango interval clears zero, but exact p = 0.0625.
    # Issue 12: an asymptotic interval alone has conditional size 12.5% at 4 flips; the
    # exact McNemar gate bounds it by alpha at every number of flips.
    baseline, variant = paired_arms(80, 0, 5, 5)
    result = lc.compare_binary(baseline, variant)
    assert result.p_value == pytest.approx(0.0625)
    assert result.low > 0 and result.verdict == "inconclusive"
    assert "exact McNemar p = 0.062 " in result.evidence  # one p format (issue 29) and "at least 6 flips" in result.evidence
    assert result.interval_method == "Tango score interval"
    six = lc.compare_binary(*paired_arms(80, 0, 6, 4))
    assert six.p_value == pytest.approx(0.03125) and six.verdict == "improvement"
    assert six.evidence is None


@pytest.mark.parametrize("cells, verdict", [
    ((29, 1, 0, 0), "inconclusive"),    # one golden broke: p = 1, never a regression
    ((0, 0, 2, 0), "inconclusive"),     # 2 of 2 fixed
    ((0, 0, 5, 0), "inconclusive"),     # 5 of 5 fixed: p = 0.0625
    ((26, 0, 4, 0), "inconclusive"),    # 4 fixed / 0 broke at any n: p = 0.125
    ((10_000, 0, 4, 0), "inconclusive"),
    ((22, 1, 7, 0), "inconclusive"),    # 7 fixed / 1 broke: p = 0.070
])
def test_degenerate_tables_are_inconclusive_by_rule(cells, verdict):
    result = lc.compare_binary(*paired_arms(*cells))
    assert result.verdict == verdict
    # The reason is given wherever the interval alone would have decided.
    assert bool(result.evidence) == (result.low > 0 or result.high < 0)
    assert result.high > result.low  # never a zero-width interval


def test_nothing_flipped_is_inconclusive_with_a_finite_limit():
    baseline, variant = paired_arms(70, 0, 0, 20)
    result = lc.compare_binary(baseline, variant)
    # Tango's interval for 0 flips of 90 is ±4.09 points (not the bootstrap's [0, 0]).
    assert result.low == pytest.approx(-0.040936, abs=1e-6) and result.high == -result.low
    assert result.p_value == 1.0
    assert result.verdict == "inconclusive" and "no golden flipped" in result.evidence
    # The limit is the effect at which 6 one-way flips (the exact gate's minimum) show up 80%
    # of the time: stats.binom.sf(5, 90, 0.086426) = 0.800 (test_detection_limit_power.py).
    assert result.detection_limit == pytest.approx(0.086426, abs=1e-6)


def test_same_seed_same_numbers_and_row_order_does_not_matter():
    baseline, variant = paired_arms(50, 12, 7, 21)
    first = lc.compare_binary(baseline, variant, seed=3).to_dict()
    order = np.random.default_rng(1).permutation(baseline.size)
    shuffled = lc.compare_binary(baseline[order], variant[order], seed=3).to_dict()
    assert first == shuffled
    assert first == lc.compare_binary(baseline, variant, seed=3).to_dict()


def test_clustered_comparison_is_row_order_invariant():
    rng = np.random.default_rng(2)
    baseline = rng.random(300) < 0.7
    variant = rng.random(300) < 0.6
    users = rng.integers(0, 40, 300).astype(str)
    first = lc.compare_binary(baseline, variant, clusters=users).to_dict()
    order = rng.permutation(300)
    assert lc.compare_binary(baseline[order], variant[order], clusters=users[order]).to_dict() == first


def test_multinomial_bootstrap_has_the_distribution_of_pair_resampling():
    # Resampling n pairs with replacement makes (broke*, fixed*) multinomial, so the
    # difference has mean (f - b)/n and variance ((b + f)/n - ((f - b)/n)^2)/n exactly.
    n, broke, fixed = 200, 30, 12
    profiles = bootstrap.Profiles(np.array([-1.0, 0.0, 1.0]), np.ones(3),
                                  np.array([broke, n - broke - fixed, fixed]))
    draws = bootstrap.resampled_ratios(profiles, resamples=200_000, rng=np.random.default_rng(0))
    mean = (fixed - broke) / n
    variance = ((broke + fixed) / n - mean**2) / n
    assert draws.mean() == pytest.approx(mean, abs=4 * np.sqrt(variance / draws.size))
    assert draws.var() == pytest.approx(variance, rel=0.01)
    # ... and its quantiles agree with a brute-force pair bootstrap.
    pairs = np.r_[-np.ones(broke), np.zeros(n - broke - fixed), np.ones(fixed)]
    brute = pairs[np.random.default_rng(1).integers(0, n, (20_000, n))].mean(axis=1)
    assert stats.ks_2samp(draws[:20_000], brute).pvalue > 0.001


def test_non_inferiority_outcomes():
    baseline, variant = paired_arms(880, 12, 10, 98)  # -0.2 points on 1000 goldens
    held = lc.compare_binary(baseline, variant, margin=0.03)
    assert held.noninferiority == "held" and held.low > -0.03
    unresolved = lc.compare_binary(baseline, variant, margin=0.005)
    assert unresolved.noninferiority == "unresolved"
    worse_b, worse_v = paired_arms(800, 90, 10, 100)  # -8 points
    failed = lc.compare_binary(worse_b, worse_v, margin=0.03)
    assert failed.noninferiority == "failed" and failed.high < -0.03
    assert lc.compare_binary(baseline, variant).noninferiority is None


def test_to_dict_is_plain_json():
    import json
    baseline, variant = paired_arms(50, 12, 7, 21)
    payload = lc.compare_binary(baseline, variant, margin=0.02).to_dict()
    assert json.loads(json.dumps(payload)) == payload
    assert {"n", "difference", "low", "high", "p_value", "verdict", "detection_limit",
            "noninferiority", "broke", "fixed", "baseline_rate", "variant_rate",
            "interval_method", "evidence", "warnings"} <= set(payload)


def test_accepts_integer_and_float_outcomes():
    baseline, variant = paired_arms(50, 12, 7, 21)
    assert lc.compare_binary(baseline.astype(int), variant.astype(float)).to_dict() == \
        lc.compare_binary(baseline, variant).to_dict()


@pytest.mark.parametrize("kwargs, message", [
    (dict(baseline=[1, 0, 1], variant=[1, 0]), "got lengths 3 and 2"),
    (dict(baseline=[], variant=[]), "baseline is empty"),
    (dict(baseline=[1, float("nan")], variant=[1, 0]), "baseline has a missing value \\(NaN\\) at position 1"),
    (dict(baseline=[1, 0], variant=[1, 2]), "variant must be binary .* got 2 at position 1"),
    (dict(baseline=["pass", "fail"], variant=[1, 0]), "must hold pass/fail outcomes as booleans or 0/1"),
    (dict(baseline=[[1, 0]], variant=[[1, 0]]), "must be one-dimensional"),
    (dict(baseline=[1, 0], variant=[1, 0], alpha=0), "alpha must be a number strictly between 0 and 1"),
    (dict(baseline=[1, 0], variant=[1, 0], alpha=1.2), "alpha must be a number strictly between 0 and 1"),
    (dict(baseline=[1, 0], variant=[1, 0], power=0), "power must be a number strictly between 0 and 1"),
    (dict(baseline=[1, 0], variant=[1, 0], resamples=999), "resamples must be at least 1000"),
    (dict(baseline=[1, 0], variant=[1, 0], resamples=1e4), "resamples must be a whole number"),
    (dict(baseline=[1, 0], variant=[1, 0], seed=-1), "seed must be a non-negative whole number"),
    (dict(baseline=[1, 0], variant=[1, 0], margin=0), "margin must be positive"),
    (dict(baseline=[1, 0], variant=[1, 0], margin="3%"), "margin must be a positive number or None"),
    (dict(baseline=[1, 0], variant=[1, 0], clusters=["a"]), "one label per pair"),
    (dict(baseline=[1, 0], variant=[1, 0], clusters=["a", None]), "clusters has a missing label at position 1"),
    (dict(baseline=[1, 0], variant=[1, 0], clusters=["a", "a"]), "at least 2 clusters"),
])
def test_rejected_inputs_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lc.compare_binary(**kwargs)


def test_the_readout_warns_when_minimum_evidence_blocks_a_direction():
    from langchef_core.readout.document import statistics_warnings
    gated = lc.compare_binary(*paired_arms(80, 0, 5, 5))
    codes = [warning.code for warning in statistics_warnings(gated)]
    assert codes == ["minimum_evidence"]
    assert statistics_warnings(lc.compare_binary(*paired_arms(50, 12, 7, 21))) == []

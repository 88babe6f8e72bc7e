"""compare_cost and check_guardrails: paired latency/cost statistics and guardrail verdicts."""

import json

import numpy as np
import pytest

import langchef_core as lc
from langchef_core.stats import costs as guardrails_module


def latencies(rng, n, slowdown=1.0):
    baseline = rng.lognormal(6.0, 0.5, n)
    return baseline, baseline * slowdown * rng.lognormal(0.0, 0.1, n)


def test_point_estimates_are_numpy_statistics_of_each_arm():
    rng = np.random.default_rng(1)
    baseline, variant = latencies(rng, 301, 1.1)
    result = lc.compare_cost(baseline, variant, metric="latency_ms", resamples=1000)
    reference = {"mean": np.mean, "p50": lambda x: np.quantile(x, 0.5),
                 "p95": lambda x: np.quantile(x, 0.95)}
    for name, statistic in reference.items():
        row = result.statistic(name)
        assert row.baseline == pytest.approx(statistic(baseline), rel=1e-12)
        assert row.variant == pytest.approx(statistic(variant), rel=1e-12)
        assert row.difference == pytest.approx(statistic(variant) - statistic(baseline), rel=1e-9)
        assert row.relative == pytest.approx(statistic(variant) / statistic(baseline) - 1, rel=1e-9)
        assert row.low < row.difference < row.high
        assert row.relative_low < row.relative < row.relative_high
    assert [row.statistic for row in result.statistics] == ["mean", "p50", "p95"]


def test_resampled_percentiles_equal_numpy_on_the_expanded_sample():
    # A resample is a count per unit; its percentile must be np.quantile of the sample in
    # which every golden is repeated as often as its unit was drawn.
    rng = np.random.default_rng(2)
    values = np.round(rng.lognormal(5, 1, 80), 1)  # rounding creates ties
    units = rng.integers(0, 25, 80)
    arm = guardrails_module._SortedArm(values, units, 25)
    counts = rng.multinomial(25, np.full(25, 1 / 25), size=200).astype(np.int32)
    stats = arm.statistics(counts, counts.astype(float))
    for row in range(200):
        sample = np.repeat(arm.values, counts[row][arm.units])
        assert stats["p50"][row] == np.quantile(sample, 0.5)
        assert stats["p95"][row] == np.quantile(sample, 0.95)
        assert stats["mean"][row] == pytest.approx(sample.mean(), rel=1e-12)


def test_interval_matches_a_direct_paired_bootstrap():
    # Direct version: draw golden indices, apply them to both arms, take np.quantile.
    # Different draws, so they agree to Monte-Carlo error (10 000 resamples each).
    rng = np.random.default_rng(3)
    baseline, variant = latencies(rng, 400, 1.08)
    result = lc.compare_cost(baseline, variant, metric="latency_ms", resamples=10_000, seed=5)
    picks = np.random.default_rng(77).integers(0, 400, size=(10_000, 400))
    direct = np.quantile(variant[picks], 0.95, axis=1) - np.quantile(baseline[picks], 0.95, axis=1)
    low, high = np.quantile(direct, [0.025, 0.975])
    p95 = result.statistic("p95")
    width = high - low
    assert p95.low == pytest.approx(low, abs=0.05 * width)
    assert p95.high == pytest.approx(high, abs=0.05 * width)
    mean_direct = variant[picks].mean(axis=1) - baseline[picks].mean(axis=1)
    mean_low, mean_high = np.quantile(mean_direct, [0.025, 0.975])
    assert result.statistic("mean").low == pytest.approx(mean_low, abs=0.05 * width)
    assert result.statistic("mean").high == pytest.approx(mean_high, abs=0.05 * width)


def test_pairing_is_kept_both_arms_use_the_same_draw():
    # The variant is the baseline plus exactly 10 ms on every golden: every paired resample
    # then differs by exactly 10 ms in mean and in every percentile; independent draws would not.
    rng = np.random.default_rng(4)
    baseline = rng.lognormal(6, 1, 500)
    result = lc.compare_cost(baseline, baseline + 10.0, metric="latency_ms", resamples=2000)
    for row in result.statistics:
        assert row.low == pytest.approx(10.0) and row.high == pytest.approx(10.0)


def test_clusters_widen_the_interval_when_users_share_their_slowdown():
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(40), 25)
    baseline = rng.lognormal(6, 0.3, users.size)
    variant = baseline * (1 + rng.normal(0.05, 0.1, 40))[users]
    flat = lc.compare_cost(baseline, variant, metric="latency_ms", resamples=2000)
    clustered = lc.compare_cost(baseline, variant, metric="latency_ms", clusters=users,
                                resamples=2000)
    assert clustered.n_clusters == 40 and flat.n_clusters is None
    flat_mean, clustered_mean = flat.statistic("mean"), clustered.statistic("mean")
    assert clustered_mean.difference == pytest.approx(flat_mean.difference, rel=1e-12)
    assert clustered_mean.high - clustered_mean.low > 2 * (flat_mean.high - flat_mean.low)


def test_same_inputs_in_another_row_order_give_identical_results():
    rng = np.random.default_rng(6)
    baseline, variant = latencies(rng, 300, 1.05)
    users = rng.integers(0, 60, 300)
    order = rng.permutation(300)
    for clusters in (None, users):
        first = lc.compare_cost(baseline, variant, metric="latency_ms", clusters=clusters,
                                resamples=2000, seed=9)
        second = lc.compare_cost(baseline[order], variant[order], metric="latency_ms",
                                 clusters=None if clusters is None else clusters[order],
                                 resamples=2000, seed=9)
        assert json.dumps(first.to_dict()) == json.dumps(second.to_dict())


@pytest.mark.parametrize("low, high, allowed, status", [
    (-0.02, 0.08, 0.10, "held"),
    (0.12, 0.30, 0.10, "failed"),
    (0.05, 0.15, 0.10, "unresolved"),
    (0.0, 0.10, 0.10, "unresolved"),   # touching the limit is not wholly below it
    (0.10, 0.20, 0.10, "unresolved"),  # nor wholly above it
    (None, None, 0.10, "unresolved"),
])
def test_guardrail_from_interval(low, high, allowed, status):
    assert lc.guardrail_from_interval(low, high, allowed) == status


def test_planted_slowdown_fails_and_a_steady_arm_holds():
    rng = np.random.default_rng(7)
    baseline, slow = latencies(rng, 2000, 1.25)
    _, steady = latencies(np.random.default_rng(7), 2000, 1.0)
    guardrails = [{"metric": "latency_ms", "statistic": "p95", "max_increase": 0.10}]
    slow_check = lc.check_guardrails(guardrails, {"latency_ms": lc.compare_cost(
        baseline, slow, metric="latency_ms", resamples=2000)})
    assert slow_check.passed is False
    [failed] = slow_check.results
    assert failed.status == "failed" and failed.relative_low > 0.10
    assert slow_check.gate_reasons == (failed.message,) and "p95 latency_ms" in failed.message
    steady_check = lc.check_guardrails(guardrails, {"latency_ms": lc.compare_cost(
        baseline, steady, metric="latency_ms", resamples=2000)})
    assert steady_check.passed is True and steady_check.results[0].status == "held"
    assert steady_check.gate_reasons == () and steady_check.warnings == ()


def test_unresolved_guardrail_warns_but_does_not_fail():
    rng = np.random.default_rng(8)
    baseline, variant = latencies(rng, 60, 1.10)  # few goldens: the interval straddles 10%
    check = lc.check_guardrails(
        [{"metric": "latency_ms", "statistic": "mean", "max_increase": 0.10}],
        {"latency_ms": lc.compare_cost(baseline, variant, metric="latency_ms", resamples=2000)})
    assert check.results[0].status == "unresolved"
    assert check.passed is True and check.warnings == (check.results[0].message,)


def test_several_metrics_and_statistics():
    rng = np.random.default_rng(9)
    baseline, variant = latencies(rng, 1500, 1.0)
    cost_before = rng.gamma(2.0, 0.001, 1500)
    costs = {"latency_ms": lc.compare_cost(baseline, variant, metric="latency_ms", resamples=2000),
             "cost_usd": lc.compare_cost(cost_before, cost_before * 2, metric="cost_usd",
                                         resamples=2000)}
    check = lc.check_guardrails([
        {"metric": "latency_ms", "statistic": "p50", "max_increase": 0.10},
        {"metric": "cost_usd", "statistic": "mean", "max_increase": 0.5},
    ], costs)
    assert [result.status for result in check.results] == ["held", "failed"]
    assert check.passed is False and len(check.gate_reasons) == 1
    assert check.results[1].relative == pytest.approx(1.0)
    assert json.loads(json.dumps(check.to_dict())) == check.to_dict()


def test_zero_baseline_has_no_relative_change():
    baseline = np.zeros(50)
    variant = np.r_[np.zeros(45), np.full(5, 0.01)]
    result = lc.compare_cost(baseline, variant, metric="cost_usd", resamples=1000)
    mean = result.statistic("mean")
    assert mean.relative is None and mean.relative_low is None
    assert mean.difference == pytest.approx(0.001)
    check = lc.check_guardrails([{"metric": "cost_usd", "statistic": "mean", "max_increase": 0.1}],
                                {"cost_usd": result})
    assert check.results[0].status == "unresolved" and "undefined" in check.results[0].message


def test_identical_arms_hold_any_positive_limit_but_not_a_zero_one():
    rng = np.random.default_rng(10)
    baseline = rng.lognormal(6, 0.5, 200)
    result = lc.compare_cost(baseline, baseline, metric="latency_ms", resamples=1000)
    p95 = result.statistic("p95")
    assert (p95.relative_low, p95.relative, p95.relative_high) == (0.0, 0.0, 0.0)
    assert lc.guardrail_from_interval(p95.relative_low, p95.relative_high, 0.01) == "held"
    assert lc.guardrail_from_interval(p95.relative_low, p95.relative_high, 0.0) == "unresolved"


def test_a_guardrail_on_a_metric_the_runs_lack_is_an_error():
    rng = np.random.default_rng(11)
    costs = {"latency_ms": lc.compare_cost(*latencies(rng, 50), metric="latency_ms",
                                           resamples=1000)}
    with pytest.raises(ValueError, match="runs carry no cost_usd"):
        lc.check_guardrails([{"metric": "cost_usd", "statistic": "mean", "max_increase": 0.1}],
                            costs)


@pytest.mark.parametrize("guardrails, message", [
    ([{"metric": "tokens", "statistic": "mean", "max_increase": 0.1}], "metric must be one of"),
    ([{"metric": "latency_ms", "statistic": "p99", "max_increase": 0.1}],
     "statistic must be one of"),
    ([{"metric": "latency_ms", "statistic": "p95", "max_increase": -0.1}], "non-negative"),
    ([{"metric": "latency_ms", "statistic": "p95", "max_increase": "10%"}], "non-negative"),
    ([{"metric": "latency_ms", "statistic": "p95", "max_increase": 0.1, "limit": 3}],
     "unknown field"),
    ([{"metric": "latency_ms", "statistic": "p95", "max_increase": 0.1}] * 2, "guarded twice"),
    ({"metric": "latency_ms"}, "must be a list"),
    (["p95 latency"], "must be a mapping"),
])
def test_rejected_guardrails_say_what_to_fix(guardrails, message):
    with pytest.raises(ValueError, match=message):
        lc.check_guardrails(guardrails, {})


@pytest.mark.parametrize("baseline, variant, message", [
    ([100.0, -1.0], [100.0, 90.0], "non-negative"),
    ([100.0, float("nan")], [100.0, 90.0], "missing or infinite"),
    ([100.0, 120.0, 130.0], [100.0, 90.0], "paired"),
])
def test_rejected_costs_say_what_to_fix(baseline, variant, message):
    with pytest.raises(ValueError, match=message):
        lc.compare_cost(baseline, variant, metric="latency_ms", resamples=1000)


def test_an_interval_unbounded_above_is_written_as_null_not_infinity():
    """Whole-millisecond latencies from a fast tool can make a resampled baseline p50 zero:
    the relative interval is then unbounded above, which JSON cannot hold as a number."""
    import json

    from langchef_core.stats.costs import compare_cost
    baseline = np.array([0.0] * 12 + [1.0] * 3)
    variant = np.array([1.0] * 15)
    result = compare_cost(baseline, variant, metric="latency_ms", resamples=2000, seed=0)
    mean = result.statistic("mean")
    assert mean.relative_high == np.inf  # some resamples draw an all-zero baseline
    written = json.dumps(result.to_dict(), allow_nan=False)
    means = [s for s in json.loads(written)["statistics"] if s["statistic"] == "mean"]
    assert means[0]["relative_high"] is None and means[0]["relative_low"] is not None

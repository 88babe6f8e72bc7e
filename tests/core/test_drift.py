"""Drift of the judge between two runs on the same anchors, and the check's status."""

from __future__ import annotations

import json

import numpy as np
import pytest

import langchef_core as lc

IDS = ["q10", "q02", "q07", "q01", "q05", "q03", "q09", "q04", "q08", "q06"]
HUMAN = ["fail", "fail", "fail", "fail", "pass", "pass", "pass", "pass", "pass", "pass"]
THEN = ["fail", "fail", "fail", "pass", "pass", "pass", "pass", "pass", "fail", "pass"]
NOW = ["pass", "fail", "pass", "pass", "fail", "pass", "pass", "pass", "pass", "pass"]


def judge_run(rng, human_pass, sensitivity, specificity):
    """Judge verdicts (True = pass) with given error rates, independent across anchors."""
    u = rng.random(human_pass.size)
    return np.where(human_pass, u < specificity, u >= sensitivity)


def true_kappa(prevalence, sensitivity, specificity):
    """Population κ of such a judge against reviewers failing a `prevalence` share."""
    judge_fail = prevalence * sensitivity + (1 - prevalence) * (1 - specificity)
    observed = prevalence * sensitivity + (1 - prevalence) * specificity
    expected = prevalence * judge_fail + (1 - prevalence) * (1 - judge_fail)
    return (observed - expected) / (1 - expected)


def test_flips_are_counted_per_anchor_and_listed_in_id_order():
    result = lc.drift(IDS, HUMAN, THEN, NOW, resamples=2000)
    # q10, q07 stopped catching a failure and q05 started failing a pass: became wrong;
    # q08 stopped failing a pass: became right. q01 was wrong both times.
    assert (result.became_wrong, result.became_right) == (3, 1)
    assert (result.stayed_right, result.stayed_wrong) == (5, 1)
    assert result.p_value == lc.mcnemar_exact(3, 1) == 0.625
    assert result.flipped_ids == ("q05", "q07", "q08", "q10")
    changes = {anchor.anchor_id: anchor.change for anchor in result.flipped}
    assert changes == {"q05": "became_wrong", "q07": "became_wrong", "q08": "became_right",
                       "q10": "became_wrong"}
    q10 = result.flipped[-1]
    assert (q10.human_verdict, q10.judge_then, q10.judge_now) == ("fail", "fail", "pass")
    assert result.observed_then == 0.8 and result.observed_now == 0.6
    assert not result.significant and not result.criterion_compared


def test_kappa_change_is_the_difference_of_the_two_kappas():
    result = lc.drift(IDS, HUMAN, THEN, NOW, resamples=2000)
    then = lc.agreement(IDS, HUMAN, THEN).kappa
    now = lc.agreement(IDS, HUMAN, NOW).kappa
    assert (result.kappa_then, result.kappa_now) == (then, now)
    assert result.kappa_change == pytest.approx(now - then, abs=1e-15)
    assert result.kappa_change_low <= result.kappa_change <= result.kappa_change_high


def test_an_unchanged_judge_has_no_drift_and_a_zero_interval():
    result = lc.drift(IDS, HUMAN, THEN, THEN, resamples=2000)
    assert (result.became_wrong, result.became_right, result.p_value) == (0, 0, 1.0)
    assert (result.kappa_change, result.kappa_change_low, result.kappa_change_high) == (0, 0, 0)
    assert result.flipped == () and not result.significant


def test_same_seed_same_bytes_and_order_does_not_matter():
    rng = np.random.default_rng(8)
    n = 80
    human = rng.random(n) < 0.6
    then = judge_run(rng, human, 0.9, 0.9)
    now = judge_run(rng, human, 0.7, 0.9)
    ids = [f"a{i}" for i in range(n)]
    first = lc.drift(ids, human, then, now, seed=3)
    assert json.dumps(first.to_dict()) == json.dumps(lc.drift(ids, human, then, now, seed=3).to_dict())
    order = rng.permutation(n)
    shuffled = lc.drift([ids[i] for i in order], human[order], then[order], now[order], seed=3)
    assert shuffled.to_dict() == first.to_dict()
    other_seed = lc.drift(ids, human, then, now, seed=4)
    assert other_seed.kappa_change_low != first.kappa_change_low


def test_a_generator_can_be_passed_as_seed():
    result = lc.drift(IDS, HUMAN, THEN, NOW, resamples=1000, seed=np.random.default_rng(1))
    assert result.seed is None and result.kappa_change_low is not None


def test_criterion_flips_are_a_second_test_in_one_holm_family():
    ids = [f"a{i}" for i in range(14)]
    human = ["fail"] * 12 + ["pass"] * 2
    then = ["fail"] * 12 + ["pass"] * 2
    now = ["fail"] * 12 + ["pass"] * 2     # verdicts never change
    human_c = ["correct"] * 12 + [None, None]
    then_c = ["correct"] * 12 + [None, None]
    now_c = ["grounded"] * 10 + ["correct"] * 2 + [None, None]   # ten citations went wrong
    result = lc.drift(ids, human, then, now, human_criterion=human_c,
                      judge_criterion_then=then_c, judge_criterion_now=now_c, resamples=1000)
    assert (result.became_wrong, result.became_right, result.p_value) == (0, 0, 1.0)
    assert (result.criterion_became_wrong, result.criterion_became_right) == (10, 0)
    assert result.criterion_p_value == pytest.approx(lc.mcnemar_exact(10, 0))
    # Holm over two tests: the smaller p doubles, the larger stays at 1.
    assert result.criterion_p_adjusted == pytest.approx(2 * lc.mcnemar_exact(10, 0))
    assert result.p_adjusted == 1.0
    assert result.significant and "Holm" in result.method
    assert len(result.flipped) == 10
    first = result.flipped[0]
    assert (first.change, first.human_criterion, first.judge_criterion_then,
            first.judge_criterion_now) == ("criterion_became_wrong", "correct", "correct", "grounded")


def test_undefined_kappa_leaves_the_change_undefined():
    result = lc.drift(["a", "b", "c"], ["fail"] * 3, ["fail", "pass", "fail"],
                      ["pass", "pass", "fail"], resamples=1000)
    assert result.kappa_then is None and result.kappa_now is None
    assert result.kappa_change is None and result.kappa_change_low is None
    assert result.became_wrong == 1
    json.dumps(result.to_dict(), allow_nan=False)


def test_resamples_with_an_undefined_kappa_are_left_out_and_counted():
    # Two human failures in eight anchors: some resamples draw none of them.
    ids = list("abcdefgh")
    human = ["fail", "fail"] + ["pass"] * 6
    then = ["fail", "fail", "fail"] + ["pass"] * 5
    now = ["fail", "pass", "fail", "fail"] + ["pass"] * 4
    result = lc.drift(ids, human, then, now, resamples=2000)
    assert 0 < result.undefined_resamples < 2000
    assert result.kappa_change_low <= result.kappa_change_high


@pytest.mark.parametrize("kwargs, message", [
    (dict(human_criterion=["x"] * 10), "give human_criterion, judge_criterion_then and "
                                       "judge_criterion_now together"),
    (dict(resamples=10), "resamples must be at least 1000"),
    (dict(seed=-1), "seed must be a non-negative whole number"),
    (dict(alpha=1.5), "alpha must be a number strictly between 0 and 1"),
    (dict(judge_now=NOW[:9]), r"judge_now must give one value per anchor: got 9 values for 10"),
    (dict(judge_then=["pass"] * 9 + ["maybe"]), r"judge_then must be 'pass' or 'fail', got 'maybe'"),
    (dict(anchor_ids=IDS[:9] + ["q10"]), r"anchor_ids must be unique: 'q10'"),
])
def test_each_bad_drift_input_has_its_own_message(kwargs, message):
    arguments = dict(anchor_ids=IDS, human_verdict=HUMAN, judge_then=THEN, judge_now=NOW)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        lc.drift(**arguments)


# --------------------------------------------------------------------- simulations


@pytest.mark.slow  # a seeded simulation: 2-6 s depending on machine load
def test_false_alarm_rate_without_drift_stays_at_or_below_alpha():
    """Same judge error rates then and now, independent noise: exact McNemar is
    conservative, so the drift test alarms in at most alpha (+0.01 for simulation error)."""
    rng = np.random.default_rng(20240601)
    n, replicates = 100, 1000
    ids = [f"a{i:03d}" for i in range(n)]
    alarms = 0
    for replicate in range(replicates):
        human = rng.random(n) >= 0.4
        then = judge_run(rng, human, 0.85, 0.9)
        now = judge_run(rng, human, 0.85, 0.9)
        alarms += lc.drift(ids, human, then, now, resamples=1000, seed=replicate).significant
    assert alarms / replicates <= 0.05 + 0.01


def test_planted_drift_is_detected_in_most_runs():
    """The judge starts passing 40% of the human failures it used to catch (plus 5% of
    verdicts re-drawn at random both ways): found in most of 300 runs on 60 anchors."""
    rng = np.random.default_rng(7)
    n, replicates = 60, 300
    ids = [f"a{i:02d}" for i in range(n)]
    found = 0
    for replicate in range(replicates):
        human = rng.random(n) >= 0.4
        then = judge_run(rng, human, 0.85, 0.9)
        now = then.copy()
        now[~human & ~then & (rng.random(n) < 0.4)] = True
        noise = rng.random(n) < 0.05
        now[noise] = ~now[noise]
        result = lc.drift(ids, human, then, now, resamples=1000, seed=replicate)
        found += result.significant and result.became_wrong > result.became_right
    assert found / replicates >= 0.8


@pytest.mark.slow  # a seeded simulation: 2-6 s depending on machine load
def test_kappa_change_interval_covers_the_true_change_near_its_level():
    """200 anchors, 40% failed by reviewers; the judge's sensitivity drops from .85 to .70
    at specificity .90. The 95% paired bootstrap interval should cover the population Δκ
    in about 95% of runs (400 runs: ±2.2 points of simulation error at 2 SE)."""
    rng = np.random.default_rng(11)
    n, replicates = 200, 400
    ids = [f"a{i:03d}" for i in range(n)]
    truth = true_kappa(0.4, 0.70, 0.90) - true_kappa(0.4, 0.85, 0.90)
    covered = 0
    for replicate in range(replicates):
        human = rng.random(n) >= 0.4
        then = judge_run(rng, human, 0.85, 0.90)
        now = judge_run(rng, human, 0.70, 0.90)
        result = lc.drift(ids, human, then, now, resamples=2000, seed=replicate)
        covered += result.kappa_change_low <= truth <= result.kappa_change_high
    assert 0.91 <= covered / replicates <= 0.98


# -------------------------------------------------------------------------- status


def agreement_with_kappa_near(target, n=200):
    """An agreement on n anchors (half failed by reviewers) whose κ is near `target`."""
    wrong = int(round(n * (1 - target) / 2))  # with balanced margins κ = 1 − 2·wrong/n
    human = ["fail"] * (n // 2) + ["pass"] * (n // 2)
    judge = list(human)
    for i in range(wrong // 2):
        judge[i] = "pass"
        judge[n // 2 + i] = "fail"
    for i in range(wrong % 2):
        judge[n // 2 - 1 - i] = "pass"
    ids = [f"a{i}" for i in range(n)]
    return ids, human, judge, lc.agreement(ids, human, judge)


def test_status_is_ok_for_a_good_stable_judge():
    ids, human, judge, current = agreement_with_kappa_near(0.8)
    stable = lc.drift(ids, human, judge, judge, resamples=1000)
    status = lc.drift_status(current, stable)
    assert status.level == "ok" and status.reasons == ()
    assert status.drift_significant is False and status.length_bias is None
    assert "has not drifted" in status.meaning and "κ = 0.80" in status.meaning
    assert "can stand in for theirs" in status.meaning
    json.dumps(status.to_dict(), allow_nan=False)


def test_status_warns_between_the_thresholds_and_errs_below_the_floor():
    *_, modest = agreement_with_kappa_near(0.5)
    *_, poor = agreement_with_kappa_near(0.3)
    warned = lc.drift_status(modest)
    assert warned.level == "warn"
    assert "below the warn threshold 0.6" in warned.reasons[0]
    assert warned.meaning.startswith("Read this verdict with caution")
    failed = lc.drift_status(poor)
    assert failed.level == "error"
    assert "below the fail threshold 0.4" in failed.reasons[0]
    assert failed.meaning.startswith("Do not act on this verdict")
    # Thresholds come from the design.
    assert lc.drift_status(poor, warn_kappa=0.3, fail_kappa=0.2).level == "ok"
    assert lc.drift_status(modest, warn_kappa=0.9, fail_kappa=0.7).level == "error"


def test_kappa_at_a_threshold_is_not_below_it():
    *_, current = agreement_with_kappa_near(0.6)
    assert current.kappa == pytest.approx(0.6)
    assert lc.drift_status(current, warn_kappa=current.kappa).level == "ok"


def test_significant_drift_warns_even_with_a_good_kappa():
    ids, human, now, current = agreement_with_kappa_near(0.8)
    then = list(human)  # the earlier run agreed on every anchor
    moved = lc.drift(ids, human, then, now, resamples=1000)
    assert moved.significant
    status = lc.drift_status(current, moved)
    assert status.level == "warn" and status.drift_significant
    assert "became wrong on 20 anchors and right on 0" in status.reasons[0]
    assert "κ changed by -0.20" in status.reasons[0]
    assert "shifted since the earlier run" in status.meaning


def test_length_bias_warns():
    *_, current = agreement_with_kappa_near(0.9)
    length = lc.length_bias(["fail"] * 12, ["pass"] * 6 + ["fail"] * 6,
                            [900, 850, 1200, 700, 990, 1500, 120, 200, 90, 300, 150, 180])
    status = lc.drift_status(current, length=length)
    assert status.level == "warn" and status.length_bias
    assert status.reasons == (length.warning,)
    assert "longer wrong answers" in status.meaning


def test_a_judge_that_never_varies_is_an_error_and_a_one_sided_anchor_set_a_warning():
    constant = lc.agreement(["a", "b", "c", "d"], ["fail", "fail", "pass", "pass"], ["pass"] * 4)
    status = lc.drift_status(constant)
    assert status.level == "error" and status.kappa is None
    assert status.reasons[0].startswith("κ is undefined: the judge gave every anchor the verdict 'pass'")
    assert "the judge gave every anchor the same verdict" in status.meaning
    one_sided = lc.agreement(["a", "b", "c"], ["pass"] * 3, ["pass", "pass", "fail"])
    status = lc.drift_status(one_sided)
    assert status.level == "warn"
    assert "cannot measure the judge's agreement" in status.meaning


def test_error_lists_every_reason():
    ids, human, now, poor = agreement_with_kappa_near(0.3)
    moved = lc.drift(ids, human, list(human), now, resamples=1000)
    status = lc.drift_status(poor, moved)
    assert status.level == "error" and len(status.reasons) == 2


def test_drift_of_another_run_is_refused():
    ids, human, judge, current = agreement_with_kappa_near(0.8)
    other = lc.drift(ids, human, judge, list(human), resamples=1000)
    with pytest.raises(ValueError, match="drift must compare against the run agreement describes"):
        lc.drift_status(current, other)


@pytest.mark.parametrize("kwargs, message", [
    (dict(warn_kappa=1.5), "warn_kappa must be a κ threshold between -1 and 1, got 1.5"),
    (dict(fail_kappa=float("nan")), "fail_kappa must be a κ threshold between -1 and 1"),
    (dict(warn_kappa="0.6"), "warn_kappa must be a κ threshold"),
    (dict(warn_kappa=0.3, fail_kappa=0.5), r"fail_kappa \(0.5\) must not exceed warn_kappa \(0.3\)"),
])
def test_bad_thresholds_are_refused(kwargs, message):
    *_, current = agreement_with_kappa_near(0.8)
    with pytest.raises(ValueError, match=message):
        lc.drift_status(current, **kwargs)

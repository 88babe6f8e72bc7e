"""Judge agreement with human reviewers on anchors, and the length-bias probe."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc

# tp=6 (both fail), fn=2 (human fail, judge pass), fp=1 (human pass, judge fail), tn=11
HUMAN = ["fail"] * 8 + ["pass"] * 12
JUDGE = ["fail"] * 6 + ["pass"] * 2 + ["fail"] * 1 + ["pass"] * 11
IDS = [f"anchor-{i:02d}" for i in range(20)]


def test_counts_treat_fail_as_the_positive_class():
    result = lc.agreement(IDS, HUMAN, JUDGE)
    assert (result.tp, result.fn, result.fp, result.tn) == (6, 2, 1, 11)
    assert (result.human_fail, result.judge_fail, result.n) == (8, 7, 20)
    assert (result.tpr.k, result.tpr.n, result.tpr.value) == (6, 8, 0.75)
    assert (result.tnr.k, result.tnr.n) == (11, 12)
    assert (result.ppv.k, result.ppv.n) == (6, 7)
    assert (result.npv.k, result.npv.n) == (11, 13)
    assert (result.observed.k, result.observed.n) == (17, 20)
    for rate in (result.tpr, result.tnr, result.ppv, result.npv, result.observed):
        assert rate.low < rate.value < rate.high or rate.value == 1.0


def test_kappa_by_hand():
    # p_o = 17/20; h = 8/20, j = 7/20; p_e = .4·.35 + .6·.65 = .53; κ = (.85 − .53)/.47
    result = lc.agreement(IDS, HUMAN, JUDGE)
    assert result.kappa == pytest.approx((0.85 - 0.53) / 0.47, abs=1e-12)
    assert result.kappa_low < result.kappa < result.kappa_high
    assert result.kappa_undefined is None
    assert "Fleiss" in result.kappa_method and "smoothed percentile bootstrap" in result.kappa_method


def test_kappa_of_a_judge_worse_than_chance_is_negative():
    flipped = ["pass" if v == "fail" else "fail" for v in HUMAN]
    result = lc.agreement(IDS, HUMAN, flipped)
    # p_o = 0; h = .4, j = .6; p_e = .4·.6 + .6·.4 = .48; κ = −.48/.52
    assert result.kappa == pytest.approx(-0.48 / 0.52, abs=1e-12)
    assert result.observed.value == 0.0 and result.tpr.value == 0.0


def test_perfect_agreement_on_twenty_anchors_is_not_certainty():
    # Issue 12: the Wald interval was the point [1, 1]; the smoothed bootstrap is not.
    result = lc.agreement(IDS, HUMAN, HUMAN)
    assert result.kappa == 1.0 and result.kappa_high == 1.0
    assert result.kappa_low < 0.9
    assert result.kappa_se == 0.0


def test_undefined_rates_are_none_and_json_has_no_nan():
    # Reviewers failed every anchor: TNR has no denominator, and neither does PPV's
    # complement NPV when the judge failed everything too.
    result = lc.agreement(["a", "b", "c"], ["fail"] * 3, ["fail"] * 3)
    assert result.tnr.value is None and result.tnr.n == 0
    assert result.npv.value is None and result.npv.low is None and result.npv.high is None
    assert result.tpr.value == 1.0
    text = json.dumps(result.to_dict(), allow_nan=False)
    assert json.loads(text)["tnr"] == {"value": None, "low": None, "high": None, "k": 0, "n": 0}


def test_kappa_is_none_with_a_reason_when_reviewers_gave_a_single_verdict():
    # A judge that passes 1 of 10 all-fail anchors: κ would be exactly 0 by the formula,
    # though the raw agreement is 90%; langchef reports None and says why.
    result = lc.agreement(list(range(10)), ["fail"] * 10, ["fail"] * 9 + ["pass"])
    assert result.kappa is None and result.kappa_se is None
    assert "reviewers gave every anchor the verdict 'fail'" in result.kappa_undefined
    assert "add anchors reviewers marked 'pass'" in result.kappa_undefined
    assert result.observed.value == 0.9


def test_kappa_is_none_with_a_reason_when_the_judge_gave_a_single_verdict():
    result = lc.agreement(IDS, HUMAN, ["pass"] * 20)
    assert result.kappa is None
    assert "the judge gave every anchor the verdict 'pass'" in result.kappa_undefined
    assert result.tpr.value == 0.0 and result.tnr.value == 1.0
    assert result.ppv.value is None  # the judge failed nothing


def test_verdict_spellings_are_normalised():
    human = [" PASS", "Fail ", True, np.bool_(False), "pass"]
    judge = pd.Series(["pass", "FAIL", "Pass", "fail", False])
    result = lc.agreement(np.array(["a", "b", "c", "d", "e"]), human, judge)
    assert (result.tp, result.fp, result.fn, result.tn) == (2, 1, 0, 2)


def test_integer_anchor_ids_are_reported_as_strings():
    result = lc.drift([3, 1, 2], ["fail"] * 2 + ["pass"], ["fail", "pass", "pass"],
                      ["pass", "pass", "pass"], resamples=1000)
    assert result.flipped_ids == ("3",)


def test_result_does_not_depend_on_anchor_order():
    rng = np.random.default_rng(4)
    n = 50
    human = np.where(rng.random(n) < 0.4, "fail", "pass")
    judge = np.where(rng.random(n) < 0.85, human, np.where(human == "fail", "pass", "fail"))
    cited_h = [rng.choice(["correct", "grounded"]) if v == "fail" else None for v in human]
    cited_j = [rng.choice(["correct", "grounded", "style"]) if v == "fail" else None for v in judge]
    ids = [f"a{i}" for i in range(n)]
    first = lc.agreement(ids, human, judge, human_criterion=cited_h, judge_criterion=cited_j)
    order = rng.permutation(n)
    second = lc.agreement([ids[i] for i in order], human[order], judge[order],
                          human_criterion=[cited_h[i] for i in order],
                          judge_criterion=[cited_j[i] for i in order])
    assert first.to_dict() == second.to_dict()


# ------------------------------------------------------------------------ criteria


def test_failing_for_another_criterion_is_a_criterion_disagreement():
    ids = ["a", "b", "c", "d", "e", "f", "g"]
    human = ["fail", "fail", "fail", "fail", "fail", "pass", "pass"]
    judge = ["fail", "fail", "fail", "pass", "fail", "fail", "pass"]
    human_criterion = ["correct", "correct", "grounded", "grounded", None, None, "ignored"]
    judge_criterion = ["correct", "grounded", "grounded", "correct", "correct", "correct", None]
    result = lc.agreement(ids, human, judge, human_criterion=human_criterion,
                          judge_criterion=judge_criterion)
    # Verdict agreement: a, b, c, e are true positives (b failed for the wrong reason).
    assert result.tp == 4
    # Criterion agreement among both-failed anchors with a cited human criterion: a, c agree;
    # b disagrees; e has no human criterion (unknown); d is a verdict miss, not counted.
    assert (result.criterion_agreement.k, result.criterion_agreement.n) == (2, 3)
    assert result.criterion_unknown == 1
    rows = {row.criterion: row for row in result.criteria}
    assert list(rows) == ["correct", "grounded"]
    correct, grounded = rows["correct"], rows["grounded"]
    # Reviewers failed a, b for "correct": judge same on a, other on b.
    assert (correct.human_failed, correct.judge_same, correct.judge_other,
            correct.judge_passed) == (2, 1, 1, 0)
    # The judge cited "correct" on a, e, f (d passed, so its citation is ignored).
    assert (correct.judge_cited, correct.confirmed) == (3, 1)
    assert correct.recall == 0.5 and correct.precision == pytest.approx(1 / 3)
    # Reviewers failed c, d for "grounded": judge same on c, passed d.
    assert (grounded.human_failed, grounded.judge_same, grounded.judge_other,
            grounded.judge_passed) == (2, 1, 0, 1)
    assert (grounded.judge_cited, grounded.confirmed) == (2, 1)
    assert correct.recall_low < 0.5 < correct.recall_high
    json.dumps(result.to_dict(), allow_nan=False)


def test_criteria_are_compared_after_stripping_whitespace():
    result = lc.agreement(["a", "b"], ["fail", "fail"], ["fail", "fail"],
                          human_criterion=[" correct", "grounded"],
                          judge_criterion=["correct ", ""])
    assert (result.criterion_agreement.k, result.criterion_agreement.n) == (1, 2)


def test_without_criteria_there_is_no_criterion_agreement():
    result = lc.agreement(IDS, HUMAN, JUDGE)
    assert result.criterion_agreement is None and result.criteria == ()
    assert result.to_dict()["criteria"] == []


# ---------------------------------------------------------------------- validation


@pytest.mark.parametrize("judge, message", [
    (["pass", "yes", "fail"], r"must be 'pass' or 'fail', got 'yes' at position 1 \(anchor 'b'\)"),
    (["pass", 1, "fail"], r"got the number 1 at position 1 .*0/1 is ambiguous"),
    (["pass", 0.0, "fail"], r"got the number 0.0 at position 1"),
    (["pass", None, "fail"], r"judge_verdict is missing at position 1 \(anchor 'b'\)"),
    (["pass", float("nan"), "fail"], r"judge_verdict is missing at position 1"),
    (["pass", {"v": 1}, "fail"], r"must be 'pass'/'fail' or True/False, got \{'v': 1\} \(dict\)"),
    (["pass", "fail"], r"judge_verdict must give one value per anchor: got 2 values for 3"),
    ("pass", r"judge_verdict must hold one value per anchor, got a single string"),
    (np.array([["pass"], ["fail"], ["pass"]]), r"judge_verdict must be one-dimensional"),
    (None, r"judge_verdict is required, got None"),
    (5, r"judge_verdict must be a sequence with one value per anchor, got int"),
])
def test_each_bad_verdict_has_its_own_message(judge, message):
    with pytest.raises(ValueError, match=message):
        lc.agreement(["a", "b", "c"], ["pass", "fail", "pass"], judge)


@pytest.mark.parametrize("ids, message", [
    ([], r"anchor_ids is empty"),
    (["a", "b", "a"], r"anchor_ids must be unique: 'a' appears at positions 0 and 2"),
    (["1", 1, "c"], r"anchor_ids must be unique: '1' appears at positions 0 and 1"),
    (["a", " ", "c"], r"anchor_ids has an empty id at position 1"),
    (["a", 2.5, "c"], r"anchor_ids must be strings or whole numbers, got 2.5 \(float\)"),
    (["a", True, "c"], r"anchor_ids must be strings or whole numbers, got True \(bool\)"),
    (["a", None, "c"], r"anchor_ids must be strings or whole numbers, got None"),
])
def test_each_bad_anchor_id_list_has_its_own_message(ids, message):
    with pytest.raises(ValueError, match=message):
        lc.agreement(ids, ["pass"] * len(ids), ["pass"] * len(ids))


def test_a_missing_verdict_read_by_pandas_is_reported_as_missing():
    column = pd.Series(["pass", None, "fail"], dtype="string")  # holds pd.NA
    with pytest.raises(ValueError, match=r"human_verdict is missing at position 1 \(anchor 'b'\)"):
        lc.agreement(["a", "b", "c"], column, ["pass", "fail", "pass"])


def test_missing_criteria_read_by_pandas_count_as_none_cited():
    result = lc.agreement(["a", "b"], ["fail", "fail"], ["fail", "fail"],
                          human_criterion=pd.Series(["x", None], dtype="string"),
                          judge_criterion=pd.Series(["x", "x"], dtype="string"))
    assert result.criterion_unknown == 1
    assert (result.criterion_agreement.k, result.criterion_agreement.n) == (1, 1)


def test_human_verdicts_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match=r"human_verdict must give one value per anchor: got 2"):
        lc.agreement(["a", "b", "c"], ["pass", "fail"], ["pass", "fail", "pass"])


def test_one_sided_criteria_are_refused():
    with pytest.raises(ValueError, match="give both human_criterion and judge_criterion"):
        lc.agreement(IDS, HUMAN, JUDGE, human_criterion=["correct"] * 20)


def test_a_non_string_criterion_is_refused():
    with pytest.raises(ValueError, match=r"judge_criterion must be a criterion name .* got 3 "
                                         r"\(int\) at position 0 \(anchor 'a'\)"):
        lc.agreement(["a"], ["fail"], ["fail"], human_criterion=["x"], judge_criterion=[3])


def test_criteria_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match=r"human_criterion must give one value per anchor"):
        lc.agreement(["a", "b"], ["fail"] * 2, ["fail"] * 2, human_criterion=["x"],
                     judge_criterion=["x", "y"])


@pytest.mark.parametrize("alpha", [0, 1, -0.1, True, "0.05"])
def test_a_bad_alpha_is_refused(alpha):
    with pytest.raises(ValueError, match="alpha must be a number strictly between 0 and 1"):
        lc.agreement(IDS, HUMAN, JUDGE, alpha=alpha)


# --------------------------------------------------------------------- length bias


def test_longer_passed_failures_raise_a_length_warning():
    human = ["fail"] * 12 + ["pass"] * 3
    judge = ["pass"] * 6 + ["fail"] * 6 + ["pass"] * 3
    lengths = [900, 850, 1200, 700, 990, 1500] + [120, 200, 90, 300, 150, 180] + [5, 5000, 10]
    result = lc.length_bias(human, judge, lengths)
    assert (result.n_human_failed, result.n_judge_passed, result.n_judge_failed) == (12, 6, 6)
    assert result.auc == 1.0 and result.rank_biserial == 1.0
    assert result.u_statistic == 36.0
    # Exact: one split in C(12, 6) = 924 puts all six longest in the passed group.
    assert result.p_value_greater == pytest.approx(1 / 924)
    assert result.p_value_two_sided == pytest.approx(2 / 924)
    assert result.significant and result.note is None
    assert result.median_length_passed == 945.0 and result.median_length_failed == 165.0
    assert "Possible length bias" in result.warning and "945 passed vs 165 failed" in result.warning


def test_shorter_passed_failures_raise_no_warning():
    human = ["fail"] * 12
    judge = ["pass"] * 6 + ["fail"] * 6
    lengths = [120, 200, 90, 300, 150, 180] + [900, 850, 1200, 700, 990, 1500]
    result = lc.length_bias(human, judge, lengths)
    assert result.auc == 0.0
    assert result.p_value_greater == pytest.approx(1.0)
    assert result.p_value_two_sided == pytest.approx(2 / 924)
    assert not result.significant and result.warning is None


def test_length_bias_uses_the_normal_approximation_on_large_groups():
    rng = np.random.default_rng(2)
    human = ["fail"] * 80
    judge = ["pass"] * 30 + ["fail"] * 50
    lengths = np.r_[rng.normal(600, 100, 30), rng.normal(500, 100, 50)].clip(0)
    result = lc.length_bias(human, judge, lengths)
    assert "normal approximation" in result.method
    assert result.significant and result.auc > 0.6


@pytest.mark.parametrize("judge, note", [
    (["fail"] * 4, "the judge failed every anchor reviewers failed"),
    (["pass"] * 4, "the judge passed every anchor reviewers failed"),
])
def test_length_bias_is_none_safe_when_a_group_is_empty(judge, note):
    result = lc.length_bias(["fail"] * 4, judge, [10, 20, 30, 40])
    assert result.p_value_greater is None and result.auc is None and result.u_statistic is None
    assert not result.significant and result.warning is None
    assert note in result.note
    json.dumps(result.to_dict(), allow_nan=False)


def test_length_bias_without_human_failures():
    result = lc.length_bias(["pass"] * 3, ["pass", "fail", "pass"], [1, 2, 3])
    assert result.n_human_failed == 0 and "no anchor was failed by reviewers" in result.note
    assert result.median_length_passed is None


def test_equal_lengths_give_no_evidence():
    result = lc.length_bias(["fail"] * 6, ["pass"] * 3 + ["fail"] * 3, [50] * 6)
    assert result.p_value_greater == 1.0 and result.auc == 0.5 and not result.significant


def test_lengths_of_human_passes_are_ignored():
    base = lc.length_bias(["fail"] * 4 + ["pass"], ["pass", "pass", "fail", "fail", "pass"],
                          [10, 20, 30, 40, 1])
    other = lc.length_bias(["fail"] * 4 + ["pass"], ["pass", "pass", "fail", "fail", "pass"],
                           [10, 20, 30, 40, 10_000])
    assert base.to_dict() == other.to_dict()


@pytest.mark.parametrize("lengths, message", [
    ([1, -2, 3], r"output_length must be a finite, non-negative number, got -2 at position 1"),
    ([1, float("nan"), 3], r"output_length is missing at position 1; measure every"),
    ([1, float("inf"), 3], r"output_length must be a finite, non-negative number, got inf"),
    ([1, "long", 3], r"output_length must hold numbers .* got 'long' \(str\) at position 1"),
    ([1, True, 3], r"output_length must hold numbers .* got True \(bool\)"),
    ([1, 2], r"output_length must give one value per anchor: got 2 values for 3"),
    (pd.Series([1, None, 3], dtype="Int64"), r"output_length is missing at position 1"),
])
def test_each_bad_length_has_its_own_message(lengths, message):
    with pytest.raises(ValueError, match=message):
        lc.length_bias(["fail"] * 3, ["pass", "fail", "fail"], lengths)


def test_length_bias_verdicts_of_unequal_length_are_refused():
    with pytest.raises(ValueError, match=r"judge_verdict must give one value per anchor"):
        lc.length_bias(["fail"] * 3, ["pass", "fail"], [1, 2, 3])


@pytest.mark.slow  # a seeded simulation: 2-6 s depending on machine load
def test_length_probe_false_alarms_stay_near_alpha_and_planted_bias_is_found():
    """Simulation: lengths independent of the judge's verdict → one-sided false alarm
    rate near alpha; the judge passing failures with probability rising in length → found."""
    rng = np.random.default_rng(77)
    replicates, n = 400, 40
    alarms = found = 0
    for _ in range(replicates):
        lengths = rng.lognormal(6, 0.5, n)
        judge = rng.random(n) < 0.3
        alarms += lc.length_bias([False] * n, judge, lengths).significant
        biased = rng.random(n) < 0.05 + 0.6 * (lengths > np.median(lengths))
        found += lc.length_bias([False] * n, biased, lengths).significant
    assert alarms / replicates <= 0.05 + 0.02
    assert found / replicates >= 0.8

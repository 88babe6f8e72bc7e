"""attribute: per-criterion paired comparisons, Holm, directions, limits, the remainder."""

import math

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc


def judged(rows):
    """rows: (baseline_pass, baseline_criterion, variant_pass, variant_criterion, count)."""
    columns = [[], [], [], []]
    for *values, count in rows:
        for column, value in zip(columns, values):
            column.extend([value] * count)
    return columns


def test_cross_criterion_flip_is_invisible_overall_but_attributed():
    # Failed Correctness under baseline, Groundedness under variant: a fail in both arms.
    bp, bc, vp, vc = judged([(False, "Correctness", False, "Groundedness", 12), (True, None, True, None, 80)])
    overall = lc.compare_binary(bp, vp)
    assert overall.broke == overall.fixed == 0
    result = lc.attribute(bp, bc, vp, vc)
    rows = result.criteria.set_index("criterion")
    assert rows.loc["Correctness", "fixed"] == 12 and rows.loc["Groundedness", "broke"] == 12
    assert rows.loc["Groundedness", "direction"] == "moved_worse"
    assert rows.loc["Correctness", "direction"] == "moved_better"


def test_differences_add_up_to_the_overall_difference():
    rng = np.random.default_rng(0)
    names = np.array(["Correctness", "Directness", "Groundedness"])
    bp, vp = rng.random(300) < 0.7, rng.random(300) < 0.65
    bc = np.where(rng.random(300) < 0.1, None, names[rng.integers(0, 3, 300)])
    vc = np.where(rng.random(300) < 0.1, None, names[rng.integers(0, 3, 300)])
    result = lc.attribute(bp, list(bc), vp, list(vc))
    overall = lc.compare_binary(bp, vp).difference
    assert math.fsum(result.criteria["difference"]) + result.unattributed.difference == pytest.approx(overall, abs=1e-12)
    assert result.unattributed.overall == pytest.approx(overall)
    assert result.unattributed.baseline_uncited == int(np.sum(~bp & (bc == None)))  # noqa: E711


def test_holm_and_the_two_conditions_for_a_direction():
    bp, bc, vp, vc = judged([
        (True, None, False, "Directness", 15),
        (False, "Correctness", True, None, 5),
        (True, None, True, None, 70),
    ])
    result = lc.attribute(bp, bc, vp, vc)
    rows = result.criteria.set_index("criterion")
    np.testing.assert_allclose(rows["p_adjusted"], lc.holm(rows["p_value"].to_numpy()))
    # Correctness: interval clears zero but the corrected p does not -> no direction.
    assert rows.loc["Correctness", "low"] > 0 and rows.loc["Correctness", "p_adjusted"] >= 0.05
    assert rows.loc["Correctness", "direction"] == "inconclusive"
    assert rows.loc["Directness", "direction"] == "moved_worse"


def test_each_criterion_limit_is_at_alpha_over_k():
    bp, bc, vp, vc = judged([(True, None, False, "A", 6), (True, None, True, None, 94)])
    result = lc.attribute(bp, bc, vp, vc, criteria=["A", "B", "C", "D"])
    rows = result.criteria.set_index("criterion")
    assert result.family_size == 4
    assert rows.loc["A", "detection_limit"] == pytest.approx(lc.detection_limit(100, 6, alpha=0.05 / 4))
    assert rows.loc["D", "detection_limit"] == pytest.approx(lc.detection_limit(100, 0, alpha=0.05 / 4))
    assert rows.loc["D", "p_value"] == 1.0


def test_uncited_failures_are_unattributed_not_dropped():
    bp, bc, vp, vc = judged([(True, None, False, None, 9), (True, None, True, None, 91)])
    result = lc.attribute(bp, bc, vp, vc, criteria=["Correctness"])
    assert result.unattributed.broke == 9 and result.unattributed.variant_uncited == 9
    assert result.unattributed.difference == pytest.approx(-0.09)
    assert result.criteria.loc[0, "difference"] == 0


def test_criteria_on_passing_answers_are_ignored_and_nan_means_uncited():
    bp, bc, vp, vc = judged([(True, "Correctness", False, float("nan"), 5), (True, None, True, "x", 20)])
    result = lc.attribute(bp, bc, vp, vc)
    assert result.criteria.empty and result.unattributed.broke == 5


def test_row_order_invariance_and_json():
    import json
    bp, bc, vp, vc = judged([(True, None, False, "A", 7), (False, "B", True, None, 4),
                             (False, "A", False, "B", 3), (True, None, True, None, 50)])
    first = lc.attribute(bp, bc, vp, vc).to_dict()
    order = np.random.default_rng(0).permutation(len(bp))
    again = lc.attribute(*(list(np.asarray(c, dtype=object)[order]) for c in (bp, bc, vp, vc))).to_dict()
    assert first == again
    assert json.loads(json.dumps(first)) == first
    assert list(pd.DataFrame(first["criteria"]).columns) == [
        "criterion", "broke", "fixed", "difference", "low", "high", "p_value", "p_adjusted",
        "direction", "detection_limit"]


@pytest.mark.parametrize("criteria_b, kwargs, message", [
    ([3, None], {}, "labels must be strings naming a criterion, got 3 \\(int\\) at position 0"),
    ([None], {}, "must give one label per golden: got 1 labels for 2 goldens"),
    ("Correctness", {}, "must hold one label per golden, got a single string"),
    (["Tone", None], dict(criteria=["Correctness"]), "not among the pre-registered criteria"),
    ([None, None], dict(criteria=["A", "A"]), "distinct, non-empty names"),
])
def test_rejected_criterion_labels(criteria_b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        lc.attribute([False, False], criteria_b, [True, True], [None, None], **kwargs)

"""Small edges found by the re-audit (issue 28, point 6): each one clear sentence or an honest
number, never numpy's own message or an interval beyond the metric's range."""

import numpy as np
import pytest

import langchef_core as lc
from langchef_core.stats.slices import compare_slices


def test_scores_too_large_to_square_are_refused_with_a_sentence():
    """Values near 1e300 used to fail inside math.fsum with "-inf + inf in fsum"."""
    big = np.r_[np.full(10, 1e300), np.full(10, -1e300)]
    with pytest.raises(ValueError, match=r"variant has the value 1e\+300 at position 0, too "
                                         r"large .*rescale the scores below 1e\+150"):
        lc.compare_continuous(np.full(20, 1e300 / 2 ** 600), big)
    result = lc.compare_continuous(np.full(20, 1e100), np.r_[np.full(10, 1e100), np.full(10, 2e100)])
    assert np.isfinite([result.low, result.high]).all()


def test_a_weighted_pass_rate_interval_stays_within_its_range():
    """One golden per slice, every one fixed: the Wald interval of the weighted contrast ran
    past +100 points; a difference of pass rates cannot."""
    baseline, variant = np.zeros(3, dtype=bool), np.ones(3, dtype=bool)
    result = compare_slices(baseline, variant, np.array(["a", "b", "c"]), column="segment",
                            target_weights={"a": 0.6, "b": 0.3, "c": 0.1}).to_dict()
    for population in ("observed", "target"):
        assert -1.0 <= result[population]["low"] <= result[population]["high"] <= 1.0
    assert result["target"]["high"] == 1.0


def test_sequential_cluster_labels_are_checked_like_every_other_comparison():
    from langchef_core.stats.sequential import compare_sequential

    outcomes = np.array([1, 0, 1, 1, 0, 1], dtype=bool)
    with pytest.raises(ValueError, match="missing label \\(NaN\\) at position 2"):
        compare_sequential(outcomes, ~outcomes, binary=True,
                           clusters=np.array([1.0, 2.0, np.nan, 2.0, 3.0, 3.0]))
    with pytest.raises(ValueError, match="got 2 labels for 6 pairs"):
        compare_sequential(outcomes, ~outcomes, binary=True, clusters=["u1", "u2"])

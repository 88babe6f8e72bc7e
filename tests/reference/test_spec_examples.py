"""The worked examples of the reference page "Comparing two arms", reproduced number by number.

The page's first 2x2 table (72 both pass, 18 broke, nothing else) does not add up to the
rates it prints (83.3% -> 63.3% on 90 goldens). The consistent table is: 57 pass in both
arms, 18 broke, 0 fixed, 15 fail in both (75/90 = 83.3% -> 57/90 = 63.3%).
"""

import pytest

import langchef_core as lc

from ..core.test_attribution import judged
from ..core.test_compare_binary import paired_arms

STEP = 1 / 90  # one golden on 90


def test_stale_index_regression():
    baseline, variant = paired_arms(both_pass=57, broke=18, fixed=0, both_fail=15)
    result = lc.compare_binary(baseline, variant)
    assert round(result.baseline_rate, 3) == 0.833 and round(result.variant_rate, 3) == 0.633
    assert result.difference == pytest.approx(-0.200)
    # Page: [-27.8%, -12.2%]. The exact bootstrap distribution of the broke count is
    # Binomial(90, 0.2), whose 97.5% point is 26 (P[B <= 25] = 0.972), so the lower end is
    # -26/90 = -28.9%: one golden from the page's figure. The upper end matches exactly.
    assert result.low == pytest.approx(-0.278, abs=STEP + 0.001)
    assert result.high == pytest.approx(-0.122, abs=0.001)
    assert result.p_value < 0.0001
    assert result.verdict == "regression"


def test_a_quiet_run_still_has_a_finite_limit():
    baseline, variant = paired_arms(both_pass=75, broke=0, fixed=0, both_fail=15)
    result = lc.compare_binary(baseline, variant)
    assert (result.difference, result.low, result.high, result.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert result.verdict == "inconclusive"
    assert round(result.detection_limit, 3) == 0.060


def test_eager_hedging_attribution():
    # 15 answers broke on Directness, 5 were fixed on Correctness, 70 unchanged passes.
    bp, bc, vp, vc = judged([
        (True, None, False, "Directness", 15),
        (False, "Correctness", True, None, 5),
        (True, None, True, None, 70),
    ])
    overall = lc.compare_binary(bp, vp)
    assert round(overall.difference, 3) == -0.111
    rows = lc.attribute(bp, bc, vp, vc).criteria.set_index("criterion")

    directness = rows.loc["Directness"]
    assert round(directness["difference"], 3) == -0.167
    assert (round(directness["low"], 3), round(directness["high"], 3)) == (-0.244, -0.089)
    assert directness["p_adjusted"] == pytest.approx(0.0001, abs=0.00005)
    assert directness["direction"] == "moved_worse"

    correctness = rows.loc["Correctness"]
    assert round(correctness["difference"], 3) == 0.056
    assert (round(correctness["low"], 3), round(correctness["high"], 3)) == (0.011, 0.111)
    assert correctness["p_value"] == 0.0625 and correctness["p_adjusted"] == 0.0625
    assert correctness["direction"] == "inconclusive"
    assert round(correctness["detection_limit"], 3) == 0.120

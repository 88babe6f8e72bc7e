"""The worked examples of the reference page "Comparing two arms", reproduced number by number.

The page's first 2x2 table (72 both pass, 18 broke, nothing else) does not add up to the
rates it prints (83.3% -> 63.3% on 90 goldens). The consistent table is: 57 pass in both
arms, 18 broke, 0 fixed, 15 fail in both (75/90 = 83.3% -> 57/90 = 63.3%).
"""

import pytest

import langchef_core as lc
from langchef_core.stats.power import wilson_formula_limit

from ..core.test_attribution import judged
from ..core.test_compare_binary import paired_arms

STEP = 1 / 90  # one golden on 90

# Issue 12: pass/fail intervals are Tango score intervals (the percentile bootstrap
# undercovers with few flips). Every verdict on the page reads the same way; the bounds
# move by at most 1.5 goldens (1.7 points). Each number below is
# langchef_core.stats.score_interval.tango_interval(broke, fixed, 90), checked against
# scipy.optimize.brentq on the same score statistic and against the restricted maximum
# likelihood found numerically (tests/core/test_small_sample_reference.py). A score
# interval is asymmetric, longer on the side away from zero, which is why both ends move
# away from the bootstrap's.


def test_stale_index_regression():
    baseline, variant = paired_arms(both_pass=57, broke=18, fixed=0, both_fail=15)
    result = lc.compare_binary(baseline, variant)
    assert round(result.baseline_rate, 3) == 0.833 and round(result.variant_rate, 3) == 0.633
    assert result.difference == pytest.approx(-0.200)
    # Page: [-27.8%, -12.2%]; the percentile bootstrap gave [-28.9%, -12.2%]. Tango gives
    # [-29.41%, -13.04%]: 1.4 goldens further out at the low end, 0.8 goldens in at the
    # high end (score intervals are skewed away from zero). Still a regression.
    assert (round(result.low, 4), round(result.high, 4)) == (-0.2941, -0.1304)
    assert result.low == pytest.approx(-0.278, abs=1.5 * STEP)
    assert result.high == pytest.approx(-0.122, abs=STEP)
    assert result.interval_method == "Tango score interval"
    assert result.p_value < 0.0001
    assert result.verdict == "regression"


def test_a_quiet_run_still_has_a_finite_limit():
    baseline, variant = paired_arms(both_pass=75, broke=0, fixed=0, both_fail=15)
    result = lc.compare_binary(baseline, variant)
    # The bootstrap's zero-width [0, 0] is now Tango's [-4.09%, +4.09%]: 0 flips of 90 do
    # not make the difference exactly zero.
    assert (result.difference, result.p_value) == (0.0, 1.0)
    assert (round(result.low, 4), round(result.high, 4)) == (-0.0409, 0.0409)
    assert result.verdict == "inconclusive"
    # The page's 6.0% is the normal formula; at 6.0 points the exact gate (6 one-way flips)
    # reads a direction 45% of the time. The honest limit is where it does so 80% of the
    # time: stats.binom.sf(5, 90, 0.0864) = 0.80 (issue 28).
    assert round(wilson_formula_limit(90, 0), 3) == 0.060
    assert round(result.detection_limit, 4) == 0.0864


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
    # Page: [-24.4%, -8.9%]. Tango (15 broke, 0 fixed of 90): [-25.69%, -10.37%], 1.2 and
    # 1.3 goldens from the page; the direction and Holm p are unchanged.
    assert (round(directness["low"], 3), round(directness["high"], 3)) == (-0.257, -0.104)
    assert directness["low"] == pytest.approx(-0.244, abs=1.5 * STEP)
    assert directness["high"] == pytest.approx(-0.089, abs=1.5 * STEP)
    assert directness["p_adjusted"] == pytest.approx(0.0001, abs=0.00005)
    assert directness["direction"] == "moved_worse"

    correctness = rows.loc["Correctness"]
    assert round(correctness["difference"], 3) == 0.056
    # Page: [+1.1%, +11.1%]. Tango (0 broke, 5 fixed of 90): [+1.23%, +12.35%]; the low end
    # matches to 0.1 points, the high end is 1.1 goldens out. Inconclusive as on the page:
    # the interval clears zero but exact p = 0.0625 (the exact gate of issue 12, the same
    # rule criterion attribution always applied).
    assert (round(correctness["low"], 3), round(correctness["high"], 3)) == (0.012, 0.124)
    assert correctness["low"] == pytest.approx(0.011, abs=0.002)
    assert correctness["high"] == pytest.approx(0.111, abs=1.2 * STEP)
    assert correctness["p_value"] == 0.0625 and correctness["p_adjusted"] == 0.0625
    assert correctness["direction"] == "inconclusive"
    # Page: 12.0% (the normal formula at alpha/2 = 0.025 over 2 criteria, 5 flips of 90).
    # The exact rule at that level reaches 80% power at 11.7 points: at 5 flips the Wilson
    # bound 0.137 on the discordant rate is what sets both, and the exact sum is the smaller.
    assert round(wilson_formula_limit(90, 5, alpha=0.025), 3) == 0.120
    assert round(correctness["detection_limit"], 3) == 0.117

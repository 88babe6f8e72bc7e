"""The pass/fail detection limit keeps its promise: at the reported effect the readout's own rule
reads the direction with at least the design's power (issue 28, point 1).

The limit used to be the normal formula (z₁₋α/₂ + z_power)·√(U/n): a quiet run of 90 reported
6.0 points "with at least 80% power", where the exact gate needs 6 one-way flips and reads a
direction only 45% of the time. The power here is computed independently of ``power.py``:
every (broke, fixed) table with any real probability under the trinomial at the limit is run
through ``compare_binary`` itself, and the probabilities of the tables it calls an
improvement are added up.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from scipy import stats

import langchef_core as lc
from langchef_core.stats.intervals import wilson_interval
from langchef_core.stats.power import decision_power, wilson_formula_limit

POWER = 0.80


@lru_cache(maxsize=None)
def _reads_improvement(n: int, broke: int, fixed: int) -> bool:
    baseline = np.zeros(n, dtype=bool)
    variant = np.zeros(n, dtype=bool)
    baseline[:broke] = True                  # broke: the baseline passed, the variant failed
    variant[broke:broke + fixed] = True      # fixed: the other way round
    return lc.compare_binary(baseline, variant).verdict == "improvement"


def _power_by_enumeration(n: int, rate: float, effect: float) -> float:
    """P(compare_binary reads an improvement) when a share ``rate`` of goldens flips and the
    flips favour the variant by ``effect``, summed over every table with mass > 1e-13."""
    flips = stats.binom(n, rate)
    total = 0.0
    for d in range(int(flips.ppf(1e-13)), int(flips.isf(1e-13)) + 1):
        weight = flips.pmf(d)
        fixed_share = (rate + effect) / (2 * rate)
        fixed = np.arange(d + 1)
        chance = stats.binom.pmf(fixed, d, fixed_share)
        for f in fixed[chance > 1e-13]:
            if _reads_improvement(n, d - int(f), int(f)):
                total += weight * chance[f]
    return total


CASES = [(n, flips) for n in (30, 90, 200, 2000) for flips in (0, 1, 2, 3, 5, 8, 10)]


@pytest.mark.slow
@pytest.mark.parametrize("n, flips", CASES)
def test_the_readouts_rule_has_the_design_power_at_the_reported_limit(n, flips):
    limit = lc.detection_limit(n, flips)
    upper = wilson_interval(flips, n)[1]
    rate = max(upper, limit)
    power = _power_by_enumeration(n, rate, limit)
    assert power >= POWER - 1e-9
    assert power == pytest.approx(decision_power(n, rate, limit), abs=1e-9)
    # And the limit is the smallest such effect, not a safe overstatement.
    smaller = 0.97 * limit
    assert _power_by_enumeration(n, max(upper, smaller), smaller) < POWER


def test_the_issues_quiet_run_of_90():
    """0 flips in 90: the old 6.0 points had 45% power (one-way flips, 6 needed); the limit
    now is the effect where P[Bin(90, δ) ≥ 6] = 0.80."""
    old = wilson_formula_limit(90, 0)
    assert old == pytest.approx(0.0598, abs=1e-4)
    assert stats.binom.sf(5, 90, old) == pytest.approx(0.452, abs=1e-3)
    limit = lc.detection_limit(90, 0)
    assert stats.binom.sf(5, 90, limit) == pytest.approx(POWER, abs=1e-6)
    assert limit == pytest.approx(0.0864, abs=1e-4)


def test_one_way_flips_are_the_quiet_runs_case_at_every_size():
    for n in (30, 200, 2000, 100_000):
        limit = lc.detection_limit(n, 0)
        # The exact gate needs 6 one-way flips at alpha 0.05 (2 · 0.5^6 = 0.031 < 0.05).
        assert stats.binom.sf(5, n, limit) == pytest.approx(POWER, abs=1e-6)


def test_too_few_goldens_detect_nothing():
    # Five goldens can never give the exact gate the 6 flips it needs.
    assert lc.detection_limit(5, 0) == math.inf
    assert lc.compare_binary(np.zeros(5), np.zeros(5)).to_dict()["detection_limit"] is None
    assert math.isfinite(lc.detection_limit(6, 0))


def test_criteria_limits_use_the_same_rule_at_alpha_over_k():
    limit = lc.detection_limit(200, 4, alpha=0.05 / 3)
    rate = max(wilson_interval(4, 200, alpha=0.05 / 3)[1], limit)
    assert decision_power(200, rate, limit, alpha=0.05 / 3) >= POWER - 1e-9
    assert limit > lc.detection_limit(200, 4)


@pytest.mark.slow
@pytest.mark.parametrize("n", [30, 90, 200])
def test_a_quiet_real_valued_run_detects_its_limit_arriving_as_rare_full_scale_changes(n):
    """90 equal differences used to report 5.3 points, which rare full-scale changes reach only
    70% of the time; the limit now covers that arrival (the interval reads 4 such changes,
    the bound assumes the exact gate's 6). 400 runs: Monte Carlo error about 2 points."""
    rng = np.random.default_rng(n)
    quiet = np.full(n, 0.25)
    limit = lc.compare_continuous(quiet, quiet.copy(), resamples=1000).detection_limit
    runs, read = 400, 0
    for _ in range(runs):
        baseline = np.zeros(n)
        variant = (rng.random(n) < limit).astype(float)   # a change of the whole 0-1 scale
        baseline[-1] = variant[-1] = 0.5                   # real-valued, not a 0/1 metric
        read += lc.compare_continuous(baseline, variant, resamples=1000).verdict == "improvement"
    assert read / runs >= POWER


def test_an_unreachable_limit_reads_as_such_on_the_page_and_the_command_line():
    from langchef_core.readout.verdict import unsigned_size
    from langchef_core.report.view_verdict import limit_sentence

    primary = lc.compare_binary(np.ones(5, dtype=bool), np.zeros(5, dtype=bool)).to_dict()
    assert primary["detection_limit"] is None
    assert limit_sentence(primary, "rate").startswith("No effect could have been seen")
    assert unsigned_size(primary["detection_limit"], True) == \
        "none (too few goldens to decide at all)"
    assert unsigned_size(0.0864, True) == "8.6 points"


def test_a_criterion_too_rare_to_decide_serialises_as_null():
    """At alpha/2 over two criteria, 6 goldens can never give the exact gate its 7 flips: the
    limit is infinite, and the readout (no NaN, no Infinity) carries null."""
    from langchef_core.readout.publish import readout_bytes

    baseline = np.array([1, 0, 1, 1, 0, 1], dtype=bool)
    variant = np.array([0, 0, 1, 1, 1, 1], dtype=bool)
    attribution = lc.attribute(baseline, np.where(baseline, None, "A"),
                               variant, np.where(variant, None, "B")).to_dict()
    assert [row["detection_limit"] for row in attribution["criteria"]] == [None, None]
    assert b'"detection_limit": null' in readout_bytes({"criteria": attribution["criteria"]})

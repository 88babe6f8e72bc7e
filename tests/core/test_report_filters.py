"""Number formatting of the report: signs, rounding, units, p-values, times."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langchef_core.report import filters as f
from langchef_core.report.view_common import Estimate
from langchef_core.report.view_model import flips, verdict_sentence

M = f.MINUS


def test_negative_numbers_use_a_true_minus_and_a_rounded_zero_has_no_sign():
    assert f.fixed(-2.5) == f"{M}2.5"
    assert f.fixed(-0.0) == "0.0" and f.fixed(-0.04) == "0.0" and f.fixed(0.04) == "0.0"
    assert f.signed(0.3) == "+0.3" and f.signed(-0.3) == f"{M}0.3"
    assert f.signed(0.0) == f.signed(-0.0) == f.signed(1e-12) == "0.0"
    assert f.signed(float("inf")) == "+\u221e" and f.fixed(float("-inf")) == f"{M}\u221e"
    assert f.fixed(None) == f.signed(None) == f.DASH


def test_rounding_is_format_rounding_of_the_binary_value():
    # Python's format rounds the exact binary value half to even: 0.125 is exact → "0.12";
    # 0.135 is stored as 0.13500000000000000888 → "0.14". Every platform agrees.
    assert f.fixed(0.125, 2) == "0.12" and f.fixed(0.135, 2) == "0.14"
    assert f.pp(-0.28888888888888886) == f"{M}28.9" and f.pp(-0.12222222222222222) == f"{M}12.2"


def test_rates_read_in_percent_and_their_differences_in_points():
    assert f.pct(0.8333333333333334) == "83.3%" and f.pct(None) == f.DASH
    assert f.points(-0.2) == f"{M}20.0 points" and f.points(0.0) == "0.0 points"
    assert f.delta(0.041666, "rate") == "+4.2 points"
    assert f.delta(-0.025, "score") == f"{M}0.025"
    assert f.magnitude(0.11039736405911599, "rate") == "11.0 points"
    assert f.magnitude(0.1353604, "score") == "0.135"
    assert f.size(0.1103973, "rate") == "11.0" and f.size(0.1353604, "score") == "0.135"
    assert f.bound(0.008333333333333333, "rate") == "+0.8"
    with pytest.raises(ValueError, match="unit must be one of"):
        f.delta(0.1, "percent")


def test_an_interval_is_written_low_to_high_in_its_unit():
    assert f.interval(Estimate(-0.05, -0.10833, 0.00833, "rate")) == f"{M}10.8 to +0.8"
    assert f.interval(Estimate(-0.012, -0.0969, 0.0788, "score")) == f"{M}0.097 to +0.079"
    assert f.interval(Estimate(0.0, 0.0, 0.0, "rate")) == "0.0 to 0.0"


def test_p_values_get_the_decimals_their_size_needs():
    # Issue 15: at most three decimals on the page; issue 29: exactly as on the command line
    # (langchef_core.stats.display), so 0.375 is never 0.38 on the page.
    assert f.pvalue(7.62939453125e-06) == "< 0.001"
    assert f.pvalue(0.0003662109375) == "< 0.001"
    assert f.pvalue(0.005859375) == "0.006"
    assert f.pvalue(0.0625) == "0.062"
    assert f.pvalue(0.375) == "0.375" and f.pvalue(0.1) == "0.100" and f.pvalue(1.0) == "1.000"
    assert f.pvalue(None) == f.DASH


def test_levels_shares_counts_and_relative_changes():
    assert [f.level(a) for a in (0.05, 0.1, 0.01, 0.025)] == ["95%", "90%", "99%", "97.5%"]
    assert f.share(0.275) == "27.5%" and f.share(0.5) == "50%" and f.share(0.2) == "20%"
    assert f.count(1, "golden") == "1 golden" and f.count(18, "golden") == "18 goldens"
    assert f.count(3, "criterion", "criteria") == "3 criteria"
    assert f.change(-0.1003384472183626) == f"{M}10.0%" and f.change(0.1) == "+10.0%"
    assert f.humanize("moved_worse") == "moved worse"


def test_times_are_shown_in_utc_and_a_time_without_zone_is_refused():
    assert f.utc("2026-11-01T09:00:00Z") == "2026-11-01 09:00:00 UTC"
    assert f.utc("2026-11-01T11:00:00+02:00") == "2026-11-01 09:00:00 UTC"
    moment = datetime(2026, 11, 1, 4, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert f.utc(moment) == "2026-11-01 09:00:00 UTC"
    with pytest.raises(ValueError, match="has no time zone"):
        f.utc("2026-11-01T09:00:00")


def test_svg_coordinates_and_json_are_stable_text():
    assert f.px(12.0) == "12" and f.px(3.2) == "3.2" and f.px(-0.0) == "0" and f.px(-4.5) == "-4.5"
    assert f.as_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == f.as_json({"a": [1, {"c": 3, "d": 2}],
                                                                         "b": 1})


def test_verdict_sentences_in_plain_words():
    primary = {"verdict": "regression", "difference": -0.2, "low": -0.2778, "high": -0.1222,
               "broke": 18, "fixed": 0, "n": 90, "alpha": 0.05}
    assert verdict_sentence(primary) == (f"Regression: {M}20.0 points, 95% interval {M}27.8 to "
                                         f"{M}12.2; 18 goldens broke, none fixed.")
    improved = {**primary, "verdict": "improvement", "difference": 0.1, "low": 0.02, "high": 0.18,
                "broke": 1, "fixed": 10, "alpha": 0.1}
    assert verdict_sentence(improved) == ("Improvement: +10.0 points, 90% interval +2.0 to +18.0; "
                                          "1 golden broke, 10 fixed.")
    assert flips(0, 0) == "no golden changed verdict"
    assert flips(0, 1) == "none broke, 1 golden fixed"
    assert flips(2, 0) == "2 goldens broke, none fixed"

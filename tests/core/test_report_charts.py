"""Forest chart geometry: a symmetric axis around zero, round ticks, 0.1 px coordinates."""

from __future__ import annotations

import math

import pytest

from langchef_core.report.charts import PAD, WIDTH, ChartRow, forest_chart, shorten, tick_step


def row(label, difference, low, high, limit, kind="secondary"):
    return ChartRow(label=label, difference=difference, low=low, high=high, limit=limit,
                    tone="neutral", word="inconclusive", kind=kind, description=label)


def chart(rows, unit="rate"):
    return forest_chart(rows, unit=unit, chart_id="c", title="t", description="d", axis_label="a")


def test_the_axis_is_symmetric_around_zero_and_reaches_the_widest_value():
    # the regression example: −20.0 points [−28.9, −12.2], limit 16.0; criteria inside that
    drawn = chart([row("pass rate", -0.2, -0.2889, -0.1222, 0.16, kind="primary"),
                   row("Correctness", -0.1778, -0.2556, -0.1, 0.1845)])
    middle = (PAD + WIDTH - PAD) / 2
    assert drawn.x_zero == middle and drawn.plot_left == PAD and drawn.plot_right == WIDTH - PAD
    # extent 28.9 points → step 10 points → axis from −30 to +30
    assert [tick.label for tick in drawn.ticks] == ["\u221230", "\u221220", "\u221210", "0", "+10",
                                                    "+20", "+30"]
    assert drawn.ticks[0].position == PAD and drawn.ticks[-1].position == WIDTH - PAD
    primary = drawn.rows[0]
    span = (WIDTH - 2 * PAD) / 0.6  # px per unit of difference
    assert primary.x_point == round(middle - 0.2 * span, 1)
    assert primary.x_low == round(middle - 0.2889 * span, 1)
    assert primary.x_limit_low < drawn.x_zero < primary.x_limit_high
    assert primary.x_point < primary.x_limit_low  # −20 points lies beyond the 16-point limit
    assert primary.x_limit_low + primary.x_limit_high == pytest.approx(2 * middle, abs=0.11)


def test_the_primary_comes_first_drawn_larger_and_set_apart():
    drawn = chart([row("primary", 0.01, -0.02, 0.04, 0.05, kind="primary"),
                   row("A", 0.0, -0.01, 0.01, 0.03), row("B", 0.02, 0.0, 0.04, 0.03)])
    assert [r.full_label for r in drawn.rows] == ["primary", "A", "B"]
    assert drawn.rows[0].radius > drawn.rows[1].radius
    assert len(drawn.separators) == 1
    assert drawn.rows[0].y_line < drawn.separators[0] < drawn.rows[1].y_label
    assert drawn.rows[1].x_point == drawn.x_zero  # a zero difference sits on the zero line


def test_every_coordinate_is_rounded_to_a_tenth_of_a_pixel():
    drawn = chart([row("x", 1 / 3, -1 / 7, 0.5, math.pi / 10, kind="primary")], unit="score")
    values = [drawn.height, drawn.axis_y, drawn.x_zero] + [t.position for t in drawn.ticks]
    for r in drawn.rows:
        values += [r.x_point, r.x_low, r.x_high, r.x_limit_low, r.x_limit_high, r.y_line,
                   r.y_label, r.y_band, r.band_width]
    assert all(round(value, 1) == value for value in values)
    assert all(str(value) != "-0.0" for value in values)


@pytest.mark.parametrize("extent, unit, step", [
    (0.2889, "rate", 0.10),    # 28.9 points → ticks every 10 points
    (0.06, "rate", 0.02),      # 6 points → 2
    (0.0, "rate", 0.005),      # nothing moved: at least ±1 point, ticks every half point
    (0.26, "score", 0.1),      # retrieval differences up to 0.26 → 0.1
    (0.03, "score", 0.01),
    (0.4, "rate", 0.20),       # 40 points → 13.3 per tick → 20
    (0.07, "rate", 0.025),     # 7 points → 2.3 per tick → 2.5
])
def test_tick_steps_are_round_numbers(extent, unit, step):
    assert tick_step(extent, unit) == pytest.approx(step)


def test_long_labels_are_shortened_in_the_chart_but_kept_whole():
    label = "Groundedness of the answer in the retrieved documents, strictly"
    drawn = chart([row(label, 0.0, -0.01, 0.01, 0.02, kind="primary")])
    assert drawn.rows[0].label == shorten(label) and drawn.rows[0].label.endswith("\u2026")
    assert len(drawn.rows[0].label) <= 34 and drawn.rows[0].full_label == label


def test_bad_rows_are_refused():
    with pytest.raises(ValueError, match="at least one row"):
        chart([])
    with pytest.raises(ValueError, match="exceeds high"):
        chart([row("x", 0.0, 0.1, -0.1, 0.05)])
    with pytest.raises(ValueError, match="missing or infinite"):
        chart([row("x", float("nan"), -0.1, 0.1, 0.05)])
    with pytest.raises(ValueError, match="kind must be primary or secondary"):
        chart([row("x", 0.0, -0.1, 0.1, 0.05, kind="other")])

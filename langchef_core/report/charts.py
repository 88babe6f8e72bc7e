"""Forest chart geometry for inline SVG, in pure Python.

A forest chart puts several differences on one horizontal axis: each row a point (the
estimate) on a line (its interval), over a grey band from −limit to +limit (the smallest
effect that comparison could have seen, in either direction), with a vertical line at zero.
This module only computes coordinates; the ``_forest.html`` template draws them, so every
label goes through the template's autoescaping.

Layout. Each row has its label and verdict word on one line and its interval on the line
below, so the plot uses the full width and stays legible when a narrow screen scales the
SVG down. The axis is symmetric around zero, from −D to +D, where D is the largest absolute
value among the intervals and limits rounded up to a tick: a drop and a gain of the same
size then have the same length, and zero sits in the middle. Coordinates are rounded to
0.1 px so the same numbers always give the same SVG text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .filters import RATE, fixed, signed

WIDTH = 480.0
PAD = 10.0
TOP = 8.0
ROW_HEIGHT = 48.0
LABEL_DROP = 15.0     # label baseline below the row top
WHISKER_DROP = 33.0   # interval line below the row top
CAP = 5.0             # half the height of an interval's end cap
BAND = 8.0            # half the height of the detection-limit band
RADIUS = {"primary": 6.0, "secondary": 4.5}
AXIS_SPACE = 46.0
MARGIN_SPACE = 16.0    # a line below the axis label naming the non-inferiority margin
LABEL_CHARACTERS = 34  # longer labels are shortened in the chart (the table has them whole)
TICK_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
TICKS_PER_SIDE = 3


@dataclass(frozen=True)
class ChartRow:
    """One estimate to draw: the numbers and words; ``tone`` is worse, better or neutral."""

    label: str
    difference: float
    low: float
    high: float
    limit: float
    tone: str
    word: str
    kind: str          # "primary" or "secondary": the primary is drawn as a square
    description: str   # the row in one sentence, for the SVG <title> (screen readers, hover)


@dataclass(frozen=True)
class ForestRow:
    label: str
    full_label: str
    word: str
    tone: str
    kind: str
    description: str
    y_label: float
    y_line: float
    x_point: float
    x_low: float
    x_high: float
    x_limit_low: float
    x_limit_high: float
    y_cap_top: float        # end caps of the interval line
    y_cap_bottom: float
    y_band: float           # top of the detection-limit band
    band_width: float
    band_height: float
    radius: float           # the point: larger for the primary row


@dataclass(frozen=True)
class Tick:
    """A labelled mark along a chart's axis, at ``position`` px on that axis."""

    position: float
    label: str


@dataclass(frozen=True)
class ForestChart:
    chart_id: str
    title: str
    description: str
    axis_label: str
    width: float
    height: float
    plot_left: float
    plot_right: float
    plot_top: float
    axis_y: float
    y_tick_labels: float
    y_axis_label: float
    x_zero: float
    rows: tuple[ForestRow, ...]
    separators: tuple[float, ...]   # y of a thin line after the primary row
    ticks: tuple[Tick, ...]
    # A non-inferiority design's margin, drawn as a line at −margin with its label.
    x_margin: float | None = None
    margin_label: str | None = None
    y_margin_label: float | None = None


def forest_chart(rows: list[ChartRow], *, unit: str, chart_id: str, title: str,
                 description: str, axis_label: str,
                 margin: float | None = None) -> ForestChart:
    """Coordinates of a forest chart of ``rows`` (drawn top to bottom in the given order);
    with ``margin``, a line at −margin that the intervals are read against."""
    if not rows:
        raise ValueError("a forest chart needs at least one row")
    for row in rows:
        values = (row.difference, row.low, row.high, row.limit)
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
            raise ValueError(f"chart row {row.label!r} has a missing or infinite value: {values}")
        if row.kind not in RADIUS:
            raise ValueError(f"chart row {row.label!r}: kind must be primary or secondary")
        if row.low > row.high:
            raise ValueError(f"chart row {row.label!r}: interval low {row.low} exceeds high "
                             f"{row.high}")
    extent = max(max(abs(row.low), abs(row.high), abs(row.difference), abs(row.limit))
                 for row in rows)
    if margin is not None:
        if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin > 0):
            raise ValueError(f"a margin must be a positive number, got {margin!r}")
        extent = max(extent, margin)
    step = tick_step(extent, unit)
    half = step * max(1, math.ceil(extent / step - 1e-9))
    left, right = PAD, WIDTH - PAD

    def x(value: float) -> float:
        return _round(left + (value + half) / (2 * half) * (right - left))

    drawn, separators = [], []
    for index, row in enumerate(rows):
        top = TOP + index * ROW_HEIGHT
        line = _round(top + WHISKER_DROP)
        drawn.append(ForestRow(
            label=shorten(row.label), full_label=row.label, word=row.word, tone=row.tone,
            kind=row.kind, description=row.description, y_label=_round(top + LABEL_DROP),
            y_line=line, x_point=x(row.difference), x_low=x(row.low), x_high=x(row.high),
            x_limit_low=x(-abs(row.limit)), x_limit_high=x(abs(row.limit)),
            y_cap_top=_round(line - CAP), y_cap_bottom=_round(line + CAP),
            y_band=_round(line - BAND),
            band_width=_round(x(abs(row.limit)) - x(-abs(row.limit))), band_height=2 * BAND,
            radius=RADIUS[row.kind]))
        if row.kind == "primary" and index + 1 < len(rows):
            separators.append(_round(top + ROW_HEIGHT - 4))
    axis_y = _round(TOP + len(rows) * ROW_HEIGHT)
    count = round(half / step)
    decimals = tick_decimals(step, unit)
    ticks = tuple(Tick(x(i * step), tick_label(i * step, unit, decimals))
                  for i in range(-count, count + 1))
    extra = MARGIN_SPACE if margin is not None else 0.0
    return ForestChart(chart_id=chart_id, title=title, description=description,
                       axis_label=axis_label, width=WIDTH,
                       height=_round(axis_y + AXIS_SPACE + extra),
                       plot_left=left, plot_right=right, plot_top=TOP, axis_y=axis_y,
                       y_tick_labels=_round(axis_y + 16), y_axis_label=_round(axis_y + 36),
                       x_zero=x(0.0), rows=tuple(drawn), separators=tuple(separators),
                       ticks=ticks, x_margin=x(-margin) if margin is not None else None,
                       y_margin_label=_round(axis_y + AXIS_SPACE + extra - 4),
                       margin_label=(f"margin {tick_label(-margin, unit, 1)}"
                                     if margin is not None else None))


def tick_step(extent: float, unit: str) -> float:
    """A round tick step (1, 2, 2.5, 5 × 10^k in display units) giving about three ticks a side."""
    scale = 100.0 if unit == RATE else 1.0
    shown = max(extent * scale, 1.0 if unit == RATE else 0.01)
    raw = shown / TICKS_PER_SIDE
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(s * power for s in TICK_STEPS if s * power >= raw * (1 - 1e-9))
    return step / scale


def tick_decimals(step: float, unit: str) -> int:
    shown = step * (100.0 if unit == RATE else 1.0)
    return next(d for d in range(6) if abs(round(shown, d) - shown) < 1e-9 * max(1.0, shown))


def tick_label(value: float, unit: str, decimals: int) -> str:
    shown = value * (100.0 if unit == RATE else 1.0)
    return signed(shown, decimals) if round(shown, decimals) else fixed(0.0, decimals)


def shorten(label: str, limit: int = LABEL_CHARACTERS) -> str:
    return label if len(label) <= limit else label[:limit - 1].rstrip() + "\u2026"


def _round(value: float) -> float:
    """0.1 px, and never −0.0 (which would print as "-0")."""
    return round(value, 1) + 0.0


# ── histogram of per-query differences ──────────────────────────────────────────────────

HIST_WIDTH = 320.0     # drawn two or three to a row: a narrower view box keeps labels legible
HIST_PAD = 18.0        # room for the end tick labels
HIST_HEIGHT = 80.0     # the tallest bar
HIST_TOP = 18.0        # room for the count above the tallest bar
HIST_AXIS_SPACE = 26.0


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    count: int
    tone: str          # worse (a loss), better (a gain), neutral (unchanged)
    label: str         # the range it counts, for its <title>
    y_count: float     # baseline of the count printed above the bar


@dataclass(frozen=True)
class HistogramChart:
    chart_id: str
    title: str
    description: str
    width: float
    height: float
    plot_left: float
    plot_right: float
    axis_y: float
    y_tick_labels: float
    x_zero: float
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]


def histogram_chart(counts: list[int], unchanged: int, *, low: float, high: float,
                    chart_id: str, title: str, description: str) -> HistogramChart:
    """Bars of per-query differences from ``low`` to ``high`` (equal bins), with the queries
    that did not move drawn as one grey bar on zero, so "unchanged" is never mistaken for a
    small gain. Bar heights share one scale, the largest count."""
    if not counts or any(not isinstance(c, int) or c < 0 for c in counts) or unchanged < 0:
        raise ValueError("histogram counts must be non-negative whole numbers")
    if not high > low:
        raise ValueError(f"histogram range must have high > low, got {low} to {high}")
    left, right = HIST_PAD, HIST_WIDTH - HIST_PAD
    axis_y = _round(HIST_TOP + HIST_HEIGHT)
    tallest = max(max(counts), unchanged, 1)
    step = (right - left) / len(counts)

    def x(value: float) -> float:
        return _round(left + (value - low) / (high - low) * (right - left))

    bars = []
    width = (high - low) / len(counts)
    for index, count in enumerate(counts):
        start = low + index * width
        tone = "worse" if start + width <= 0 else "better"
        bars.append(_bar(_round(left + index * step + 1), _round(step - 2), count, tallest, axis_y,
                         tone, f"{signed(start, 1)} to {signed(start + width, 1)}"))
    zero_width = _round(max(step / 2, 5.0))
    bars.append(_bar(_round(x(0.0) - zero_width / 2), zero_width, unchanged, tallest, axis_y,
                     "neutral", "unchanged (exactly 0)"))
    ticks = tuple(Tick(x(value), tick_label(value, "score", 1))
                  for value in (low, low / 2, 0.0, high / 2, high))
    return HistogramChart(chart_id=chart_id, title=title, description=description,
                          width=HIST_WIDTH,
                          height=_round(axis_y + HIST_AXIS_SPACE), plot_left=left,
                          plot_right=right, axis_y=axis_y, y_tick_labels=_round(axis_y + 16),
                          x_zero=x(0.0), bars=tuple(bars), ticks=ticks)


def _bar(x: float, width: float, count: int, tallest: int, axis_y: float, tone: str,
         label: str) -> Bar:
    height = _round(HIST_HEIGHT * count / tallest) if count else 0.0
    return Bar(x=x, y=_round(axis_y - height), width=width, height=height, count=count,
               tone=tone, label=label, y_count=_round(axis_y - height - 4))

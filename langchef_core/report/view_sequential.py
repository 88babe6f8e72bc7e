"""The report's sequential section: where an always-valid readout stopped, and the chart of
its confidence sequence over n.

The chart puts n (goldens read, in traffic order) on the horizontal axis from 0 to the
design's budget N, and the difference in points on the vertical one. The sequence is drawn
as a band that narrows as goldens arrive; a dashed line marks zero, a vertical line the
look this readout was taken at, and a bar beside it the fixed-n interval at the same n
(narrower: it is valid for one pre-registered look only). This module only computes
coordinates, rounded to 0.1 px; ``_sequential.html`` writes them out through autoescaping.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .charts import TICK_STEPS, Tick, tick_decimals, tick_label
from .filters import RATE
from .view_common import as_sentence

WIDTH, HEIGHT = 480.0, 220.0
LEFT, RIGHT, TOP, BOTTOM = 44.0, 12.0, 10.0, 38.0
# The first goldens give bounds near ±100 points; the y range follows the sequence from
# this share of the path on, so the narrowing stays visible (earlier bounds are clipped).
VISIBLE_FROM = 0.25


@dataclass(frozen=True)
class SequenceChart:
    band: str                  # SVG polygon points of the sequence band
    x_zero_left: float
    x_zero_right: float
    y_zero: float
    x_look: float              # the look this readout was taken at
    x_first: float | None      # the first decisive n, when there was one
    y_fixed_low: float         # the fixed-n interval at the same n
    y_fixed_high: float
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    plot_top: float
    plot_bottom: float
    plot_left: float
    plot_right: float
    width: float
    height: float
    description: str


@dataclass(frozen=True)
class SequentialView:
    sentence: str
    status: str
    n: int
    max_goldens: int
    order: str
    unit: str
    n_units: int
    first_decisive: int | None
    low: float
    high: float
    fixed_low: float
    fixed_high: float
    fixed_method: str
    interval_method: str
    p_value: float
    p_value_method: str
    limit_sentence: str
    explanation: str
    chart: SequenceChart | None
    drift_sentence: str | None = None


def sequential_view(readout: Mapping) -> SequentialView | None:
    """The section's view, or None for a fixed-n readout (it has no ``sequential`` key)."""
    section = readout.get("sequential")
    if not isinstance(section, Mapping):
        return None
    fixed = section.get("fixed_n") or {}
    return SequentialView(
        sentence=str(section["sentence"]), status=str(section["status"]), n=int(section["n"]),
        max_goldens=int(section["max_goldens"]), order=str(section["order"]),
        unit=str(section.get("unit", "golden")), n_units=int(section.get("n_units", section["n"])),
        first_decisive=section.get("first_decisive"), low=float(section["low"]),
        high=float(section["high"]), fixed_low=float(fixed["low"]),
        fixed_high=float(fixed["high"]), fixed_method=str(fixed.get("interval_method", "")),
        interval_method=str(section["interval_method"]), p_value=float(section["p_value"]),
        p_value_method=str(section["p_value_method"]),
        limit_sentence=str(section["detection_limit_sentence"]),
        explanation=str(section["explanation"]), chart=sequence_chart(section),
        drift_sentence=_drift_sentence(section))


def _drift_sentence(section: Mapping) -> str | None:
    drift = section.get("drift")
    if isinstance(drift, Mapping) and drift.get("drifted") and drift.get("sentence"):
        return as_sentence(str(drift["sentence"]))
    return None


def sequence_chart(section: Mapping) -> SequenceChart | None:
    path = section.get("path") or {}
    ns, lows, highs = (list(path.get(key) or ()) for key in ("n", "low", "high"))
    if len(ns) < 2 or not (len(ns) == len(lows) == len(highs)):
        return None
    if section.get("unit") == "cluster":
        budget = max(int(section.get("n_units") or ns[-1]), ns[-1])
        look = ns[-1]
    else:
        budget = max(int(section["max_goldens"]), ns[-1])
        look = int(section["n"])
    fixed = section["fixed_n"]
    start = max(1, math.ceil(VISIBLE_FROM * ns[-1]))
    seen = [(low, high) for n, low, high in zip(ns, lows, highs) if n >= start] or \
        list(zip(lows, highs))
    extent = max(max(abs(low), abs(high)) for low, high in seen)
    extent = max(extent, abs(float(fixed["low"])), abs(float(fixed["high"])), 0.01)
    step = _step(extent * 100 / 3) / 100
    half = step * math.ceil(extent / step - 1e-9)
    left, right, top, bottom = LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM

    def x(n: float) -> float:
        return _round(left + n / budget * (right - left))

    def y(value: float) -> float:
        clipped = min(max(value, -half), half)
        return _round(top + (half - clipped) / (2 * half) * (bottom - top))

    upper = [f"{_fmt(x(n))},{_fmt(y(high))}" for n, high in zip(ns, highs)]
    lower = [f"{_fmt(x(n))},{_fmt(y(low))}" for n, low in zip(ns, lows)]
    x_step = _step(budget / 4)
    x_ticks = tuple(Tick(x(value), f"{value:,.0f}")
                    for value in _range(0, budget, x_step))
    decimals = tick_decimals(step, RATE)
    y_ticks = tuple(Tick(y(value), tick_label(value, RATE, decimals))
                    for value in _range(-half, half, step))
    first = section.get("first_decisive")
    description = (f"The {section.get('interval_method', 'confidence sequence')} over n from 1 to "
                   f"{ns[-1]}, out of a budget of {budget}; at n = {ns[-1]} it runs from "
                   f"{_points(lows[-1])} to {_points(highs[-1])} points, against the fixed-n "
                   f"interval {_points(float(fixed['low']))} to {_points(float(fixed['high']))}"
                   + (f"; it first excluded zero at n = {first}" if first else "") + ".")
    return SequenceChart(
        band=" ".join(upper + lower[::-1]), x_zero_left=left, x_zero_right=right, y_zero=y(0.0),
        x_look=x(ns[-1] if section.get("unit") == "cluster" else look),
        x_first=x(first) if first and section.get("unit") != "cluster" else None,
        y_fixed_low=y(float(fixed["low"])), y_fixed_high=y(float(fixed["high"])),
        x_ticks=x_ticks, y_ticks=y_ticks, plot_top=top, plot_bottom=bottom, plot_left=left,
        plot_right=right, width=WIDTH, height=HEIGHT, description=description)


def _step(raw: float) -> float:
    """A round step (1, 2, 2.5, 5 × 10^k) at least ``raw``."""
    raw = max(raw, 1e-9)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(s * power for s in (*TICK_STEPS, 20.0) if s * power >= raw * (1 - 1e-9))


def _range(start: float, stop: float, step: float) -> list[float]:
    count = math.floor((stop - start) / step + 1e-9)
    return [start + i * step for i in range(count + 1)]


def _points(value: float) -> str:
    shown = round(100 * value, 1)
    return "0" if shown == 0 else f"{shown:+.1f}".replace("-", "\u2212")


def _round(value: float) -> float:
    return round(value, 1) + 0.0


def _fmt(value: float) -> str:
    return f"{value:g}"

"""Number and text formatting for the report, registered as Jinja filters.

Every number on the page goes through one of these functions, so a value reads the same
wherever it appears and the rendering is deterministic: fixed decimals through ``format``
(round-half-even on the binary value, the same on every platform), a true minus sign
(U+2212) for negatives, and a zero that rounds to zero printed without a sign, so that
−0.0 and +0.0 never appear. ``None`` (an undefined number) prints as an em dash.

Rates (pass rates, accuracy) are shown as percentages and their differences in percentage
points; scores (recall, nDCG, κ …) keep their own scale with three decimals.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

from ..readout.verdict import p_number

MINUS = "\u2212"
DASH = "\u2014"
RATE, SCORE = "rate", "score"
UNITS = (RATE, SCORE)


def _finite(value) -> bool:
    return value is not None and not isinstance(value, bool) and math.isfinite(value)


def fixed(value, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, a true minus sign, and no sign on a rounded zero."""
    if value is None:
        return DASH
    if not _finite(value):
        return "\u221e" if value > 0 else MINUS + "\u221e"
    text = format(float(value), f".{digits}f")
    if float(text) == 0:
        return text.lstrip("-")
    return text.replace("-", MINUS)


def signed(value, digits: int = 1) -> str:
    """``value`` with an explicit sign: +2.5, −2.5, and 0.0 for anything that rounds to zero."""
    text = fixed(value, digits)
    if value is None or text.startswith(MINUS) or text == fixed(0, digits):
        return text
    return "+" + text


def pct(rate, digits: int = 1) -> str:
    """A rate as a percentage: 0.8333 → 83.3%."""
    return DASH if rate is None else fixed(100 * rate, digits) + "%"


def pp(difference, digits: int = 1) -> str:
    """A difference of rates in signed percentage points, without the unit: −0.2 → −20.0."""
    return DASH if difference is None else signed(100 * difference, digits)


def points(difference, digits: int = 1) -> str:
    """A difference of rates in percentage points: −0.2 → "−20.0 points"."""
    return DASH if difference is None else f"{pp(difference, digits)} points"


def measure(value, unit: str = RATE) -> str:
    """A level of a metric (not a difference): 0.8 → "80.0%" for a rate, "0.800" for a score."""
    return pct(value) if _unit(unit) == RATE else fixed(value, 3)


def magnitude(value, unit: str = RATE) -> str:
    """A size without a direction (a detection limit, a margin): "11.0 points" or "0.135"."""
    if value is None:
        return DASH
    return f"{fixed(100 * value, 1)} points" if _unit(unit) == RATE else fixed(value, 3)


def size(value, unit: str = RATE) -> str:
    """A size without its unit, for a table column that names the unit: 0.11 → "11.0"."""
    if value is None:
        return DASH
    return fixed(100 * value, 1) if _unit(unit) == RATE else fixed(value, 3)


def delta(value, unit: str = RATE) -> str:
    """A signed difference in the unit of its metric: "−5.0 points" or "+0.029"."""
    return points(value) if _unit(unit) == RATE else signed(value, 3)


def bound(value, unit: str = RATE) -> str:
    """One end of an interval, signed, without the unit: "−10.8" (points) or "+0.067"."""
    return pp(value) if _unit(unit) == RATE else signed(value, 3)


def interval(estimate) -> str:
    """The ends of an estimate's interval: "−10.8 to +0.8" (anything with low, high, unit)."""
    return f"{bound(estimate.low, estimate.unit)} to {bound(estimate.high, estimate.unit)}"


def change(relative) -> str:
    """A relative change in signed percent: −0.1003 → "−10.0%", 0.1 → "+10.0%"."""
    return DASH if relative is None else signed(100 * relative, 1) + "%"


def level(alpha: float) -> str:
    """The confidence level that goes with alpha: 0.05 → "95%"."""
    return f"{format(100 * (1 - alpha), '.10g')}%"


def pvalue(p) -> str:
    """A p-value as every output prints it (``stats.display``): three decimals, "< 0.001"
    below that, so the page says what the CLI line says."""
    return DASH if p is None else p_number(p)


def score(value, digits: int = 3) -> str:
    """A score on its own scale (recall, nDCG, κ): 0.7667 → 0.767."""
    return fixed(value, digits)


def share(value) -> str:
    """A weight or share in percent without decimals when whole: 0.275 → 27.5%, 0.5 → 50%."""
    if value is None:
        return DASH
    text = fixed(100 * value, 1)
    return (text[:-2] if text.endswith(".0") else text) + "%"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """"1 golden", "18 goldens"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def short_hash(digest: str | None, length: int = 12) -> str:
    return DASH if not digest else digest[:length]


def utc(moment) -> str:
    """A time as "2026-11-02 10:00:05 UTC", to the second as every output gives it;
    accepts an aware datetime or an ISO 8601 text."""
    if moment is None:
        return DASH
    if isinstance(moment, str):
        moment = parse_time(moment)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse_time(text: str) -> datetime:
    """An ISO 8601 time with an offset or a trailing Z; a time without a zone is refused."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"time {text!r} has no time zone; write it in UTC, e.g. "
                         "2026-11-02T10:00:00Z")
    return moment


def px(value: float) -> str:
    """An SVG coordinate, already rounded to 0.1 px by the chart: 12.0 → "12", 3.25 → "3.2"."""
    text = format(value, ".1f")
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def as_json(value) -> str:
    """Pretty JSON with sorted keys: the same text whatever order the mapping was built in."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)


def humanize(code: str) -> str:
    """An identifier as words: "moved_worse" → "moved worse"."""
    return str(code).replace("_", " ")


def _unit(unit: str) -> str:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    return unit


FILTERS = {
    "fixed": fixed, "signed": signed, "pct": pct, "pp": pp, "points": points,
    "magnitude": magnitude, "measure": measure, "size": size, "delta": delta, "bound": bound,
    "interval": interval,
    "change": change,
    "level": level, "pvalue": pvalue, "score": score, "share": share, "count": count,
    "short_hash": short_hash, "utc": utc, "px": px, "as_json": as_json, "humanize": humanize,
}

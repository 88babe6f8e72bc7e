"""Sequential designs: the traffic order of the goldens, and which of them a look may read.

A design with ``stopping: {rule: sequential, max_goldens: N, order: created_at}`` is read
out from an always-valid confidence sequence, so it may be looked at before every golden is
scored. What keeps such a look honest is that it reads the goldens in a pre-registered
order: the first n goldens in traffic order, every one of them scored in both arms. A look
at any other subset — the goldens that happened to be judged, a hand-picked set — would let
the choice of subset decide the verdict, which no confidence sequence can survive.

The order is the goldens column ``order`` names (``created_at`` by default): ISO-8601 times
with a zone (when each golden arrived in traffic) or numbers (its position); ties are broken
by ``example_id`` so the order is total. ``max_goldens`` caps the run: goldens past that
position are never read, even when scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..inputs.errors import InputError
from ..stats.records import Record
from .stamps import moment_or_problem as _timestamp


@dataclass(frozen=True)
class Prefix(Record):
    """What one look of a sequential design may read."""

    ids: tuple[str, ...]        # the first n goldens in traffic order, scored in both arms
    max_goldens: int
    suite_size: int
    skipped: str | None         # the first golden not scored in both arms although a later one is
    later_scored: int           # goldens scored in both arms after that gap (cherry-picked)
    beyond_cap: int             # goldens scored in both arms past max_goldens (left out)

    @property
    def n(self) -> int:
        return len(self.ids)


def traffic_order(goldens: pd.DataFrame, column: str, *, file: str) -> list[str]:
    """The suite's ``example_id`` values in traffic order (``column``, then ``example_id``)."""
    if column not in goldens.columns:
        raise InputError("missing column", file=file, column=column, hint=ORDER_HINT)
    keys = _order_keys(goldens[column], column, file)
    ids = goldens["example_id"].astype(str).tolist()
    return [example for _, example in sorted(zip(keys, ids))]


ORDER_HINT = ("every golden of a sequential design needs its place in traffic, one kind for the "
              "whole column: ISO-8601 times with a zone (e.g. 2025-03-04T09:00:00Z), or position "
              "numbers (1, 2, 3, …)")


def _order_keys(values: pd.Series, column: str, file: str) -> list:
    """Sort keys: position numbers when every value is a number (a CSV or JSON file may
    hold them as text), else aware UTC times; anything else is refused at its row."""
    positions = _positions(values)
    if positions is None:
        _refuse_the_odd_times_out(values, column, file)
    keys = []
    for row, value in values.items():
        if positions is not None:
            key = positions[row]
            problem = None if key is not None else "has no value"
        else:
            key = _timestamp(value)
            problem = key if isinstance(key, str) else (None if key is not None
                                                        else "has no value")
            if problem is not None and _number(value) is not None:
                problem = (f"{value!r} is a position number, but other goldens give times in "
                           "this column")
        if problem:
            raise InputError(problem, file=file, column=column, row=int(row), hint=ORDER_HINT)
        keys.append(key)
    return keys


def _refuse_the_odd_times_out(values: pd.Series, column: str, file: str) -> None:
    """When most goldens give position numbers, the row to fix is the first that does not."""
    numbers = [_number(value) is not None for value in values]
    if sum(numbers) * 2 <= len(numbers):
        return
    for (row, value), is_number in zip(values.items(), numbers):
        if not is_number:
            what = "has no value" if _timestamp(value) is None else (
                f"{value!r} is not a position number, but most goldens give positions in this "
                "column")
            raise InputError(what, file=file, column=column, row=int(row), hint=ORDER_HINT)


def _positions(values: pd.Series) -> dict | None:
    """Each row's position when every present value is a number (or numeric text), else None."""
    if pd.api.types.is_bool_dtype(values):
        return None
    found = {}
    for row, value in values.items():
        missing = value is None or (isinstance(value, float) and value != value) \
            or (isinstance(value, str) and not value.strip())
        number = None if missing else _number(value)
        if not missing and number is None:
            return None
        found[row] = number
    return found if any(number is not None for number in found.values()) else None


def _number(value) -> float | None:
    """A finite position number, from a number or from text such as '12' or '3.5'."""
    if isinstance(value, bool):
        return None
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if number == number and abs(number) != float("inf") else None


def read_prefix(order: list[str], scored_in_both: set[str], max_goldens: int) -> Prefix:
    """The longest run of goldens from the start of ``order``, all scored in both arms, at
    most ``max_goldens`` long; and what lies beyond it (a gap before later scored goldens
    means a subset was picked, not a prefix)."""
    capped = order[:max_goldens]
    n = 0
    while n < len(capped) and capped[n] in scored_in_both:
        n += 1
    beyond = sum(1 for example in order[max_goldens:] if example in scored_in_both)
    # Below the cap, any golden scored after the first gap (past the cap too) was picked.
    later = sum(1 for example in order[n:] if example in scored_in_both) \
        if n < len(capped) else 0
    return Prefix(ids=tuple(capped[:n]), max_goldens=max_goldens, suite_size=len(order),
                  skipped=capped[n] if later else None, later_scored=later, beyond_cap=beyond)

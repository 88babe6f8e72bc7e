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
from .traffic import _timestamp


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
        raise InputError("missing column", file=file, column=column,
                         hint="a sequential design reads goldens in the order of this column: "
                              "give each golden the time it arrived (ISO-8601 with a zone) or "
                              "its position")
    keys = _order_keys(goldens[column], column, file)
    ids = goldens["example_id"].astype(str).tolist()
    return [example for _, example in sorted(zip(keys, ids))]


def _order_keys(values: pd.Series, column: str, file: str) -> list:
    numbers = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    keys = []
    for row, value in values.items():
        if numbers:
            key = None if pd.isna(value) else float(value)
            problem = None
        else:
            key = _timestamp(value)
            problem = key if isinstance(key, str) else None
        if key is None or problem:
            raise InputError(problem or "has no value", file=file, column=column, row=int(row),
                             hint="every golden of a sequential design needs its place in "
                                  "traffic: an ISO-8601 time with a zone, e.g. "
                                  "2025-03-04T09:00:00Z, or a position number")
        keys.append(key)
    return keys


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

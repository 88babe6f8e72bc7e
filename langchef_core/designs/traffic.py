"""The traffic-time rule: every answer was produced after the design was approved."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd

from ..inputs.errors import InputError
from .approval import Approval
from .stamps import format_utc, moment_or_problem as _timestamp, utc_to_the_second
from .gate_checks import (INVALID_TIMESTAMP, NO_APPROVAL, TRAFFIC_BEFORE_APPROVAL, GateCheck,
                          ordered_arms, passed_check, refused_check, run_label)
from .model import Design

# A run row may be stamped this far ahead of this machine's clock (two machines' clocks
# disagree a little); a time further ahead cannot have been recorded yet and is refused.
CLOCK_SKEW = timedelta(minutes=5)

# --------------------------------------------------------------------------------------
# approved_before_traffic
# --------------------------------------------------------------------------------------

def approved_before_traffic(approval: Approval | None, runs: Mapping[str, pd.DataFrame], *,
                            files: Mapping[str, str] | None = None,
                            design: Design | None = None,
                            now: datetime | None = None) -> GateCheck:
    """Refuse when any run row was created before the approval, or in the future (beyond
    :data:`CLOCK_SKEW` past ``now``, default this machine's clock).

    Rows are compared on ``created_at`` (ISO-8601 with a zone; a time without a zone is
    refused, since it cannot be placed relative to a UTC approval). Rows without a time
    cannot be checked: the check passes with a warning saying how many were unverifiable.
    """
    name = "approved_before_traffic"
    if approval is None:
        return refused_check(name, NO_APPROVAL, "there is no approval to compare traffic with; a "
                                           "person must approve the design first")
    approved_at = approval.approved_at
    latest_possible = (now or datetime.now(timezone.utc)) + CLOCK_SKEW
    untimed: dict[str, int] = {}
    offending: list[dict] = []
    for arm in ordered_arms(runs, design):
        frame, label = runs[arm], run_label(files, arm)
        if "created_at" not in frame.columns:
            untimed[arm] = len(frame)
            continue
        times = frame["created_at"]
        typed = isinstance(times.dtype, pd.DatetimeTZDtype)
        # A validated column needs only its early and late rows read one by one.
        checked = times[_outside(times, approved_at, latest_possible)] if typed else times
        missing = int(times.isna().sum()) if typed else 0
        for row, value in checked.items():
            moment = _timestamp(value)
            if moment is None:
                missing += 1
            elif isinstance(moment, str):
                sentence = InputError(moment, file=label, column="created_at", row=int(row),
                                      hint="write times as ISO-8601 with a zone, e.g. "
                                           "2024-05-01T12:00:00Z").describe()
                return refused_check(name, INVALID_TIMESTAMP, sentence,
                                     details={"file": label, "row": int(row), "arm": arm})
            elif moment > latest_possible:
                sentence = InputError(
                    f"created at {utc_to_the_second(moment)}, in the future (more than "
                    f"{int(CLOCK_SKEW.total_seconds() // 60)} minutes ahead of this machine's clock)",
                    file=label, column="created_at", row=int(row),
                    hint="record the time the answer was produced, in UTC").describe()
                return refused_check(name, INVALID_TIMESTAMP, sentence,
                                     details={"file": label, "row": int(row), "arm": arm})
            elif moment < approved_at:
                offending.append({"arm": arm, "file": label, "row": int(row),
                                  "created_at": format_utc(moment)})
        if missing:
            untimed[arm] = missing
    warnings = [_untimed_warning(untimed)] if untimed else []
    if offending:
        first = offending[0]
        sentence = (f"{first['file']}, row {first['row']}: created at {first['created_at']}, "
                    f"before the approval at {utc_to_the_second(approved_at)}; traffic must start after "
                    f"approval ({len(offending)} row{'s' if len(offending) > 1 else ''} in all), "
                    "so collect fresh runs")
        return refused_check(name, TRAFFIC_BEFORE_APPROVAL, sentence, warnings=warnings,
                             details={"first": first, "count": len(offending),
                                 "approved_at": format_utc(approved_at)})
    sentence = f"every timed row was created after the approval at {utc_to_the_second(approved_at)}"
    if untimed and all(untimed.get(arm) == len(runs[arm]) for arm in runs):
        sentence = ("the runs carry no created_at times, so approval before traffic could not "
                    "be verified")
    return passed_check(name, sentence, warnings=warnings,
                        details={"approved_at": format_utc(approved_at), "untimed_rows": untimed})


def _outside(times: pd.Series, approved_at: datetime, latest_possible: datetime) -> np.ndarray:
    """Which times of a tz-aware column fall before the approval or after the latest possible
    moment (missing ones do not). Compared at microsecond resolution, as the row rule does
    on Python datetimes."""
    micro = times.dt.floor("us")
    outside = (micro < pd.Timestamp(approved_at)) | (micro > pd.Timestamp(latest_possible))
    return outside.to_numpy(dtype=bool, na_value=False)


def _untimed_warning(untimed: dict[str, int]) -> str:
    counts = ", ".join(f"{count} row{'s' if count > 1 else ''} of arm '{arm}'"
                       for arm, count in untimed.items())
    return (f"approval before traffic could not be verified for {counts}: they carry no "
            "created_at time")

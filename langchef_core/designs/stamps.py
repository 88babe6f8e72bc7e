"""The forms evidence is written in: times in UTC with a ``Z``, and SHA-256 hex digests.

Approvals (``approval``) and the ledger (``ledger``) both write them; they live here so that
neither module has to import the other for them."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

import pandas as pd

SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}\Z")


def check_sha256(value, name: str) -> str:
    """``value`` when it is a SHA-256 hex digest; ValueError naming ``name`` otherwise."""
    if not isinstance(value, str) or not SHA256_PATTERN.match(value):
        raise ValueError(f"{name} must be a SHA-256 hex digest (64 lowercase hex digits), "
                         f"got {value!r}")
    return value


def format_utc(moment: datetime) -> str:
    """ISO-8601 in UTC with a ``Z``; microseconds kept only when present."""
    text = aware(moment, "time").astimezone(timezone.utc).isoformat()
    return text.replace("+00:00", "Z")


def utc_to_the_second(moment: datetime) -> str:
    """A time as people read it in a sentence: ``format_utc`` without the fraction of a
    second (the evidence keeps it; a sentence shows times to the second everywhere)."""
    return format_utc(aware(moment, "time").replace(microsecond=0))


def parse_utc(text: str) -> datetime:
    """An ISO-8601 time with a zone (``Z`` or an offset) as an aware UTC datetime."""
    if not isinstance(text, str):
        raise ValueError(f"expected an ISO-8601 time as text, got {text!r}")
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO-8601 time") from None
    return aware(moment, repr(text)).astimezone(timezone.utc)


def aware(moment: datetime, name: str) -> datetime:
    if not isinstance(moment, datetime):
        raise ValueError(f"{name} must be a datetime, got {moment!r}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{name} has no time zone; give it in UTC (e.g. "
                         "datetime.now(timezone.utc) or '2024-05-01T12:00:00Z')")
    return moment


def moment_or_problem(value) -> datetime | str | None:
    """An aware UTC datetime, None when missing, or the problem as a string."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return f"{value!r} is not an ISO-8601 time"
    if not isinstance(value, datetime):
        return f"{value!r} is not a time"
    if value.tzinfo is None or value.utcoffset() is None:
        return f"time {value.isoformat()} has no time zone"
    return value.astimezone(timezone.utc)

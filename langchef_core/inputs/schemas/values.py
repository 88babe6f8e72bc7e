"""Deliberate coercion of the values read from workspace files, before pandera checks them.

The same table can arrive as JSON lines (ids may be numbers), CSV (every cell is text) or
Parquet (typed columns, lists as arrays). Each column role below turns what it can read
*unambiguously* into one canonical Python value, and wraps everything else in ``Rejected``
with the reason, untouched. A wrapped value is never a valid instance of the column's
dtype, so pandera's dtype check fails on exactly that row, and the failure table can show
the value as the user wrote it together with the specific reason (for instance "has no
timezone" instead of a bare dtype mismatch).

Coercions made on purpose, and only these:

* ids and labels: a whole number becomes its decimal text (``7`` and ``7.0`` → ``"7"``),
  because JSON writers emit numeric ids as numbers; a missing id stays missing (it is never
  turned into the text ``"nan"``); fractions, booleans and floats too large to be exact
  (≥ 2**53, where a JSON reader may already have rounded them) are rejected;
* numbers: ints, floats and numeric text (CSV) become ``float``; booleans are rejected;
* 0/1 relevance: whole numbers (or their text, CSV) become ``int``;
* timestamps: ISO-8601 text or tz-aware datetimes become UTC ``pandas.Timestamp``;
  a timestamp without a timezone is rejected, never assumed to be UTC;
* doc-id lists: lists, tuples and arrays (Parquet) become lists of id text; a CSV cell
  holding a JSON list (``["d1", "d2"]``) is parsed; an Arrow column of lists of text
  (pyarrow-read parquet and JSON lines, ``inputs.id_lists``) is kept as it is.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import chain

import numpy as np
import pandas as pd

from ..id_lists import arrow_of, is_text_lists

# Floats hold every integer exactly only below 2**53; beyond it two ids can collide.
LARGEST_EXACT_FLOAT_INTEGER = 2 ** 53
INT8_RANGE = (-128, 127)
# datetime64[ns] spans 1677-09-21 to 2262-04-11; stay inside it by a day.
EARLIEST_TIMESTAMP = datetime(1677, 9, 22, tzinfo=timezone.utc)
LATEST_TIMESTAMP = datetime(2262, 4, 10, tzinfo=timezone.utc)

TEXT = "must be text"
ID = "must be text or a whole number"
NUMBER = "must be a number"
WHOLE_NUMBER = "must be a whole number"
NAIVE_TIMESTAMP = "has no timezone; write it as ISO-8601 with Z or an offset such as +00:00"
NOT_TIMESTAMP = "must be an ISO-8601 timestamp with a timezone, e.g. 2024-05-01T12:00:00Z"
OUT_OF_RANGE_TIMESTAMP = "is outside the supported years 1677-2262"
NOT_ID_LIST = 'must be a list of document ids, e.g. ["d1", "d2"]'

# The closed vocabularies of ARCHITECTURE.md §4.
VERDICTS = ("pass", "fail")
SOURCES = ("human", "click", "teacher")
RELEVANCE_GRADES = (0, 1)


def one_of(allowed) -> str:
    """How an allowed-values rule is worded to a user."""
    return "must be one of " + ", ".join(str(value) for value in allowed)


@dataclass(frozen=True, eq=False)
class Rejected:
    """A value that could not be read for its column, kept as written, with the reason."""

    value: object
    reason: str

    def __repr__(self) -> str:
        return f"Rejected({self.value!r})"


def is_missing(value) -> bool:
    """None, NaN, NaT and pd.NA, without tripping over lists or arrays."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def as_id(value):
    """An id or label as text; whole numbers deliberately become their decimal text."""
    if isinstance(value, str):
        return value
    if is_missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        return Rejected(value, ID)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        if abs(value) >= LARGEST_EXACT_FLOAT_INTEGER:
            return Rejected(value, ID + " below 2**53 (write large ids as text)")
        return str(int(value))
    return Rejected(value, ID)


def as_text(value):
    if isinstance(value, str):
        return value
    return None if is_missing(value) else Rejected(value, TEXT)


def as_number(value):
    """A float; numeric text is read because every CSV cell is text."""
    if is_missing(value):
        return math.nan
    number = from_text(value, float)
    if isinstance(number, numbers.Real) and not isinstance(number, bool | np.bool_):
        return float(number)
    return Rejected(value, NUMBER)


def from_text(value, parse):
    """``value`` read by ``parse`` when it is text (every CSV cell is), else as given; text
    ``parse`` cannot read also comes back as given, for the caller to refuse by its kind."""
    if isinstance(value, str):
        try:
            return parse(value)
        except ValueError:
            pass
    return value


def as_small_integer(value):
    """A whole number that fits int8 (0/1 relevance); whole-number text is read (CSV)."""
    if is_missing(value):
        return None
    number = from_text(value, lambda text: int(text.strip()))
    if isinstance(number, bool | np.bool_) or not isinstance(number, numbers.Real):
        return Rejected(value, WHOLE_NUMBER)
    if not (math.isfinite(number) and float(number).is_integer()):
        return Rejected(value, WHOLE_NUMBER)
    if not INT8_RANGE[0] <= number <= INT8_RANGE[1]:
        # Certainly not a grade, and int8 cannot hold it for the allowed-values check.
        return Rejected(value, one_of(RELEVANCE_GRADES))
    return int(number)


def as_utc_timestamp(value):
    """An aware UTC ``datetime`` from ISO-8601 text or a tz-aware datetime."""
    if is_missing(value):
        return None
    moment = from_text(value, lambda text: datetime.fromisoformat(text.strip()))
    if not isinstance(moment, datetime):
        return Rejected(value, NOT_TIMESTAMP)
    if moment.tzinfo is None or moment.utcoffset() is None:
        # Shown as ISO text, the way a person would have written it.
        return Rejected(value if isinstance(value, str) else moment.isoformat(),
                        NAIVE_TIMESTAMP)
    try:
        moment = moment.astimezone(timezone.utc)
    except OverflowError:
        return Rejected(value, OUT_OF_RANGE_TIMESTAMP)
    if not EARLIEST_TIMESTAMP <= moment <= LATEST_TIMESTAMP:
        return Rejected(value, OUT_OF_RANGE_TIMESTAMP)
    return moment


def as_id_list(value):
    """A ranked list of doc ids as a list of text; a CSV cell may hold a JSON list."""
    if is_missing(value):
        return None
    items = from_text(value, json.loads)
    if not isinstance(items, list | tuple | np.ndarray):
        return Rejected(value, NOT_ID_LIST)
    if all(isinstance(item, str) for item in items):
        return list(items)  # the common case, without a call per element
    ids = [as_id(item) for item in items]
    if any(item is None or isinstance(item, Rejected) for item in ids):
        return Rejected(_plain(value), NOT_ID_LIST)
    return ids


def _plain(value):
    """Arrays (Parquet lists) shown as lists in failure tables."""
    return value.tolist() if isinstance(value, np.ndarray) else value


# --- whole columns -------------------------------------------------------------------------

# pandas' default text dtype (``str``: NaN for missing, pyarrow storage when installed), which
# is what pandera's ``Series[str]`` expects; other text dtypes are rebuilt into it.
TEXT_DTYPE = pd.Series([], dtype="str").dtype

def text_column(series: pd.Series, convert: Callable = as_text) -> pd.Series:
    if series.dtype == TEXT_DTYPE:
        return series  # already pandas' default text dtype: nothing to coerce
    return _assemble(series, convert, lambda values, index: pd.Series(values, index=index,
                                                                      dtype=TEXT_DTYPE))


def id_column(series: pd.Series) -> pd.Series:
    return text_column(series, as_id)


def number_column(series: pd.Series) -> pd.Series:
    if pd.api.types.is_float_dtype(series.dtype) or (
            pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series)):
        return series.astype("float64")
    return _assemble(series, as_number, lambda values, index: pd.Series(values, index=index,
                                                                        dtype="float64"))


def small_integer_column(series: pd.Series) -> pd.Series:
    if (pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series)
            and len(series) and INT8_RANGE[0] <= series.min() and series.max() <= INT8_RANGE[1]):
        return series.astype("int8")  # typed whole numbers (JSON, Parquet) that fit: as read
    def typed(values, index):
        if any(value is None for value in values):
            # Missing values cannot live in int8: keep them visible to the not-null check.
            return pd.Series(values, index=index, dtype=object)
        return pd.Series(values, index=index, dtype="int8")
    return _assemble(series, as_small_integer, typed)


def timestamp_column(series: pd.Series) -> pd.Series:
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        return series.dt.tz_convert("UTC").dt.as_unit("ns")
    if pd.api.types.is_datetime64_dtype(series.dtype):
        # A typed but naive Parquet column: every present value lacks a timezone.
        return series.map(lambda value: pd.NaT if is_missing(value)
                          else Rejected(value.isoformat(), NAIVE_TIMESTAMP)).astype(object)
    clean = _clean_iso_times(series)
    if clean is not None:
        return clean
    return _assemble(series, as_utc_timestamp,
                     lambda values, index: pd.Series(
                         pd.to_datetime(values, utc=True).as_unit("ns"), index=index))


# ISO-8601 with seconds, at most microseconds and an explicit zone: text that
# ``datetime.fromisoformat`` and pandas read to the same instant.
_PLAIN_ISO_WITH_ZONE = (r"\d{4}-\d{2}-\d{2}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?"
                        r"(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)")


def _clean_iso_times(series: pd.Series) -> pd.Series | None:
    """The column read in bulk when every value is plain ISO text with a zone inside the
    supported years; None otherwise, and each value is then read (and explained) alone."""
    if len(series) == 0 or not _all_text(series):
        return None
    text = series.astype(TEXT_DTYPE)
    if not text.str.fullmatch(_PLAIN_ISO_WITH_ZONE).all():
        return None
    try:
        moments = pd.to_datetime(text, utc=True, format="ISO8601").dt.as_unit("ns")
    except (ValueError, OverflowError):  # e.g. 30 February: the value-by-value path says so
        return None
    if moments.min() < EARLIEST_TIMESTAMP or moments.max() > LATEST_TIMESTAMP:
        return None
    return pd.Series(moments.array, index=series.index, name=series.name)


def _all_text(series: pd.Series) -> bool:
    if series.dtype == TEXT_DTYPE:
        return not series.isna().any()
    return series.dtype == object and set(map(type, series.tolist())) == {str}


def id_list_column(series: pd.Series) -> pd.Series:
    import pyarrow.compute as pc
    if is_text_lists(series.dtype) and not series.isna().any() and \
            not pc.list_flatten(arrow_of(series)).null_count:
        return series  # read by pyarrow: every cell already a list of present text (id_lists)
    values = series.tolist()
    if set(map(type, values)) == {list} and set(map(type, chain.from_iterable(values))) <= {str}:
        # Every cell a list of text (JSON lines): the per-value rule would keep each as it is,
        # and no step edits a list in place, so the lists themselves are kept (no copy of
        # 10^6-10^7 ids).
        return pd.Series(values, index=series.index, dtype=object, name=series.name)
    return _assemble(series, as_id_list,
                     lambda values, index: pd.Series(values, index=index, dtype=object))


def _assemble(series: pd.Series, convert: Callable, typed: Callable) -> pd.Series:
    """Convert every value; typed column when all were read, object column otherwise."""
    values = [convert(value) for value in series.tolist()]
    if any(isinstance(value, Rejected) for value in values):
        return pd.Series(values, index=series.index, dtype=object, name=series.name)
    result = typed(values, series.index)
    result.name = series.name
    return result


def normalise_columns(frame: pd.DataFrame, roles: dict[str, Callable]) -> pd.DataFrame:
    """Apply each known column's coercion; columns without a role are left as they are,
    and so are repeated column names (the schema reports those)."""
    frame = frame.copy()
    repeated = set(frame.columns[frame.columns.duplicated()])
    for column in dict.fromkeys(frame.columns):
        convert = roles.get(column)
        if convert is not None and column not in repeated:
            frame[column] = convert(frame[column])
    return frame

"""The pandera models of the workspace tables (ARCHITECTURE.md §4).

Each model is the whole contract of one input kind: which columns exist (strict or not),
their dtypes, which may hold missing values, which ids must be unique, the allowed values,
and the row rules that no dtype can express. A model's ``dataframe_parser`` first applies
the deliberate coercions of :mod:`.values` (ids read from JSON as numbers, CSV text, Parquet
arrays), so ``Model.validate(frame, lazy=True)`` can be given a table exactly as read.

Check wording (``error=``) is what a user reads in the failure table, so it says what the
value must be, never how pandera tested it.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Optional

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera import dtypes
from pandera.engines import pandas_engine
from pandera.typing import Series

from ..id_lists import arrow_of, is_text_lists, lists_without_repeats
from . import values
from .values import RELEVANCE_GRADES, SOURCES, VERDICTS, Rejected

UtcTimestamp = Annotated[pd.DatetimeTZDtype, "ns", "UTC"]


class _UtcTimestamps(pandas_engine.DateTime):
    """pandera's timestamp dtype, quick to say which values of a failing column are to
    blame. A column holding a ``Rejected`` value fails the dtype check, and pandera then
    asks ``coerce_value`` of every value in it, a ``pd.to_datetime`` call each (about 15 µs:
    one bad timestamp among 10^6 took over 10 s to refuse, issue 31). An aware datetime is
    coercible as it stands (the parser, ``values.as_utc_timestamp``, has checked its
    range), a ``Rejected`` value never; anything else is asked of pandera as before."""

    def coerce_value(self, value):
        if isinstance(value, Rejected):
            raise ValueError(value.reason)
        if isinstance(value, datetime) and value.utcoffset() is not None:
            return value
        return super().coerce_value(value)


def with_quick_timestamps(schema: pa.DataFrameSchema) -> pa.DataFrameSchema:
    """``schema`` with each tz-aware timestamp column's dtype as ``_UtcTimestamps`` (the
    same dtype, checked the same way: only finding a failing column's culprits is quicker)."""
    import dataclasses
    for name, column in schema.columns.items():
        if type(column.dtype) is pandas_engine.DateTime and column.dtype.tz is not None:
            fields = {field.name: getattr(column.dtype, field.name)
                      for field in dataclasses.fields(column.dtype) if field.init}
            schema = schema.update_column(name, dtype=_UtcTimestamps(**fields))
    return schema


# One coercion per column name: a name means the same thing in every table that has it.
COLUMN_ROLES = {
    "example_id": values.id_column, "query_id": values.id_column,
    "doc_id": values.id_column, "anchor_id": values.id_column,
    "ideal": values.id_column, "predicted": values.id_column,  # labels may be JSON numbers
    "input": values.text_column, "output": values.text_column,
    "context": values.text_column, "criterion": values.text_column,
    "human_criterion": values.text_column, "judge": values.text_column,
    "verdict": values.text_column, "human_verdict": values.text_column,
    "source": values.text_column, "imported": values.text_column,
    "created_at": values.timestamp_column,
    "latency_ms": values.number_column, "cost_usd": values.number_column,
    "relevant": values.small_integer_column,
    "retrieved": values.id_list_column, "candidates": values.id_list_column,
}

NOT_BLANK = "must not be blank"
# The columns that identify a row (or the document it names); none may be blank.
ID_COLUMNS = ("example_id", "anchor_id", "query_id", "doc_id")
ID_COLUMNS_PATTERN = "^(" + "|".join(ID_COLUMNS) + ")$"
NON_NEGATIVE = "must be a finite number ≥ 0"
NO_REPEATS = "must not list the same document twice"


def _not_blank(series: pd.Series) -> pd.Series:
    if pd.api.types.is_string_dtype(series.dtype) and not pd.api.types.is_object_dtype(series):
        return series.str.strip().ne("")
    # Rejected values are reported by the dtype check; do not report them twice.
    return series.map(lambda value: not isinstance(value, str) or value.strip() != "")


def _non_negative(series: pd.Series) -> pd.Series:
    if pd.api.types.is_float_dtype(series.dtype):
        return pd.Series(np.isfinite(series.to_numpy()) & (series.to_numpy() >= 0),
                         index=series.index)
    return series.map(lambda value: isinstance(value, Rejected)
                      or (math.isfinite(value) and value >= 0))


def _no_repeats(series: pd.Series) -> pd.Series:
    if is_text_lists(series.dtype):  # hashed in Arrow, not a set per row
        return pd.Series(lists_without_repeats(arrow_of(series)), index=series.index)
    return series.map(lambda ids: not isinstance(ids, list) or len(set(ids)) == len(ids))


@pandas_engine.Engine.register_dtype
@dtypes.immutable
class IdLists(pandas_engine.PythonList):
    """Lists of doc-id text: Python lists (line-read JSON, CSV), or an Arrow column of lists
    of text (read by pyarrow, ``inputs.id_lists``), which is valid by its type."""

    def check(self, pandera_dtype, data_container=None):
        if is_text_lists(getattr(pandera_dtype, "type", None)):
            return True
        return super().check(pandera_dtype, data_container)

    def __str__(self) -> str:
        return "list"  # "must be a list of document ids" in the failure table


class WorkspaceTable(pa.DataFrameModel):
    """Common behaviour: coerce on purpose first (see :mod:`.values`), then check."""

    class Config:
        coerce = False  # every coercion is the deliberate one in values.py, none implicit
        unique_column_names = True

    @pa.dataframe_parser
    def normalise(cls, frame: pd.DataFrame) -> pd.DataFrame:
        declared = cls.to_schema().columns
        roles = {name: role for name, role in COLUMN_ROLES.items() if name in declared}
        return values.normalise_columns(frame, roles)

    # Every table's ids, declared once: a regex, because a check may name only columns its
    # table declares. Named by the method, not by `name=`: pandera 0.35 pops `name` from a
    # check's arguments when it builds the first table's schema.
    @pa.check(ID_COLUMNS_PATTERN, regex=True, error=NOT_BLANK)
    def id_not_blank(cls, series: pd.Series) -> pd.Series:
        return _not_blank(series)


class GoldensTable(WorkspaceTable):
    """``goldens/<suite>``: one row per golden. Not strict: slice and cluster columns that a
    design names are added to the schema as required columns when it is validated."""

    example_id: Series[str] = pa.Field(unique=True)
    input: Series[str]
    ideal: Optional[Series[str]] = pa.Field(nullable=True)

    class Config:
        strict = False


class RunTable(WorkspaceTable):
    """``runs/<experiment>/<arm>``: one row per golden an arm answered.

    ``verdict`` may not be missing where the column exists (an unjudged row would silently
    count as neither pass nor fail); ``criterion`` may be missing (a fail that cites nothing
    is unattributed, and a criterion on a pass is allowed and ignored).
    """

    example_id: Series[str] = pa.Field(unique=True)
    output: Optional[Series[str]] = pa.Field(nullable=True)
    created_at: Optional[Series[UtcTimestamp]]
    latency_ms: Optional[Series[float]]
    cost_usd: Optional[Series[float]]
    # Plain lists (IdLists): the parser already made every element id text, and pandera's
    # element-wise `list[str]` check (typeguard per cell) costs seconds per 100k rows.
    retrieved: Optional[Series[IdLists]]
    candidates: Optional[Series[IdLists]]
    predicted: Optional[Series[str]] = pa.Field(nullable=True)
    verdict: Optional[Series[str]] = pa.Field(isin=list(VERDICTS))
    criterion: Optional[Series[str]] = pa.Field(nullable=True)
    judge: Optional[Series[str]]
    context: Optional[Series[str]] = pa.Field(nullable=True)
    rationale: Optional[Series[str]] = pa.Field(nullable=True)  # an upstream judge's reason
    # `langchef import`: every scorer's per-epoch result, the pairing hash (JSON text)
    imported: Optional[Series[str]]

    @pa.check("latency_ms", "cost_usd", name="non_negative", error=NON_NEGATIVE)
    def costs_are_non_negative(cls, series: pd.Series) -> pd.Series:
        return _non_negative(series)

    # A document repeated in a *ranking* counts once at its best rank (the retrieval
    # metrics' rule), so only the candidate pool must list each document once.
    @pa.check("candidates", name="no_repeated_documents", error=NO_REPEATS)
    def rankings_have_no_repeats(cls, series: pd.Series) -> pd.Series:
        return _no_repeats(series)

    @pa.dataframe_check(name="criterion_needs_verdict",
                        error="a 'criterion' column needs a 'verdict' column beside it")
    def criterion_needs_verdict(cls, frame: pd.DataFrame) -> bool:
        return "criterion" not in frame.columns or "verdict" in frame.columns

    class Config:
        strict = True


class QueryDocumentTable(WorkspaceTable):
    """A table of (query, document) pairs, each listed once: the columns qrels and pools
    share, first in both."""

    query_id: Series[str]
    doc_id: Series[str]

    class Config:
        strict = True
        unique = ["query_id", "doc_id"]


class QrelsTable(QueryDocumentTable):
    """``qrels/<suite>``: binary relevance judgements, one per (query, document)."""

    relevant: Series[pa.Int8] = pa.Field(isin=list(RELEVANCE_GRADES))
    source: Series[str] = pa.Field(isin=list(SOURCES))


class PoolsTable(QueryDocumentTable):
    """``pools/<suite>``: the candidate documents of each query, when not the full corpus."""


class AnchorsTable(WorkspaceTable):
    """``anchors/<set>``: human-reviewed judgements the judge is re-scored against.

    ``verdict``/``criterion``/``judge`` (and ``rationale``) are the upstream judge's own
    verdicts on the anchors, for a recorded judge: the design requires ``verdict`` and
    ``judge`` then, and re-judging the anchors means reading the verdicts recorded last.
    """

    anchor_id: Series[str] = pa.Field(unique=True)
    input: Series[str]
    output: Series[str]
    context: Optional[Series[str]] = pa.Field(nullable=True)
    ideal: Optional[Series[str]] = pa.Field(nullable=True)
    human_verdict: Series[str] = pa.Field(isin=list(VERDICTS))
    human_criterion: Optional[Series[str]] = pa.Field(nullable=True)
    verdict: Optional[Series[str]] = pa.Field(isin=list(VERDICTS))
    criterion: Optional[Series[str]] = pa.Field(nullable=True)
    judge: Optional[Series[str]]
    rationale: Optional[Series[str]] = pa.Field(nullable=True)

    class Config:
        strict = True


MODELS: dict[str, type[WorkspaceTable]] = {
    "goldens": GoldensTable, "run": RunTable, "qrels": QrelsTable, "pools": PoolsTable,
    "anchors": AnchorsTable,
}

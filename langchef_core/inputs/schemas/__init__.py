"""Validation of every workspace input (goldens, arm runs, qrels, pools, anchors) with pandera.

``read_input`` reads a table (``tables.read_table``) and validates it; ``validate_table``
validates a frame already in memory. Both return the normalised, typed frame:

==============  ==============================================================
ids, labels     pandas text (``str``); JSON numbers deliberately become text:
                ``7`` → ``"7"``; a missing id is an error, never ``"nan"``
``created_at``  ``datetime64[ns, UTC]``; a timestamp without timezone is an error
``latency_ms``  ``float64`` (also ``cost_usd``), finite and ≥ 0
``relevant``    ``int8``, 0 or 1
``retrieved``   lists of doc-id text (also ``candidates``): an Arrow ``list<string>``
                column when pyarrow read them (parquet, JSON lines), else Python lists
==============  ==============================================================

Validation is lazy: every problem of the table is collected. On any problem they raise
:class:`SchemaViolation` (an ``InputError``) whose message is one sentence about the first
problem and whose ``failures`` frame lists all of them (file, column, row, value, check).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from ..errors import InputError
from ..ids import repeated_rows
from ..tables import read_table
from .failures import (FAILURE_COLUMNS, NO_ROWS, Failure, SchemaViolation, failures_markdown,
                       translate)
from .models import (MODELS, AnchorsTable, GoldensTable, PoolsTable, QrelsTable, RunTable,
                     WorkspaceTable, with_quick_timestamps)

KINDS = tuple(MODELS)

__all__ = [
    "FAILURE_COLUMNS", "KINDS", "AnchorsTable", "GoldensTable", "PoolsTable", "QrelsTable",
    "RunTable", "SchemaViolation", "WorkspaceTable", "failures_markdown", "read_input",
    "schema_for", "validate_table",
]


def validate_table(frame: pd.DataFrame, kind: str, *, file: str,
                   required_columns: Iterable[str] = ()) -> pd.DataFrame:
    """Validate one workspace table of ``kind`` and return it normalised and typed.

    ``file`` names the table in messages (e.g. ``runs/exp/variant.jsonl``); the frame's
    index is taken as the 1-based data row (as ``read_table`` sets it). ``required_columns``
    are columns the design needs on top of the format (slice and cluster columns of the
    goldens, ``verdict`` of a judged run …); they must exist and hold a value on every row.
    """
    required = _validate_table_iv(frame, kind, file, required_columns)
    if len(frame) == 0:
        raise SchemaViolation([Failure(file, None, None, None, NO_ROWS, "column",
                                       "add at least one row")])
    schema = schema_for(kind, required)
    try:
        valid = _valid_without_repeats(schema, frame)
        if valid is not None:
            return valid
        return schema.validate(frame, lazy=True)
    except SchemaErrors as errors:
        # `from None`: the user reads the failure table, not pandera's traceback.
        raise SchemaViolation(translate(errors, schema, file=file,
                                        design_columns=required)) from None


def _valid_without_repeats(schema: pa.DataFrameSchema, frame: pd.DataFrame) -> pd.DataFrame | None:
    """The validated frame when the table is valid, by a cheaper route than pandera's for
    its unique ids and keys (``ids.repeated_rows``: 1.8 s → 0.4 s for the ids of a 10^6-query
    retrieval readout, issue 31), or None: then the full schema names every failure. A
    table that fails other checks while its keys hold no repeat raises the relaxed
    schema's ``SchemaErrors``: the full schema would fail in exactly those.

    The keys are checked on the frame the relaxed schema returns, as pandera checks them:
    after its parsers made every id text (``7`` and ``"7"`` are one id)."""
    keys = [[name] for name, column in schema.columns.items() if column.unique]
    keys += [list(schema.unique)] if schema.unique else []
    if not keys:
        return None
    relaxed = schema.update_columns({key[0]: {"unique": False} for key in keys if len(key) == 1})
    relaxed.unique = None
    try:
        valid = relaxed.validate(frame, lazy=True)
    except SchemaErrors as errors:
        # Its failures are the full schema's when the keys of the frame its parsers made
        # hold no repeat: raised as they are, instead of validating again (each pass over
        # a failing column of 10^6 rows costs pandera seconds, issue 31).
        if isinstance(errors.data, pd.DataFrame) and len(errors.data) == len(frame) \
                and not any(_has_repeats(errors.data, key) for key in keys):
            raise
        return None
    if any(_has_repeats(valid, key) for key in keys):
        return None
    return valid


def _has_repeats(frame: pd.DataFrame, key: list[str]) -> bool:
    if any(name not in frame.columns for name in key):
        return False  # an optional key column that is absent: nothing to repeat
    columns = [frame[name] for name in key]
    if all(pd.api.types.is_string_dtype(column) and not column.hasnans for column in columns):
        return bool(repeated_rows(*columns).any())
    return bool(frame.duplicated(subset=key).any())


def read_input(path: str | Path, kind: str, *, label: str | None = None,
               required_columns: Iterable[str] = ()) -> pd.DataFrame:
    """Read a workspace table and validate it (see :func:`validate_table`).

    A file that cannot be read at all (missing, unsupported type, broken JSON line, empty)
    raises a :class:`SchemaViolation` too, with a one-row failure table, so a caller
    handles every bad input the same way.
    """
    name = label or str(path)
    try:
        frame = read_table(path, label=name)
    except InputError as error:
        raise SchemaViolation([Failure(
            str(error.file) if error.file is not None else name, error.column, error.row,
            error.value, error.message, "column" if error.row is None else "value",
            error.hint)]) from None
    return validate_table(frame, kind, file=name, required_columns=required_columns)


def schema_for(kind: str, required_columns: Iterable[str] = ()) -> pa.DataFrameSchema:
    """The pandera schema of ``kind`` with ``required_columns`` made required and non-null
    (a golden without its slice, cluster or ``ideal`` value cannot be scored or weighted).

    Strict kinds accept only their own columns, so asking one for a column it does not
    define is a programming error (``ValueError``); goldens gain the column.
    """
    model = MODELS[kind]
    schema = with_quick_timestamps(model.to_schema())
    for column in required_columns:
        if column in schema.columns:
            schema = schema.update_column(column, required=True, nullable=False)
        elif schema.strict:
            raise ValueError(f"{kind} tables have no column {column!r}; their columns are "
                             + ", ".join(schema.columns))
        else:
            schema = schema.add_columns({column: pa.Column(nullable=False, required=True)})
    return schema


def _validate_table_iv(frame, kind, file, required_columns) -> tuple[str, ...]:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if kind not in MODELS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not isinstance(file, str) or not file:
        raise ValueError("file must be the table's name as shown to users, e.g. "
                         f"'goldens/qa.jsonl', got {file!r}")
    if isinstance(required_columns, str):
        raise ValueError("required_columns must be a list of column names, not one string "
                         f"({required_columns!r})")
    required = tuple(required_columns)
    if not all(isinstance(column, str) and column for column in required):
        raise ValueError(f"required_columns must be column names, got {required!r}")
    return required

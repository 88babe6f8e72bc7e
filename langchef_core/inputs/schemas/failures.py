"""Pandera's failure cases, translated into a table a user can act on.

pandera reports failures in its own vocabulary (``isin(['pass', 'fail'])``,
``dtype('float64')``, ``column_in_schema``). A user of langchef sees instead one row per
problem with the file, the column, the 1-based data row, the value as written and what the
value must be; the error's message is one sentence about the first of them.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from ..errors import InputError
from .values import Rejected, is_missing, one_of

FAILURE_COLUMNS = ("file", "column", "row", "value", "check")

COLUMN_NOT_ALLOWED = "column not allowed"
COLUMN_MISSING = "required column missing"
COLUMN_REPEATED = "column appears more than once"
MISSING_VALUE = "missing value"
DUPLICATED_ID = "duplicated id"
NO_ROWS = "the table has no rows"
NOT_CHECKED = "could not be checked"

# When one cell breaks several rules only the most basic is reported: a missing value is
# not also "the wrong type", and a value of the wrong type is not also "not allowed".
_RANK = {"column": 0, "missing": 1, "type": 2, "duplicate": 3, "value": 4}

# Dataframe-wide checks are about one column; name it in the table.
FRAME_CHECK_COLUMNS = {"criterion_needs_verdict": "criterion"}
_CONSEQUENCES = frozenset({"a 'criterion' column needs a 'verdict' column beside it"})

SHOWN_VALUE_LENGTH = 60
# How many problems a message spells out before pointing at the failure table.
SHOWN_PROBLEMS = 3


@dataclass(frozen=True)
class Failure:
    """One problem found in a table; ``kind`` orders problems of the same cell."""

    file: str
    column: str | None
    row: int | None
    value: object
    check: str
    kind: str
    hint: str | None = None

    def place_and_problem(self) -> str:
        """``column 'x', row 3: <problem>`` (the file is the one the message names)."""
        place = []
        if self.column is not None:
            place.append(f"column '{self.column}'")
        if self.row is not None:
            place.append(f"row {self.row}")
        return (", ".join(place) + ": " if place else "") + self.problem()

    def problem(self) -> str:
        """The problem as the middle of a sentence, value included where there is one."""
        if self.kind == "duplicate":
            return f"{self.check} {show_value(self.value)}"
        if self.kind in ("type", "value") and not is_missing_value(self.value):
            return f"{show_value(self.value)} {self.check}"
        return self.check


class SchemaViolation(InputError):
    """A workspace table broke its format; ``failures`` lists every problem found.

    ``failures`` has the columns ``file``, ``column``, ``row`` (the 1-based data row, empty
    for problems of a whole column), ``value`` (as written in the file) and ``check`` (what
    the value must be), sorted by row then column. The message describes the first
    problem in one sentence and says how many more the table lists.
    """

    def __init__(self, failures: Iterable[Failure]):
        ordered = sort_failures(failures)
        if not ordered:
            raise ValueError("a SchemaViolation needs at least one failure")
        first = ordered[0]
        hints = [first.hint] if first.hint else []
        if len(ordered) > 1:
            hints.append("also " + "; ".join(
                f"({number}) {failure.place_and_problem()}"
                for number, failure in enumerate(ordered[1:SHOWN_PROBLEMS], 2)))
        if len(ordered) > SHOWN_PROBLEMS:
            more = len(ordered) - SHOWN_PROBLEMS
            hints.append(f"{more} more problem{'s' if more > 1 else ''} "
                         "listed in the failure table")
        super().__init__(first.problem(), file=first.file, column=first.column, row=first.row,
                         value=first.value, hint="; ".join(hints) or None)
        self._failures = tuple(ordered)
        self.failures = failure_frame(ordered)

    @property
    def failure_list(self) -> tuple[Failure, ...]:
        """Every failure, most basic first, with its hint."""
        return self._failures

    def __reduce__(self):
        # Exceptions are pickled by their args; rebuild from the failures instead.
        return (self.__class__, (self._failures,))

    def to_markdown(self, limit: int = 50) -> str:
        """The failure table as a Markdown table (for Dagster metadata), at most ``limit``
        rows, with a closing line saying how many were left out."""
        return failures_markdown(self.failures, limit=limit)

    def to_dict(self) -> dict:
        """JSON-ready: the message and every failure (values JSON cannot hold are shown as
        text)."""
        return {"message": str(self), "failures": [
            {"file": failure.file, "column": failure.column, "row": failure.row,
             "value": json_value(failure.value), "check": failure.check}
            for failure in self._failures]}


def sort_failures(failures: Iterable[Failure]) -> list[Failure]:
    """One failure per cell (the most basic), whole-column problems first, then by row and
    column; ties keep the order in which they were found."""
    best: dict[tuple, Failure] = {}
    for failure in failures:
        key = ((failure.column, failure.row) if failure.row is not None
               else (failure.column, None, failure.check))
        kept = best.get(key)
        if kept is None or _RANK[failure.kind] < _RANK[kept.kind]:
            best[key] = failure
    # A table-wide rule that failed because of a missing or misnamed column (a 'criterion'
    # column without 'verdict') comes after the column problems that caused it.
    return sorted(best.values(), key=lambda failure: (
        failure.row is not None, failure.check in _CONSEQUENCES,
        failure.row if failure.row is not None else 0,
        str(failure.column) if failure.column is not None else ""))


def failure_frame(failures: list[Failure]) -> pd.DataFrame:
    frame = pd.DataFrame({
        "file": pd.Series([failure.file for failure in failures], dtype=object),
        "column": pd.Series([failure.column for failure in failures], dtype=object),
        "row": pd.array([failure.row for failure in failures], dtype="Int64"),
        "value": pd.Series([failure.value for failure in failures], dtype=object),
        "check": pd.Series([failure.check for failure in failures], dtype=object),
    })
    return frame[list(FAILURE_COLUMNS)]


def failures_markdown(failures: pd.DataFrame, *, limit: int = 50) -> str:
    """A plain Markdown table of a failure frame; cells are escaped so a value holding
    ``|`` or a line break cannot break the layout."""
    shown = failures.head(limit)
    lines = ["| " + " | ".join(FAILURE_COLUMNS) + " |",
             "|" + "|".join(["---"] * len(FAILURE_COLUMNS)) + "|"]
    for record in shown.itertuples(index=False):
        cells = [_cell(record.file), _cell(record.column),
                 "" if pd.isna(record.row) else str(int(record.row)),
                 "" if is_missing_value(record.value) else _cell(show_value(record.value)),
                 _cell(record.check)]
        lines.append("| " + " | ".join(cells) + " |")
    if len(failures) > limit:
        lines.append("")
        lines.append(f"… and {len(failures) - limit} more.")
    return "\n".join(lines)


def _cell(text) -> str:
    if text is None:
        return ""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|")
            .replace("\r", " ").replace("\n", " "))


def is_missing_value(value) -> bool:
    return not isinstance(value, list | tuple | dict) and is_missing(value)


def json_value(value):
    """A failure's value as plain JSON: kept when JSON can hold it, else shown as text."""
    if is_missing_value(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str | bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, list | tuple) and all(isinstance(item, str | int) for item in value):
        return list(value)
    return show_value(value)


def show_value(value) -> str:
    """A value as a person would write it in the file, shortened."""
    if isinstance(value, list | tuple | dict):
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        text = repr(value)
    if len(text) > SHOWN_VALUE_LENGTH:
        text = text[:SHOWN_VALUE_LENGTH - 1] + "…"
    return text


# --- translation of pandera's failure cases ------------------------------------------------

def translate(errors: SchemaErrors, schema: pa.DataFrameSchema, *, file: str,
              design_columns: Iterable[str] = ()) -> list[Failure]:
    """Every row of ``errors.failure_cases`` as a :class:`Failure` in langchef's words.

    ``design_columns`` are the columns required by the design rather than by the format;
    a missing one gets a hint saying so.
    """
    data = errors.data if isinstance(errors.data, pd.DataFrame) else None
    first_rows = _FirstRows(data)
    design_columns = set(design_columns)
    failures: list[Failure] = []
    for case in errors.failure_cases.itertuples(index=False):
        check = str(case.check)
        row = _row(case.index)
        if check == "column_in_schema":
            allowed = ", ".join(schema.columns)
            close = difflib.get_close_matches(str(case.failure_case), list(schema.columns), n=1)
            hint = (f"did you mean '{close[0]}'? rename it (allowed: {allowed})" if close
                    else f"remove or rename it (allowed: {allowed})")
            failures.append(Failure(file, str(case.failure_case), None, None, COLUMN_NOT_ALLOWED,
                                    "column", hint))
        elif check == "column_in_dataframe":
            hint = ("the design uses it, so add it" if case.failure_case in design_columns
                    else "add it to the table")
            failures.append(Failure(file, str(case.failure_case), None, None, COLUMN_MISSING,
                                    "column", hint))
        elif check == "dataframe_column_labels_unique":
            labels = case.failure_case
            labels = list(labels) if isinstance(labels, pd.Index | list | tuple) else [labels]
            failures.extend(Failure(file, str(label), None, None, COLUMN_REPEATED, "column",
                                    "keep one column of each name") for label in labels)
        elif check == "not_nullable":
            failures.append(Failure(file, case.column, row, None, MISSING_VALUE, "missing",
                                    _missing_hint(schema, case.column)))
        elif check.startswith(("dtype(", "coerce_dtype(")):
            failures.append(_type_failure(case, row, schema, file))
        elif check == "field_uniqueness":
            failures.extend(_duplicate_id(case, row, first_rows, file))
        elif check == "multiple_fields_uniqueness":
            failures.extend(_duplicate_key(case, row, first_rows, schema, file))
        else:
            failures.append(_check_failure(case, row, schema, file))
    return failures


def _absent(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _row(index):
    """The data row of a failure case as a plain int (None for whole-column problems)."""
    if _absent(index):
        return None
    try:
        return int(index)
    except (TypeError, ValueError):
        return index  # a caller's own index labels are shown as they are


def _type_failure(case, row, schema, file) -> Failure:
    value = case.failure_case
    if isinstance(value, Rejected):
        return Failure(file, case.column, row, value.value, value.reason, "type")
    expected = _expected(schema.columns[case.column].dtype) if case.column in schema.columns \
        else "must have another type"
    if row is None:  # the column as a whole has the wrong dtype; no single value to show
        return Failure(file, case.column, None, None, expected, "column")
    return Failure(file, case.column, row, value, expected, "type")


def _expected(dtype) -> str:
    text = str(dtype)
    if text.startswith("list"):
        return "must be a list of document ids"
    if text.startswith("datetime64"):
        return "must be an ISO-8601 timestamp with a timezone"
    if text.startswith(("float", "int")):
        return "must be a number"
    return "must be text"


def _duplicate_id(case, row, first_rows, file) -> list[Failure]:
    first = first_rows.of([case.column], (case.failure_case,))
    if row is None or first is None or row == first:
        return []  # the first occurrence is the original, not the duplicate
    return [Failure(file, case.column, row, case.failure_case, DUPLICATED_ID, "duplicate",
                    f"first seen at row {first}, make each id unique")]


def _duplicate_key(case, row, first_rows, schema, file) -> list[Failure]:
    keys = list(schema.unique)
    key = first_rows.key_at(keys, row)
    first = first_rows.of(keys, key) if key is not None else None
    if first is None or row == first:
        return []
    label = ", ".join(keys)
    # pandera reports each key column separately; the cell dedup keeps one per row.
    return [Failure(file, label, row, key, f"duplicated ({label}) pair", "duplicate",
                    f"first seen at row {first}, list each pair once")]


class _FirstRows:
    """Where each key value first occurs in the validated frame, and each row's key,
    computed once per key (a pandas lookup per failure would be slow on big tables)."""

    def __init__(self, data: pd.DataFrame | None):
        self._data = data if data is not None and data.index.is_unique else None
        self._first: dict[tuple, dict] = {}
        self._keys: dict[tuple, dict] = {}

    def of(self, keys: list[str], key: tuple):
        self._index(keys)
        return self._first.get(tuple(keys), {}).get(key)

    def key_at(self, keys: list[str], row) -> tuple | None:
        self._index(keys)
        return self._keys.get(tuple(keys), {}).get(row)

    def _index(self, keys: list[str]) -> None:
        name = tuple(keys)
        if self._data is None or name in self._first:
            return
        first, key_of_row = {}, {}
        for row, *values in self._data[keys].itertuples(index=True, name=None):
            key_of_row[_row(row)] = tuple(values)
            first.setdefault(tuple(values), _row(row))
        self._first[name], self._keys[name] = first, key_of_row


def _check_failure(case, row, schema, file) -> Failure:
    check = _check_object(case, schema)
    column = case.column if case.column in schema.columns else None
    if check is not None and check.name in FRAME_CHECK_COLUMNS:
        column = FRAME_CHECK_COLUMNS[check.name]
        return Failure(file, column, None, None, check.error, "column",
                       "add the verdict column or remove this one")
    if check is None or (row is None and case.schema_context == "Column"):
        # A column check that failed without rows crashed on an unexpected value.
        return Failure(file, column, row, None, NOT_CHECKED, "value",
                       "please report this as a langchef bug")
    value = case.failure_case
    value = value.value if isinstance(value, Rejected) else value
    return Failure(file, column, row, value, _wording(check), "value")


def _check_object(case, schema):
    if _absent(case.check_number):
        return None
    number = int(case.check_number)
    if case.schema_context == "Column" and case.column in schema.columns:
        checks = schema.columns[case.column].checks
    else:
        checks = schema.checks
    return checks[number] if number < len(checks) else None


def _wording(check) -> str:
    # Built-in checks carry pandera's own text in `error`; ours carry the user's wording.
    if check.name == "isin":
        return one_of(check.statistics["allowed_values"])
    return check.error or "is not allowed here"


def _missing_hint(schema, column) -> str:
    """Where a column has a closed vocabulary, say which values may fill the gap."""
    checks = schema.columns[column].checks if column in schema.columns else []
    allowed = [check.statistics["allowed_values"] for check in checks if check.name == "isin"]
    if allowed:
        return "write " + " or ".join(str(value) for value in allowed[0]) + " on every row"
    return "fill it in on every row"

"""Reading workspace tables (.jsonl, .csv, .parquet) into DataFrames, with clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .columnar import read_jsonl_columns
from .errors import InputError

from .formats import TABLE_SUFFIXES  # noqa: F401  (re-exported)


def read_table(path: str | Path, *, label: str | None = None) -> pd.DataFrame:
    """Read one table, chosen by extension; ``label`` is how the file is named in errors.

    The frame's index is the 1-based data row number, so every later error can name the row
    a person would look at. JSON lines are parsed one by one so a broken line is reported
    by number instead of as a parser offset.
    """
    path = Path(path)
    name = label or str(path)
    if path.suffix not in TABLE_SUFFIXES:
        raise InputError(f"unsupported table type '{path.suffix}'", file=name,
                         hint="use .jsonl, .csv or .parquet")
    if not path.is_file():
        raise InputError("file not found", file=name)
    try:
        if path.suffix == ".jsonl":
            # pyarrow when it gives the very same frame, else line by line (exact errors)
            frame = read_jsonl_columns(path)
            if frame is None:
                frame = _read_jsonl(path, name)
        elif path.suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_parquet(path)
    except InputError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as error:
        raise InputError(f"could not be read ({error})", file=name,
                         hint="check that the file is a valid, UTF-8 " + path.suffix.lstrip(".")) from None
    if frame.empty:
        raise InputError("the table is empty", file=name, hint="add at least one row")
    if path.suffix != ".jsonl":
        frame.index = pd.RangeIndex(1, len(frame) + 1)
    frame.index.name = "row"
    return frame


def _read_jsonl(path: Path, name: str) -> pd.DataFrame:
    records, lines = [], []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"line is not valid JSON ({error.msg})", file=name, row=number,
                                 hint="write one JSON object per line") from None
            if not isinstance(record, dict):
                raise InputError("line is not a JSON object", file=name, row=number,
                                 hint="write one JSON object per line")
            records.append(record)
            lines.append(number)
    return pd.DataFrame.from_records(records, index=pd.Index(lines, dtype="int64"))

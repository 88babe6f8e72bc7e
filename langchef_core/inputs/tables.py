"""Reading workspace tables (.jsonl, .csv, .parquet) into DataFrames, with clear errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd

from .columnar import read_jsonl_columns
from .errors import InputError, NotUtf8, utf8_text
from .id_lists import text_lists

from .formats import TABLE_SUFFIXES  # noqa: F401  (re-exported)

# A workspace table larger than this is refused before it is read (it would not fit the
# in-memory comparison anyway); raise it here if a suite really needs more. Read in bulk
# (parquet, and JSON lines that pyarrow parses) a table holds about its file's size in
# memory, so those may be larger; CSV and JSON lines read line by line hold Python objects,
# about ten times the file's size, so they stop at MAX_LINE_READ_BYTES.
MAX_TABLE_BYTES = 16 << 30
MAX_LINE_READ_BYTES = 1 << 30


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
        raise InputError(not_found(name), file=name,
                         hint="write the table under one of these names, or fix the name that "
                              "points at it")
    size = path.stat().st_size
    if size > MAX_TABLE_BYTES:
        raise InputError(f"is larger than {MAX_TABLE_BYTES >> 20} MiB", file=name,
                         hint="split the suite, or raise MAX_TABLE_BYTES in langchef_core/inputs/tables.py")
    if path.suffix == ".csv":
        _refuse_line_read(size, name, "a CSV file")
    try:
        if path.suffix == ".jsonl":
            # pyarrow when it gives the very same frame, else line by line (exact errors)
            frame = read_jsonl_columns(path)
            if frame is None:
                _refuse_line_read(size, name, "this JSON-lines file cannot be read in bulk (a blank or "
                                  "broken line, a column of mixed types, nested objects …), so it")
                frame = _read_jsonl(path, name)
        elif path.suffix == ".csv":
            frame = _read_csv(path, name)
        else:
            frame = _read_parquet(path)
    except InputError:
        raise
    except (MemoryError, RecursionError):
        raise InputError("is too large or too deeply nested to read", file=name,
                         hint="keep the table flat and within the available memory") from None
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as error:
        raise InputError(f"could not be read ({error})", file=name,
                         hint="check that the file is a valid, UTF-8 " + path.suffix.lstrip(".")) from None
    if frame.empty:
        raise InputError("the table is empty", file=name, hint="add at least one row")
    if path.suffix != ".jsonl":
        frame.index = pd.RangeIndex(1, len(frame) + 1)
    frame.index.name = "row"
    return frame


def _refuse_line_read(size: int, name: str, what: str) -> None:
    if size > MAX_LINE_READ_BYTES:
        raise InputError(f"is larger than {MAX_LINE_READ_BYTES >> 20} MiB, and {what} is read line by "
                         "line, which holds about ten times the file's size in memory", file=name,
                         hint="write it as parquet (or as plain JSON lines, one flat object per line), "
                              "or split the suite")


def _read_parquet(path: Path) -> pd.DataFrame:
    """pandas' frame of the file, except that lists of text stay Arrow list columns
    (``id_lists``); a list column with a missing list or item is read as pandas reads it."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = pq.read_schema(path)
    metadata = schema.pandas_metadata or {}
    index_columns = {name for name in metadata.get("index_columns", []) if isinstance(name, str)}
    names = [name for name in schema.names if name not in index_columns]
    listed = [name for name in names
              if isinstance(schema.field(name).type, (pa.ListType, pa.LargeListType))]
    lists = {}
    if listed:
        lists = {name: text_lists(column) for name, column in _list_columns(path, listed).items()}
        lists = {name: column for name, column in lists.items() if column is not None}
    if not lists:
        return pd.read_parquet(path)
    rest = [name for name in names if name not in lists]
    frame = pd.read_parquet(path, columns=rest) if rest else \
        pd.DataFrame(index=pd.RangeIndex(len(next(iter(lists.values())))))
    for name, column in lists.items():
        frame[name] = pd.Series(column, index=frame.index)
    return frame[names]


def _list_columns(path: Path, names: list[str]) -> dict:
    """The list columns of a parquet file as chunked arrays, read 64Ki rows at a time.

    A 10^8-id column read in one piece takes about twice its size while it is decoded, and
    pyarrow's default allocator (mimalloc) spends most of that read in page faults: about
    20 s and 2.9 GB for 10^6 × 100 ids, against 6–7 s and 1.3 GB streamed in batches with
    jemalloc (issue 19). Buffers keep the pool they came from, so switching the default
    pool back afterwards is safe.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    previous = pa.default_memory_pool()
    if "jemalloc" in pa.supported_memory_backends():
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    try:
        # Pages streamed through a small buffer: by default the whole compressed column
        # (0.7 GB of it at 10^8 ids) is read into memory first.
        with pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20) as source:
            parts: dict[str, list] = {name: [] for name in names}
            for batch in source.iter_batches(batch_size=1 << 16, columns=names):
                for name in names:
                    parts[name].append(batch.column(name))
            return {name: pa.chunked_array(parts[name], type=source.schema_arrow.field(name).type)
                    for name in names}
    finally:
        pa.set_memory_pool(previous)


def _read_csv(path: Path, name: str) -> pd.DataFrame:
    try:
        text = utf8_text(path.read_bytes())
    except NotUtf8 as error:
        raise InputError(f"is not UTF-8 text (byte {error.byte}, on line {error.line}, cannot be "
                         "decoded)", file=name, row=error.line - 1 if error.line > 1 else None,
                         hint="save the file as UTF-8") from None
    text = text.removeprefix("\ufeff")  # a byte-order mark is not part of the first column
    header = next(csv.reader(io.StringIO(text)), [])
    seen: dict[str, int] = {}
    for position, column in enumerate(header, start=1):
        if column in seen:
            raise InputError(f"appears twice in the header (columns {seen[column]} and "
                             f"{position})", file=name, column=column,
                             hint="give every column its own name")
        seen[column] = position
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""])


def not_found(label: str) -> str:
    """"file not found", naming every extension a table of that name may have."""
    stem = str(label)
    for suffix in TABLE_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[:-len(suffix)]
            break
    else:
        return "file not found"
    tried = [f"{stem}{suffix}" for suffix in TABLE_SUFFIXES]
    return "file not found (looked for " + ", ".join(tried[:-1]) + f" and {tried[-1]})"


def _read_jsonl(path: Path, name: str) -> pd.DataFrame:
    records, lines = [], []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise InputError(f"line is not UTF-8 text (byte {error.start + 1} of the line "
                                 "cannot be decoded)", file=name, row=number,
                                 hint="save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"line is not valid JSON ({error.msg})", file=name, row=number,
                                 hint="write one JSON object per line") from None
            except RecursionError:
                raise InputError("line is nested too deeply to read", file=name, row=number,
                                 hint="write one flat JSON object per line") from None
            if not isinstance(record, dict):
                raise InputError("line is not a JSON object", file=name, row=number,
                                 hint="write one JSON object per line")
            records.append(record)
            lines.append(number)
    return pd.DataFrame.from_records(records, index=pd.Index(lines, dtype="int64"))

"""Reading workspace tables (.jsonl, .csv, .parquet) into DataFrames, with clear errors."""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import os
import threading
from pathlib import Path

import pandas as pd

from .columnar import read_jsonl_columns
from .errors import InputError, NotUtf8, utf8_text
from .id_lists import first_items, text_lists
from .threads import ahead, on_threads

from .formats import TABLE_SUFFIXES  # noqa: F401  (re-exported)

# A workspace table larger than this is refused before it is read (it would not fit the
# in-memory comparison anyway); raise it here if a suite really needs more.
MAX_TABLE_BYTES = 16 << 30
# What reading a table holds at its peak, as a multiple of its file's size (measured on the
# benchmarks' runs, issue 31): read in bulk by pyarrow (parquet, plain JSON lines) the file's
# bytes, the parsed columns and the frame; read line by line (CSV, JSON lines pyarrow cannot
# take) a Python object per cell. A table whose estimate exceeds the memory this process may
# still use is refused before it is read, instead of being killed part way (``memory``).
BULK_READ_FACTOR = 4
LINE_READ_FACTOR = 10
# Rows per batch of a parquet file's list columns: 64Ki lists of 100 ids are a few MB. A
# smaller file is read in batches of a BATCHES-th of its rows: each batch is cut while the
# next one decodes, so only the last batch's cut is left once decoding ends (``_batch_rows``).
BATCH_ROWS = 1 << 16
BATCHES = 8

def read_table(path: str | Path, *, label: str | None = None,
               list_depth: dict[str, int] | None = None) -> pd.DataFrame:
    """Read one table, chosen by extension; ``label`` is how the file is named in errors.

    The frame's index is the 1-based data row number, so every later error can name the row
    a person would look at. JSON lines are parsed in bulk by pyarrow when that gives the
    same frame (``columnar.read_jsonl_columns``), else one by one, so a broken line is
    reported by number instead of as a parser offset.

    ``list_depth`` (column → n) lets a parquet file's lists of text in those columns be cut
    to their first n ids as they are decoded, wherever every list and id of a batch is
    present, non-empty text (``id_lists.first_items``): a 10^6 × 100 run then never holds
    its 10^8 ids at once. Only for a caller that validates each list's first n ids and
    keeps no more (``RankedRun.from_file``); other formats are read whole.
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
        _refuse_beyond_memory(size, LINE_READ_FACTOR, name, "a CSV file is read line by line")
    else:
        _refuse_beyond_memory(size, BULK_READ_FACTOR, name, f"a {path.suffix.lstrip('.')} file is read in bulk")
    try:
        if path.suffix == ".jsonl":
            # pyarrow when it gives the very same frame, else line by line (exact errors)
            frame = read_jsonl_columns(path)
            if frame is None:
                _refuse_beyond_memory(size, LINE_READ_FACTOR, name,
                                      "this JSON-lines file cannot be read in bulk (a blank or broken "
                                      "line, a column of mixed types, nested objects …), so it is read "
                                      "line by line")
                frame = _read_jsonl(path, name)
        elif path.suffix == ".csv":
            frame = _read_csv(path, name)
        else:
            frame = _read_parquet(path, list_depth or {})
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


def _refuse_beyond_memory(size: int, factor: int, name: str, how: str) -> None:
    """Refuse a table whose reading would need more memory than this process may still use."""
    need, available = factor * size, available_memory()
    if available is not None and need > available:
        raise InputError(f"needs about {_size(need)} of memory to read ({how}, which holds about "
                         f"{factor} times the file's {_size(size)}), and {_size(available)} is available",
                         file=name, hint="free memory or use a larger machine, write it as parquet "
                                         "(or as plain JSON lines, one flat object per line), or split "
                                         "the suite")


def _size(size: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.1f} {unit}"
    return f"{size} bytes"


def available_memory() -> int | None:
    """Bytes this process may still allocate: the least of the system's available memory
    (``MemAvailable``), the room left under its cgroup's limit and its own address-space and
    data-segment limits; None where none of them can be read (then nothing is refused)."""
    bounds = []
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    bounds.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            bounds.append(max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        resource = None
    for which in (("RLIMIT_AS", "RLIMIT_DATA") if resource else ()):
        soft, _ = resource.getrlimit(getattr(resource, which))
        if soft != resource.RLIM_INFINITY:
            bounds.append(max(0, soft - _resident_bytes()))
    return min(bounds) if bounds else None


def _resident_bytes() -> int:
    """This process's resident memory (what its own limits are already charged)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _read_parquet(path: Path, list_depth: dict[str, int]) -> pd.DataFrame:
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
        lists = {name: text_lists(column)
                 for name, column in _list_columns(path, listed, list_depth).items()}
        lists = {name: column for name, column in lists.items() if column is not None}
    if not lists:
        return pd.read_parquet(path)
    rest = [name for name in names if name not in lists]
    frame = pd.read_parquet(path, columns=rest) if rest else \
        pd.DataFrame(index=pd.RangeIndex(len(next(iter(lists.values())))))
    for name, column in lists.items():
        frame[name] = pd.Series(column, index=frame.index)
    return frame[names]


def _list_columns(path: Path, names: list[str], depth: dict[str, int]) -> dict:
    """The list columns of a parquet file as chunked arrays, read 64Ki rows at a time, each
    batch decoded while the one before is kept (and cut to ``depth``, ``first_items``: ids
    stored as dictionary codes stay codes).

    A 10^8-id column read in one piece takes about twice its size while it is decoded, and
    pyarrow's default allocator (mimalloc) spends most of that read in page faults: about
    20 s and 2.9 GB for 10^6 × 100 ids, against 6–7 s and 1.3 GB streamed in batches with
    jemalloc (issue 19). Buffers keep the pool they came from, so switching the default
    pool back afterwards is safe.
    """
    import pyarrow.parquet as pq
    with _jemalloc_while_reading():
        schema = pq.read_schema(path)
        types = {name: schema.field(name).type for name in names}
        coded = _dictionary_coded(path, [name for name in names if name in depth])
        kept = {name: functools.partial(_kept, depth=depth.get(name), text_type=types[name])
                for name in names}
        # Pages streamed through a small buffer: by default the whole compressed column
        # (0.7 GB of it at 10^8 ids) is read into memory first.
        with pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20,
                            read_dictionary=coded) as source:
            groups = source.metadata.num_row_groups
            if groups > 1 and (os.cpu_count() or 1) > 1:
                return _row_groups_in_parallel(path, names, groups, types, kept, coded)
            parts: dict[str, list] = {name: [] for name in names}
            batches = source.iter_batches(batch_size=_batch_rows(source.metadata.num_rows), columns=names)
            for batch in ahead(batches):
                for name in names:
                    parts[name].append(kept[name](batch.column(name)))
            return {name: _one_column(parts[name], types[name]) for name in names}


def _batch_rows(rows: int) -> int:
    """Rows per batch: BATCH_ROWS, or a BATCHES-th of a smaller file's rows (rounded up), so
    that it comes in BATCHES batches, or one row each when it has fewer rows (10^5 lists of
    100 ids read to depth 10: 0.54 s in two batches, 0.45 s in eight)."""
    return max(1, min(BATCH_ROWS, -(-rows // BATCHES)))


# Bytes a list entry takes in a column chunk, at most, when every entry is a dictionary code:
# a code is at most 4 bytes, while plain text takes 4 bytes of length and its own bytes.
CODED_BYTES_PER_ENTRY = 4.0


def _dictionary_coded(path: Path, names: list[str]) -> list[str]:
    """The paths (``name.list.element``) of those lists of text whose column chunks hold
    dictionary codes, so they can be read as codes (``read_dictionary``): repeated ids are
    decoded once, and a list is cut to its first ids before any is decoded. pyarrow's writer
    falls back from codes to plain text once a chunk's dictionary passes 1 MB, and reading
    such a chunk as codes hashes every id again (4× slower, issue 31). The file does not say
    which pages fell back, but plain text cannot take under 4 bytes an entry: a chunk below
    that is codes, or mostly so (the rest is read correctly, only slower)."""
    import pyarrow.parquet as pq
    metadata = pq.read_metadata(path)
    paths = []
    for name in names:
        leaves = [column for column in range(metadata.num_columns)
                  if metadata.schema.column(column).path.split(".")[0] == name]
        if len(leaves) != 1 or metadata.schema.column(leaves[0]).physical_type != "BYTE_ARRAY":
            continue
        chunks = [metadata.row_group(group).column(leaves[0]) for group in range(metadata.num_row_groups)]
        if chunks and all(chunk.has_dictionary_page and chunk.num_values and
                          chunk.total_uncompressed_size / chunk.num_values < CODED_BYTES_PER_ENTRY
                          for chunk in chunks):
            paths.append(metadata.schema.column(leaves[0]).path)
    return paths


# The default pool is one per process and several files may be read at once (a readout's
# runs, on threads): it is switched when the first read starts and back when the last ends.
_POOL_LOCK = threading.Lock()
_POOL_STATE: dict = {"readers": 0, "previous": None}


@contextlib.contextmanager
def _jemalloc_while_reading():
    import pyarrow as pa
    with _POOL_LOCK:
        if _POOL_STATE["readers"] == 0:
            _POOL_STATE["previous"] = pa.default_memory_pool()
            if "jemalloc" in pa.supported_memory_backends():
                pa.set_memory_pool(pa.jemalloc_memory_pool())
        _POOL_STATE["readers"] += 1
    try:
        yield
    finally:
        with _POOL_LOCK:
            _POOL_STATE["readers"] -= 1
            if _POOL_STATE["readers"] == 0:
                pa.set_memory_pool(_POOL_STATE["previous"])


def _row_groups_in_parallel(path: Path, names: list[str], groups: int, types: dict,
                            kept: dict, coded: list[str]) -> dict:
    """The list columns of a file of several row groups, one row group per task on a thread
    per core (pyarrow decodes a column chunk on one thread; issue 31), chunks in file order."""
    import pyarrow.parquet as pq

    def read(group: int) -> dict:
        with pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20,
                            read_dictionary=coded) as source:
            table = source.read_row_group(group, columns=names, use_threads=False)
        return {name: [kept[name](chunk) for chunk in table.column(name).chunks] for name in names}

    groups_read = on_threads(read, range(groups))
    return {name: _one_column([chunk for group in groups_read for chunk in group[name]], types[name])
            for name in names}


def _kept(lists, *, depth: int | None, text_type):
    return lists if depth is None else first_items(lists, depth, text_type)


def _one_column(chunks: list, text_type):
    """The kept chunks of a column as one chunked array. Lists cut as codes stay codes
    (``first_items``), unless some batch had to be decoded whole (a bad id, which validation
    then names): then every chunk is text, as the column's type says."""
    import pyarrow as pa
    if chunks and all(chunk.type == chunks[0].type for chunk in chunks):
        return pa.chunked_array(chunks)
    return pa.chunked_array([chunk.cast(text_type) for chunk in chunks], type=text_type)


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

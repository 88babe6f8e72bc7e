"""JSON lines parsed by pyarrow, for the frames the line-by-line reader would build.

``tables._read_jsonl`` parses each line with ``json.loads`` so a broken line is named by its
number; at 10^5–10^6 rows that costs most of a readout (issue 19). pyarrow parses the same
file in C++, and the frame is then built from each column's Python values, which is the
same per-column inference ``DataFrame.from_records`` does, so the dtypes, values and index
come out the same — except that a column of lists of text stays an Arrow list column
(``id_lists``): the same cells, without a Python string per id. Whenever pyarrow cannot
reproduce that frame exactly this returns None and the caller reads line by line, so every
error still names its file and line:

- blank lines (the line numbers would shift), or anything pyarrow refuses (a broken line,
  a line that is not an object, mixed types in a column, NaN, huge integers, bad UTF-8);
- nested objects, booleans or lists with missing values (pyarrow cannot tell a missing key
  from an explicit null there, and pandas keeps them apart), lists of anything but scalars;
- strings pyarrow would read as timestamps are read again as the strings they are.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .id_lists import text_lists

_PROBE_BYTES = 1 << 20  # the head of the file that decides which columns are timestamps
# A line opening more brackets than this is left to the line reader: pyarrow's parser
# recurses and a hostile, deeply nested line would crash the process instead of being named.
_MAX_BRACKETS_PER_LINE = 64
_SCAN_BYTES = 1 << 24
_LINE_NOT_AN_OBJECT = re.compile(rb"\n[^{]")  # a final line end is followed by nothing


def read_jsonl_columns(path: Path) -> pd.DataFrame | None:
    """The frame ``tables._read_jsonl`` would return for ``path``, or None to say "read it
    line by line"."""
    try:
        import pyarrow as pa
        import pyarrow.json as pj
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    # The file's bytes are looked at in place: a copy (or a decoded str) of a gigabyte file
    # would double what reading it takes (issue 19).
    data = path.read_bytes()
    newlines = data.count(b"\n") - data.endswith(b"\n")  # line ends before the last line's
    # Every line must open an object right away: no blank or indented lines, whose numbers
    # pyarrow would not keep.
    # (A search for a line end followed by anything else scans at memchr speed; counting the
    # two-byte b"\n{" took 2.5 times as long: 0.75 s over a retrieval readout's files at 10^6.)
    if not data.startswith(b"{") or _LINE_NOT_AN_OBJECT.search(data) or b"\r" in data \
            or b"\\u0000" in data:
        return None
    if not _is_utf8(data):  # pyarrow lets bad UTF-8 through; the line reader names its line
        return None
    if _too_deep(data, newlines + 1):
        return None
    try:
        head = data[:data.rfind(b"\n", 0, _PROBE_BYTES)] if len(data) > _PROBE_BYTES else data
        probe = pj.read_json(pa.BufferReader(head or data))
        stamps = _timestamp_columns(probe.schema, pa)
        if not stamps:
            table = pj.read_json(pa.BufferReader(data))
        else:
            schema = pa.schema([pa.field(name, pa.string()) for name in stamps])
            table = pj.read_json(pa.BufferReader(data), parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="infer"))
            # An explicit schema puts its fields first; keep the order the file shows them in.
            seen = probe.column_names
            table = table.select(seen + [name for name in table.column_names if name not in seen])
        if _timestamp_columns(table.schema, pa):
            return None  # a timestamp-like column first seen further down: read line by line
    except (pa.ArrowException, ValueError, OverflowError, KeyError):
        return None
    lines = newlines + 1
    if table.num_rows != lines or len(set(table.column_names)) != table.num_columns:
        return None
    columns = {}
    for name, column in zip(table.column_names, table.columns):
        values = _values(column, pa)
        if values is None:
            return None
        columns[name] = values
    return pd.DataFrame(columns, index=pd.Index(np.arange(1, lines + 1, dtype=np.int64)))


def _is_utf8(data: bytes) -> bool:
    """Whether the bytes are UTF-8, decoded a slice at a time (the text is not kept)."""
    if data.isascii():  # ASCII is UTF-8, and this scan is a tenth of decoding's time
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _SCAN_BYTES):
            decoder.decode(view[start:start + _SCAN_BYTES])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _too_deep(data: bytes, lines: int) -> bool:
    """Whether a line of ``data`` (``lines`` lines, each opening with "{") opens more than
    ``_MAX_BRACKETS_PER_LINE`` brackets."""
    openers = _positions(data, _is_opener)
    # No line holds more than its own "{" plus every bracket beyond one per line: within the
    # limit, that bound spares the count per line (1 s at 10^6 rows).
    if openers.size - lines + 1 <= _MAX_BRACKETS_PER_LINE:
        return False
    return _most_per_line(openers, _positions(data, _is_line_end)) > _MAX_BRACKETS_PER_LINE


def _most_brackets_on_a_line(body: bytes) -> int:
    """The largest number of ``{`` and ``[`` on one line (an upper bound on its nesting)."""
    return _most_per_line(_positions(body, _is_opener), _positions(body, _is_line_end))


def _positions(body: bytes, wanted) -> np.ndarray:
    """Where ``body`` holds the bytes ``wanted`` picks, found a slice at a time: a bool mask
    of a whole 10^6-row file would be hundreds of megabytes."""
    found = []
    for start in range(0, len(body), _SCAN_BYTES):
        raw = np.frombuffer(body, dtype=np.uint8, count=min(_SCAN_BYTES, len(body) - start),
                            offset=start)
        found.append(np.flatnonzero(wanted(raw)) + start)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def _is_opener(raw: np.ndarray) -> np.ndarray:
    # Setting bit 0x20 maps "[" (0x5B) onto "{" (0x7B) and no other byte there: one compare
    # finds both brackets, instead of two compares and an or.
    return (raw | 0x20) == ord("{")


def _is_line_end(raw: np.ndarray) -> np.ndarray:
    return raw == ord("\n")


def _most_per_line(openers: np.ndarray, ends: np.ndarray) -> int:
    """The most of the (sorted) ``openers`` positions between two of the (sorted) line
    ``ends``: each line's count is the difference of the openers before its two ends, which
    takes one search per line instead of one per bracket and no count per line."""
    before = np.searchsorted(openers, ends)
    return int(np.diff(before, prepend=0, append=openers.size).max())


def _timestamp_columns(schema, pa) -> list[str]:
    return [field.name for field in schema if pa.types.is_timestamp(field.type)
            or pa.types.is_date(field.type) or pa.types.is_time(field.type)]


def _values(column, pa):
    """The column as pandas infers it from the parsed Python values, built without one Python
    object per cell where the type allows; None when that cannot be guaranteed."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if column.null_count == len(column):
            return None
        return pd.array(column, dtype="str") if column.null_count == 0 else column.to_pylist()
    if pa.types.is_floating(kind):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)
    if pa.types.is_integer(kind):
        return column.to_pylist() if column.null_count else column.to_numpy().astype(np.int64)
    if pa.types.is_boolean(kind):
        return column.to_numpy(zero_copy_only=False).astype(bool) if column.null_count == 0 else None
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        inner = kind.value_type
        if column.null_count or not (pa.types.is_string(inner) or pa.types.is_integer(inner)
                                     or pa.types.is_floating(inner)):
            return None
        lists = text_lists(column)
        return column.to_pylist() if lists is None else lists
    return None


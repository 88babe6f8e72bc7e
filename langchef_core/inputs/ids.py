"""Ids and rows shared by every table reader: ids as strings (whole numbers in decimal;
missing, empty, boolean or fractional ids refused) and rows counted as a person counts
them in the file."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .errors import InputError


def canonical_ids(frame: pd.DataFrame, column: str, file: str) -> np.ndarray:
    """Ids as an object array of strings; whole numbers written in decimal; missing, empty,
    boolean or fractional ids refused."""
    series = frame[column]
    refuse_missing(series, frame, column, file, "id")
    kind = series.dtype.kind
    if kind == "b":
        raise InputError("ids must be strings or whole numbers, got a boolean", file=file,
                         column=column, row=row_of(frame, 0))
    if kind == "f":
        values = series.to_numpy(float)
        fractional = values != np.floor(values)
        if fractional.any():
            position = int(np.flatnonzero(fractional)[0])
            raise InputError(f"id {values[position]!r} is not a string or a whole number", file=file,
                             column=column, row=row_of(frame, position), hint="write ids as strings")
        series = series.astype(np.int64)
    if series.dtype.kind in "iu":
        return series.astype(str).to_numpy(dtype=object)
    # pandas' string dtype reports kind "O" too: only a plain object column with something
    # other than strings in it needs a look at each value.
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=False) != "string":
        return np.array([_one_id(value, frame, column, file, position)
                         for position, value in enumerate(series.tolist())], dtype=object)
    ids = series.astype(str)
    empty = (ids.str.len() == 0).to_numpy()
    if empty.any():
        raise InputError("empty id", file=file, column=column,
                         row=row_of(frame, int(np.flatnonzero(empty)[0])), hint="give every row an id")
    return ids.to_numpy(dtype=object)


def data_rows(frame: pd.DataFrame) -> pd.Index:
    """The 1-based data rows of a frame (its index when read by ``read_table``)."""
    if frame.index.name == "row":
        return pd.Index(frame.index.to_numpy(np.int64), name="row")
    return pd.RangeIndex(1, len(frame) + 1, name="row")


def row_of(frame: pd.DataFrame, position: int) -> int:
    """The 1-based data row of a frame's position, as a person would count it in the file."""
    if frame.index.name == "row":
        return int(frame.index[position])
    return int(position) + 1


def refuse_missing(series, frame, column, file, what, hint=None) -> None:
    missing = series.isna().to_numpy()
    if missing.any():
        raise InputError(f"missing {what} (empty or NaN)", file=file, column=column,
                         row=row_of(frame, int(np.flatnonzero(missing)[0])),
                         hint=hint or f"give every row a {what}")


def is_valid_id(value) -> bool:
    if isinstance(value, str):
        return value != ""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, float) and np.isfinite(value) and value == int(value)


def id_text(value) -> str:
    return value if isinstance(value, str) else str(int(value))


def _one_id(value, frame, column, file, position) -> str:
    if not is_valid_id(value):
        raise InputError(f"id {describe_value(value)} is not a non-empty string or a whole number",
                         file=file, column=column, row=row_of(frame, position),
                         hint="write ids as non-empty strings")
    return id_text(value)


def describe_value(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "missing (null or NaN)"
    return repr(value)


def isin(left, values) -> np.ndarray:
    """``left.isin(values)`` as a bool array (``left`` an Index, Series or array).

    For pandas' Arrow-backed ``str`` dtype, pandas builds one pyarrow scalar per value of
    ``values`` (seconds at 10^5–10^6 ids, issue 19); when every value is a string or missing,
    the same membership is asked of pyarrow in one call. Anything else goes to pandas itself.
    """
    frame_like = left if isinstance(left, (pd.Index, pd.Series)) else pd.Index(left)
    if isinstance(frame_like.dtype, pd.StringDtype) and frame_like.dtype.storage == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc
        candidates = values if isinstance(values, (np.ndarray, pd.Index, pd.Series)) else list(values)
        candidates = pd.Series(np.asarray(candidates, dtype=object), dtype=object)
        if pd.api.types.infer_dtype(candidates, skipna=True) in ("string", "empty"):
            if candidates.size == 0:
                return np.zeros(len(frame_like), dtype=bool)
            found = pc.is_in(pa.array(frame_like.array), value_set=pa.array(candidates, type=pa.large_string(),
                                                                            from_pandas=True).cast(pa.string()))
            return np.array(found, dtype=np.bool_)
    return np.asarray(frame_like.isin(values), dtype=bool)


def positions_in(values: pd.Series, index: pd.Index) -> np.ndarray:
    """``index.get_indexer(values)`` (-1 where absent) for a text index without repeats;
    Arrow-backed text is looked up by pyarrow in one call."""
    if (isinstance(values.dtype, pd.StringDtype) and values.dtype.storage == "pyarrow"
            and pd.api.types.infer_dtype(index, skipna=False) == "string"):
        import pyarrow as pa
        import pyarrow.compute as pc
        found = pc.index_in(pa.array(values.array).cast(pa.string()),
                            value_set=pa.array(index.to_numpy(dtype=object), type=pa.string()))
        return found.fill_null(-1).to_numpy().astype(np.intp)
    return index.get_indexer(values)


def text_codes(column) -> np.ndarray:
    """One integer code per distinct text of ``column`` (Series or array of text), in order
    of first appearance; pyarrow hashes each value once (pandas' factorize of Arrow-backed
    text costs seconds at 10^7 ids, issue 19)."""
    import pyarrow.compute as pc
    return pc.dictionary_encode(_large_text(column)).indices.to_numpy().astype(np.int64)


def codes_among(keys, values) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``keys`` (as ``text_codes``) and of ``values`` in the same code space, where
    every value that is not a key shares one extra code, len(distinct keys): what a join on
    the keys needs, with one hash table of the (few) keys instead of all the values."""
    import pyarrow.compute as pc
    encoded = pc.dictionary_encode(_large_text(keys))
    found = pc.index_in(_large_text(values), value_set=encoded.dictionary)
    absent = len(encoded.dictionary)
    return (encoded.indices.to_numpy().astype(np.int64),
            found.fill_null(absent).to_numpy().astype(np.int64))


def repeated_rows(*columns) -> np.ndarray:
    """``DataFrame.duplicated`` over key columns of text: True on every row whose key
    appeared on an earlier row."""
    size = len(columns[0])
    key = np.zeros(size, dtype=np.int64)
    for column in columns:  # kept dense after each column, so the product never overflows
        codes = text_codes(column)
        key = np.unique(key * (int(codes.max(initial=0)) + 1) + codes, return_inverse=True)[1]
    first = np.unique(key, return_index=True)[1]
    repeated = np.ones(size, dtype=bool)
    repeated[first] = False
    return repeated


def _large_text(column):
    import pyarrow as pa
    values = column.array if isinstance(column, (pd.Series, pd.Index)) else column
    if isinstance(getattr(values, "dtype", None), pd.StringDtype) and values.dtype.storage == "pyarrow":
        array = pa.array(values)
        array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
        return array.cast(pa.large_string())
    return pa.array(np.asarray(values, dtype=object), type=pa.large_string())

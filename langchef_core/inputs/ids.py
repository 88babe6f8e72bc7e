"""Ids and rows shared by every table reader: ids as strings (whole numbers in decimal;
missing, empty, boolean or fractional ids refused) and rows counted as a person counts
them in the file."""

from __future__ import annotations

import numbers
from itertools import pairwise

import numpy as np
import pandas as pd

from .errors import InputError
from .threads import on_threads


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
    if isinstance(values, pd.api.extensions.ExtensionArray):  # e.g. a Series' unique()
        values = pd.Index(values)
    if isinstance(frame_like.dtype, pd.StringDtype) and frame_like.dtype.storage == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc
        if _arrow_text(values):  # both sides Arrow text: no Python string per candidate
            if len(values) == 0:
                return np.zeros(len(frame_like), dtype=bool)
            known = pd.Index(values)  # distinct, no gaps: pandas' engine, 1/4 of is_in's time
            if not known.hasnans and not frame_like.hasnans and known.is_unique:
                return known.get_indexer(frame_like) >= 0
            found = pc.is_in(pa.array(frame_like.array),
                             value_set=pa.array(values.array).cast(pa.string()))
            return np.array(found, dtype=np.bool_)
        candidates = values if isinstance(values, (np.ndarray, pd.Index, pd.Series)) else list(values)
        candidates = pd.Series(np.asarray(candidates, dtype=object), dtype=object)
        if pd.api.types.infer_dtype(candidates, skipna=True) in ("string", "empty"):
            if candidates.size == 0:
                return np.zeros(len(frame_like), dtype=bool)
            found = pc.is_in(pa.array(frame_like.array), value_set=pa.array(candidates, type=pa.large_string(),
                                                                            from_pandas=True).cast(pa.string()))
            return np.array(found, dtype=np.bool_)
    return np.asarray(frame_like.isin(values), dtype=bool)


def _arrow_text(values) -> bool:
    """Whether ``values`` is an Index or Series of pandas' Arrow-backed text."""
    return isinstance(values, (pd.Index, pd.Series)) and isinstance(values.dtype, pd.StringDtype) \
        and values.dtype.storage == "pyarrow"


def positions_in(values: pd.Series, index: pd.Index) -> np.ndarray:
    """``index.get_indexer(values)`` (-1 where absent) for a text index without repeats;
    Arrow-backed text is looked up by pyarrow in one call."""
    if (isinstance(values.dtype, pd.StringDtype) and values.dtype.storage == "pyarrow"
            and pd.api.types.infer_dtype(index, skipna=False) == "string"):
        import pyarrow as pa
        import pyarrow.compute as pc
        # An Arrow-backed index gives its strings as they are, not as 10^6 Python strings.
        value_set = _combined(pa.array(index.array)).cast(pa.string()) if _arrow_text(index) else \
            pa.array(index.to_numpy(dtype=object), type=pa.string())
        found = pc.index_in(pa.array(values.array).cast(pa.string()), value_set=value_set)
        return found.fill_null(-1).to_numpy().astype(np.intp)
    return index.get_indexer(values)


def text_codes(column) -> np.ndarray:
    """One integer code per distinct text of ``column`` (Series or array of text), in order
    of first appearance; pyarrow hashes each value once (pandas' factorize of Arrow-backed
    text costs seconds at 10^7 ids, issue 19)."""
    import pyarrow.compute as pc
    return dictionary_indices(pc.dictionary_encode(large_text(column)))


def shared_text_codes(columns) -> tuple[list[np.ndarray], object]:
    """``text_codes`` of several text columns against one dictionary: each column's int64
    codes, and the dictionary (pyarrow ``large_string``; code c is its text c)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    texts = [large_text(column) for column in columns]
    chunks = [chunk for text in texts for chunk in (text.chunks if isinstance(text, pa.ChunkedArray) else [text])]
    encoded = pc.dictionary_encode(pa.chunked_array(chunks, type=pa.large_string()))
    codes = dictionary_indices(encoded)
    bounds = np.cumsum([0] + [len(text) for text in texts])
    dictionary = encoded.chunks[0].dictionary if encoded.num_chunks else pa.array([], pa.large_string())
    return [codes[start:stop] for start, stop in pairwise(bounds)], dictionary


def dictionary_indices(encoded) -> np.ndarray:
    """The int64 codes of a dictionary-encoded (chunked) array; pyarrow encodes the chunks
    of one array against one shared dictionary, so the chunks' codes are comparable."""
    import pyarrow as pa
    if not isinstance(encoded, pa.ChunkedArray):
        return encoded.indices.to_numpy().astype(np.int64)
    parts = [chunk.indices.to_numpy().astype(np.int64) for chunk in encoded.chunks]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def codes_among(keys, values) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``keys`` and of ``values`` in one code space: each text's code is the
    position of its first occurrence among the keys, and every value that is not a key
    shares one extra code, len(keys). What a join on the keys needs, from one hash table of
    the (few) keys: pyarrow's ``index_in`` keeps a repeated key's first position, and the
    keys are looked up with the values in the same call (issue 19)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    keys, values = _one_text_type(keys, values)
    if pa.types.is_dictionary(values.type):  # the hash join takes text
        values = values.cast(keys.type)
    both = pa.chunked_array([keys] + (values.chunks if isinstance(values, pa.ChunkedArray) else [values]),
                            type=values.type)
    found = pc.index_in(both, value_set=keys).fill_null(len(keys))
    codes = found.to_numpy().astype(np.int64)
    return codes[:len(keys)], codes[len(keys):]


def codes_among_in_blocks(keys, key_block: np.ndarray, values, value_bounds) -> tuple[np.ndarray, np.ndarray]:
    """``codes_among`` a block at a time (the blocks on ``on_threads``): key i is in block
    ``key_block[i]``, the values of block b are ``values[value_bounds[b]:value_bounds[b + 1]]``;
    codes compare within a block only, all a join needs whose blocks split its other key.

    Each block is joined on 64-bit fingerprints of the texts (``text_fingerprints``) by
    sorting and binary search, every match confirmed on the two texts, so the codes are
    exactly ``codes_among``'s: pyarrow's hash tables of text cost about 150 ns a value even
    in cache (4 s for the 10^7 top-10 ids of 10^6 queries, issue 31). A block whose keys hold
    two different texts with one fingerprint is coded by ``codes_among`` itself. Dictionary
    codes are joined through their dictionaries (``_codes_through_dictionaries``)."""
    import pyarrow as pa
    keys, values = _one_text_type(keys, values)
    key_codes = np.empty(len(keys), np.int64)
    value_codes = np.empty(len(values), np.int64)
    key_block = np.asarray(key_block, dtype=np.int64)
    key_prints = text_fingerprints(keys) if keys.null_count == 0 else None  # missing ids: hashed
    coded = pa.types.is_dictionary(values.type)
    few = len(value_bounds) <= 1 << 15  # block numbers fit 16 bits: a linear radix sort
    order = np.argsort(key_block.astype(np.int16) if few else key_block, kind="stable")
    splits = np.searchsorted(key_block[order], np.arange(len(value_bounds) - 1), side="right")

    def code(block_rows) -> None:  # each block writes its own rows and values only
        block, rows = block_rows
        start, stop = int(value_bounds[block]), int(value_bounds[block + 1])
        block_values, coder = values.slice(start, stop - start), _block_coder(keys, rows, key_prints)
        key_codes[rows], value_codes[start:stop] = (
            _codes_through_dictionaries(coder, block_values) if coded else coder(block_values))
    on_threads(code, enumerate(np.split(order, splits)[:-1]))  # the last piece is empty
    return key_codes, value_codes


def _block_coder(keys, rows, key_prints):
    """A function giving ``codes_among(keys.take(rows), values)``, by fingerprints where no id
    is missing, its keys' side built once: a block joins the dictionary of each chunk it
    spans (about three at 10^5 lists)."""
    import pyarrow as pa
    lookup = _fingerprint_lookup(keys, rows, key_prints[rows]) if key_prints is not None else None

    def codes(values) -> tuple[np.ndarray, np.ndarray]:
        if lookup is not None and values.null_count == 0:
            return lookup[0], lookup[1](values)
        taken = keys.take(pa.array(rows)) if rows.size != len(keys) else keys
        return codes_among(taken, values)
    return codes


def _codes_through_dictionaries(code, values) -> tuple[np.ndarray, np.ndarray]:
    """``code(values)`` (``_block_coder``) for dictionary codes: each chunk's dictionary is
    coded and every value takes its entry's code, so an id many lists share is confirmed once
    (issue 31). A chunk with more entries than values, or a missing code, is decoded."""
    import pyarrow as pa
    text_type, key_codes, parts = values.type.value_type, None, []
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        if len(chunk.dictionary) <= len(chunk) and chunk.null_count == 0:
            key_codes, entry_codes = code(chunk.dictionary)
            parts.append(entry_codes[chunk.indices.to_numpy()])
        else:
            key_codes, chunk_codes = code(chunk.cast(text_type))
            parts.append(chunk_codes)
    if key_codes is None:  # no values: the keys' codes alone
        key_codes = code(pa.array([], text_type))[0]
    return key_codes, np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _fingerprint_lookup(keys, rows, key_prints):
    """The codes of ``keys.take(rows)`` (``key_prints`` their fingerprints) and a function
    giving any text values' codes among them, as ``codes_among`` has both, each match
    confirmed on the texts; None when two different keys share a fingerprint (then only a
    hash table is exact)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    n = rows.size
    if n == 0:
        return np.zeros(0, np.int64), lambda values: np.zeros(len(values), np.int64)
    order = np.argsort(key_prints, kind="stable")
    ordered = key_prints[order]
    same = ordered[1:] == ordered[:-1]
    if same.any():  # repeated keys (or a collision): equal fingerprints must mean equal texts
        left, right = rows[order[:-1][same]], rows[order[1:][same]]
        if not pc.all(pc.equal(keys.take(pa.array(left)), keys.take(pa.array(right)))).as_py():
            return None
    # A key's code is the position of the first key with its text: with a stable sort, the
    # first of each run of equal fingerprints.
    starts = np.flatnonzero(np.r_[True, ~same])
    first = order[starts]
    key_codes = np.empty(n, np.int64)
    key_codes[order] = np.repeat(first, np.diff(np.r_[starts, n]))
    # Most values are no key: a bit table of the keys' low fingerprint bits (in cache, an
    # eighth of it set) rules them out before the binary search, ten times dearer per value.
    size = 1 << max(10, min(22, int(8 * n).bit_length()))
    bits = np.uint64(size - 1)
    present = np.zeros(size, bool)
    present[key_prints & bits] = True

    def value_codes(values) -> np.ndarray:
        value_prints = text_fingerprints(values)
        maybe = np.flatnonzero(present[value_prints & bits])
        at = np.searchsorted(ordered, value_prints[maybe])
        np.minimum(at, n - 1, out=at)
        found = ordered[at] == value_prints[maybe]
        candidates = maybe[found]
        codes = np.full(value_prints.size, n, np.int64)
        if candidates.size:
            # The first key of a run of equal fingerprints, whose one text the value must have.
            matched = order[at[found]]
            # In one chunk first: a take from a chunked column concatenates all its chunks.
            equal = pc.equal(_combined(values).take(pa.array(candidates)), keys.take(pa.array(rows[matched])))
            confirmed = np.asarray(equal.to_numpy(zero_copy_only=False), dtype=bool)
            codes[candidates[confirmed]] = key_codes[matched[confirmed]]
        return codes
    return key_codes, value_codes


# Odd 64-bit constants (from splitmix64) that spread the bits of a text's words.
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def text_fingerprints(text) -> np.ndarray:
    """A 64-bit fingerprint (uint64) of each text of an Arrow text array, chunked or not,
    computed eight bytes at a time from the array's buffers (no hash table, no Python
    string). Equal texts have equal fingerprints; different texts almost never do, so a
    caller confirms a match by comparing the texts. Missing values are fingerprinted as
    empty texts."""
    import pyarrow as pa
    if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)
            or pa.types.is_binary(text.type) or pa.types.is_large_binary(text.type)):
        raise TypeError(f"text_fingerprints reads string or binary Arrow arrays; cast a {text.type} array first")
    chunks = text.chunks if isinstance(text, pa.ChunkedArray) else [text]
    prints = np.empty(len(text), np.uint64)
    done = 0
    for chunk in chunks:
        # A slice at a time: temporaries of a few megabytes are reused from the heap, where
        # those of 10^7 texts would be fresh pages, each faulted in.
        for first in range(0, len(chunk), FINGERPRINTS_PER_SLICE):
            part = chunk.slice(first, FINGERPRINTS_PER_SLICE)
            prints[done:done + len(part)] = _slice_fingerprints(part)
            done += len(part)
    return prints


FINGERPRINTS_PER_SLICE = 1 << 16


def _slice_fingerprints(chunk) -> np.ndarray:
    import pyarrow as pa
    kind = np.int64 if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type) \
        else np.int32
    offsets = np.frombuffer(chunk.buffers()[1], dtype=kind, count=len(chunk) + 1,
                            offset=chunk.offset * np.dtype(kind).itemsize).astype(np.int64)
    lengths = np.diff(offsets)
    if chunk.null_count:
        lengths[~np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)] = 0
    starts = offsets[:-1] - offsets[0]
    data = chunk.buffers()[2]
    padded = np.zeros(int(offsets[-1] - offsets[0]) + 8, np.uint8)  # every 8-byte read stays inside
    if data is not None and offsets[-1] > offsets[0]:
        padded[:-8] = np.frombuffer(data, np.uint8, count=padded.size - 8, offset=int(offsets[0]))
    # Unaligned little-endian words starting at every byte: words[i] is bytes i..i+7.
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    prints = lengths.astype(np.uint64) * _MIX[0]
    longest = int(lengths.max(initial=0))
    for at in range(0, longest, 8):
        alive = slice(None) if at == 0 else np.flatnonzero(lengths > at)
        left = lengths[alive] - at
        word = words[np.minimum(starts[alive] + at, padded.size - 8)]
        # Bytes past the text's end belong to the next text: masked off.
        short = left < 8
        if short.any():
            word[short] &= (np.uint64(1) << (left[short].astype(np.uint64) * np.uint64(8))) - np.uint64(1)
        mixed = (prints[alive] ^ word) * _MIX[1]
        prints[alive] = mixed ^ (mixed >> np.uint64(31))
    prints ^= prints >> np.uint64(30)
    prints *= _MIX[2]
    prints ^= prints >> np.uint64(31)
    return prints


def _one_text_type(keys, values):
    """Keys (in one chunk) and values as Arrow text of one type: Arrow text values as they
    are (a cast of 10^7 ids would copy them; dictionary-coded text stays codes), the few
    keys cast to their type."""
    import pyarrow as pa
    text_type = values.type if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.null()
    text_type = text_type.value_type if pa.types.is_dictionary(text_type) else text_type
    if not (pa.types.is_string(text_type) or pa.types.is_large_string(text_type)):
        values, text_type = large_text(values), pa.large_string()
    return _combined(large_text(keys)).cast(text_type), values


def repeated_rows(*columns) -> np.ndarray:
    """``DataFrame.duplicated`` over key columns of text: True on every row whose key
    appeared on an earlier row.

    Rows are keyed a block of first-column values at a time (a repeated key repeats its
    first value, so it never crosses blocks; each block keeps its rows in order): hash tables
    of 10^6 keys fall out of cache and cost three times as much per row (issue 19).

    Most tables have no repeated key, and that is proved first without a hash table: when
    no two rows share a fingerprint of their key (``text_fingerprints``, sorted), no two
    share the key (about 2 s → 0.7 s for the 5.5·10^6 (query, doc) pairs of a 10^6-query qrels
    file, issue 31). Only otherwise are the rows keyed as above.
    """
    texts = [large_text(column) for column in columns]
    if _no_repeated_fingerprint(texts):
        return np.zeros(len(texts[0]), dtype=bool)
    lead = text_codes(columns[0])
    rest = [_combined(text) for text in texts[1:]]
    repeated = np.zeros(lead.size, dtype=bool)
    for rows in _blocks_of(lead):
        key = lead[rows]
        for text in rest:
            codes = text_codes(text.take(rows)) if rows.size != lead.size else text_codes(text)
            bound = int(codes.max(initial=0)) + 1
            if int(key.max(initial=0)) >= np.iinfo(np.int64).max // bound - 1:
                key = _first_seen_codes(key)  # kept dense, so the product never overflows
            key = key * bound + codes
        repeated[rows] = repeats_of(key) if rest else _repeats_of_first_seen(key)
    return repeated


def _no_repeated_fingerprint(texts) -> bool:
    """Whether the rows' keys (one text per column) have pairwise different fingerprints,
    which proves the keys pairwise different (equal keys always fingerprint alike)."""
    prints = text_fingerprints(texts[0])
    for text in texts[1:]:
        prints *= _MIX[1]
        prints ^= text_fingerprints(text)
    prints.sort()
    return not (prints[1:] == prints[:-1]).any()


def repeats_of(key: np.ndarray) -> np.ndarray:
    """True where an integer key equals an earlier one (one hash pass, no sort)."""
    return _repeats_of_first_seen(_first_seen_codes(key))


def _repeats_of_first_seen(codes: np.ndarray) -> np.ndarray:
    # Codes that count distinct keys in order of first appearance: a key's first row is one
    # whose code is above every earlier row's.
    repeated = np.zeros(codes.size, dtype=bool)
    repeated[1:] = codes[1:] <= np.maximum.accumulate(codes)[:-1]
    return repeated


KEYS_PER_BLOCK = 1 << 15


def _blocks_of(codes: np.ndarray):
    """The row positions of each block of KEYS_PER_BLOCK consecutive codes, each in row order."""
    block = codes // KEYS_PER_BLOCK
    if block.size == 0 or block.max() == 0:
        yield np.arange(codes.size)
        return
    # Stable and radix-sorted: at most 2^15 blocks fit 16 bits, so this is one linear pass.
    order = np.argsort(block.astype(np.int16 if block.max() < 1 << 15 else np.int64), kind="stable")
    yield from np.split(order, np.flatnonzero(np.diff(block[order])) + 1)


def _combined(array):
    import pyarrow as pa
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _first_seen_codes(key: np.ndarray) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc
    return pc.dictionary_encode(pa.array(key)).indices.to_numpy().astype(np.int64)


def text_ids(frame: pd.DataFrame, column: str, file: str):
    """``canonical_ids`` as a column: Arrow-backed text (JSON lines, parquet) stays the
    pandas "str" array it is, without a Python string per id (issue 19); anything else is
    the object array ``canonical_ids`` gives."""
    series = frame[column]
    if isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow":
        refuse_missing(series, frame, column, file, "id")
        import pyarrow.compute as pc
        empty = pc.equal(pc.utf8_length(large_text(series)), 0).to_numpy(zero_copy_only=False)
        if empty.any():
            raise InputError("empty id", file=file, column=column,
                             row=row_of(frame, int(np.flatnonzero(empty)[0])), hint="give every row an id")
        return series.array
    return canonical_ids(frame, column, file)


def large_text(column):
    """Text ids as pyarrow ``large_string`` (pyarrow input keeps its chunks; a pandas column
    is one array): Arrow text without a Python string per id, else value by value."""
    import pyarrow as pa
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        return column.cast(pa.large_string())
    values = column.array if isinstance(column, (pd.Series, pd.Index)) else column
    if isinstance(getattr(values, "dtype", None), pd.StringDtype) and values.dtype.storage == "pyarrow":
        array = pa.array(values)
        array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
        return array.cast(pa.large_string())
    return pa.array(np.asarray(values, dtype=object), type=pa.large_string())

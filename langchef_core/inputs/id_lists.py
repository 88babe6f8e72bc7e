"""Ranked lists of doc ids kept as Arrow list columns, never as one Python string per entry.

A retrieval run of 10^6 queries × 100 documents holds 10^8 ids. As Python lists of Python
strings that is about 60 bytes and a constructor call per id; as an Arrow ``list<string>``
column it is the id's bytes plus an offset (issue 19). pyarrow reads parquet and JSON lines
straight into that form, so ``tables.read_table`` keeps a list column there when every list
and every id in it is present text (anything else — numbers, missing values — is left to
the per-value rules, which name the row). Validation keeps such a column as it is, and
``RankedRun`` flattens it without leaving Arrow. Everything that reads cells (``tolist``,
``iloc``) still sees Python lists of text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def text_lists(array) -> pd.api.extensions.ExtensionArray | None:
    """A pyarrow (chunked) list array as a pandas Arrow column, when every list and every
    item is present text; None otherwise. Chunks are kept: combining those of a 10^8-id
    column would copy a gigabyte."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if not (_is_text_list_type(array.type) or _is_coded_text_list_type(array.type)) or \
            array.null_count or pc.list_flatten(array).null_count:
        return None
    return pd.arrays.ArrowExtensionArray(array if isinstance(array, pa.ChunkedArray)
                                         else pa.chunked_array([array]))


def first_items(lists, n: int, text_type=None):
    """A pyarrow list array cut to each list's first ``n`` items, its ids copied (the uncut
    buffers can then be freed), when every list and item is present, non-empty text: what
    validation takes as it is. Otherwise the lists unchanged, so that validation finds the
    bad entry where the file has it and names it.

    Lists of dictionary-coded text (a parquet column read with ``read_dictionary``) are cut
    on their codes and stay codes: scoring looks each dictionary entry up once
    (``ids.codes_among_in_blocks``), not each id. When they are not all present, non-empty
    text they are decoded whole, as ``text_type`` (the column's list of text type)."""
    import pyarrow.compute as pc
    if _is_coded_text_list_type(lists.type):
        return pc.list_slice(lists, 0, n) if every_coded_id_present(lists) else lists.cast(text_type)
    if not _is_text_list_type(lists.type) or not every_id_present(lists):
        return lists
    return pc.list_slice(lists, 0, n)


def every_coded_id_present(lists) -> bool:
    """``every_id_present`` for lists of dictionary-coded text, read from the codes and the
    dictionary (an empty or missing entry of the dictionary counts, used or not)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if lists.null_count:
        return False
    flat = pc.list_flatten(lists)
    return not (flat.null_count or any(
        chunk.dictionary.null_count or has_empty_text(chunk.dictionary)
        for chunk in (flat.chunks if isinstance(flat, pa.ChunkedArray) else [flat])))


def every_id_present(lists) -> bool:
    """Whether a pyarrow list array of text (plain or dictionary-coded) has no missing list,
    no missing id and no empty id: what a ranked run's validation takes as it stands."""
    import pyarrow.compute as pc
    if _is_coded_text_list_type(lists.type):
        return every_coded_id_present(lists)
    if lists.null_count:
        return False
    flat = pc.list_flatten(lists)
    return not (flat.null_count or has_empty_text(flat))


def has_empty_text(text) -> bool:
    """Whether an Arrow text array (chunked or not) holds an empty string, read from its
    offsets (an empty string is two equal offsets): no comparison of 10^8 strings (issue 31)."""
    import pyarrow as pa
    for chunk in (text.chunks if isinstance(text, pa.ChunkedArray) else [text]):
        if len(chunk) == 0:
            continue
        kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=kind, count=len(chunk) + 1,
                                offset=chunk.offset * np.dtype(kind).itemsize)
        if np.any(offsets[1:] == offsets[:-1]):
            return True
    return False


def is_text_lists(dtype) -> bool:
    """Whether a pandas dtype is an Arrow list of text, plain or dictionary-coded (the forms
    ``text_lists`` builds)."""
    return isinstance(dtype, pd.ArrowDtype) and (_is_text_list_type(dtype.pyarrow_dtype) or
                                                 _is_coded_text_list_type(dtype.pyarrow_dtype))


def arrow_of(series: pd.Series):
    """The pyarrow chunked list array behind a ``text_lists`` column (no copy)."""
    import pyarrow as pa
    array = pa.array(series.array)  # an Arrow-backed column gives its chunked array
    return array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])


def _is_text_list_type(kind) -> bool:
    import pyarrow as pa
    return (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and \
        (pa.types.is_string(kind.value_type) or pa.types.is_large_string(kind.value_type))


def _is_coded_text_list_type(kind) -> bool:
    import pyarrow as pa
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or \
            not pa.types.is_dictionary(kind.value_type):
        return False
    values = kind.value_type.value_type
    return pa.types.is_string(values) or pa.types.is_large_string(values)


LISTS_PER_BLOCK = 1 << 15


def lists_without_repeats(lists) -> np.ndarray:
    """For each list, whether no id appears in it twice. Ids are hashed a block of lists at
    a time: a list's ids never leave its block, and one hash table of the 10^7 distinct ids
    of a 10^6 × 100 run falls out of cache (issue 19)."""
    import pyarrow.compute as pc

    from .ids import repeats_of, text_codes
    lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = pc.list_flatten(lists)
    starts = np.r_[0, np.cumsum(lengths)]
    clean = np.ones(lengths.size, dtype=bool)
    for first in range(0, lengths.size, LISTS_PER_BLOCK):
        last = min(lengths.size, first + LISTS_PER_BLOCK)
        codes = text_codes(flat.slice(int(starts[first]), int(starts[last] - starts[first])))
        parent = np.repeat(np.arange(last - first, dtype=np.int64), lengths[first:last])
        repeated = repeats_of(parent * (int(codes.max(initial=0)) + 1) + codes)
        clean[first + np.unique(parent[repeated])] = False
    return clean

"""Ids in order: the distinct texts of a column sorted as Python sorts str, and each text's
place in that order.

UTF-8 byte order is code point order, which is how Python compares str, so texts are sorted
by their bytes without a Python string per id (sorting 10^6 Python strings costs about a
second, issue 19). pyarrow's ``sort_indices`` compares the bytes of two texts at a time
(about 0.35 s for 10^6 ids); ``byte_order`` sorts ids of up to 16 bytes as integers instead:
each text's bytes, zero padded to whole 8-byte words read big-endian, with the length last,
so that a text sorts before the longer ones it begins (issue 31).
"""

from __future__ import annotations

import numpy as np

from .ids import large_text

# Ids up to this long are sorted as words; longer ones (36-byte UUIDs, URLs) by pyarrow, whose
# pairwise compare stops at the first differing byte (10^6 UUIDs: 0.47 s, against 0.65 s as
# five words; ids of 8 and 10 bytes: 0.11 and 0.25 s as words, against 0.30 and 0.33 s).
MAX_WORD_BYTES = 16


def sorted_distinct(column, *, distinct: bool = False) -> np.ndarray:
    """``np.sort`` of the distinct texts of ``column``, as an object array of str.
    ``distinct=True`` says the texts are already known distinct (their repeats were
    refused), which spares hashing them again (about 0.2 s at 10^6, issue 31)."""
    import pyarrow.compute as pc
    texts = large_text(column)
    return sorted_with_ranks(texts if distinct else pc.unique(texts))[0]


def coded_texts(column) -> tuple[np.ndarray, np.ndarray]:
    """``sorted_distinct(column)`` and each value's position in it (int64), from one pass
    that finds the distinct texts and codes the column against them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .ids import dictionary_indices
    encoded = pc.dictionary_encode(large_text(column))
    if isinstance(encoded, pa.ChunkedArray):  # its chunks share one dictionary
        encoded = encoded.chunks[0] if encoded.num_chunks == 1 else encoded.unify_dictionaries()
    chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    dictionary = chunks[0].dictionary if chunks else pa.array([], pa.large_string())
    texts, ranks = sorted_with_ranks(dictionary)
    return texts, ranks[dictionary_indices(encoded)]


def sorted_with_ranks(column) -> tuple[np.ndarray, np.ndarray]:
    """The texts of ``column`` (known distinct) sorted as ``sorted_distinct`` sorts them, and
    each text's position in that order: the codes of the column against the sorted texts,
    without looking them up again (0.5 s at 10^6 ids, issue 31)."""
    import pyarrow as pa
    texts = _in_one_piece(column)  # byte_order's own conversion is then a no-op
    order = byte_order(texts)
    ranks = np.empty(len(texts), np.int64)
    ranks[order] = np.arange(len(texts), dtype=np.int64)
    return np.asarray(texts.take(pa.array(order)).to_numpy(zero_copy_only=False), dtype=object), ranks


def byte_order(texts) -> np.ndarray:
    """The positions that sort a pyarrow text array by its UTF-8 bytes, stably: what
    ``pyarrow.compute.sort_indices`` gives for text without missing values."""
    import pyarrow.compute as pc
    texts = _in_one_piece(texts)
    n = len(texts)
    offsets = np.frombuffer(texts.buffers()[1], np.int64, n + 1, texts.offset * 8) if n else \
        np.zeros(1, np.int64)
    starts, lengths = offsets[:-1], np.diff(offsets)
    width = int(lengths.max(initial=0))
    if texts.null_count or width > MAX_WORD_BYTES:
        return pc.sort_indices(texts).to_numpy()
    data = texts.buffers()[2]
    data = np.frombuffer(data, np.uint8) if data is not None and data.size else np.zeros(1, np.uint8)
    keys = [_word(data, starts, lengths, first) for first in range(0, max(width, 1), 8)]
    if int(lengths.min(initial=0)) != width:
        keys.append(lengths)  # equal padded bytes: the shorter text first
    if len(keys) == 1:
        return np.argsort(keys[0], kind="stable")
    return np.lexsort(keys[::-1])  # lexsort's last key is its first


def _in_one_piece(column):
    """``large_text`` of the column as one array: its offsets and bytes are read directly."""
    import pyarrow as pa
    texts = large_text(column)
    return texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts


def _word(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, first: int) -> np.ndarray:
    """Bytes first … first + 7 of each text as one big-endian integer, 0 past its end."""
    word = np.zeros(starts.size, np.uint64)
    for at in range(first, first + 8):
        inside = lengths > at
        if not inside.any():
            break
        byte = data[np.where(inside, starts + at, 0)].astype(np.uint64)
        byte[~inside] = 0
        word |= byte << np.uint64(8 * (first + 7 - at))
    return word


def sorted_union(*columns) -> np.ndarray:
    """``sorted_distinct`` of the texts of several columns together. When they are one and
    the same sorted, distinct array — every arm answered exactly the judged queries, the
    usual case — that array (copied) without sorting 2·10^6 texts again (0.4 s at 10^6
    queries, issue 31)."""
    arrays = [np.asarray(column, dtype=object) for column in columns]
    first = arrays[0]
    try:
        same = first.size > 0 and all(a.shape == first.shape for a in arrays[1:]) \
            and bool(np.all(first[1:] > first[:-1])) \
            and all(np.array_equal(first, a) for a in arrays[1:])
    except TypeError:  # not all text: left to sorted_distinct
        same = False
    return first.copy() if same else sorted_distinct(np.concatenate(arrays))

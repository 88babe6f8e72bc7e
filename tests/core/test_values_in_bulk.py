"""Columns read in bulk must come out exactly as the value-by-value rules read them.

The bulk paths in ``inputs/schemas/values.py`` exist for speed only (10^5-row runs); the
value-by-value rules are the specification. Each case reads a column both ways.
"""

import numpy as np
import pandas as pd
import pytest

from langchef_core.inputs.schemas import values

TIMES = [
    "2024-05-01T12:00:00Z", "2024-05-01T12:00:00+00:00", "2024-05-01T23:59:59-07:30",
    "2024-05-01T12:00:00.5Z", "2024-05-01T12:00:00.123456+05:45", "2024-02-29T00:00:00Z",
    "1677-09-22T00:00:00Z", "2262-04-10T00:00:00Z", "2000-01-01T00:00:00+23:59",
]
# Each of these is read value by value (and most are refused there, with their reason).
AWKWARD_TIMES = [
    "2023-02-29T00:00:00Z", "2024-05-01T12:00:00", "2024-05-01 12:00:00Z", "2024-05-01T24:00:00Z",
    "2024-05-01T12:00:60Z", "2024-05-01T12:00:00.1234567Z", "2024-05-01T12:00Z", "2024-05-01",
    " 2024-05-01T12:00:00Z", "1600-01-01T00:00:00Z", "2262-04-12T00:00:00Z", "0000-01-01T00:00:00Z",
    "2024-13-01T00:00:00Z", "2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00z", "",
]


def one_by_one(series: pd.Series, convert, typed) -> pd.Series:
    return values._assemble(series, convert, typed)


def same(bulk: pd.Series, slow: pd.Series) -> None:
    assert bulk.dtype == slow.dtype
    assert bulk.name == slow.name and bulk.index.equals(slow.index)
    assert [repr(v) for v in bulk.tolist()] == [repr(v) for v in slow.tolist()]


def slow_times(series):
    return one_by_one(series, values.as_utc_timestamp,
                      lambda vs, index: pd.Series(pd.to_datetime(vs, utc=True).as_unit("ns"),
                                                  index=index))


@pytest.mark.parametrize("dtype", [object, "str"])
@pytest.mark.parametrize("extra", [None, *AWKWARD_TIMES])
def test_timestamps_in_bulk_match_the_value_rule(dtype, extra):
    texts = TIMES + ([extra] if extra is not None else [])
    series = pd.Series(texts, index=pd.RangeIndex(1, len(texts) + 1, name="row"), dtype=dtype,
                       name="created_at")
    same(values.timestamp_column(series), slow_times(series))
    if extra is None:
        assert values._clean_iso_times(series) is not None  # the bulk path was taken


def test_each_awkward_time_alone_is_read_by_the_value_rule():
    for text in AWKWARD_TIMES + TIMES:
        series = pd.Series([text], name="created_at", dtype=object)
        same(values.timestamp_column(series), slow_times(series))


def test_random_plain_times_in_bulk_match_the_value_rule():
    rng = np.random.default_rng(7)
    seconds = rng.integers(-5_000_000_000, 9_000_000_000, 2000)
    micros = rng.integers(0, 1_000_000, 2000)
    offsets = rng.integers(-23 * 60, 23 * 60, 2000)
    texts = []
    for s, us, off in zip(seconds, micros, offsets):
        stamp = pd.Timestamp(int(s), unit="s") + pd.Timedelta(microseconds=int(us))
        sign, off = ("+" if off >= 0 else "-"), abs(int(off))
        digits = rng.integers(0, 7)
        fraction = f".{int(us):06d}"[: digits + 1] if digits else ""
        texts.append(stamp.strftime("%Y-%m-%dT%H:%M:%S") + fraction
                     + ("Z" if off == 0 else f"{sign}{off // 60:02d}:{off % 60:02d}"))
    series = pd.Series(texts, name="created_at")
    assert values._clean_iso_times(series) is not None
    same(values.timestamp_column(series), slow_times(series))


@pytest.mark.parametrize("column", [
    [0, 1, 1, 0], [1], [-128, 127, 0], [0, 128], [0, -129], [0, 1, 5],
])
def test_typed_whole_numbers_in_bulk_match_the_value_rule(column):
    series = pd.Series(np.array(column, dtype=np.int64), name="relevant")
    def typed(vs, index):
        if any(v is None for v in vs):
            return pd.Series(vs, index=index, dtype=object)
        return pd.Series(vs, index=index, dtype="int8")
    same(values.small_integer_column(series), one_by_one(series, values.as_small_integer, typed))


@pytest.mark.parametrize("cells", [
    [["d1", "d2"], [], ["d3"]],
    [["d1", 2], ["d3"]],
    [["d1"], None],
    [["d1"], '["d2"]'],
    [("d1",), ["d2"]],
    [["d1", None]],
])
def test_id_lists_in_bulk_match_the_value_rule(cells):
    series = pd.Series(cells + [None] * 0, name="retrieved", dtype=object)
    slow = one_by_one(series, values.as_id_list,
                      lambda vs, index: pd.Series(vs, index=index, dtype=object))
    same(values.id_list_column(series), slow)
    bulk = values.id_list_column(series)
    assert bulk is not series  # a new column; lists of text are kept as they are, not copied


@pytest.mark.parametrize("dtype", ["str", object])
def test_positions_in_matches_get_indexer(dtype):
    from langchef_core.inputs.ids import positions_in
    index = pd.Index(np.array(["q1", "q10", "q2", "ä"], dtype=object))
    values_ = pd.Series(["q2", "q1", "zz", "ä", "q10", "q2"], dtype=dtype)
    assert positions_in(values_, index).tolist() == index.get_indexer(values_).tolist()


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("dtype", ["str", object])
def test_repeated_rows_is_duplicated_over_the_key_columns(dtype, collide, monkeypatch):
    """One hash pass gives ``DataFrame.duplicated``, also when the key product is densified
    first (forced here by a tiny int64 bound) and for one or three columns; and so does the
    proof by fingerprints that no key repeats, or (every fingerprint forced equal) its
    refusal to prove it."""
    from langchef_core.inputs import ids
    if collide:
        monkeypatch.setattr(ids, "text_fingerprints", lambda text: np.zeros(len(text), np.uint64))
    rng = np.random.default_rng(7)
    for n, spread in ((0, 4), (1, 4), (2, 4), (50, 4), (400, 4), (400, 300), (400, 2000)):
        # Few distinct values (most rows shared) and many (most rows keyed by no one else).
        frame = pd.DataFrame({name: pd.Series([f"{name}{int(v)}" for v in rng.integers(0, spread // (1 + i), n)],
                                              dtype=dtype) for i, name in enumerate("abc")})
        for keys in (["a"], ["a", "b"], ["a", "b", "c"]):
            expected = frame.duplicated(keys).to_numpy()
            assert ids.repeated_rows(*(frame[k] for k in keys)).tolist() == expected.tolist()
            with monkeypatch.context() as patch:
                patch.setattr(ids.np, "iinfo", lambda _: type("I", (), {"max": 9}))
                assert ids.repeated_rows(*(frame[k] for k in keys)).tolist() == expected.tolist()
            for per_block in (1, 3):  # keyed a few first-column values at a time
                with monkeypatch.context() as patch:
                    patch.setattr(ids, "KEYS_PER_BLOCK", per_block)
                    assert ids.repeated_rows(*(frame[k] for k in keys)).tolist() == expected.tolist()


def test_sorted_distinct_is_numpy_sort_of_unique():
    from langchef_core.inputs.id_order import sorted_distinct
    texts = ["q2", "q10", "ä", "Z", "q2", "é", "a b", "q1", "ä", "\U0001f600", "ｑ"]
    for dtype in ("str", object):
        got = sorted_distinct(pd.Series(texts, dtype=dtype))
        assert got.dtype == object and got.tolist() == np.sort(np.unique(np.array(texts, object))).tolist()
    assert sorted_distinct(pd.Series([], dtype="str")).tolist() == []
    once = list(dict.fromkeys(texts))
    for dtype in ("str", object):  # known distinct: sorted without hashing, the same array
        assert sorted_distinct(pd.Series(once, dtype=dtype), distinct=True).tolist() == \
            sorted_distinct(pd.Series(once, dtype=dtype)).tolist()
    import pyarrow as pa

    from langchef_core.inputs.id_order import coded_texts
    for column in (pd.Series(texts, dtype="str"), pd.Series(texts, dtype=object),
                   pa.chunked_array([texts[:4], texts[4:]]), pd.Series([], dtype="str")):
        # The same sorted texts, and each value's place among them (chunks coded as one).
        sorted_texts, codes = coded_texts(column)
        assert sorted_texts.tolist() == sorted_distinct(column).tolist()
        assert codes.dtype == np.int64 and sorted_texts[codes].tolist() == texts[:len(codes)]


def test_text_ids_keep_arrow_text_and_refuse_what_canonical_ids_refuse():
    from langchef_core.inputs.errors import InputError
    from langchef_core.inputs.ids import canonical_ids, text_ids
    frame = pd.DataFrame({"id": pd.array(["a", "b"], dtype="str")}, index=pd.Index([3, 4], name="row"))
    kept = text_ids(frame, "id", "f")
    assert isinstance(kept.dtype, pd.StringDtype) and list(kept) == list(canonical_ids(frame, "id", "f"))
    numbers = pd.DataFrame({"id": [7, 8]})
    assert text_ids(numbers, "id", "f").tolist() == ["7", "8"]
    for bad, words in ((["a", ""], "empty id"), (["a", None], "missing id")):
        frame = pd.DataFrame({"id": pd.array(bad, dtype="str")}, index=pd.Index([3, 4], name="row"))
        with pytest.raises(InputError, match=f"row 4: {words}"):
            text_ids(frame, "id", "f")


@pytest.mark.parametrize("coded", [False, True])
@pytest.mark.parametrize("chunked", [False, True])
def test_codes_among_joins_values_on_the_keys(chunked, coded):
    """Equal texts get equal codes across keys and values, different keys different codes,
    and a value that is no key the one extra code len(keys); values given as dictionary
    codes alike."""
    import pyarrow as pa

    from langchef_core.inputs.ids import codes_among
    rng = np.random.default_rng(3)
    keys = [f"d{int(v)}" for v in rng.integers(0, 30, 60)]
    values = [f"d{int(v)}" for v in rng.integers(0, 60, 500)]
    column = pa.array(values, pa.string())
    if chunked:
        column = pa.chunked_array([column[:123], column[123:]])
    if coded:
        column = column.dictionary_encode()
    key_codes, value_codes = codes_among(pd.Series(keys, dtype="str"), column)
    first = {}
    for position, key in enumerate(keys):
        first.setdefault(key, position)
    assert key_codes.tolist() == [first[k] for k in keys]
    assert value_codes.tolist() == [first.get(v, len(keys)) for v in values]


@pytest.mark.parametrize("per_block", [1 << 15, 1, 4])
def test_lists_without_repeats_matches_a_set_per_list(per_block, monkeypatch):
    import pyarrow as pa

    from langchef_core.inputs import id_lists
    monkeypatch.setattr(id_lists, "LISTS_PER_BLOCK", per_block)
    rng = np.random.default_rng(11)
    lists = [[f"d{int(v)}" for v in rng.integers(0, 12, int(rng.integers(0, 6)))] for _ in range(300)]
    chunked = pa.chunked_array([pa.array(lists[:97], pa.list_(pa.string())),
                                pa.array(lists[97:], pa.list_(pa.string()))])
    assert id_lists.lists_without_repeats(chunked).tolist() == [len(set(ids)) == len(ids) for ids in lists]


def _per_block_codes(keys, key_block, values, bounds):
    """``codes_among`` called block by block: what ``codes_among_in_blocks`` must give."""
    from langchef_core.inputs.ids import codes_among
    key_codes, value_codes = np.empty(len(keys), np.int64), np.empty(len(values), np.int64)
    for block in range(len(bounds) - 1):
        rows = np.flatnonzero(key_block == block)
        start, stop = bounds[block], bounds[block + 1]
        key_codes[rows], value_codes[start:stop] = codes_among(
            pd.Series([keys[r] for r in rows], dtype="str"), pd.Series(values[start:stop], dtype="str"))
    return key_codes.tolist(), value_codes.tolist()


@pytest.mark.parametrize("collide", [False, True])
def test_codes_among_in_blocks_is_codes_among_per_block(collide, monkeypatch):
    """The fingerprint join gives pyarrow's hash-table codes exactly: repeated keys, values
    found in another block only, empty blocks, ids of every length; and when every text
    shares one fingerprint (forced), a block falls back to the hash table."""
    import pyarrow as pa

    from langchef_core.inputs import ids
    if collide:
        monkeypatch.setattr(ids, "text_fingerprints", lambda text: np.zeros(len(text), np.uint64))
    rng = np.random.default_rng(5)
    alphabet = ["d", "é", "x", "0", "7", "\U0001f600"]
    pool = ["".join(rng.choice(alphabet, int(rng.integers(1, 20)))) for _ in range(40)]
    n_blocks = 6
    keys = [pool[int(v)] for v in rng.integers(0, 25, 90)]
    key_block = rng.integers(0, n_blocks - 1, len(keys))  # the last block has no keys
    sizes = rng.integers(0, 60, n_blocks)
    bounds = np.r_[0, np.cumsum(sizes)]
    values = [pool[int(v)] for v in rng.integers(0, len(pool), int(bounds[-1]))]
    expected = _per_block_codes(keys, key_block, values, bounds)
    for column in (pa.array(values, pa.string()), pa.chunked_array([pa.array(values[:77], pa.large_string()),
                                                                    pa.array(values[77:], pa.large_string())])):
        got = ids.codes_among_in_blocks(pd.Series(keys, dtype="str"), key_block, column, bounds)
        assert (got[0].tolist(), got[1].tolist()) == expected


@pytest.mark.parametrize("collide", [False, True])
def test_codes_among_in_blocks_of_dictionary_codes_are_those_of_their_texts(collide, monkeypatch):
    """Values given as dictionary codes (a parquet run read as codes) give the codes of their
    texts, whether a block's piece of a chunk is joined through the chunk's dictionary
    (pyarrow's own coding; a dictionary holding every text twice and one never used, each
    value coded by either copy) or, its dictionary larger than the piece, decoded."""
    import pyarrow as pa

    from langchef_core.inputs import ids
    if collide:
        monkeypatch.setattr(ids, "text_fingerprints", lambda text: np.zeros(len(text), np.uint64))
    looked_up = []  # the lengths of the texts each block's keys were looked up among
    block_coder = ids._block_coder

    def spied_coder(keys, rows, prints):
        code = block_coder(keys, rows, prints)
        return lambda values: (looked_up.append(len(values)), code(values))[1]
    monkeypatch.setattr(ids, "_block_coder", spied_coder)
    rng = np.random.default_rng(8)
    pool = [f"d{i}é" * int(rng.integers(1, 4)) for i in range(15)]
    keys = [pool[int(v)] for v in rng.integers(0, 20, 60) if v < 15]
    key_block = rng.integers(0, 3, len(keys))  # block 3 has no keys
    bounds = np.array([0, 150, 330, 340, 420])  # block 2 holds 10 values: decoded
    values = [pool[int(v)] for v in rng.integers(0, len(pool), int(bounds[-1]))]
    expected = _per_block_codes(keys, key_block, values, bounds)
    entries = pool * 2 + ["never listed"]
    for text_type in (pa.string(), pa.large_string()):
        both_copies = pa.DictionaryArray.from_arrays(
            pa.array([pool.index(v) + 15 * int(rng.integers(0, 2)) for v in values[200:]], pa.int32()),
            pa.array(entries, text_type))
        column = pa.chunked_array([pa.array(values[:200], text_type).dictionary_encode(), both_copies])
        looked_up.clear()
        got = ids.codes_among_in_blocks(pd.Series(keys, dtype="str"), key_block, column, bounds)
        assert (got[0].tolist(), got[1].tolist()) == expected
        # Blocks 0, 1 and 3 among the dictionaries (15 and 31 texts), block 2 among its 10 ids.
        assert sorted(looked_up) == [10, 15, 15, 31, 31]


def test_text_fingerprints_equal_exactly_for_equal_texts():
    """Equal texts fingerprint alike whatever their array (offsets, chunks, string or
    large_string); the distinct texts here, of 0-40 bytes, all fingerprint differently."""
    import pyarrow as pa

    from langchef_core.inputs.ids import text_fingerprints
    rng = np.random.default_rng(9)
    texts = sorted({"".join(rng.choice(["a", "b", "é", "\x00"], int(rng.integers(0, 41)))) for _ in range(3000)})
    texts += ["", "a", "a\x00", "\x00a", "abcdefgh", "abcdefgh\x00"]
    texts = list(dict.fromkeys(texts))
    prints = text_fingerprints(pa.array(texts, pa.string()))
    assert prints.dtype == np.uint64 and np.unique(prints).size == len(texts)
    shuffled = rng.permutation(len(texts))
    again = pa.chunked_array([pa.array([texts[i] for i in shuffled[:1000]], pa.string()),
                              pa.array(["zz"] + [texts[i] for i in shuffled[1000:]], pa.string()).slice(1)])
    assert text_fingerprints(again).tolist() == prints[shuffled].tolist()
    assert text_fingerprints(pa.array(texts, pa.large_string())).tolist() == prints.tolist()


def test_text_fingerprints_refuse_arrays_without_offsets():
    """Dictionary and other layouts have no offsets buffer to read: a clear error, not numpy's."""
    import pyarrow as pa

    from langchef_core.inputs.ids import text_fingerprints
    with pytest.raises(TypeError, match="cast a dictionary<values=string, indices=int32"):
        text_fingerprints(pa.array(["a", "b", "a"]).dictionary_encode())


def test_sorted_union_is_sorted_distinct_of_all():
    from langchef_core.inputs.id_order import sorted_distinct, sorted_union
    same = np.array(["a", "b", "é", "q10", "q2"], dtype=object)
    cases = [(same, same.copy()), (same, same, same), (same, same[:4]), (same, same[::-1]),
             (np.array(["b", "a"], dtype=object), np.array(["b", "a"], dtype=object)),
             (np.array(["a", "a"], dtype=object), np.array(["a", "a"], dtype=object)),
             (np.array([], dtype=object), np.array([], dtype=object)), (same, ["a", "zz"])]
    for columns in cases:
        expected = sorted_distinct(np.concatenate([np.asarray(c, dtype=object) for c in columns]))
        got = sorted_union(*columns)
        assert got.dtype == object and got.tolist() == expected.tolist()
        assert got is not columns[0]


@pytest.mark.parametrize("seed", range(5))
def test_byte_order_sorts_as_pyarrow_sorts_text(seed):
    """``id_order.byte_order`` (texts as padded big-endian words, length last) gives pyarrow's
    ``sort_indices`` on text with prefixes, NUL bytes, non-ASCII, empty texts, ties, slices
    and chunks, ids of one fixed length (one word) and ids too long for words."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from langchef_core.inputs.id_order import byte_order
    r = np.random.default_rng(seed)
    alphabet = list("ab\x00zé€😀 A~") + ["\x7f", "\u00ff"]
    padded = ["a\x00", "a", "\x00", "", "a\x00\x00", "b", "a\x00b", "\x00\x00"]
    cases = [[f"q{i:07d}" for i in r.permutation(3000)], [f"query-{i}" for i in r.permutation(3000)], [],
             # equal once zero padded: only the length orders them (a Python list: numpy's
             # text arrays drop trailing NULs)
             [padded[i] for i in r.permutation(len(padded))]]
    for longest in (4, 20):  # up to 16 bytes: sorted as words; beyond, by pyarrow itself
        for _ in range(100):
            cases.append(["".join(r.choice(alphabet, int(r.integers(0, longest))))
                          for _ in range(int(r.integers(0, 60)))])
    for texts in cases:
        array = pa.array(texts, pa.large_string())
        for candidate in (array, array.slice(min(1, len(array))), pa.chunked_array([array[:len(array) // 2],
                                                                                   array[len(array) // 2:]])):
            want = pc.sort_indices(candidate).to_numpy()
            assert np.array_equal(byte_order(candidate), want), texts[:5]

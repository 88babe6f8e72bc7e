"""`IdLookup` (issue 31) gives what `Series.map` gives for every column looked up by one id
index: the same values, dtypes and NaN where an id is missing, for the column kinds a run
carries (text with and without gaps, bools, floats, integers, objects), and the same error
on a repeated id."""

import numpy as np
import pandas as pd
import pytest

from langchef_core.readout.item_scores import IdLookup


def _columns(r, n):
    words = np.array(["pass", "fail", "Correctness", "é ü"], dtype=object)
    text = words[r.integers(0, 4, n)]
    gappy = text.copy()
    gappy[r.random(n) < 0.2] = None
    yield "str", pd.Series(text.tolist(), dtype="str")
    yield "str with gaps", pd.Series(gappy.tolist(), dtype="str")
    yield "object with None", pd.Series(gappy, dtype=object)
    yield "bool", pd.Series(r.random(n) < 0.5)
    yield "float", pd.Series(r.lognormal(size=n))
    yield "int", pd.Series(r.integers(0, 9, n))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_lookup_equals_map(seed, missing):
    r = np.random.default_rng(seed)
    n = int(r.integers(1, 400))
    pool = np.array([f"g{i:05d}" for i in r.permutation(2 * n)], dtype=object)
    index_ids = pool[:n]
    # The ids looked up: the index's own, shuffled, some replaced by ids it lacks.
    wanted = r.permutation(index_ids)
    gone = r.random(n) < missing
    wanted[gone] = pool[n:][: gone.sum()]
    for kind in ("str", object):
        ids = pd.Series(wanted.tolist(), dtype=kind, name="example_id",
                        index=pd.RangeIndex(5, 5 + n))
        lookup = IdLookup(ids, pd.Index(pd.Series(index_ids.tolist(), dtype=kind)))
        for name, column in _columns(r, n):
            column.index = pd.Index(pd.Series(index_ids.tolist(), dtype=kind))
            expected, got = ids.map(column), lookup(column.reset_index(drop=True))
            pd.testing.assert_series_equal(got, expected, check_exact=True, obj=name)
            assert [type(v) for v in got.tolist()] == [type(v) for v in expected.tolist()], name


def test_repeated_id_raises_as_map_does():
    ids = pd.Series(["a", "b"], dtype="str")
    index = pd.Index(["a", "a", "b"], dtype="str")
    with pytest.raises(Exception) as mapped:
        ids.map(pd.Series([1, 2, 3], index=index))
    with pytest.raises(type(mapped.value)):
        IdLookup(ids, index)


@pytest.mark.parametrize("seed", range(6))
def test_isin_of_arrow_text_equals_pandas(seed):
    """`ids.isin` with Arrow text on both sides (one pyarrow call, issue 31) answers what
    pandas' own `isin` of the same values as Python objects answers, gaps included."""
    from langchef_core.inputs.ids import isin
    r = np.random.default_rng(seed)
    pool = np.array([f"g{i}" for i in range(60)] + ["é", " g1", ""], dtype=object)
    left = pool[r.integers(0, pool.size, int(r.integers(0, 80)))]
    right = pool[r.integers(0, pool.size, int(r.integers(0, 80)))]
    left[r.random(left.size) < 0.1] = None
    right[r.random(right.size) < 0.1 * (seed % 2)] = None
    for wrap in (pd.Series, pd.Index):
        values = wrap(right.tolist(), dtype="str")
        for kind in (pd.Series, pd.Index):
            ids = kind(left.tolist(), dtype="str")
            expected = np.asarray(pd.Series(left, dtype=object).isin(
                pd.Series(right, dtype=object)), dtype=bool)
            assert np.array_equal(isin(ids, values), expected), (wrap, kind)

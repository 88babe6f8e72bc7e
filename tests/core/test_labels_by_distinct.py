"""Criterion and slice labels read by distinct value (issue 31) give exactly what the cell by
cell reading gives: `attribution._cited` and `slices.labels_as_text` against their own loops
(unchanged, the fallback for anything but text), on random label columns (text with padding, None, NaN, numpy
strings, and cells the loop refuses), as lists, object arrays and pandas columns."""

import numpy as np
import pandas as pd
import pytest

from langchef_core.stats import attribution, slices
from langchef_core.stats.attribution import _cited
from langchef_core.stats.slices import labels_as_text


@pytest.fixture
def by_cells(monkeypatch):
    """The cell-by-cell reading, which the distinct-value reading falls back to (and which is
    the code both functions had before): run ``function`` with no label read by value."""
    def run(function, *args, **kwargs):
        with monkeypatch.context() as patch:
            patch.setattr(attribution, "stripped_labels", lambda values: None)
            patch.setattr(slices, "stripped_labels", lambda values: None)
            return function(*args, **kwargs)
    return run


def _columns(seed):
    r = np.random.default_rng(seed)
    n = int(r.integers(1, 300))
    words = np.array(["Safety", " safety ", "Tone\u3000", "", " ", "é"], dtype=object)
    base = words[r.integers(0, words.size, n)]
    yield "text", base.copy(), n
    gaps = base.copy(); gaps[r.random(n) < 0.3] = None; yield "None gaps", gaps, n
    nans = base.copy(); nans[r.random(n) < 0.3] = np.nan; yield "NaN gaps", nans, n
    numpy = base.copy(); numpy[::3] = [np.str_(w) for w in numpy[::3]]; yield "numpy strings", numpy, n
    bad = gaps.copy(); bad[r.integers(0, n)] = 1; yield "an integer", bad, n
    bad = gaps.copy(); bad[r.integers(0, n)] = True; yield "a bool", bad, n
    bad = gaps.copy(); bad[r.integers(0, n)] = pd.NA; yield "pd.NA", bad, n


def _forms(values):
    yield "list", list(values)
    yield "object array", values
    yield "object column", pd.Series(values, dtype=object)
    if all(v is None or isinstance(v, (str, float)) for v in values):
        yield "str column", pd.Series(list(values), dtype="str")


def _outcome(function, *args):
    try:
        result = function(*args)
    except (ValueError, TypeError) as error:
        return ("error", type(error).__name__, str(error))
    return ("ok", result.dtype, [(type(v), v) for v in result.tolist()])


@pytest.mark.parametrize("seed", range(8))
def test_cited_criteria_by_distinct_equal_the_loop(seed, by_cells):
    for kind, values, n in _columns(seed):
        passed = np.random.default_rng(seed).random(n) < 0.5
        for form, labels in _forms(values):
            expected = by_cells(_outcome, _cited, labels, passed, "baseline_criterion")
            got = _outcome(_cited, labels, passed, "baseline_criterion")
            assert got == expected, (kind, form)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("allow_missing", [True, False])
def test_slice_labels_by_distinct_equal_the_loop(seed, allow_missing, by_cells):
    def read(*args):
        return labels_as_text(*args, allow_missing=allow_missing)
    for kind, values, n in _columns(seed):
        for form, labels in _forms(values):
            expected = by_cells(_outcome, read, labels, "slice column 's'", n)
            got = _outcome(read, labels, "slice column 's'", n)
            assert got == expected, (kind, form)

"""exp, log1p, log2, cube roots and powers with the same bits on every processor.

numpy computes float64 ``exp``, ``log``, ``log1p``, ``log2``, ``expm1``, ``cbrt`` and powers
other than squares and square roots with its own AVX-512 code when the processor has AVX-512,
and with the C library's functions otherwise. Both are accurate to an ulp or so, but they are
not the same function: on an AVX-512 machine the demo's detection limits moved in their last
digit, so the same inputs gave another ``readout.json`` there than on a CI runner without
AVX-512. These versions call the C library (Python's ``math``) for every element, which is
what numpy itself does on a processor without AVX-512, so a number computed here has the
bits it always had there. The promise is per C library: glibc on x86-64 Linux (CI, the
deployment images) gives one answer on every processor; another C library (macOS, musl) may
round these functions differently in the last bit. A Python call per element costs about
70 ns: these run on per-golden, per-look or per-rank arrays, never inside a bootstrap's
resamples, and large arrays pay it once per distinct value.
(Squares, square roots and the four operations are exactly rounded in IEEE arithmetic and
need no help; ``products.py`` keeps the order of sums fixed.)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np


# From this many elements the function is called once per distinct value (bit pattern, so
# −0.0 and each NaN keep their own): per-query retrieval metrics take a few hundred values
# over 10^6 queries, where a call per element cost 0.5 s per array (issue 31).
_DISTINCT_FROM = 4096


def elementwise(function: Callable[[float], float], values) -> np.ndarray:
    """``function`` (a Python float function) of every element, with its exact bits."""
    array = np.asarray(values, dtype=float)
    if array.size < _DISTINCT_FROM:
        out = np.fromiter(map(function, array.ravel().tolist()), dtype=float, count=array.size)
        return out.reshape(array.shape)
    # Hashed, not sorted: the distinct patterns in order of first sight (a tenth of
    # np.unique's time at 10^6 elements, issue 31); each gets the same value either way.
    # pandas only here: `langchef power` computes on small arrays and never loads it.
    import pandas as pd
    where, bits = pd.factorize(np.ascontiguousarray(array).ravel().view(np.int64))
    once = np.fromiter(map(function, bits.view(np.float64).tolist()), dtype=float, count=bits.size)
    return once[where].reshape(array.shape)


def exp(values) -> np.ndarray:
    return elementwise(math.exp, values)


def log1p(values) -> np.ndarray:
    return elementwise(math.log1p, values)


def log2(values) -> np.ndarray:
    return elementwise(math.log2, values)


def cube(values) -> np.ndarray:
    """values³ as ``pow`` rounds it (numpy's ``** 3``), not as two products round it."""
    return elementwise(lambda value: math.pow(value, 3.0), values)


@functools.lru_cache(maxsize=8)
def log1p_counts(size: int) -> np.ndarray:
    """log(1 + t) for t = 1 … size, read-only: a sequence's stakes need it at every alpha a
    bisection tries and at every look, for the same size."""
    values = log1p(np.arange(1, size + 1, dtype=float))
    values.flags.writeable = False
    return values

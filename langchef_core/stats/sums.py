"""Exactly rounded sums of large arrays: ``math.fsum``'s result, bit for bit, in about half its time.

A readout's means and variances are summed with ``math.fsum`` because its answer is the exact
sum rounded once, whatever order the rows come in, so the same inputs give the same
``readout.json`` however a file lists them. ``fsum`` makes a Python float of every element,
about 25 ms per 10^6 values: a 10^6-query retrieval readout called it some 35 times (about a
second, issue 31). ``exact_sum`` reaches the same exact sum without leaving numpy:

every finite double is m · 2^(e − 53) with m a whole number below 2^53 (``np.frexp``). m is
split into a high and a low half of at most 27 bits, and the halves are added per exponent e
by ``np.bincount``; each such sum of at most 2^26 halves stays a whole number below 2^53, which
float64 holds and adds exactly. The few per-exponent sums are then added as Python integers
(exact) and the total is rounded once to a double by Python's integer division, which rounds
correctly, as ``fsum`` does. Small arrays, arrays holding inf or NaN, values near the top of
the double range (where ``fsum`` has overflow rules of its own) and sums that are exactly zero
(whose sign ``fsum`` decides, by a rule Python has changed) go to ``fsum`` itself.
"""

from __future__ import annotations

import math

import numpy as np

SIGNIFICAND_BITS = 53
HALF_BITS = 27  # the low half of a significand; the high half has the other 26 bits
EXPONENT_OFFSET = 1074  # np.frexp's least exponent of a nonzero double is -1073: bins from 1
FSUM_BELOW = 256  # fewer values than this: fsum's own loop is faster
MOST_VALUES = 1 << 26  # 2^26 halves below 2^27 each sum to less than 2^53
LARGEST = 2.0 ** 1000  # at or above this, fsum's overflow rules apply: left to fsum


def exact_sum(values) -> float:
    """The sum of ``values`` rounded once to the nearest double: ``math.fsum(values)``."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size < FSUM_BELOW or x.size > MOST_VALUES or not np.isfinite(x).all() \
            or np.abs(x).max() >= LARGEST:
        return math.fsum(x)
    high, exponent = np.frexp(x)
    high *= 2.0 ** SIGNIFICAND_BITS  # m: a whole number below 2^53 in magnitude
    low = high.copy()
    high *= 2.0 ** -HALF_BITS
    np.trunc(high, out=high)  # m's high bits (sign kept); exact in float64
    low -= high * 2.0 ** HALF_BITS  # m's low 27 bits, with m's sign
    bins = exponent.astype(np.intp)
    bins += EXPONENT_OFFSET
    high_sums = np.bincount(bins, weights=high)
    low_sums = np.bincount(bins, weights=low)
    used = np.flatnonzero((high_sums != 0) | (low_sums != 0))
    if used.size == 0:  # an exact zero: its sign (0.0 or -0.0) by fsum's rule for this Python
        return math.fsum(x)
    first = int(used[0])
    total = sum(((int(high_sums[b]) << HALF_BITS) + int(low_sums[b])) << (b - first)
                for b in used.tolist())
    if total == 0:
        return math.fsum(x)
    # total · 2^(first − EXPONENT_OFFSET − 53) is the exact sum; one rounding to a double.
    shift = first - EXPONENT_OFFSET - SIGNIFICAND_BITS
    return float(total << shift) if shift >= 0 else total / (1 << -shift)

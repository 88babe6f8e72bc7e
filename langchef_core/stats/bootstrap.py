"""Seeded percentile bootstrap over resampling units, exact in distribution and cheap.

A paired comparison resamples whole units with replacement: pairs, or clusters of pairs
(all goldens of one user). Each unit contributes a total difference and a number of pairs,
and a resample's estimate is Σ totals / Σ pairs over the units drawn. Two units with the
same (total, pairs) profile are interchangeable, so drawing N units with replacement is the
same, in distribution, as drawing how many of each distinct profile were picked:

    counts ~ Multinomial(N, multiplicity / N)

For pass/fail pairs there are only three profiles (broke, fixed, unchanged), so a resample
costs O(1) instead of O(n); recall differences and clusters usually take few profiles too.
When profiles are nearly all distinct, drawing unit indices is cheaper and is used instead.

Profiles are kept sorted, so the result depends on the multiset of units, never on their
order, and the same seed always gives the same interval.

A readout uses this for the cost and latency statistics: ``resampled_counts`` draws the
per-golden or per-cluster counts ``costs.py`` reads its percentiles from. The paired
comparisons read Tango's score interval (pass/fail) and the t ∪ bootstrap-t interval
(scores) instead; ``percentile_interval`` over ``Profiles`` stays as the reference their
tests compare against (``tests/core/test_small_sample_reference.py``,
``tests/core/test_compare_binary.py``).

Reference: Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 (percentile
interval); Davison & Hinkley (1997), Bootstrap Methods and their Application, §3.8
(resampling clusters).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .products import row_dots

# Work in blocks of resamples so a large run never holds a resamples × units matrix.
_BLOCK_CELLS = 4_000_000
# A multinomial draw costs about this many index draws per category.
_MULTINOMIAL_COST = 8


@dataclass(frozen=True)
class Profiles:
    """Distinct (total, size) unit profiles, sorted, with how many units share each."""

    totals: np.ndarray
    sizes: np.ndarray
    multiplicity: np.ndarray

    @property
    def units(self) -> int:
        return int(self.multiplicity.sum())


def percentile_interval(profiles: Profiles, *, alpha: float, resamples: int,
                        rng: np.random.Generator) -> tuple[float, float]:
    """Percentile interval at level 1 − alpha of Σ totals / Σ sizes, resampling units."""
    estimates = resampled_ratios(profiles, resamples=resamples, rng=rng)
    low, high = np.quantile(estimates, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def resampled_ratios(profiles: Profiles, *, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The bootstrap distribution of Σ totals / Σ sizes: one value per resample."""
    if profiles.totals.size == 1:
        # One profile: every resample is the same, no draw is needed.
        return np.full(resamples, profiles.totals[0] / profiles.sizes[0])
    if profiles.totals.size * _MULTINOMIAL_COST < profiles.units:
        return _by_profile_counts(profiles, resamples, rng)
    return _by_unit_indices(profiles, resamples, rng)


def _by_profile_counts(profiles: Profiles, resamples: int, rng) -> np.ndarray:
    units = profiles.units
    probabilities = profiles.multiplicity / units
    block = max(1, _BLOCK_CELLS // profiles.totals.size)
    estimates = np.empty(resamples)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        counts = rng.multinomial(units, probabilities, size=stop - start).astype(float)
        estimates[start:stop] = row_dots(counts, profiles.totals) / row_dots(counts, profiles.sizes)
    return estimates


def _by_unit_indices(profiles: Profiles, resamples: int, rng) -> np.ndarray:
    totals = np.repeat(profiles.totals, profiles.multiplicity)
    sizes = np.repeat(profiles.sizes, profiles.multiplicity)
    units = totals.size
    equal_sizes = bool(np.all(sizes == sizes[0]))
    index_type = np.int32 if units < 2**31 else np.int64
    block = max(1, _BLOCK_CELLS // units)
    estimates = np.empty(resamples)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        picks = rng.integers(0, units, size=(stop - start, units), dtype=index_type)
        drawn = totals[picks].sum(axis=1)
        # Unclustered pairs all have size 1: the denominator is the constant n.
        estimates[start:stop] = drawn / (units * sizes[0]) if equal_sizes \
            else drawn / sizes[picks].sum(axis=1)
    return estimates


def resampled_counts(multiplicity: np.ndarray, resamples: int, rng: np.random.Generator, *,
                     columns_per_row: int = 1) -> Iterator[tuple[slice, np.ndarray]]:
    """Blocks of bootstrap counts: how often each profile was drawn, one row per resample.

    Drawing N = Σ multiplicity units with replacement is, in distribution, drawing
    Multinomial(N, multiplicity / N) counts of the distinct profiles (see the module docstring).
    When profiles are few that draw is cheap; when nearly every unit is distinct, unit
    indices are drawn and counted instead. Rows come in blocks so memory stays bounded;
    ``columns_per_row`` is how wide the caller's per-row work is, to size the blocks.
    """
    multiplicity = np.asarray(multiplicity, dtype=np.int64)
    profiles, units = multiplicity.size, int(multiplicity.sum())
    width = max(profiles, units) * max(1, columns_per_row)
    block = max(1, _BLOCK_CELLS // width)
    if profiles * _MULTINOMIAL_COST < units:
        probabilities = multiplicity / units
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            yield slice(start, stop), rng.multinomial(units, probabilities, size=stop - start)
        return
    # One unit per profile (the usual case here) needs no unit → profile lookup.
    owner = None if units == profiles else np.repeat(np.arange(profiles), multiplicity)
    index_type = np.int32 if units < 2**31 else np.int64  # int32 draws are cheaper
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        picks = rng.integers(0, units, size=(stop - start, units), dtype=index_type)
        if owner is not None:
            picks = owner[picks]
        if profiles < 1024:  # short rows: one flat bincount over offset picks
            flat = picks + (np.arange(stop - start, dtype=np.int64) * profiles)[:, None]
            counts = np.bincount(flat.ravel(), minlength=(stop - start) * profiles)
            yield slice(start, stop), counts.reshape(stop - start, profiles)
            continue
        # Long rows: one bincount per row, the same counts without the int64 temporary.
        counts = np.empty((stop - start, profiles), dtype=np.int64)
        for row in range(stop - start):
            counts[row] = np.bincount(picks[row], minlength=profiles)
        yield slice(start, stop), counts

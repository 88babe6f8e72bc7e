"""Input validation shared by the statistics functions.

Every public function validates its arguments here first, so that a rejected input always
produces one specific ``ValueError`` that says what was wrong and what to pass instead.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

MIN_RESAMPLES = 1000
# Scores beyond this cannot have their differences squared in float64 (1e308 is the limit).
MAX_MAGNITUDE = 1e150


def check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def check_power(power: float) -> float:
    if isinstance(power, bool) or not isinstance(power, numbers.Real) or not 0 < power < 1:
        raise ValueError(f"power must be a number strictly between 0 and 1, got {power!r}")
    return float(power)


def check_resamples(resamples: int) -> int:
    if isinstance(resamples, bool) or not isinstance(resamples, numbers.Integral):
        raise ValueError(f"resamples must be a whole number, got {resamples!r}")
    if resamples < MIN_RESAMPLES:
        raise ValueError(
            f"resamples must be at least {MIN_RESAMPLES} for a stable percentile interval, "
            f"got {resamples}"
        )
    return int(resamples)


def check_count(value: int, name: str) -> int:
    """A non-negative whole number (numpy integers accepted, bools and floats refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")
    return int(value)


def check_margin(margin: float | None) -> float | None:
    if margin is None:
        return None
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not np.isfinite(margin):
        raise ValueError(f"margin must be a positive number or None, got {margin!r}")
    if margin <= 0:
        raise ValueError(
            f"margin must be positive (the tolerated drop, e.g. 0.03 for three points), got {margin!r}"
        )
    return float(margin)


def as_rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def as_1d(values, name: str) -> np.ndarray:
    """A non-empty one-dimensional array without missing values."""
    try:
        array = np.asarray(values)
    except Exception as error:  # ragged input and the like
        raise ValueError(f"{name} could not be read as a one-dimensional array: {error}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty: there is nothing to compare")
    return array


def as_binary(values, name: str) -> np.ndarray:
    """Pass/fail outcomes as a bool array; accepts bool, 0/1 integers or 0.0/1.0 floats."""
    array = as_1d(values, name)
    if array.dtype == bool:
        return array
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must hold pass/fail outcomes as booleans or 0/1, got values of type {array.dtype}"
        )
    if array.dtype.kind == "f" and np.isnan(array).any():
        position = int(np.flatnonzero(np.isnan(array))[0])
        raise ValueError(f"{name} has a missing value (NaN) at position {position}; score every pair")
    outside = (array != 0) & (array != 1)
    if outside.any():
        position = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"{name} must be binary (0/1 or True/False), got {array[position].item()!r} at position {position}"
        )
    return array.astype(bool)


def as_finite(values, name: str) -> np.ndarray:
    """Real-valued scores as a float array without NaN or infinities."""
    array = as_1d(values, name)
    if array.dtype == bool or array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real-valued scores, got values of type {array.dtype}")
    array = array.astype(float)
    bad = ~np.isfinite(array)
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} has a missing or infinite value ({array[position]}) at position {position}; "
            "score every pair"
        )
    huge = np.abs(array) > MAX_MAGNITUDE
    if huge.any():
        position = int(np.flatnonzero(huge)[0])
        raise ValueError(
            f"{name} has the value {array[position]:.3g} at position {position}, too large for "
            f"the spread of the differences to be computed (their squares overflow); rescale "
            f"the scores below {MAX_MAGNITUDE:.0e} in magnitude"
        )
    return array


def check_same_length(baseline: np.ndarray, variant: np.ndarray) -> None:
    if baseline.shape != variant.shape:
        raise ValueError(
            f"baseline and variant must be paired, one value per golden in the same order, "
            f"got lengths {baseline.size} and {variant.size}"
        )


def as_cluster_codes(clusters, n: int) -> np.ndarray | None:
    """Cluster labels (any hashable values) as dense integer codes, or None when not clustered."""
    if clusters is None:
        return None
    array = as_1d(clusters, "clusters")
    if array.size != n:
        raise ValueError(f"clusters must give one label per pair: got {array.size} labels for {n} pairs")
    if array.dtype.kind == "f" and np.isnan(array).any():
        position = int(np.flatnonzero(np.isnan(array))[0])
        raise ValueError(f"clusters has a missing label (NaN) at position {position}")
    if array.dtype == object:
        missing = [i for i, label in enumerate(array) if label is None or label != label]
        if missing:
            raise ValueError(f"clusters has a missing label at position {missing[0]}")
        array = array.astype(str)
    labels, codes = _dense_codes(array)
    if labels < 2:
        raise ValueError("a clustered comparison needs at least 2 clusters; all pairs carry one label")
    return codes


def _dense_codes(array: np.ndarray) -> tuple[int, np.ndarray]:
    """How many distinct labels, and each label's rank among them (np.unique's inverse).
    Small non-negative integers (codes made upstream) are ranked by a bincount, one pass
    with no sort; anything else by np.unique."""
    if array.dtype.kind in "iu" and array.min() >= 0 and array.max() < 4 * array.size + 1024:
        present = np.bincount(array) > 0
        ranks = np.cumsum(present) - 1
        return int(ranks[-1]) + 1, ranks[array]
    labels, codes = np.unique(array, return_inverse=True)
    return labels.size, codes.reshape(-1)


@dataclass(frozen=True)
class Settings:
    """The checked settings every paired comparison takes (``seed`` is None when a Generator
    was passed: its state, not a number, decides the draws)."""

    alpha: float
    power: float
    resamples: int
    seed: int | None
    rng: np.random.Generator
    margin: float | None


def check_settings(alpha, power, resamples, seed, margin) -> Settings:
    return Settings(alpha=check_alpha(alpha), power=check_power(power),
                    resamples=check_resamples(resamples),
                    seed=None if isinstance(seed, np.random.Generator) else int(seed),
                    rng=as_rng(seed), margin=check_margin(margin))


def stripped_labels(values) -> tuple[np.ndarray, np.ndarray] | None:
    """Label cells read by distinct value (issue 31): for a 1-D object array whose cells are
    each a str, None or a float NaN, the code of each cell (−1 where missing) and the
    ``str.strip()`` of each distinct text, so a column of 10^6 labels costs a few Python calls.
    None for anything else (the caller then reads cell by cell and raises its own error)."""
    if not isinstance(values, np.ndarray) or values.ndim != 1 or values.dtype != object:
        return None
    import pandas as pd
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    if not all(isinstance(text, str) for text in distinct):
        return None  # True and 1 share a code in a hash table; only text is read this way
    missing = values[codes < 0]
    if not all(cell is None or isinstance(cell, float) for cell in missing):
        return None  # pd.NA, NaT …: not what the cell rule calls missing
    return codes, np.array([text.strip() for text in distinct], dtype=object)


def column_cells(values):
    """A pandas text or object column as the object array of the cells ``list()`` yields
    (other inputs unchanged)."""
    dtype = getattr(values, "dtype", None)
    if hasattr(values, "to_numpy") and dtype is not None and getattr(values, "ndim", 1) == 1 \
            and (dtype == object or type(dtype).__name__ == "StringDtype"):
        return values.to_numpy(dtype=object)
    return values

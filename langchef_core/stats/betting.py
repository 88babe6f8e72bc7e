"""The empirical-Bernstein betting bounds a confidence sequence is read from.

For X_i in [0, 1] (Waudby-Smith & Ramdas 2024, JRSS-B 86:1, Theorem 2; the formulas are in
``sequential``'s docstring): the predictable plug-in stakes λ_t, capped at ``BETTING_CAP``,
the bound at every n on its own (``eb_raw``) and their running intersection (``eb_bounds``).
The logarithms go through ``libm``, so the bounds have the same bits on every processor.
"""

from __future__ import annotations

import math

import numpy as np

from . import libm

BETTING_CAP = 0.5  # c: the largest fraction of capital ever staked (the paper suggests 1/2 or 3/4)


def eb_bounds(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The running intersection of the bounds at every n."""
    raw_low, raw_high = eb_raw(x, alpha)
    low = np.maximum.accumulate(raw_low)
    high = np.minimum.accumulate(raw_high)
    return low, np.maximum(high, low)


def eb_raw(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The bounds at every n on their own, clipped to [0, 1]."""
    stakes = plugin_stakes(x, alpha)
    t = np.arange(1, x.size + 1)
    mean_before = np.concatenate(([0.5], (0.5 + np.cumsum(x)) / (t + 1)))[:-1]
    v = 4.0 * (x - mean_before) ** 2
    weight = np.cumsum(stakes)
    centre = np.cumsum(stakes * x) / weight
    radius = (math.log(2 / alpha) + np.cumsum(v * psi(stakes))) / weight
    return np.maximum(centre - radius, 0.0), np.minimum(centre + radius, 1.0)


def plugin_stakes(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in λ_t: it uses the variance estimate up to t − 1 only."""
    t = np.arange(1, x.size + 1)
    running_mean = (0.5 + np.cumsum(x)) / (t + 1)
    variance = (0.25 + np.cumsum((x - running_mean) ** 2)) / (t + 1)
    return capped_stakes(np.concatenate(([0.25], variance[:-1])), alpha)


def capped_stakes(variance: np.ndarray, alpha: float) -> np.ndarray:
    """λ_t = min(√(2 log(2/α) / (σ²_t t log(1 + t))), cap) for the t-th unit's variance σ²_t."""
    t = np.arange(1, variance.size + 1, dtype=float)
    bet = 2 * math.log(2 / alpha) / (variance * t * libm.log1p_counts(variance.size))
    return np.minimum(np.sqrt(bet), BETTING_CAP)


def psi(stakes: np.ndarray) -> np.ndarray:
    return (-libm.log1p(-stakes) - stakes) / 4.0

"""Confidence intervals for a proportion."""

from __future__ import annotations

import math

from scipy.special import ndtri  # = scipy.stats.norm.ppf, without importing scipy.stats

from ._validation import check_alpha, check_count


def wilson_interval(k: int, n: int, *, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n at level 1 − alpha.

    With z = Φ⁻¹(1 − α/2) and p̂ = k/n:

        centre = (p̂ + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²)

    Unlike the Wald interval it stays inside [0, 1] and is not degenerate at k = 0 or
    k = n, which is why the detection limit uses its upper bound: a run where nothing
    flipped still bounds the flip rate from above.

    Reference: Wilson (1927), JASA 22:209-212; equals statsmodels
    ``proportion_confint(k, n, alpha, method="wilson")``.
    """
    k = check_count(k, "k")
    n = check_count(n, "n")
    alpha = check_alpha(alpha)
    if n == 0:
        raise ValueError("n must be at least 1: a proportion of nothing has no interval")
    if k > n:
        raise ValueError(f"k must not exceed n, got k={k} and n={n}")
    return _wilson(k, n, alpha)


def _wilson(k: float, n: float, alpha: float) -> tuple[float, float]:
    """Wilson bounds for a possibly fractional count (used by power planning)."""
    z = ndtri(1 - alpha / 2)
    p_hat = k / n
    z2n = z * z / n
    centre = (p_hat + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p_hat * (1 - p_hat) / n + z2n / (4 * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return float(low), float(high)

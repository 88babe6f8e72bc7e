"""Multiplicity correction for a family of tests run together."""

from __future__ import annotations

import numpy as np


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the order given.

    Sort the m p-values ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎; then

        p̃₍ᵢ₎ = min(1, max_{j ≤ i} (m − j + 1) · p₍ⱼ₎)

    Rejecting every hypothesis with p̃ < α controls the family-wise error rate at α under
    any dependence between the tests, and is uniformly more powerful than Bonferroni.
    Ties keep their input order, which does not change any adjusted value.

    Reference: Holm (1979), "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6:65-70; equals R's ``p.adjust(p, "holm")``.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {p.shape}")
    if np.isnan(p).any():
        raise ValueError("p_values contains NaN; every test in the family needs a p-value")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p_values must lie between 0 and 1")
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted

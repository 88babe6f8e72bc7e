"""McNemar tests on paired pass/fail outcomes: exact, and adjusted for clustered pairs.

Only the discordant pairs carry information about a difference between two arms scored on
the same goldens: ``broke`` (passed under baseline, failed under variant) and ``fixed``
(the reverse). Under the null of equal pass rates each discordant pair is equally likely to
point either way, so ``broke ~ Binomial(broke + fixed, 1/2)``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_count
from .distributions import binomial_cdf, chi2_upper_tail


def mcnemar_exact(broke: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts.

    p = min(1, 2 · P[X ≤ min(broke, fixed)]),  X ~ Binomial(broke + fixed, 1/2)

    The binomial tail comes from scipy's regularised incomplete beta function, which stays
    accurate for millions of discordant pairs, where summing binomial coefficients would
    overflow. Returns 1.0 when nothing flipped: no discordant pair is no evidence.

    References: McNemar (1947), Psychometrika 12:153-157; the exact conditional form is
    the sign test on discordant pairs (scipy.stats.binomtest with p=0.5, two-sided).
    """
    broke = check_count(broke, "broke")
    fixed = check_count(fixed, "fixed")
    discordant = broke + fixed
    if discordant == 0:
        return 1.0
    tail = binomial_cdf(min(broke, fixed), discordant, 0.5)
    return float(min(1.0, 2.0 * tail))


def mcnemar_clustered(broke_per_cluster, fixed_per_cluster, pairs_per_cluster) -> float:
    """Two-sided p-value of Durkalski's McNemar test for pairs nested in clusters.

    Pairs from one user (or one document, one conversation) are not independent evidence.
    With d_k = (broke_k − fixed_k) / n_k the within-cluster discordance balance,

        X² = (Σ_k d_k)² / Σ_k d_k²,   X² ~ χ²(1) under equal pass rates.

    It needs no model of the within-cluster correlation. It is asymptotic in the number of
    clusters; with one pair per cluster it reduces to the uncorrected McNemar χ². Returns
    1.0 when no cluster is unbalanced (then Σ d_k² = 0 and there is no evidence).

    Reference: Durkalski, Palesch, Lipsitz & Rust (2003), "Analysis of clustered
    matched-pair data", Statistics in Medicine 22:2417-2428; as implemented in the R
    package clust.bin.pair (``durkalski.test``).
    """
    broke = np.asarray(broke_per_cluster, dtype=float)
    fixed = np.asarray(fixed_per_cluster, dtype=float)
    sizes = np.asarray(pairs_per_cluster, dtype=float)
    if not broke.shape == fixed.shape == sizes.shape or broke.ndim != 1:
        raise ValueError("broke, fixed and pair counts must be one value per cluster, of equal length")
    if (sizes <= 0).any() or (broke < 0).any() or (fixed < 0).any() or (broke + fixed > sizes).any():
        raise ValueError("each cluster needs at least one pair and at most as many flips as pairs")
    balance = (broke - fixed) / sizes
    denominator = float(np.sum(np.sort(balance**2)))
    if denominator == 0.0:
        return 1.0
    statistic = float(np.sum(np.sort(balance))) ** 2 / denominator
    return float(chi2_upper_tail(statistic, df=1))

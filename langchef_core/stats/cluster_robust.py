"""Cluster-robust t interval for a mean paired difference: CR2 variance, Imbens–Kolesár df.

Pairs nested in clusters (all questions of one user) are not independent. The estimate is
the mean over pairs, D = Σ_k t_k / N, with t_k the total difference of cluster k, n_k its
pairs, K clusters and N pairs. Its variance is the bias-reduced (CR2) sandwich of an
intercept-only regression,

    V = Σ_k (t_k − D n_k)² / (1 − n_k/N) / N²,

(the CR2 adjustment (I − H_kk)^(−½) acts only along the cluster's vector of ones, with
eigenvalue 1 − n_k/N), and the interval is D ± t_{ν, 1−α/2} √V with the Bell–McCaffrey
degrees of freedom ν = (tr GᵀΩG)² / tr((GᵀΩG)²) evaluated, as Imbens & Kolesár recommend,
under a block-exchangeable working covariance Ω whose correlation is the one-way ANOVA
intraclass correlation ρ̂ of the pair differences. Unequal cluster sizes and a real ICC
push ν far below K − 1, which is what the percentile cluster bootstrap and CR1 with K − 1
df ignore (both over-reject at K = 10–40 with lognormal sizes). The p-value is the same t
test, so p-value and interval weight pairs the same way. Both traces are computed in O(K)
by a rank-2 identity; no K × K matrix is built. ``cluster_sums`` gives the cluster totals,
sums of squares and sizes it reads, summed in an order that does not depend on row order.

References: Bell & McCaffrey (2002), Survey Methodology 28:169-181; Imbens & Kolesár
(2016), Review of Economics and Statistics 98:701-712; Pustejovsky & Tipton (2018), JBES
36:672-683 (R clubSandwich ``coef_test(..., vcov = "CR2", test = "Satterthwaite")``);
Donner (1986), International Statistical Review 54:67-82 (ANOVA ICC, unequal sizes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .distributions import t_quantile, t_upper_tail
from .products import matmul
from .sums import exact_sum


@dataclass(frozen=True)
class ClusterRobust:
    difference: float
    low: float
    high: float
    p_value: float
    df: float
    icc: float
    se: float


def intraclass_correlation(totals: np.ndarray, sizes: np.ndarray, sumsq: np.ndarray) -> float:
    """One-way ANOVA ICC of pair differences, in [0, 0.999]:
    ρ̂ = (MSB − MSW)/(MSB + (n₀ − 1) MSW), n₀ = (N − Σ n_k²/N)/(K − 1) (Donner 1986)."""
    clusters, pairs = totals.size, float(sizes.sum())
    mean = float(totals.sum()) / pairs
    between = float(np.sum(np.sort(sizes * (totals / sizes - mean) ** 2))) / (clusters - 1)
    within = float(np.sum(np.sort(sumsq - totals**2 / sizes))) / max(pairs - clusters, 1.0)
    n0 = (pairs - float(np.sum(sizes**2)) / pairs) / (clusters - 1)
    denominator = between + (n0 - 1) * within
    if not denominator > 0:
        return 0.0
    return float(min(max((between - within) / denominator, 0.0), 0.999))


def cluster_robust_t(totals, sizes, sumsq, *, alpha: float = 0.05) -> ClusterRobust:
    """CR2 interval and t-test p-value of D = Σt_k/Σn_k (module docstring); K ≥ 2 clusters.

    ``totals``, ``sizes`` and ``sumsq`` are per cluster: Σ d, the number of pairs, Σ d².
    Inputs are sorted by profile first so the floating-point sums ignore cluster order.
    """
    totals, sizes, sumsq = (np.asarray(v, dtype=float) for v in (totals, sizes, sumsq))
    order = np.lexsort((sumsq, sizes, totals))
    totals, sizes, sumsq = totals[order], sizes[order], sumsq[order]
    pairs = exact_sum(sizes)
    difference = exact_sum(totals) / pairs
    leverage = 1 - sizes / pairs
    variance = exact_sum((totals - difference * sizes) ** 2 / leverage) / pairs**2
    rho = intraclass_correlation(totals, sizes, sumsq)
    df = _imbens_kolesar_df(sizes, rho)
    se = math.sqrt(variance)
    quantile = float(t_quantile(1 - alpha / 2, df))
    if se > 0:
        p_value = float(2 * t_upper_tail(abs(difference) / se, df))
    else:
        p_value = 1.0 if difference == 0 else 0.0
    return ClusterRobust(difference=difference, low=difference - quantile * se,
                         high=difference + quantile * se, p_value=min(1.0, p_value), df=df,
                         icc=rho, se=se)


def _imbens_kolesar_df(sizes: np.ndarray, rho: float) -> float:
    """ν = (tr A)²/‖A‖²_F for A = GᵀΩG, in O(K).

    With c_k = (1 − n_k/N)^(−½), w_k = n_k(1 − ρ) + ρ n_k² (= 1ᵀΩ_k 1), A = C M C / N² where
    M = diag(w) + U S Uᵀ, U = [n, w], S = [[W/N², −1/N], [−1/N, 0]], W = Σw. Then
    tr A ∝ Σ c²w + tr(S UᵀC²U) and ‖A‖²_F ∝ Σ (c²w)² + 2 tr(UᵀC² diag(c²w) U S) + tr((UᵀC²U S)²).
    """
    pairs = float(sizes.sum())
    weights = sizes * (1 - rho) + rho * sizes**2
    c2 = 1 / (1 - sizes / pairs)
    s = np.array([[weights.sum() / pairs**2, -1 / pairs], [-1 / pairs, 0.0]])
    u = np.column_stack([sizes, weights])
    gram = matmul(u.T, c2[:, None] * u)
    diagonal = c2 * weights
    mixed = matmul(u.T, (c2 * diagonal)[:, None] * u)
    trace = diagonal.sum() + np.trace(matmul(s, gram))
    gs = matmul(gram, s)
    frobenius = (diagonal**2).sum() + 2 * np.trace(matmul(mixed, s)) + np.trace(matmul(gs, gs))
    if not frobenius > 0:
        return 1.0
    return float(max(trace**2 / frobenius, 1.0))


def weighted_cluster_robust_t(change, stratum, codes, weights, differences, *,
                              alpha: float = 0.05, names=None) -> ClusterRobust:
    """CR2 interval of a weighted slice difference D_w = Σ_g w_g d_g with clustered pairs.

    D_w is the contrast wᵀβ of the regression of the pair differences on slice indicators
    (β_g = d_g, the slice means in ``differences``), so the CR2 sandwich above extends to it
    whether clusters lie inside slices or span them. Within cluster k the hat matrix acts on
    each slice's pairs only along their vector of ones, with eigenvalue m_kg/n_g (m_kg pairs
    of cluster k in slice g of n_g), so with r_kg = Σ_{i∈k,g}(d_i − d_g)

        V = Σ_k (Σ_g w_g r_kg / (n_g √(1 − m_kg/n_g)))²,

    and the degrees of freedom are Bell–McCaffrey's under the block-exchangeable working
    covariance (ICC of the residuals d_i − d_g by cluster), computed in O(K·G²) with the
    low-rank identity of ``_weighted_df``. With one slice and w = 1 this is
    ``cluster_robust_t`` exactly. A weighted slice whose pairs all come from one cluster
    has no estimable variance, and is refused (``names`` words the error).
    """
    change = np.asarray(change, dtype=float)
    stratum, codes = np.asarray(stratum), np.asarray(codes)
    weights, differences = np.asarray(weights, dtype=float), np.asarray(differences, dtype=float)
    clusters, strata = int(codes.max()) + 1, weights.size
    order = np.lexsort((change, stratum, codes))  # fixed order: sums ignore row order
    key = codes[order] * strata + stratum[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    cell = key[starts]
    residual = change[order] - differences[stratum[order]]
    totals = np.zeros((clusters, strata))
    sizes = np.zeros((clusters, strata))
    sumsq = np.zeros(clusters)
    totals[cell // strata, cell % strata] = np.add.reduceat(residual, starts)
    sizes[cell // strata, cell % strata] = np.diff(np.r_[starts, key.size])
    np.add.at(sumsq, cell // strata, np.add.reduceat(residual**2, starts))
    per_slice = sizes.sum(axis=0)
    alone = (weights > 0) & (sizes.max(axis=0) == per_slice)
    if alone.any():
        index = int(np.flatnonzero(alone)[0])
        name = repr(names[index]) if names is not None else str(index)
        raise ValueError(
            f"slice {name} has all its goldens in one cluster, so its variance cannot be "
            "estimated from clusters; add goldens from other clusters to it, merge it with "
            "another slice, or give it target weight 0")
    leverage = 1 - sizes / per_slice
    scale = np.divide(weights / per_slice, np.sqrt(leverage), out=np.zeros_like(sizes),
                      where=sizes > 0)
    contributions = (scale * totals).sum(axis=1)
    variance = exact_sum(contributions**2)  # exactly rounded: in any order
    rho = intraclass_correlation(totals.sum(axis=1), sizes.sum(axis=1), sumsq)
    df = _weighted_df(scale, sizes, per_slice, rho)
    difference = exact_sum(weights * differences)
    se = math.sqrt(variance)
    quantile = float(t_quantile(1 - alpha / 2, df))
    p_value = float(2 * t_upper_tail(abs(difference) / se, df)) if se > 0 else \
        (1.0 if difference == 0 else 0.0)
    return ClusterRobust(difference=difference, low=difference - quantile * se,
                         high=difference + quantile * se, p_value=min(1.0, p_value), df=df,
                         icc=rho, se=se)


def _weighted_df(scale: np.ndarray, sizes: np.ndarray, per_slice: np.ndarray, rho: float) -> float:
    """Bell–McCaffrey ν = (tr Q)²/‖Q‖²_F for Q = GᵀΩG, G's column k = (I − H) A_k c_k.

    With b = ``scale`` (K × G), a = b·m, s_k = Σ_g a_kg, e_k = Σ_g b_kg² m_kg and Λ = diag(1/n_g):
    GᵀG = diag(e) − A Λ Aᵀ, and the cluster sums of G are P = diag(s) − m Λ Aᵀ, so
    Q = (1 − ρ) GᵀG + ρ PᵀP = diag(q) + U C Uᵀ with q = (1 − ρ)e + ρs², U = [A, diag(s) m]
    and C = [[ρ Λ mᵀm Λ − (1 − ρ)Λ, −ρΛ], [−ρΛ, 0]]; the traces follow without a K × K
    matrix (the same identity as ``_imbens_kolesar_df``).
    """
    a = scale * sizes
    s = a.sum(axis=1)
    q = (1 - rho) * (scale**2 * sizes).sum(axis=1) + rho * s**2
    inverse = np.diag(1 / per_slice)
    strata = per_slice.size
    c = np.zeros((2 * strata, 2 * strata))
    c[:strata, :strata] = -(1 - rho) * inverse + rho * matmul(matmul(inverse, matmul(sizes.T, sizes)),
                                                               inverse)
    c[:strata, strata:] = c[strata:, :strata] = -rho * inverse
    u = np.hstack([a, s[:, None] * sizes])
    gram = matmul(u.T, u)
    trace = q.sum() + np.trace(matmul(c, gram))
    gc = matmul(gram, c)
    frobenius = (q**2).sum() + 2 * np.trace(matmul(matmul(u.T, q[:, None] * u), c)) \
        + np.trace(matmul(gc, gc))
    if not frobenius > 0:
        return 1.0
    return float(max(trace**2 / frobenius, 1.0))


def cluster_sums(change: np.ndarray, codes: np.ndarray):
    """The differences sorted by cluster (and value, so sums ignore row order), and each
    cluster's total, sum of squares and size."""
    # (−0.0 keeps the sort, which keeps its sign.)
    if change.size and np.all((change == 1) | (change == -1) | ((change == 0) & ~np.signbit(change))):
        return _flip_cluster_sums(change, codes)
    order = np.lexsort((change, codes))
    codes_sorted, change_sorted = codes[order], change[order]
    starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
    totals = np.add.reduceat(change_sorted, starts)
    sumsq = np.add.reduceat(change_sorted**2, starts)
    sizes = np.diff(np.r_[starts, change.size]).astype(float)
    return change_sorted, totals, sumsq, sizes


def _flip_cluster_sums(change: np.ndarray, codes: np.ndarray):
    """``cluster_sums`` of pass/fail differences (−1, 0, +1) by counting them per cluster:
    the same arrays, bit for bit (integer sums are exact in any order), without the sort
    that took a second per call at 10^6 goldens (issue 31)."""
    clusters = int(codes.max()) + 1
    keys = codes.astype(np.int64) * 3 + (change + 1).astype(np.int64)
    tallies = np.bincount(keys, minlength=3 * clusters).reshape(clusters, 3)
    tallies = tallies[tallies.any(axis=1)]  # clusters absent here (a slice) have no sums
    values = np.tile(np.array([-1.0, 0.0, 1.0]), len(tallies))
    return (np.repeat(values, tallies.ravel()), (tallies[:, 2] - tallies[:, 0]).astype(float),
            (tallies[:, 2] + tallies[:, 0]).astype(float), tallies.sum(axis=1).astype(float))

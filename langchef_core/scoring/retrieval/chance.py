"""What each metric scores under a uniformly random ranking of the candidate pool.

A sampled pool makes a task easy or hard by construction: with one positive among 19
sampled negatives, a random ranking hits in the top 10 half the time. Reporting these
expectations next to the observed values shows how much of a score the pool alone explains.

Model: a query's pool has N candidates, m of them positives (m ≤ N; positives outside the
pool can never be ranked), |P| ≥ m positives in all, and a random ranking shows the first
k' = min(k, N) candidates. The m positive positions are a uniformly random m-subset of
1..N, so:

* hits H = |P ∩ top k'| is hypergeometric: E[H] = k'·m/N and
  P(H > 0) = 1 − C(N − m, k') / C(N, k');
* E[recall] = E[H]/|P|, E[recall_normalized] = E[H]/min(|P|, k), E[precision] = E[H]/k;
* position i holds a positive with probability m/N, so E[DCG] = (m/N)·Σ_{i≤k'} 1/log2(i + 1)
  and E[nDCG] = E[DCG]/IDCG(min(|P|, k));
* the first positive is at position i with probability C(N − i, m − 1)/C(N, m) (a positive
  at i, the other m − 1 among the N − i later positions), so
  E[reciprocal rank] = Σ_{i≤k'} C(N − i, m − 1)/(i·C(N, m)).

With m = 1 and N = n + 1 (one positive among n sampled comparisons) hit@k is k'/N =
min(k, n + 1)/(n + 1), the familiar one-positive formula. Macro chance levels average these
expectations over queries; micro levels divide pooled expected numerators by the pooled
denominators, which by linearity of expectation is exactly the expected micro ratio.

Reference: Johnson, Kemp & Kotz (2005), Univariate Discrete Distributions, ch. 6
(hypergeometric moments).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...stats import libm
from .kernel import check_k, dcg_prefix, ideal_dcg
from .metrics import metric_name


@dataclass(frozen=True, eq=False)
class ChanceLevels:
    """Expected per-query metrics at k under a uniformly random ranking of each pool."""

    k: int
    pool_size: np.ndarray
    positives_in_pool: np.ndarray
    n_positive: np.ndarray
    expected_hits: np.ndarray
    recall: np.ndarray
    recall_normalized: np.ndarray
    precision: np.ndarray
    hit: np.ndarray
    reciprocal_rank: np.ndarray
    ndcg: np.ndarray
    expected_dcg: np.ndarray
    ideal_dcg: np.ndarray

    def values(self, metric: str) -> np.ndarray:
        return getattr(self, metric_name(metric))

    def micro_parts(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Expected numerators and the (fixed) denominators of the micro average."""
        metric = metric_name(metric)
        if metric == "recall":
            return self.expected_hits, self.n_positive.astype(float)
        if metric == "recall_normalized":
            return self.expected_hits, np.minimum(self.n_positive, self.k).astype(float)
        if metric == "precision":
            return self.expected_hits, np.full(self.expected_hits.size, float(self.k))
        if metric == "ndcg":
            return self.expected_dcg, self.ideal_dcg
        return self.values(metric), np.ones(self.expected_hits.size)


def hit_chance_one_positive(n_comparisons: int, k: int) -> float:
    """Hit@k of a random ranking with one positive among ``n_comparisons`` others: min(k, n+1)/(n+1)."""
    k = check_k(k)
    if n_comparisons < 0:
        raise ValueError(f"n_comparisons must be non-negative, got {n_comparisons}")
    return min(k, n_comparisons + 1) / (n_comparisons + 1)


def chance_levels(pool_size, positives_in_pool, *, k: int = 10, n_positive=None) -> ChanceLevels:
    """Expected metrics at k under random ranking, per query (see the module docstring).

    ``pool_size`` N and ``positives_in_pool`` m per query; ``n_positive`` |P| (all positives,
    default m). Queries with |P| = 0 get NaN for recall, recall_normalized and nDCG, as the
    observed metrics do.
    """
    k = check_k(k)
    size = _counts(pool_size, "pool_size")
    inside = _counts(positives_in_pool, "positives_in_pool")
    total = inside if n_positive is None else _counts(n_positive, "n_positive")
    if not (size.shape == inside.shape == total.shape):
        raise ValueError("pool_size, positives_in_pool and n_positive need one value per query")
    if (inside > size).any():
        raise ValueError("a pool cannot hold more positives than candidates")
    if (inside > total).any():
        raise ValueError("positives_in_pool cannot exceed n_positive")
    shown = np.minimum(size, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(size > 0, inside / size, 0.0)
    expected_hits = shown * share
    discount = dcg_prefix(k)
    expected_dcg = share * discount[shown]
    ideal = ideal_dcg(total, k)
    hit, reciprocal = _first_positive_terms(size, inside, shown, k)
    defined = total > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return ChanceLevels(
            k=k, pool_size=size, positives_in_pool=inside, n_positive=total,
            expected_hits=expected_hits,
            recall=np.where(defined, expected_hits / total, np.nan),
            recall_normalized=np.where(defined, expected_hits / np.minimum(total, k), np.nan),
            precision=expected_hits / k, hit=hit, reciprocal_rank=reciprocal,
            ndcg=np.where(defined, expected_dcg / ideal, np.nan),
            expected_dcg=expected_dcg, ideal_dcg=ideal)


def _first_positive_terms(size, inside, shown, k) -> tuple[np.ndarray, np.ndarray]:
    """P(H > 0) and E[reciprocal rank], computed once per distinct (N, m) pair."""
    pairs, back = np.unique(np.stack([size, inside]), axis=1, return_inverse=True)
    n, m = pairs[0].astype(float), pairs[1].astype(float)
    positions = np.arange(1, k + 1, dtype=float)[None, :]
    # log P(first positive at i) = log C(N − i, m − 1) − log C(N, m), for i ≤ N − m + 1.
    possible = (positions <= (n - m + 1)[:, None]) & (m[:, None] > 0)
    rest = np.where(possible, n[:, None] - positions, 0.0)
    log_p = (_log_choose(rest, np.maximum(m - 1, 0)[:, None]) - _log_choose(n, m)[:, None])
    first = np.where(possible & (positions <= np.minimum(n, k)[:, None]), libm.exp(log_p), 0.0)
    hit = np.minimum(first.sum(axis=1), 1.0)
    reciprocal = (first / positions).sum(axis=1)
    back = back.reshape(-1)
    return hit[back], reciprocal[back]


def _log_choose(n, r):
    # Imported here: scoring a run from its files never needs chance levels, and scipy.special
    # costs a scoring process 0.3–1.5 s to import (issue 31).
    from scipy.special import gammaln
    return gammaln(n + 1) - gammaln(r + 1) - gammaln(n - r + 1)


def _counts(values, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a one-dimensional array of whole numbers")
    if array.size and array.min() < 0:
        raise ValueError(f"{name} must be non-negative")
    return array.astype(np.int64)

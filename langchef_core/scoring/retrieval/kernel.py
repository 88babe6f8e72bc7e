"""The vectorised core of retrieval scoring: integer-coded ranked lists in, per-query counts out.

Everything here works on integer codes, never on id strings, so that 10^8 (query, doc, rank)
entries fit in a few hundred megabytes:

* a run is a set of ranked lists in compressed-row form (``RankedLists``): ``offsets`` marks
  where each query's list starts in one flat ``docs`` array, in rank order. Ranks are either
  implicit (the i-th entry of a list has rank i, as in an arm's ``retrieved`` list) or given
  (strictly increasing within a list; gaps allowed);
* relevance is looked up by a vectorised join on one int64 key, ``query * D + doc``, against
  the sorted keys of the positive judgements (``numpy.searchsorted``);
* per-query reductions are ``numpy.bincount`` over query codes.

Only the first ``min(len, k)`` entries of a list can have rank ≤ k, so the work is
O(queries · k + positives · log positives) whatever the list lengths, and it is done in
blocks of whole queries so memory stays bounded at any size. The only Python loop is over
those blocks, never over queries.

Semantics (binary relevance):
* a document that appears twice in one list counts once, at its best (smallest) rank; the
  later copy still occupies its position: positions are the ranks as given, never compacted;
* a list shorter than k is not padded: precision still divides by k;
* an entry is relevant when its (query, doc) pair has a positive judgement.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ...inputs.threads import on_threads
from ...stats import libm

# Entries per block: about 10^6 top-k entries keep each block's temporaries near 30 MB (one
# block per core at a time, ``on_threads``); at 4·10^6 a 10^6 × 100 run scored twice as
# slowly and 0.2 GB larger (issue 19).
BLOCK_ENTRIES = 1 << 20


@dataclass(frozen=True, eq=False)
class RankedLists:
    """Ranked lists of document codes, one per query code 0..n_queries−1 (compressed rows).

    ``docs[offsets[q]:offsets[q + 1]]`` is query q's list in rank order. ``ranks`` is None
    when ranks are the positions 1, 2, 3 …; otherwise it holds each entry's rank, strictly
    increasing within a list. Build it with ``ranked_lists`` so it is validated.
    """

    offsets: np.ndarray
    docs: np.ndarray
    ranks: np.ndarray | None = None

    @property
    def n_queries(self) -> int:
        return int(self.offsets.size - 1)


@dataclass(frozen=True, eq=False)
class QueryCounts:
    """What every metric at k is computed from, one value per query code.

    ``hits`` counts distinct positives ranked at or above k; ``first_hit`` is the rank of the
    best-ranked positive within k (0 when none); ``dcg`` is Σ 1/log2(rank + 1) over those
    positives; ``n_retrieved`` counts list entries with rank ≤ k (a repeated document counts
    each time it appears, since it occupies a position).
    """

    k: int
    n_positive: np.ndarray
    hits: np.ndarray
    first_hit: np.ndarray
    dcg: np.ndarray
    n_retrieved: np.ndarray


def ranked_lists(offsets, docs, ranks=None) -> RankedLists:
    """Validate and wrap compressed ranked lists (see ``RankedLists``)."""
    offsets = _integer_array(offsets, "offsets")
    docs = _integer_array(docs, "docs")
    if offsets.size == 0 or offsets[0] != 0:
        raise ValueError("offsets must start at 0 and hold one more value than there are queries")
    steps = np.diff(offsets)
    if steps.size and steps.min() < 0:
        query = int(np.flatnonzero(steps < 0)[0])
        raise ValueError(f"offsets must not decrease; they do after query code {query}")
    if offsets[-1] != docs.size:
        raise ValueError(f"offsets end at {int(offsets[-1])} but there are {docs.size} docs; "
                         "the last offset must equal the number of entries")
    if docs.size and docs.min() < 0:
        raise ValueError(f"doc codes must be non-negative, got {int(docs.min())}")
    if ranks is not None:
        ranks = _integer_array(ranks, "ranks")
        _check_ranks(ranks, offsets, docs.size)
    return RankedLists(offsets.astype(np.int64, copy=False), docs, ranks)


def count_hits(lists: RankedLists, positive_query, positive_doc, *, k: int) -> QueryCounts:
    """Per-query counts at k for ranked lists against positive judgements (codes).

    ``positive_query``/``positive_doc`` hold one (query code, doc code) pair per relevant
    judgement; a repeated pair counts once.
    """
    k = check_k(k)
    n_queries = lists.n_queries
    pq, pd_ = _positive_pairs(positive_query, positive_doc, n_queries)
    doc_bound = int(max(lists.docs.max(initial=-1), pd_.max(initial=-1))) + 1
    remap = None
    if n_queries and doc_bound and n_queries > (np.iinfo(np.int64).max // doc_bound) - 1:
        # Sparse huge doc ids: key on the index among positive docs instead (always small).
        remap = sorted_unique(pd_)
        pd_ = np.searchsorted(remap, pd_)
        doc_bound = remap.size + 1
    positive_keys = sorted_unique(pq * doc_bound + pd_)
    n_positive = np.bincount(positive_keys // doc_bound, minlength=n_queries).astype(np.int64)

    hits = np.zeros(n_queries, np.int64)
    first_hit = np.zeros(n_queries, np.int64)
    dcg = np.zeros(n_queries, np.float64)
    n_retrieved = np.zeros(n_queries, np.int64)
    discount = rank_discounts(k)

    lengths = np.diff(lists.offsets)
    take = np.minimum(lengths, k)
    is_positive_doc = _positive_doc_table(pd_, doc_bound, int(take.sum())) if remap is None else None
    # Lists no longer than k, ranked 1, 2, 3 … (an arm run's, which scoring cuts at k): every
    # entry counts, so a block's entries are one slice of ``docs`` and only those whose doc is
    # someone's positive need a query and a rank (issue 31).
    whole_lists = lists.ranks is None and is_positive_doc is not None and bool(np.all(take == lengths))

    def count_block(bounds) -> None:  # each block of queries writes its own counts only
        q0, q1 = bounds
        if whole_lists:
            n_retrieved[q0:q1] = take[q0:q1]
            query, rank, key = _hits_in_slice(lists, q0, q1, doc_bound, positive_keys, is_positive_doc)
        else:
            query, rank, key = _hits_in_block(lists, take, q0, q1, k, remap, doc_bound,
                                              positive_keys, is_positive_doc, n_retrieved)
        # A document listed twice counts once, at its best rank: a stable sort by key keeps
        # the copies in (query, rank) order, so the first of each run of equal keys is kept.
        order = np.argsort(key, kind="stable")
        repeated = key[order[1:]] == key[order[:-1]]
        if repeated.any():
            keep = np.ones(key.size, bool)
            keep[order[1:][repeated]] = False
            query, rank = query[keep], rank[keep]
        hits[q0:q1] = np.bincount(query, minlength=q1 - q0)
        dcg[q0:q1] = np.bincount(query, weights=discount[rank - 1], minlength=q1 - q0)
        leading = np.r_[True, query[1:] != query[:-1]] if query.size else np.zeros(0, bool)
        first_hit[q0 + query[leading]] = rank[leading]
    on_threads(count_block, _blocks(take))
    return QueryCounts(k, n_positive, hits, first_hit, dcg, n_retrieved)


def ideal_dcg(n_positive: np.ndarray, k: int) -> np.ndarray:
    """Σ_{i=1}^{min(|P|, k)} 1/log2(i + 1): the DCG of a list with every positive on top."""
    return dcg_prefix(k)[np.minimum(n_positive, k)]


def rank_discounts(k: int) -> np.ndarray:
    """1/log2(i + 1) for the ranks i = 1 … k, with the C library's log2 (``stats.libm``:
    numpy's own AVX-512 log2 differs in the last bit from rank 1620 on)."""
    return 1.0 / libm.log2(np.arange(2, k + 2, dtype=np.float64))


def dcg_prefix(k: int) -> np.ndarray:
    """The DCG of positives at ranks 1 … j, for j = 0 … k."""
    return np.r_[0.0, np.cumsum(rank_discounts(k))]


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a whole number of at least 1 (the cut-off rank), got {k!r}")
    return int(k)


def _integer_array(values, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.dtype.kind not in "iu":
        if array.size == 0:
            return array.astype(np.int64)
        raise ValueError(f"{name} must hold integer codes, got values of type {array.dtype}")
    return array


def _check_ranks(ranks: np.ndarray, offsets: np.ndarray, n_entries: int) -> None:
    if ranks.size != n_entries:
        raise ValueError(f"ranks must give one rank per doc: got {ranks.size} for {n_entries} docs")
    if ranks.size and ranks.min() < 1:
        entry = int(np.flatnonzero(ranks < 1)[0])
        raise ValueError(f"ranks start at 1; entry {entry} has rank {int(ranks[entry])}")
    rising = ranks[1:] > ranks[:-1]
    # Where a new list starts, the rank may drop back.
    starts = offsets[1:-1]
    rising[starts[(starts > 0) & (starts < n_entries)] - 1] = True
    if not rising.all():
        entry = int(np.flatnonzero(~rising)[0]) + 1
        query = int(np.searchsorted(offsets, entry, side="right") - 1)
        raise ValueError(f"ranks must strictly increase within a list; query code {query} has rank "
                         f"{int(ranks[entry])} after {int(ranks[entry - 1])} (a tie or unsorted list)")


def _positive_pairs(query, doc, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    query = _integer_array(query, "positive_query").astype(np.int64, copy=False)
    doc = _integer_array(doc, "positive_doc").astype(np.int64, copy=False)
    if query.size != doc.size:
        raise ValueError(f"positive_query and positive_doc must be paired, got {query.size} "
                         f"and {doc.size} values")
    if query.size and (query.min() < 0 or query.max() >= n_queries):
        raise ValueError(f"positive query codes must lie in 0..{n_queries - 1}, the queries of the "
                         "ranked lists; code the run and the judgements with one query index")
    if doc.size and doc.min() < 0:
        raise ValueError(f"doc codes must be non-negative, got {int(doc.min())}")
    return query, doc


def _blocks(take: np.ndarray):
    """Consecutive query ranges holding about BLOCK_ENTRIES entries each (whole queries)."""
    if take.size == 0:
        return
    ends = np.cumsum(take)
    cuts = np.searchsorted(ends, np.arange(BLOCK_ENTRIES, int(ends[-1]), BLOCK_ENTRIES), side="left")
    bounds = sorted_unique(np.r_[0, cuts + 1, take.size])
    yield from zip(bounds[:-1].tolist(), bounds[1:].tolist())


def _hits_in_slice(lists: RankedLists, q0: int, q1: int, doc_bound: int, positive_keys: np.ndarray,
                   is_positive_doc: np.ndarray):
    """(local query code, rank, key) of the hits among the entries of queries [q0, q1), when
    those are ``docs[offsets[q0]:offsets[q1]]`` ranked 1, 2, 3 … in each list: the entries
    whose doc is no query's positive (most of them) are passed over without a query or rank."""
    offsets = lists.offsets
    at = np.flatnonzero(is_positive_doc[lists.docs[offsets[q0]:offsets[q1]]]) + offsets[q0]
    # The list holding entry ``at``: the last query starting at or before it (an empty list
    # starts where the next one does, and side="right" passes over it).
    query = np.searchsorted(offsets[q0:q1 + 1], at, side="right") - 1
    rank = at - offsets[q0:q1][query] + 1
    key = (query + q0) * doc_bound + lists.docs[at].astype(np.int64, copy=False)
    found = member_of_sorted(positive_keys, key)
    return query[found], rank[found], key[found]


def _hits_in_block(lists: RankedLists, take: np.ndarray, q0: int, q1: int, k: int, remap, doc_bound: int,
                   positive_keys: np.ndarray, is_positive_doc, n_retrieved: np.ndarray):
    """(local query code, rank, key) of the hits among the first take[q] entries of each
    query in [q0, q1), any ranks and doc codes; writes the block's ``n_retrieved``."""
    query, rank, doc = _block_entries(lists, take, q0, q1)
    if lists.ranks is not None:
        within = rank <= k
        query, rank, doc = query[within], rank[within], doc[within]
    n_retrieved[q0:q1] = np.bincount(query, minlength=q1 - q0)
    if remap is not None:
        doc = _index_in(remap, doc, missing=doc_bound - 1)
    key = (query.astype(np.int64) + q0) * doc_bound + doc
    found = member_of_sorted(positive_keys, key) if is_positive_doc is None else \
        _member_among_positive_docs(positive_keys, key, is_positive_doc[doc])
    return query[found], rank[found], key[found]


def _block_entries(lists: RankedLists, take: np.ndarray, q0: int, q1: int):
    """(local query code, rank, doc) of the first take[q] entries of each query in [q0, q1)."""
    counts = take[q0:q1]
    total = int(counts.sum())
    query = np.repeat(np.arange(q1 - q0, dtype=np.int32), counts)
    before = np.cumsum(counts) - counts
    position = np.arange(total, dtype=np.int64) - np.repeat(before, counts)
    index = np.repeat(lists.offsets[q0:q1], counts) + position
    rank = position + 1 if lists.ranks is None else lists.ranks[index].astype(np.int64)
    return query, rank, lists.docs[index].astype(np.int64, copy=False)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of integers, by sorting: numpy 2.4's hash-based unique of mostly
    distinct integers costs about 1 µs a value (3.4 s for 3·10^6, against 0.05 s sorted)."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if values.size else values


def _positive_doc_table(positive_doc: np.ndarray, doc_bound: int, n_entries: int) -> np.ndarray | None:
    """Whether each doc code is some query's positive, when such a table is small next to
    the entries (doc codes are dense: one per distinct text); None otherwise."""
    if doc_bound > 4 * (n_entries + positive_doc.size) + 1024:
        return None
    table = np.zeros(doc_bound, bool)
    table[positive_doc] = True
    return table


def _member_among_positive_docs(positive_keys: np.ndarray, keys: np.ndarray, maybe: np.ndarray) -> np.ndarray:
    """``member_of_sorted`` searched only where the doc is someone's positive: a doc that is
    no query's positive is no hit, and most listed docs are none (10^7 binary searches of
    5·10^6 keys at 10^6 queries: about 0.4 s, issue 31)."""
    found = np.zeros(keys.size, bool)
    candidates = np.flatnonzero(maybe)
    found[candidates] = member_of_sorted(positive_keys, keys[candidates])
    return found


def member_of_sorted(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of ``keys`` are among ``sorted_keys`` (sorted, distinct): one binary search each."""
    if sorted_keys.size == 0:
        return np.zeros(keys.size, bool)
    at = np.searchsorted(sorted_keys, keys)
    np.minimum(at, sorted_keys.size - 1, out=at)
    return sorted_keys[at] == keys


def _index_in(sorted_values: np.ndarray, values: np.ndarray, *, missing: int) -> np.ndarray:
    if sorted_values.size == 0:
        return np.full(values.size, missing, np.int64)
    at = np.searchsorted(sorted_values, values)
    np.minimum(at, sorted_values.size - 1, out=at)
    return np.where(sorted_values[at] == values, at, missing)

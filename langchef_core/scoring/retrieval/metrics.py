"""Per-query retrieval metrics at k (ARCHITECTURE.md §5: ``retrieval_metrics``).

With P the positives of a query (its relevant judgements), R_k its top-k list and
H = |P ∩ R_k| the distinct positives ranked at or above k:

    recall             = H / |P|                       (standard recall@k)
    recall_normalized  = H / min(|P|, k)               (reaches 1 when |P| > k; never called recall)
    precision          = H / k                         (a short list is not padded: still / k)
    hit                = 1 if H > 0 else 0
    reciprocal_rank    = 1 / rank of the best-ranked positive within k, else 0
    ndcg               = DCG / IDCG, DCG = Σ_{d ∈ P ∩ R_k} 1 / log2(rank(d) + 1),
                         IDCG = Σ_{i=1}^{min(|P|, k)} 1 / log2(i + 1)   (binary relevance)

Recall, recall_normalized and nDCG are undefined (NaN) for a query without positives;
precision, hit and reciprocal rank are 0 there. What a report does with such queries is the
design's zero-positive policy, applied in ``langchef_core.scoring.retrieval.summary``.

The measures agree with trec_eval as exposed by pytrec_eval (``recall_k``, ``P_k``,
``success_k``, ``recip_rank`` on a list cut at k, ``ndcg_cut_k``) and with ranx
(``recall@k``, ``precision@k``, ``hit_rate@k``, ``mrr@k``, ``ndcg@k``); the reference tests
check this. References: Järvelin & Kekäläinen (2002), "Cumulated gain-based evaluation of IR
techniques", ACM TOIS 20(4); Manning, Raghavan & Schütze (2008), Introduction to Information
Retrieval, ch. 8.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...inputs.id_order import sorted_union
from ...inputs.ids import codes_among_in_blocks, isin, positions_in
from ...inputs.tables import read_table
from ...inputs.threads import on_threads
from .inputs import RankedRun
from .judgements import Judgements
from .kernel import QueryCounts, check_k, count_hits, ideal_dcg, ranked_lists

METRICS = ("recall", "recall_normalized", "precision", "hit", "reciprocal_rank", "ndcg")
# Defined only when the query has at least one positive.
NEEDS_POSITIVES = ("recall", "recall_normalized", "ndcg")
ALIASES = {"mrr": "reciprocal_rank", "rr": "reciprocal_rank", "hit_rate": "hit",
           "success": "hit", "p": "precision", "ndcg_cut": "ndcg"}


@dataclass(frozen=True, eq=False)
class QueryMetrics:
    """Per-query metrics at k as arrays (one value per query code), with what micro averages need."""

    k: int
    n_positive: np.ndarray
    hits: np.ndarray
    n_retrieved: np.ndarray
    recall: np.ndarray
    recall_normalized: np.ndarray
    precision: np.ndarray
    hit: np.ndarray
    reciprocal_rank: np.ndarray
    ndcg: np.ndarray
    dcg: np.ndarray
    ideal_dcg: np.ndarray

    @classmethod
    def from_counts(cls, counts: QueryCounts) -> "QueryMetrics":
        k, positives, hits = counts.k, counts.n_positive, counts.hits
        ideal = ideal_dcg(positives, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            recall = np.where(positives > 0, hits / positives, np.nan)
            normalized = np.where(positives > 0, hits / np.minimum(positives, k), np.nan)
            ndcg = np.where(positives > 0, counts.dcg / ideal, np.nan)
            reciprocal = np.where(counts.first_hit > 0, 1.0 / counts.first_hit, 0.0)
        return cls(k=k, n_positive=positives, hits=hits, n_retrieved=counts.n_retrieved,
                   recall=recall, recall_normalized=normalized, precision=hits / k,
                   hit=(hits > 0).astype(np.float64), reciprocal_rank=reciprocal, ndcg=ndcg,
                   dcg=counts.dcg, ideal_dcg=ideal)

    def values(self, metric: str) -> np.ndarray:
        return getattr(self, metric_name(metric))

    def micro_parts(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Per-query numerator and denominator whose pooled ratio is the micro average.

        recall: hits / |P|; recall_normalized: hits / min(|P|, k); precision: hits / k;
        ndcg: DCG / IDCG; hit and reciprocal_rank have denominator 1 (micro equals macro).
        """
        metric = metric_name(metric)
        if metric == "recall":
            return self.hits.astype(float), self.n_positive.astype(float)
        if metric == "recall_normalized":
            return self.hits.astype(float), np.minimum(self.n_positive, self.k).astype(float)
        if metric == "precision":
            return self.hits.astype(float), np.full(self.hits.size, float(self.k))
        if metric == "ndcg":
            return self.dcg, self.ideal_dcg
        return self.values(metric), np.ones(self.hits.size)

    def to_frame(self, query_ids=None) -> pd.DataFrame:
        columns = {"n_positive": self.n_positive, "hits": self.hits, "n_retrieved": self.n_retrieved}
        columns.update({metric: self.values(metric) for metric in METRICS})
        frame = pd.DataFrame(columns)
        if query_ids is not None:
            frame.insert(0, "query_id", np.asarray(query_ids, dtype=object))
        return frame


def metric_name(name: str) -> str:
    """The canonical metric name (``mrr`` → ``reciprocal_rank``); unknown names are refused."""
    canonical = ALIASES.get(str(name).lower(), str(name).lower())
    if canonical not in METRICS:
        raise ValueError(f"unknown retrieval metric {name!r}; use one of {', '.join(METRICS)}")
    return canonical


def retrieval_metrics_arrays(offsets, docs, positive_query, positive_doc, *, k: int = 10,
                             ranks=None) -> QueryMetrics:
    """Per-query metrics at k from integer-coded arrays: the entry point for large runs.

    ``docs[offsets[q]:offsets[q + 1]]`` is query q's ranked list (doc codes, best first);
    ``ranks`` gives explicit ranks (strictly increasing within a list) or None for 1, 2, 3 ….
    ``positive_query``/``positive_doc`` are the relevant (query code, doc code) pairs, in the
    same code spaces. Memory is about 13 bytes per list entry plus bounded working space.
    """
    counts = count_hits(ranked_lists(offsets, docs, ranks), positive_query, positive_doc, k=k)
    return QueryMetrics.from_counts(counts)


def retrieval_metrics(run, qrels, *, k: int = 10, source: str | None = None) -> pd.DataFrame:
    """One row per query: ``n_positive``, ``recall``, ``recall_normalized``, ``precision``,
    ``hit``, ``reciprocal_rank`` and ``ndcg`` at k (plus ``hits``, ``n_retrieved``,
    ``in_run``, ``in_qrels``), sorted by ``query_id``.

    ``run``: a long run (``query_id``, ``doc_id``, ``rank`` from 1), an arm run
    (``example_id``, ``retrieved``), a ``RankedRun`` or a file holding either. ``qrels``:
    ``query_id``, ``doc_id``, ``relevant`` (0/1), optionally ``source``, ``Judgements`` or a
    file holding them (files as ``scoring_inputs`` reads them). Rows cover every query of
    the run and of the qrels: a judged query the run did not answer is scored as an empty
    list (``in_run`` False), an answered query without judgements has n_positive 0.
    Judgements of all sources are pooled (relevant if any says so); pass ``source`` to score
    one provenance alone.
    """
    k = check_k(k)
    run, judgements = scoring_inputs(run, qrels, k=k)
    if source is not None and source not in judgements.sources:
        raise ValueError(f"no judgements from source {source!r}; the qrels hold "
                         f"{', '.join(judgements.sources)}")
    queries, metrics = score_run(run, judgements.positives(source), judgements.queries, k=k)
    frame = metrics.to_frame(queries)
    frame["in_run"] = isin(pd.Index(queries), run.queries)
    frame["in_qrels"] = isin(pd.Index(queries), judgements.queries)
    return frame


def scoring_inputs(run, qrels, *, k: int) -> tuple[RankedRun, Judgements]:
    """The validated run and judgements to score at k, from frames, built objects or files
    (parquet, JSON lines, CSV: ``read_table``), a run file kept to its first k ids as it is
    decoded (``RankedRun.from_file``).

    A parquet run file is read beside the qrels: pyarrow decodes a parquet column on one
    thread, so the qrels are read and checked while the run's ids decode (10^6 × 100: about
    1 s of 9–10 s, issue 31). Other run files are read first: pyarrow already reads JSON lines
    and CSV on every core, and each read's memory is checked alone (``read_table``). When
    both are wrong, the run's error is the one raised.
    """
    def run_built() -> RankedRun:
        if isinstance(run, RankedRun):
            return run
        return RankedRun.from_file(run, depth=k) if _is_path(run) else RankedRun.from_frame(run)

    def judgements_built() -> Judgements:
        if isinstance(qrels, Judgements):
            built = qrels
        elif _is_path(qrels):
            built = Judgements.from_frame(read_table(Path(qrels), label=str(qrels)), file=str(qrels))
        else:
            built = Judgements.from_frame(qrels)
        built.queries  # the judged queries, coded here while a parquet run decodes (kept)
        return built

    steps = [run_built, judgements_built]
    parquet_run = _is_path(run) and Path(run).suffix == ".parquet"
    built_run, judgements = (on_threads(lambda step: step(), steps) if parquet_run
                             else [step() for step in steps])
    return built_run, judgements


def _is_path(value) -> bool:
    return isinstance(value, (str, os.PathLike))


def score_run(run: RankedRun, positives: pd.DataFrame, judged_queries, *, k: int,
              queries=None, positive_query: np.ndarray | None = None) -> tuple[np.ndarray, QueryMetrics]:
    """Code a validated run and its positives into integers and score them with the kernel.

    The queries scored are ``queries`` when given, else the union of the run's and the judged
    queries, sorted; the result's arrays follow that order. ``positive_query``, when given,
    is each positive's query code among ``queries`` (-1: not scored), as
    ``Judgements.over`` has it: every arm of a readout shares it.
    """
    if run.depth is not None and k > run.depth:
        raise ValueError(f"the run {run.file!r} keeps ranks 1-{run.depth} only (depth={run.depth}); "
                         f"read it with depth of at least k={k} to score at k")
    if queries is None:
        if positive_query is not None:
            raise ValueError("positive_query codes the positives among given queries: pass queries too")
        queries = sorted_union(run.queries, judged_queries)
    queries = np.asarray(queries, dtype=object)
    index = _LazyIndex(queries)
    if positive_query is None:
        positive_query = positions_in(positives["query_id"], index.get())
    scored = positive_query >= 0  # positives of queries outside ``queries`` are not scored
    if not scored.all():
        positives, positive_query = positives[scored], positive_query[scored]
    lists = _arm_lists(run, queries, index, k) if run.lists is not None else _long_lists(run, index.get())
    # Only whether a listed doc is one of the query's positives matters (the kernel keeps a
    # repeated doc once among the hits), so every other doc shares one code.
    positive_block = lists.block_of_query[positive_query]
    positive_docs, run_docs = codes_among_in_blocks(positives["doc_id"], positive_block,
                                                    lists.docs, lists.block_bounds)
    _one_code_for_other_docs(run_docs, positive_block, lists.block_bounds)
    in_order = run_docs if lists.order is None else run_docs[lists.order]
    counts = count_hits(ranked_lists(lists.offsets, in_order, lists.ranks),
                        positive_query, positive_docs, k=k)
    return queries, QueryMetrics.from_counts(counts)


class _LazyIndex:
    """A pandas Index of the scored queries, built only when a lookup needs it (0.1 s at
    10^6 queries, and an arm run that answers exactly them needs none)."""

    def __init__(self, queries: np.ndarray):
        self.queries, self._index = queries, None

    def get(self) -> pd.Index:
        if self._index is None:
            self._index = pd.Index(self.queries)
        return self._index


def _one_code_for_other_docs(run_docs: np.ndarray, positive_block: np.ndarray, block_bounds) -> None:
    """Give every listed doc that is no positive of its block one code above every positive's
    (in place): each block codes them as its own number of positives, which is a positive's
    code in a larger block, so the kernel could not rule them out by their code alone."""
    per_block = np.bincount(positive_block, minlength=len(block_bounds) - 1)
    other = run_docs == np.repeat(per_block, np.diff(block_bounds))
    run_docs[other] = int(per_block.max(initial=0))


# Lists per block when an arm run's doc ids are coded: the positives and entries of about
# 3·10^4 queries make hash tables that stay in cache (10^6 queries in one table: 3× slower).
LISTS_PER_BLOCK = 1 << 15


def lists_per_block(lists: int) -> int:
    """Lists per block: as few blocks as LISTS_PER_BLOCK allows, all of one size but the last,
    which is short by fewer lists than there are blocks. The blocks are coded on a thread per
    core, and 10^5 lists as three full blocks and one of 1,696 kept one core on two full
    blocks while the other idled (four of 25,000: scoring 16 % faster)."""
    blocks = max(1, -(-lists // LISTS_PER_BLOCK))
    return max(1, -(-lists // blocks))


@dataclass(frozen=True, eq=False)
class _TextLists:
    """Ranked lists of doc id text before coding: query q's list is
    ``docs[order[offsets[q]:offsets[q + 1]]]`` (``docs[offsets[q]:offsets[q + 1]]`` when
    ``order`` is None: the lists are in query order already); the docs of the queries of block b
    (``block_of_query``) are ``docs[block_bounds[b]:block_bounds[b + 1]]``."""

    offsets: np.ndarray
    docs: object
    order: np.ndarray | None
    ranks: np.ndarray | None
    block_of_query: np.ndarray
    block_bounds: np.ndarray


def _list_query_codes(run: RankedRun, queries: np.ndarray, index: _LazyIndex) -> np.ndarray:
    """The query code of each of an arm run's lists. Usually the queries scored are the run's
    own (every arm answers the judged queries): then a list's code is its query's place
    among the run's sorted queries, known since the run was read (0.5 s at 10^6, issue 31)."""
    lists = run.lists
    if lists.query_rank is not None and queries.size == run.queries.size \
            and np.array_equal(queries, run.queries):
        return lists.query_rank
    return _codes_of(pd.Series(lists.queries), index.get())  # Arrow text: looked up by pyarrow


def _arm_lists(run: RankedRun, queries: np.ndarray, index: _LazyIndex, k: int) -> _TextLists:
    """An arm run's lists cut at k (ranks past k never count), one per query code; a query
    the run did not answer gets an empty list."""
    query_code = _list_query_codes(run, queries, index)
    lengths, docs = run.lists.top(k)
    by_code = np.zeros(queries.size, np.int64)
    by_code[query_code] = lengths  # one list per query: repeated examples were refused
    offsets = np.r_[0, np.cumsum(by_code)]
    starts = np.cumsum(lengths) - lengths
    # Blocks of consecutive lists in file order, whose entries are consecutive in ``docs``; a
    # query the run did not answer has no entries and joins block 0.
    per_block = lists_per_block(query_code.size)
    block_of_query = np.zeros(queries.size, np.int64)
    block_of_query[query_code] = np.arange(query_code.size) // per_block
    bounds = np.r_[starts[::per_block], lengths.sum()] if lengths.size else np.zeros(2, np.int64)
    return _TextLists(offsets, docs, _entry_order(query_code, lengths, starts, offsets), None,
                      block_of_query, bounds)


def _entry_order(query_code: np.ndarray, lengths: np.ndarray, starts: np.ndarray,
                 offsets: np.ndarray) -> np.ndarray | None:
    """Where each entry of the lists in query-code order lies in file order; None when the
    file lists its queries in that order already (as most writers do): then reordering 10^7
    entries would copy them for nothing."""
    if np.all(query_code[1:] > query_code[:-1]):
        return None
    order = np.argsort(query_code, kind="stable")
    shift = np.repeat(starts[order] - offsets[query_code[order]], lengths[order])
    return shift + np.arange(shift.size, dtype=np.int64)


def _long_lists(run: RankedRun, index: pd.Index) -> _TextLists:
    entries = run.entries
    query_code = _codes_of(entries["query_id"], index)
    ranks = entries["rank"].to_numpy(np.int64)
    order = np.lexsort((ranks, query_code))
    offsets = np.r_[0, np.cumsum(np.bincount(query_code, minlength=index.size))]
    return _TextLists(offsets, entries["doc_id"], order, ranks[order], np.zeros(index.size, np.int64),
                      np.array([0, len(entries)]))


def _codes_of(query_ids, index: pd.Index) -> np.ndarray:
    query_code = positions_in(query_ids, index)
    if (query_code < 0).any():
        raise ValueError("the run answers queries outside the queries to score")
    return query_code

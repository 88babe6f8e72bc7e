"""Proof that both arms ranked the same candidate pool, and the pool sizes chance levels need.

Two arms are only comparable on a retrieval metric when every query put the same candidates
in front of both. The check is built from what the files say, never assumed:

* each arm's pool is its own ``candidates`` column when its run file carries one, else the
  shared pool file (``pools/<suite>``);
* the pools must be equal, as sets of (query, doc) pairs, across the two arms and against
  the pool file when both exist; the first differing queries (sorted by id) are named;
* every retrieved document must belong to its arm's pool;
* with no candidate lists and no pool file, only a full-corpus design passes (both arms
  search the corpus, which is the thing a retrieval change is allowed to change); a sampled
  or hard-negative design must write its pool down.

Everything is a set operation on int64 keys ``query * D + doc`` over factorized ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats.records import Record
from .inputs import RankedRun, candidate_pool

POOL_KINDS = ("full", "sampled", "hard_negative")
NAMED = 10  # how many differing queries / stray documents a failure names


@dataclass(frozen=True)
class PoolCheck(Record):
    """Outcome of ``check_pools``: ``passed``, a one-sentence ``reason``, and the evidence."""

    passed: bool
    reason: str
    basis: str
    pool_kind: str
    n_queries: int
    n_differing: int
    differing_queries: tuple[str, ...]
    n_outside: int
    outside_pool: tuple[dict, ...]

    def to_dict(self) -> dict:
        record = super().to_dict()
        record["differing_queries"] = list(self.differing_queries)
        record["outside_pool"] = [dict(item) for item in self.outside_pool]
        return record


def check_pools(baseline: RankedRun, variant: RankedRun, *, pool: pd.DataFrame | None = None,
                pool_kind: str = "full", pool_file: str = "pools",
                arms: tuple[str, str] = ("baseline", "variant")) -> PoolCheck:
    """Did both arms rank the same candidates for every query, and only those?"""
    pool_kind = check_pool_kind(pool_kind)
    shared = None if pool is None else candidate_pool(pool, file=pool_file)
    runs = dict(zip(arms, (baseline, variant)))
    pools = {arm: run.candidates if run.candidates is not None else shared for arm, run in runs.items()}
    queries = np.union1d(baseline.queries.astype(str), variant.queries.astype(str))
    if all(p is None for p in pools.values()):
        if pool_kind == "full":
            return _result(True, "full corpus declared: both arms rank the whole corpus and bring "
                           "no candidate lists, so there is no pool to differ", "declared_full_corpus",
                           pool_kind, queries.size)
        return _result(False, f"the design declares a {pool_kind} pool but neither a pool file nor "
                       "a candidates column in the runs says what it is; write pools/<suite> or "
                       "give each arm run a candidates list", "missing", pool_kind, queries.size)
    missing = [arm for arm, p in pools.items() if p is None]
    if missing:
        return _result(False, f"{missing[0]} brings no candidate list while the other arm does, "
                       "and there is no pool file to fall back on", "missing", pool_kind, queries.size)
    basis = _basis(runs, shared)
    coder = _PairCoder([p for p in pools.values()] + [run.entries for run in runs.values()]
                       + ([shared] if shared is not None else []))
    keys = {arm: coder.keys(p) for arm, p in pools.items()}
    reference = coder.keys(shared) if shared is not None else keys[arms[0]]
    differing = np.unique(np.concatenate([coder.query_of(np.setxor1d(reference, keys[arm]))
                                          for arm in arms]))
    n_outside, outside = _outside(runs, keys, coder)
    named = tuple(sorted(coder.query_ids[differing].tolist())[:NAMED])
    n_queries = int(np.union1d(queries, np.concatenate(
        [np.asarray(p["query_id"].unique(), dtype=str) for p in pools.values()])).size)
    if differing.size:
        reason = (f"the arms did not rank the same candidates: the pools differ for "
                  f"{differing.size} quer{'y' if differing.size == 1 else 'ies'} "
                  f"(first: {', '.join(named)})")
        return _result(False, reason, basis, pool_kind, n_queries, differing.size, named,
                       n_outside, outside)
    if n_outside:
        first = outside[0]
        reason = (f"{n_outside} retrieved document(s) are not in their arm's pool (first: "
                  f"{first['arm']} query {first['query_id']!r}, doc {first['doc_id']!r}, "
                  f"{first['file']} row {first['row']})")
        return _result(False, reason, basis, pool_kind, n_queries, 0, (), n_outside, outside)
    return _result(True, f"both arms ranked identical pools for all {n_queries} queries and "
                   "retrieved only from them", basis, pool_kind, n_queries)


def check_pool_kind(kind: str) -> str:
    if kind not in POOL_KINDS:
        raise ValueError(f"pool kind must be one of {', '.join(POOL_KINDS)}, got {kind!r}")
    return kind


def pool_counts(pool: pd.DataFrame, positives: pd.DataFrame, queries) -> tuple[np.ndarray, np.ndarray]:
    """Per query (in the order of ``queries``): the pool size N and the positives inside it, m."""
    index = pd.Index(np.asarray(queries, dtype=object))
    pool = pool.drop_duplicates(["query_id", "doc_id"])
    size = np.bincount(_known(index.get_indexer(pool["query_id"])), minlength=index.size)
    both = positives.merge(pool[["query_id", "doc_id"]], on=["query_id", "doc_id"], how="inner")
    inside = np.bincount(_known(index.get_indexer(both["query_id"])), minlength=index.size)
    return size.astype(np.int64), inside.astype(np.int64)


class _PairCoder:
    """One integer code space for the (query, doc) pairs of several tables."""

    def __init__(self, tables):
        self.query_ids = pd.Index(pd.unique(pd.concat([t["query_id"] for t in tables],
                                                      ignore_index=True))).astype(str)
        self.doc_ids = pd.Index(pd.unique(pd.concat([t["doc_id"] for t in tables],
                                                    ignore_index=True))).astype(str)
        self.bound = max(self.doc_ids.size, 1)

    def pair_keys(self, table) -> np.ndarray:
        return (self.query_ids.get_indexer(table["query_id"]).astype(np.int64) * self.bound
                + self.doc_ids.get_indexer(table["doc_id"]))

    def keys(self, table) -> np.ndarray:
        return np.unique(self.pair_keys(table))

    def query_of(self, keys: np.ndarray) -> np.ndarray:
        return keys // self.bound


def _outside(runs, keys, coder) -> tuple[int, list[dict]]:
    """How many retrieved entries fall outside their arm's pool, and the first few of them."""
    count, first = 0, []
    for arm, run in runs.items():
        entries, pool = run.entries, keys[arm]
        pair = coder.pair_keys(entries)
        if pool.size:
            stray = pool[np.minimum(np.searchsorted(pool, pair), pool.size - 1)] != pair
        else:
            stray = np.ones(pair.size, bool)
        positions = np.flatnonzero(stray)
        count += positions.size
        first += [{"arm": arm, "query_id": str(entries["query_id"].iloc[at]),
                   "doc_id": str(entries["doc_id"].iloc[at]), "file": run.file,
                   "row": int(entries.index[at])} for at in positions[:NAMED]]
    return count, first


def _basis(runs, shared) -> str:
    own = [arm for arm, run in runs.items() if run.candidates is not None]
    if own and shared is not None:
        return "candidates+pool_file"
    return "candidates" if own else "pool_file"


def _known(codes: np.ndarray) -> np.ndarray:
    return codes[codes >= 0]


def _result(passed, reason, basis, kind, n_queries, n_differing=0, differing=(),
            n_outside=0, outside=()) -> PoolCheck:
    return PoolCheck(passed=bool(passed), reason=reason, basis=basis, pool_kind=kind,
                     n_queries=int(n_queries), n_differing=int(n_differing),
                     differing_queries=tuple(differing), n_outside=int(n_outside),
                     outside_pool=tuple(outside)[:NAMED])

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

Everything is a set operation on int64 keys ``query * D + doc`` over ids that pyarrow
dictionary-encodes once, every table together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...inputs.id_order import sorted_union
from ...inputs.ids import large_text, shared_text_codes
from ...stats.records import Record
from .inputs import RankedRun, candidate_pool
from .kernel import member_of_sorted, sorted_unique

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
    cut = [run.file for run in (baseline, variant) if run.depth is not None]
    if cut:  # the check reads every entry: a doc outside the pool past the depth would pass
        raise ValueError(f"the run {cut[0]!r} was read to a depth (RankedRun.from_frame(depth=…)); "
                         "check pools on runs read whole")
    shared = None if pool is None else candidate_pool(pool, file=pool_file)
    runs = dict(zip(arms, (baseline, variant)))
    pools = {arm: run.candidates if run.candidates is not None else shared for arm, run in runs.items()}
    if all(p is None for p in pools.values()):
        queries = _run_queries(baseline, variant)
        if pool_kind == "full":
            return _result(True, "full corpus declared: both arms rank the whole corpus and bring "
                           "no candidate lists, so there is no pool to differ", "declared_full_corpus",
                           pool_kind, queries.size)
        return _result(False, f"the design declares a {pool_kind} pool but neither a pool file nor "
                       "a candidates column in the runs says what it is; write pools/<suite> or "
                       "give each arm run a candidates list", "missing", pool_kind, queries.size)
    missing = [arm for arm, p in pools.items() if p is None]
    if missing:
        queries = _run_queries(baseline, variant)
        return _result(False, f"{missing[0]} brings no candidate list while the other arm does, "
                       "and there is no pool file to fall back on", "missing", pool_kind, queries.size)
    basis = _basis(runs, shared)
    # Each pool table is coded once, however many arms rank it.
    own = {arm: run.candidates for arm, run in runs.items() if run.candidates is not None}
    pool_tables = {**own, **({_POOL_FILE: shared} if shared is not None else {})}
    coder = _PairCoder({**pool_tables, **{(arm, "entries"): run.entries for arm, run in runs.items()}},
                       [run.queries for run in runs.values()])
    distinct = {name: sorted_unique(coder.pairs[name]) for name in pool_tables}
    keys = {arm: distinct[arm if arm in own else _POOL_FILE] for arm in arms}
    reference = distinct[_POOL_FILE] if shared is not None else keys[arms[0]]
    # Both key sets are distinct already, so the symmetric difference is a sort away.
    differing = sorted_unique(np.concatenate([coder.query_of(np.setxor1d(reference, keys[arm],
                                                                        assume_unique=True))
                                              for arm in arms]))
    n_outside, outside = _outside(runs, keys, {arm: coder.pairs[(arm, "entries")] for arm in arms})
    named = tuple(sorted(coder.query_text(differing))[:NAMED])
    n_queries = coder.n_queries(pool_tables)
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
    """Per query (in the order of ``queries``): the pool size N and the positives inside it, m
    (a repeated pool row counts once; every positive row in the pool counts)."""
    coder = _PairCoder({"pool": pool, "positives": positives}, [])
    pool_pairs, positive_pairs = sorted_unique(coder.pairs["pool"]), coder.pairs["positives"]
    inside_pool = member_of_sorted(pool_pairs, positive_pairs)
    position, n = coder.query_positions(queries), len(queries)
    size = np.bincount(_known(position[coder.query_of(pool_pairs)]), minlength=n)
    inside = np.bincount(_known(position[coder.query_of(positive_pairs[inside_pool])]), minlength=n)
    return size.astype(np.int64), inside.astype(np.int64)


_POOL_FILE = ("pool", "file")  # the shared pool's name among the coded tables (no arm's)


class _PairCoder:
    """One integer code space for the (query, doc) pairs of named tables (and the queries of
    the arm runs): each id column of all the tables is dictionary-encoded once, by pyarrow,
    and pair i of table t is ``pairs[t][i] = query code · D + doc code``. pandas'
    get_indexer on Arrow text took most of a minute at 10^5 queries × 50 candidates."""

    def __init__(self, tables: dict, run_queries):
        names = list(tables)
        query_codes, self._query_text = shared_text_codes(
            [tables[name]["query_id"] for name in names] + list(run_queries))
        doc_codes, doc_text = shared_text_codes([tables[name]["doc_id"] for name in names])
        self.bound = max(len(doc_text), 1)
        self.pairs = {name: query * self.bound + doc
                      for name, query, doc in zip(names, query_codes, doc_codes)}
        self._run_queries = query_codes[len(names):]

    def query_of(self, keys: np.ndarray) -> np.ndarray:
        return keys // self.bound

    def query_text(self, codes: np.ndarray) -> list[str]:
        return self._query_text.take(codes).to_pylist()

    def query_positions(self, queries) -> np.ndarray:
        """Each query code's position among ``queries`` (distinct texts; -1 where absent)."""
        import pyarrow.compute as pc
        found = pc.index_in(self._query_text, value_set=large_text(np.asarray(queries, dtype=object)))
        return found.fill_null(-1).to_numpy().astype(np.intp)

    def n_queries(self, names) -> int:
        """Distinct queries among the named tables and the runs."""
        return int(sorted_unique(np.concatenate([*(self.query_of(self.pairs[name]) for name in names),
                                                 *self._run_queries])).size)


def _outside(runs, keys, entry_pairs) -> tuple[int, list[dict]]:
    """How many retrieved entries fall outside their arm's pool, and the first few of them."""
    count, first = 0, []
    for arm, run in runs.items():
        positions = np.flatnonzero(~member_of_sorted(keys[arm], entry_pairs[arm]))
        count += positions.size
        entries = run.entries
        first += [{"arm": arm, "query_id": str(entries["query_id"].iloc[at]),
                   "doc_id": str(entries["doc_id"].iloc[at]), "file": run.file,
                   "row": int(entries.index[at])} for at in positions[:NAMED]]
    return count, first


def _run_queries(baseline: RankedRun, variant: RankedRun) -> np.ndarray:
    return sorted_union(baseline.queries, variant.queries)


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

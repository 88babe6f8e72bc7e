"""The per-query evidence behind a retrieval comparison, for the readout and its page.

A mean per-query difference says how much a retriever change moved the metric on
average; a reviewer also needs to see how: did every query lose a little, or a few lose
everything? For each metric this keeps the distribution of per-query differences
(variant − baseline) as a fixed histogram — so the readout stays small at any suite size —
and, for the metric the queries are ranked by, the queries that lost and gained most, with
both arms' top-k and which of those documents the labels call relevant.

Everything is ordered by value and then by query id, so the same inputs give the same
bytes whatever order the files list them in.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..stats.libm import elementwise

SHOWN_QUERIES = 5
BIN_WIDTH = 0.1          # retrieval metrics live in [0, 1]; differences in [−1, 1]
BIN_COUNT = 20
POOLED = "pooled"
ARMS = ("baseline", "variant")


def per_query_evidence(comparison, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame,
                       goldens: pd.DataFrame | None, *, focus: str | None = None,
                       shown: int = SHOWN_QUERIES) -> dict | None:
    """``runs`` maps "baseline"/"variant" to the arms' run frames; ``focus`` is the metric
    the queries are ranked by (the design's primary when it is a retrieval metric, else the
    first metric). None when no metric was compared."""
    from ..scoring.retrieval.inputs import RankedRun
    settings = comparison.settings
    source = comparison.sources[0] if comparison.sources else None
    scores = comparison.scores
    if source is None or scores is None or scores.empty:
        return None
    kept = ((scores["source"] == source) & scores["scored"]).to_numpy(dtype=bool)
    rows = {arm: np.flatnonzero(kept & (scores["arm"] == arm).to_numpy(dtype=bool))
            for arm in ARMS}
    queries, rows = _aligned(scores["query_id"], rows) or _matched(scores["query_id"], rows)
    if not len(queries):
        return None
    metrics = [metric for metric in settings.metrics if metric in scores.columns]
    focus = focus if focus in metrics else metrics[0]
    differences = {metric: _differences(scores[metric], rows) for metric in metrics}
    # Queries are in id order, so a stable sort by difference orders by (difference, id);
    # the shown queries are kept as positions in that order.
    focused = differences[focus]
    order = np.argsort(focused, kind="stable")
    lost = [int(at) for at in order[focused[order] < 0][:shown]]
    backwards = order[::-1]
    # Among equal gains, the lowest query id first, as among equal losses.
    gained = sorted((int(at) for at in backwards[focused[backwards] > 0][:shown]),
                    key=lambda at: (-focused[at], at))
    # Rankings, labels and inputs are gathered for the shown queries only (10^5-query suites).
    shown_ids = {str(queries[at]) for at in lost + gained}
    ranked = {arm: _top_k(RankedRun.from_frame(_rows_for(frame, shown_ids), file=arm).entries,
                          settings.k, shown_ids) if shown_ids else {}
              for arm, frame in runs.items()}
    relevant = _relevant(qrels, source, shown_ids)
    inputs = _inputs(goldens, shown_ids)

    def entry(at: int) -> dict:
        query = str(queries[at])
        return {"query_id": query, "input": inputs.get(query),
                "differences": {metric: float(differences[metric][at]) for metric in metrics},
                "baseline": _ranking(ranked["baseline"].get(query, []), relevant, query),
                "variant": _ranking(ranked["variant"].get(query, []), relevant, query),
                "relevant": sorted(relevant.get(query, set()))}

    return {"source": source, "k": settings.k, "focus": focus, "n_queries": len(queries),
            "bin_width": BIN_WIDTH,
            "histograms": {metric: histogram(differences[metric])
                           for metric in metrics},
            "lost": [entry(at) for at in lost],
            "gained": [entry(at) for at in gained]}


def histogram(values) -> dict:
    """Counts of differences in 20 bins of 0.1 from −1 to 1 (a bin holds its lower edge;
    +1 falls in the last), with exact zeros counted apart: "unchanged" is the answer a
    reviewer looks for first, and it would otherwise hide inside the bin [0, 0.1)."""
    values = np.asarray(values, dtype=float)
    zero = int(np.count_nonzero(values == 0))
    moved = values[values != 0]
    index = np.clip(np.floor((moved + 1) / BIN_WIDTH + 1e-9).astype(int), 0, BIN_COUNT - 1)
    counts = np.bincount(index, minlength=BIN_COUNT)
    return {"low": -1.0, "high": 1.0, "counts": [int(c) for c in counts], "unchanged": zero,
            "lower": int(np.count_nonzero(moved < 0)), "higher": int(np.count_nonzero(moved > 0))}


def _aligned(ids: pd.Series, rows: dict) -> tuple | None:
    """The queries and each arm's rows for them, taken as they stand when both arms list the
    same ids in strictly increasing order: ``comparison.scores`` lists every arm's queries in
    one sorted order, and looking 10^6 ids up costs most of this readout section (0.5 s).
    None when the rows are not so, for ``_matched``.

    Strictly increasing (Unicode code points, as Python and pyarrow compare) is also
    non-decreasing in numpy's order of the same texts, so ``_matched``'s stable sort would
    keep this order; it also rules out duplicates.
    """
    if not isinstance(ids.dtype, pd.StringDtype) or ids.hasnans:
        return None
    baseline, variant = (_at(ids.array, rows[arm]) for arm in ARMS)
    if len(baseline) != len(variant) or not (baseline == variant).all() \
            or not (baseline[:-1] < baseline[1:]).all():
        return None
    return baseline, rows


def _at(values, rows: np.ndarray):
    """``values[rows]`` for increasing ``rows``; a slice when they run without a gap, as each
    arm's block of the scores does: a slice shares the Arrow buffers, where taking copies
    10^6 texts (0.04 s an arm)."""
    if rows.size and rows[-1] - rows[0] + 1 == rows.size:
        return values[rows[0]:rows[-1] + 1]
    return values.take(rows)


def _matched(ids: pd.Series, rows: dict) -> tuple:
    """The queries both arms scored, in id order, and each arm's rows for them, looked up by
    query id: for any order of rows."""
    wide = {arm: pd.Series(at, index=pd.Index(ids.iloc[at])) for arm, at in rows.items()}
    both = wide["baseline"].index.intersection(wide["variant"].index)
    queries = both.to_numpy(dtype=object)[np.argsort(both.astype(str).to_numpy(dtype=str),
                                                     kind="stable")]
    if not queries.size:
        return queries, {}
    return queries, {arm: at.reindex(queries).to_numpy() for arm, at in wide.items()}


def _differences(values: pd.Series, rows: dict) -> np.ndarray:
    """Variant minus baseline per query, from a metric's column of the scores and each arm's
    rows in query order."""
    filled = values.fillna(0.0).to_numpy(dtype=float)
    # Once per distinct difference: few at 10^6 queries.
    return elementwise(_clean, filled[rows["variant"]] - filled[rows["baseline"]])


def _clean(value: float) -> float:
    """Rounded to 12 decimals, so 0.9 − 0.9 reads as 0 and not as a flicker of float error."""
    value = round(value, 12)
    return 0.0 if value == 0 or not math.isfinite(value) else value


def _rows_for(run: pd.DataFrame, queries: set[str]) -> pd.DataFrame:
    """The rows of an (already validated) arm or long run that answer these queries."""
    column = "example_id" if "example_id" in run.columns else "query_id"
    at = np.flatnonzero(run[column].astype(str).isin(queries).to_numpy(dtype=bool))
    if not at.size:
        return run.iloc[:0]
    # Slices share the run's Arrow buffers, where taking the rows would first join a 10^6-row
    # run's hundreds of chunks (0.05 s a run); a long run's rows for a query lie together.
    starts = np.flatnonzero(np.diff(at, prepend=-2) != 1)
    ends = np.append(starts[1:], at.size) - 1
    return pd.concat([run.iloc[at[first]:at[last] + 1] for first, last in zip(starts, ends)])


def _top_k(entries: pd.DataFrame, k: int, queries: set[str]) -> dict[str, list[str]]:
    chosen = (entries["rank"] <= k) & entries["query_id"].astype(str).isin(queries)
    top = entries[chosen].sort_values(["query_id", "rank"], kind="stable")
    return {str(query): [str(doc) for doc in group["doc_id"]]
            for query, group in top.groupby("query_id", sort=True)}


def _relevant(qrels: pd.DataFrame, source: str, queries: set[str]) -> dict[str, set[str]]:
    if qrels is None or qrels.empty:
        return {}
    chosen = qrels[(qrels["relevant"].astype(int) == 1)
                   & qrels["query_id"].astype(str).isin(queries)]
    if source != POOLED and "source" in chosen.columns:
        chosen = chosen[chosen["source"].astype(str) == source]
    out: dict[str, set[str]] = {}
    for query, doc in zip(chosen["query_id"].astype(str), chosen["doc_id"].astype(str)):
        out.setdefault(query, set()).add(doc)
    return out


def _ranking(docs: list[str], relevant: dict, query) -> list[dict]:
    positives = relevant.get(str(query), set())
    return [{"doc_id": doc, "relevant": doc in positives} for doc in docs]


def _inputs(goldens: pd.DataFrame | None, queries: set[str]) -> dict[str, str]:
    if goldens is None or "example_id" not in goldens.columns or "input" not in goldens.columns:
        return {}
    shown = goldens[goldens["example_id"].astype(str).isin(queries)]
    return {str(key): value if isinstance(value, str) else str(value)
            for key, value in zip(shown["example_id"], shown["input"])}

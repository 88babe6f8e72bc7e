"""The per-query evidence of a retrieval comparison: the shortcut for the scores as
``compare_retrieval`` lays them out gives what the lookup by query id gives for any layout."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.readout import retrieval_evidence as evidence


def _suite(seed: int, queries: int = 300):
    """Two arms' runs, their labels and goldens; some queries only one arm answers and some
    carry no positive label, so the scores hold unscored rows and arm-only queries."""
    rng = np.random.default_rng(seed)
    # Ids beyond ASCII and of both cases: the shortcut relies on code-point order.
    ids = [f"{'qQé日'[i % 4]}{i:04d}" for i in rng.permutation(queries)]
    docs = [f"d{i}" for i in range(40)]
    runs = {arm: pd.DataFrame({"example_id": [q for q in ids if rng.random() > 0.05]})
            for arm in ("baseline", "variant")}
    for run in runs.values():
        run["retrieved"] = [list(rng.choice(docs, size=8, replace=False)) for _ in range(len(run))]
    judged = [q for q in ids if rng.random() > 0.1]
    qrels = pd.DataFrame([{"query_id": q, "doc_id": d, "relevant": 1, "source": "human"}
                          for q in judged for d in rng.choice(docs, size=3, replace=False)])
    goldens = pd.DataFrame({"example_id": ids, "input": [f"question {q}" for q in ids]})
    return runs, qrels, goldens


def _evidence(comparison, runs, qrels, goldens):
    return evidence.per_query_evidence(comparison, runs, qrels, goldens, focus="recall")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_aligned_scores_give_what_the_lookup_by_query_gives(seed):
    """``comparison.scores`` lists both arms' queries in one sorted order, so the rows are
    paired as they stand; shuffled, they must be looked up by query id — same evidence."""
    runs, qrels, goldens = _suite(seed)
    comparison = lc.compare_retrieval(runs["baseline"], runs["variant"], qrels, resamples=1000)
    assert evidence._aligned(comparison.scores["query_id"],
                             _arm_rows(comparison.scores)) is not None  # the shortcut is taken
    fast = _evidence(comparison, runs, qrels, goldens)
    shuffled = comparison.scores.sample(frac=1.0, random_state=seed)
    assert evidence._aligned(shuffled["query_id"], _arm_rows(shuffled)) is None
    general = _evidence(dataclasses.replace(comparison, scores=shuffled), runs, qrels, goldens)
    assert fast["lost"] and fast["gained"]
    assert fast == general
    assert repr(fast) == repr(general)  # the same floats, to the bit


def test_unsorted_or_unpaired_ids_take_the_lookup():
    """Ids in an order that is not strictly increasing, or not the same in both arms, or
    missing, leave the shortcut."""
    rows = {"baseline": np.array([0, 1, 2]), "variant": np.array([3, 4, 5])}
    for ids in (["a", "b", "c", "a", "b", "c"], ["a", "c", "b", "a", "c", "b"],
                ["a", "a", "b", "a", "a", "b"], ["a", "b", "c", "a", "b", "d"],
                ["a", "b", None, "a", "b", None]):
        aligned = evidence._aligned(pd.Series(ids, dtype="str"), rows)
        assert (aligned is not None) == (ids[0:3] == ["a", "b", "c"] and ids[3:] == ids[:3]), ids
    assert evidence._aligned(pd.Series([1, 2, 3, 1, 2, 3]), rows) is None  # not text


def test_rows_for_a_few_queries_are_the_rows_a_mask_selects():
    """Rows taken as slices (runs of consecutive rows), in the run's order, with its index."""
    long = pd.DataFrame({"query_id": pd.Series(["a", "a", "b", "c", "c", "a", "d"], dtype="str"),
                         "doc_id": list("xyzxyzw"), "rank": [1, 2, 1, 1, 2, 3, 1]},
                        index=pd.Index([10, 11, 12, 13, 14, 15, 16]))
    for shown in ({"a"}, {"c"}, {"a", "c"}, {"d"}, {"nothing"}, set()):
        expected = long[long["query_id"].isin(shown)]
        got = evidence._rows_for(long, shown)
        pd.testing.assert_frame_equal(got, expected)


def _arm_rows(scores: pd.DataFrame) -> dict:
    scored = scores["scored"].to_numpy(dtype=bool)
    return {arm: np.flatnonzero(scored & (scores["arm"] == arm).to_numpy(dtype=bool))
            for arm in evidence.ARMS}

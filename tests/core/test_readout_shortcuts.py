"""Issue 31: the shortcuts that took the 10^6-golden judged readout under 30 s answer exactly
what the paths they bypass answer.

- ``cluster_robust.cluster_sums`` counts pass/fail differences per cluster instead of
  sorting them: the same four arrays, bit for bit, as the sort it replaced.
- ``item_scores.judged_items`` finds each answer's golden with one hash lookup: the same
  frame as the inner merge, and the merge still serves the cases the lookup cannot.
- ``experiment.completeness_check`` checks a pair of run files under the same names once.
- ``ids.isin`` asks pandas' hash engine when the candidate ids are distinct and complete.
- Retrieval scoring skips reordering lists the file gives in query order, and takes each
  positive's query code from ``Judgements.over``, shared by both arms and both steps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from langchef_core.designs import gates
from langchef_core.inputs.ids import isin
from langchef_core.readout.experiment import completeness_check
from langchef_core.readout.item_scores import judged_items
from langchef_core.stats.cluster_robust import cluster_sums
from tests.core.test_gates import arm, design, goldens

RUN_FILES = {"base": "runs/rerank/base.jsonl", "rerank": "runs/rerank/rerank.jsonl"}


def sorted_cluster_sums(change, codes):
    """The sort ``cluster_sums`` always used before (and still uses for real values)."""
    order = np.lexsort((change, codes))
    codes_sorted, change_sorted = codes[order], change[order]
    starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
    return (change_sorted, np.add.reduceat(change_sorted, starts),
            np.add.reduceat(change_sorted**2, starts),
            np.diff(np.r_[starts, change.size]).astype(float))


@pytest.mark.parametrize("seed", range(40))
def test_counted_cluster_sums_equal_the_sorted_ones_bit_for_bit(seed):
    r = np.random.default_rng(seed)
    n, clusters = int(r.integers(1, 400)), int(r.integers(1, 60))
    codes = r.integers(0, clusters, n)  # some codes absent, as in a slice of the goldens
    change = r.choice([-1.0, 0.0, 1.0], n, p=r.dirichlet([1, 1, 1]))
    if seed % 4 == 0:
        change[r.random(n) < 0.2] = -0.0  # a signed zero keeps the sort, and its sign
    for got, want in zip(cluster_sums(change, codes), sorted_cluster_sums(change, codes)):
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_real_valued_differences_still_take_the_sort():
    r = np.random.default_rng(7)
    change, codes = r.normal(size=300).round(1), r.integers(0, 12, 300)
    for got, want in zip(cluster_sums(change, codes), sorted_cluster_sums(change, codes)):
        assert np.array_equal(got, want)


def merged_items(run, golden_frame):
    """What ``judged_items`` returned before the lookup: an inner merge, rows renumbered
    as the run's."""
    base = golden_frame[[c for c in ("example_id", "input", "ideal") if c in golden_frame.columns]]
    items = run.merge(base, on="example_id", how="inner")
    items.index = run.index[run["example_id"].isin(base["example_id"])]
    return items


@pytest.mark.parametrize("seed", range(12))
def test_judged_items_equal_the_inner_merge(seed):
    r = np.random.default_rng(seed)
    suite = [f"q{i}" for i in range(50)]
    answered = list(r.permutation(suite)[:int(r.integers(0, 50))]) + ["stranger"] * int(r.integers(0, 3))
    run = arm(answered)
    golden_frame = goldens(suite).assign(ideal=[f"ideal {i}" for i in range(50)])
    if seed % 3 == 0:
        run = run.assign(input="the run's own input")  # a clash: the merge's suffixes
    got, want = judged_items(run, golden_frame), merged_items(run, golden_frame)
    pd.testing.assert_frame_equal(got, want)


def test_unseeded_runs_are_checked_once(monkeypatch):
    calls = []
    rule = gates.runs_are_complete
    monkeypatch.setattr(gates, "runs_are_complete", lambda *a, **k: calls.append(1) or rule(*a, **k))
    check = completeness_check(design(), goldens(), {"base": arm(), "rerank": arm()}, RUN_FILES,
                               "goldens/qa.jsonl")
    assert check.passed and len(calls) == 1


def test_a_short_seed_file_is_still_named():
    runs = {"base@seed1": arm(), "base@seed2": arm(["q1", "q2", "q3"]), "rerank@seed1": arm(),
            "rerank@seed2": arm()}
    files = {name: f"runs/rerank/{name}.jsonl" for name in runs}
    check = completeness_check(design(), goldens(), runs, files, "goldens/qa.jsonl")
    assert not check.passed and "runs/rerank/base@seed2.jsonl" in check.sentence


@pytest.mark.parametrize("seed", range(8))
def test_isin_with_distinct_candidates_equals_pandas(seed):
    r = np.random.default_rng(seed)
    pool = np.array([f"g{i}" for i in range(60)] + ["é", " g1", ""], dtype=object)
    left = pool[r.integers(0, pool.size, int(r.integers(0, 80)))]
    right = r.permutation(pool)[:int(r.integers(1, pool.size))]  # distinct, no gaps
    if seed % 2:
        left[r.random(left.size) < 0.1] = None  # gaps on the left: pyarrow answers
    for wrap in (pd.Series, pd.Index):
        for kind in (pd.Series, pd.Index):
            got = isin(kind(left.tolist(), dtype="str"), wrap(right.tolist(), dtype="str"))
            want = pd.Series(left, dtype=object).isin(pd.Series(right, dtype=object))
            assert got.dtype == bool and np.array_equal(got, np.asarray(want, dtype=bool))


@pytest.mark.parametrize("seed", range(6))
def test_large_arrays_call_the_function_once_per_distinct_value_with_the_same_bits(seed):
    """``libm.elementwise`` from 4096 elements maps each distinct bit pattern once (retrieval
    metrics take few values over 10^6 queries); −0.0 and NaN keep their own answers."""
    import math

    from langchef_core.stats import libm
    r = np.random.default_rng(seed)
    pool = np.r_[r.normal(size=40), 0.0, -0.0, np.nan, np.inf, -np.inf, 1e-300]
    values = r.choice(pool, 5000 + seed) if seed % 2 else r.normal(size=(70, 80))
    for function in (lambda v: math.pow(v, 3.0), math.atan, lambda v: 0.0 if v == 0 else round(v, 12)
                     if math.isfinite(v) else v):
        got = libm.elementwise(function, values)
        want = np.fromiter(map(function, values.ravel().tolist()), float).reshape(values.shape)
        assert got.shape == want.shape and np.array_equal(got.view(np.int64), want.view(np.int64))


def test_isin_reads_an_arrow_text_array_without_python_strings():
    ids = pd.Series(["a", "b", "c", "d"], dtype="str")
    unique = pd.Series(["d", "b", "b"], dtype="str").unique()  # an ArrowStringArray
    assert isinstance(unique, pd.api.extensions.ExtensionArray)
    assert isin(ids, unique).tolist() == [False, True, False, True]


def test_the_other_arms_short_first_seed_is_named_not_the_looped_one():
    """Before, the first check labelled the other arm by its bare name and prefixed the
    sentence with the looped arm's seed file, naming a file that was complete."""
    runs = {"base@seed1": arm(), "base@seed2": arm(), "rerank@seed1": arm(["q1", "q2"]),
            "rerank@seed2": arm()}
    files = {name: f"runs/rerank/{name}.jsonl" for name in runs}
    check = completeness_check(design(), goldens(), runs, files, "goldens/qa.jsonl")
    assert not check.passed and check.sentence.startswith("runs/rerank/rerank@seed1.jsonl: ")
    assert "base@seed" not in check.sentence


def test_seeded_runs_check_each_file_once_beside_the_other_arms_first(monkeypatch):
    calls = []
    rule = gates.runs_are_complete
    monkeypatch.setattr(gates, "runs_are_complete", lambda *a, **k: calls.append(k["files"]) or rule(*a, **k))
    runs = {"base@seed1": arm(), "base@seed2": arm(), "rerank@seed1": arm(), "rerank@seed2": arm(),
            "rerank@seed3": arm()}
    files = {name: f"{name}.jsonl" for name in runs}
    assert completeness_check(design(), goldens(), runs, files, "goldens/qa.jsonl").passed
    assert [sorted(call.values()) for call in calls] == [
        ["base@seed1.jsonl", "rerank@seed1.jsonl"], ["base@seed2.jsonl", "rerank@seed1.jsonl"],
        ["base@seed1.jsonl", "rerank@seed2.jsonl"], ["base@seed1.jsonl", "rerank@seed3.jsonl"]]


@pytest.mark.parametrize("seed", range(4))
def test_lists_in_query_order_score_as_the_same_lists_shuffled(seed):
    """An arm run whose rows are in query order skips the reordering of its entries; the
    same run with its rows shuffled takes it. Both score the same, bit for bit, and the
    judgements' shared codes (``Judgements.over``) equal those looked up per arm."""
    from langchef_core.scoring.retrieval.inputs import RankedRun
    from langchef_core.scoring.retrieval.judgements import Judgements
    from langchef_core.scoring.retrieval.metrics import METRICS, score_run
    r = np.random.default_rng(seed)
    n = 300
    queries = [f"q{i:04d}" for i in range(n)]
    lists = [[f"d{d}" for d in r.choice(40, int(r.integers(1, 15)), replace=False)] for _ in queries]
    ordered = pd.DataFrame({"example_id": queries, "retrieved": arrow_lists(lists)})
    permutation = r.permutation(n)
    shuffled = pd.DataFrame({"example_id": [queries[i] for i in permutation],
                             "retrieved": arrow_lists([lists[i] for i in permutation])})
    qrels = pd.DataFrame({"query_id": r.choice(queries + ["q9999"], 900),
                          "doc_id": [f"d{d}" for d in r.integers(0, 40, 900)], "relevant": 1})
    judgements = Judgements.from_frame(qrels.drop_duplicates(["query_id", "doc_id"]))
    union = np.array(sorted(set(queries) | set(judgements.queries)), dtype=object)
    over = judgements.over(union)
    scored = []
    for frame in (ordered, shuffled):
        run = RankedRun.from_frame(frame)
        assert run.lists is not None  # the Arrow lists path, where the order is skipped
        for codes in (None, over.positive_query):
            _, metrics = score_run(run, over.positives, judgements.queries, k=5, queries=union,
                                   positive_query=codes)
            scored.append(metrics)
    for metric in METRICS:
        first = scored[0].values(metric)
        for other in scored[1:]:
            assert np.array_equal(first, other.values(metric), equal_nan=True)
    assert over is judgements.over(union.copy())  # equal queries: the answer is kept
    with pytest.raises(ValueError, match="pass queries too"):  # codes without what they code
        score_run(RankedRun.from_frame(ordered), over.positives, judgements.queries, k=5,
                  positive_query=over.positive_query)


def arrow_lists(lists) -> pd.Series:
    """Lists of text as read from parquet or JSON lines: an Arrow list column."""
    import pyarrow as pa

    from langchef_core.inputs.id_lists import text_lists
    return pd.Series(text_lists(pa.array(lists, pa.list_(pa.string()))))


@pytest.mark.parametrize("seed", range(3))
def test_judgements_over_queries_match_a_lookup_of_each_positive(seed):
    """``Judgements.over`` codes the positives from the rows' own query codes (found with
    the judged queries) instead of looking each one up: per source, and over the judged
    queries themselves, a union with unjudged ones and a part of them, its positives,
    codes and judged mask equal what pandas finds directly."""
    from langchef_core.scoring.retrieval.judgements import Judgements
    r = np.random.default_rng(seed)
    names = [f"q{i}" for i in range(60)]  # "q10" sorts before "q2": text order, not numbers
    qrels = pd.DataFrame({"query_id": r.choice(names, 400), "doc_id": [f"d{d}" for d in r.integers(0, 30, 400)],
                          "relevant": r.integers(0, 2, 400), "source": r.choice(["human", "click"], 400)})
    qrels = qrels.drop_duplicates(["query_id", "doc_id", "source"]).reset_index(drop=True)
    judgements = Judgements.from_frame(qrels)
    judged = judgements.queries
    for queries in (judged.copy(), np.array(sorted(set(judged) | {"a0", "q999", "z"}), dtype=object),
                    judged[::2].copy()):
        for source in (None, "human", "click"):
            over = judgements.over(queries, source)
            rows = qrels if source is None else qrels[qrels["source"] == source]
            positives = rows.loc[rows["relevant"] == 1, ["query_id", "doc_id"]]
            positives = positives[~positives.duplicated()].reset_index(drop=True)
            pd.testing.assert_frame_equal(over.positives.astype(object), positives.astype(object))
            index = pd.Index(queries)
            assert np.array_equal(over.positive_query, index.get_indexer(positives["query_id"]))
            assert np.array_equal(over.judged, index.isin(set(rows["query_id"])))

"""Per-query retrieval metrics at k: hand-computed values, semantics, and the array entry point."""

import math

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.scoring.retrieval import kernel
from langchef_core.scoring.retrieval.metrics import METRICS, metric_name

D2, D3, D4 = 1 / math.log2(3), 1 / math.log2(4), 1 / math.log2(5)


def long_run(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank"])


def qrels(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevant"])


def by_query(frame):
    return frame.set_index("query_id")


def test_the_example_of_the_tutorial_eight_positives_three_in_the_top_three():
    # Eight positives, all three of the top 3 relevant: recall@3 is 3/8, the normalized
    # measure (denominator min(|P|, k) = 3) is 1.
    run = long_run([("q", f"p{i}", i + 1) for i in range(3)])
    labels = qrels([("q", f"p{i}", 1) for i in range(8)])
    row = by_query(lc.retrieval_metrics(run, labels, k=3)).loc["q"]
    assert row["n_positive"] == 8
    assert row["recall"] == pytest.approx(3 / 8)
    assert row["recall_normalized"] == pytest.approx(1.0)
    assert row["precision"] == pytest.approx(1.0)
    assert row["ndcg"] == pytest.approx(1.0)


def test_hand_computed_values_for_one_query():
    # Positives a, c, e; ranking z, a, y, c at k = 3: hits = {a} (c is at rank 4).
    run = long_run([("q", "z", 1), ("q", "a", 2), ("q", "y", 3), ("q", "c", 4)])
    labels = qrels([("q", "a", 1), ("q", "c", 1), ("q", "e", 1), ("q", "z", 0)])
    row = by_query(lc.retrieval_metrics(run, labels, k=3)).loc["q"]
    assert row["hits"] == 1
    assert row["recall"] == pytest.approx(1 / 3)
    assert row["recall_normalized"] == pytest.approx(1 / 3)
    assert row["precision"] == pytest.approx(1 / 3)
    assert row["hit"] == 1.0
    assert row["reciprocal_rank"] == pytest.approx(0.5)
    assert row["ndcg"] == pytest.approx(D2 / (1 + D2 + D3))


def test_a_duplicated_document_counts_once_and_keeps_its_position():
    # a at ranks 1 and 2: one hit, not two; the copy still occupies rank 2, so c at rank 3
    # keeps its discount 1/log2(4) (positions are never compacted).
    run = pd.DataFrame({"example_id": ["q"], "retrieved": [["a", "a", "c"]]})
    labels = qrels([("q", "a", 1), ("q", "c", 1)])
    row = by_query(lc.retrieval_metrics(run, labels, k=3)).loc["q"]
    assert row["hits"] == 2
    assert row["recall"] == pytest.approx(1.0)
    assert row["precision"] == pytest.approx(2 / 3)
    assert row["n_retrieved"] == 3
    assert row["ndcg"] == pytest.approx((1 + D3) / (1 + D2))


def test_a_short_list_is_not_padded():
    run = long_run([("q", "a", 1)])
    labels = qrels([("q", "a", 1)])
    row = by_query(lc.retrieval_metrics(run, labels, k=10)).loc["q"]
    assert row["precision"] == pytest.approx(0.1)
    assert row["recall"] == 1.0 and row["ndcg"] == 1.0 and row["n_retrieved"] == 1


def test_ranks_are_positions_as_given_even_with_gaps():
    run = long_run([("q", "x", 1), ("q", "a", 5)])
    labels = qrels([("q", "a", 1)])
    at_four = by_query(lc.retrieval_metrics(run, labels, k=4)).loc["q"]
    at_five = by_query(lc.retrieval_metrics(run, labels, k=5)).loc["q"]
    assert at_four["hits"] == 0
    assert at_five["reciprocal_rank"] == pytest.approx(1 / 5)
    assert at_five["ndcg"] == pytest.approx(1 / math.log2(6))


def test_undefined_metrics_without_positives_are_nan_and_the_rest_zero():
    run = long_run([("q", "a", 1), ("r", "b", 1)])
    labels = qrels([("q", "a", 0), ("r", "b", 1)])
    row = by_query(lc.retrieval_metrics(run, labels, k=5)).loc["q"]
    assert row["n_positive"] == 0
    assert np.isnan(row["recall"]) and np.isnan(row["recall_normalized"]) and np.isnan(row["ndcg"])
    assert row["precision"] == 0 and row["hit"] == 0 and row["reciprocal_rank"] == 0


def test_rows_cover_queries_of_the_run_and_of_the_qrels():
    run = long_run([("answered", "a", 1)])
    labels = qrels([("judged", "b", 1)])
    frame = by_query(lc.retrieval_metrics(run, labels, k=5))
    assert list(frame.index) == ["answered", "judged"]
    assert frame.loc["judged", "in_run"] == False  # noqa: E712 - numpy bool
    assert frame.loc["judged", "recall"] == 0.0  # scored as an empty list
    assert frame.loc["answered", "in_qrels"] == False  # noqa: E712
    assert frame.loc["answered", "n_positive"] == 0


def test_result_is_invariant_to_row_order():
    rng = np.random.default_rng(3)
    rows = [(f"q{q}", f"d{rng.integers(40)}", r + 1) for q in range(30) for r in range(12)]
    run = long_run(rows).drop_duplicates(["query_id", "doc_id"])
    labels = qrels([(f"q{q}", f"d{d}", int(rng.random() < 0.4)) for q in range(30) for d in range(40)])
    first = lc.retrieval_metrics(run, labels, k=10)
    shuffled = lc.retrieval_metrics(run.sample(frac=1, random_state=1),
                                    labels.sample(frac=1, random_state=2), k=10)
    pd.testing.assert_frame_equal(first, shuffled)


def test_arm_run_converts_to_the_long_format_with_ranks_from_one():
    arm = pd.DataFrame({"example_id": ["q1", "q2", "q3"],
                        "retrieved": [["a", "b"], [], ["c"]]})
    long = lc.arm_run_to_long(arm)
    assert long[["query_id", "doc_id", "rank"]].values.tolist() == [
        ["q1", "a", 1], ["q1", "b", 2], ["q3", "c", 1]]
    assert list(long.index) == [1, 1, 3]  # the arm file's data rows
    run = lc.RankedRun.from_frame(arm)
    assert list(run.queries) == ["q1", "q2", "q3"]  # q2 answered with an empty list


def test_arm_and_long_formats_give_the_same_metrics():
    arm = pd.DataFrame({"example_id": ["q1", "q2"], "retrieved": [["a", "x", "b"], ["y", "c"]]})
    labels = qrels([("q1", "a", 1), ("q1", "b", 1), ("q2", "c", 1)])
    from_arm = lc.retrieval_metrics(arm, labels, k=2)
    from_long = lc.retrieval_metrics(lc.arm_run_to_long(arm), labels, k=2)
    pd.testing.assert_frame_equal(from_arm, from_long)


def test_source_argument_scores_one_provenance():
    run = long_run([("q", "a", 1), ("q", "b", 2)])
    labels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevant": [1, 1],
                           "source": ["human", "click"]})
    assert by_query(lc.retrieval_metrics(run, labels, k=1)).loc["q", "n_positive"] == 2
    human = by_query(lc.retrieval_metrics(run, labels, k=1, source="human")).loc["q"]
    click = by_query(lc.retrieval_metrics(run, labels, k=1, source="click")).loc["q"]
    assert human["recall"] == 1.0 and click["recall"] == 0.0
    with pytest.raises(ValueError, match="teacher"):
        lc.retrieval_metrics(run, labels, k=1, source="teacher")


def test_array_entry_point_matches_the_frame_api():
    rng = np.random.default_rng(5)
    n_queries, n_docs = 200, 60
    lengths = rng.integers(0, 25, n_queries)
    docs = np.concatenate([rng.choice(n_docs, size=n, replace=False) for n in lengths])
    offsets = np.r_[0, np.cumsum(lengths)]
    pq = np.repeat(np.arange(n_queries), 4)
    pd_ = rng.integers(0, n_docs, pq.size)
    arrays = lc.retrieval_metrics_arrays(offsets, docs, pq, pd_, k=7)
    query_names = np.array([f"q{q:03d}" for q in range(n_queries)])
    run = long_run({"query_id": np.repeat(query_names, lengths), "doc_id": docs.astype(str),
                    "rank": np.arange(docs.size) - np.repeat(offsets[:-1], lengths) + 1})
    # The array entry point counts a repeated pair once; the qrels file refuses repeats.
    labels = qrels({"query_id": query_names[pq], "doc_id": pd_.astype(str),
                    "relevant": 1}).drop_duplicates()
    frame = by_query(lc.retrieval_metrics(run, labels, k=7))
    expected = arrays.to_frame(query_names).set_index("query_id")
    for metric in METRICS + ("n_positive", "hits"):
        np.testing.assert_allclose(frame.loc[expected.index, metric], expected[metric])


def random_lists(seed, n_queries, longest, n_docs, n_positives):
    """Compressed ranked lists of random doc codes, and random positive (query, doc) pairs."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, longest, n_queries)
    docs = rng.integers(0, n_docs, lengths.sum())
    return (np.r_[0, np.cumsum(lengths)], docs, rng.integers(0, n_queries, n_positives),
            rng.integers(0, n_docs, n_positives))


def test_blocks_do_not_change_the_result(monkeypatch):
    offsets, docs, pq, pd_ = random_lists(9, 500, 30, 100, 1500)
    whole = lc.retrieval_metrics_arrays(offsets, docs, pq, pd_, k=10)
    monkeypatch.setattr(kernel, "BLOCK_ENTRIES", 37)
    blocked = lc.retrieval_metrics_arrays(offsets, docs, pq, pd_, k=10)
    for metric in METRICS:
        np.testing.assert_array_equal(whole.values(metric), blocked.values(metric))


def test_ruling_out_docs_that_are_no_positive_does_not_change_the_result(monkeypatch):
    """The table of positive docs only spares binary searches: without it, every count is
    the same, repeated documents and docs positive for another query included."""
    offsets, docs, pq, pd_ = random_lists(12, 400, 25, 300, 900)
    fast = lc.retrieval_metrics_arrays(offsets, docs, pq, pd_, k=10)
    monkeypatch.setattr(kernel, "_positive_doc_table", lambda *args: None)
    searched = lc.retrieval_metrics_arrays(offsets, docs, pq, pd_, k=10)
    for metric in METRICS + ("dcg", "n_retrieved"):
        np.testing.assert_array_equal(getattr(fast, metric), getattr(searched, metric))


COUNTS = ("n_positive", "hits", "first_hit", "dcg", "n_retrieved")


@pytest.mark.parametrize("seed", range(8))
def test_lists_within_k_counted_from_their_positive_docs_alone_count_as_every_entry(seed, monkeypatch):
    """Lists no longer than k, ranked 1, 2, 3 …, are counted from the entries whose doc is
    some query's positive (``kernel._hits_in_slice``); the same lists with those ranks given
    explicitly take the path that looks at every entry. Every count is the same: repeated
    docs within a list, empty lists, docs positive for another query, blocks of any size."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 12))
    offsets, docs, pq, pd_ = random_lists(seed, 600, k + 1, int(rng.integers(20, 400)), 1500)
    lengths = np.diff(offsets)
    ranks = np.arange(docs.size) - np.repeat(offsets[:-1], lengths) + 1
    lists, explicit = kernel.ranked_lists(offsets, docs), kernel.ranked_lists(offsets, docs, ranks)
    if seed % 2:
        monkeypatch.setattr(kernel, "BLOCK_ENTRIES", int(rng.integers(5, 300)))
    calls = []
    real = kernel._hits_in_slice
    monkeypatch.setattr(kernel, "_hits_in_slice", lambda *a: calls.append(1) or real(*a))
    fast = kernel.count_hits(lists, pq, pd_, k=k)
    assert calls, "the lists within k took the path that looks at every entry"
    calls.clear()
    every = kernel.count_hits(explicit, pq, pd_, k=k)
    assert not calls
    for name in COUNTS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(every, name), err_msg=name)


def test_huge_sparse_doc_ids_fall_back_to_positive_doc_indices():
    big = np.iinfo(np.int64).max // 4
    docs = np.array([big, 7, big - 1, 3], dtype=np.int64)
    offsets = np.array([0, 2, 4])
    metrics = lc.retrieval_metrics_arrays(offsets, docs, [0, 1], [7, big - 1], k=2)
    np.testing.assert_allclose(metrics.reciprocal_rank, [0.5, 1.0])


def test_explicit_ranks_must_strictly_increase_within_a_list():
    with pytest.raises(ValueError, match="strictly increase"):
        lc.retrieval_metrics_arrays([0, 3], [1, 2, 3], [0], [1], ranks=[1, 2, 2])
    ok = lc.retrieval_metrics_arrays([0, 2, 4], [1, 2, 3, 4], [0, 1], [2, 3], ranks=[1, 3, 1, 2])
    np.testing.assert_allclose(ok.reciprocal_rank, [1 / 3, 1.0])


@pytest.mark.parametrize("bad, message", [
    (dict(offsets=[1, 2]), "start at 0"),
    (dict(offsets=[0, 2, 1]), "must not decrease"),
    (dict(offsets=[0, 5]), "last offset"),
    (dict(docs=[1.5, 2.0]), "integer codes"),
    (dict(docs=[-1, 2]), "non-negative"),
    (dict(positive_query=[3]), "positive query codes"),
    (dict(k=0), "k must be"),
])
def test_array_entry_point_refuses_bad_arguments(bad, message):
    arguments = dict(offsets=[0, 2], docs=[1, 2], positive_query=[0], positive_doc=[1], k=2)
    arguments.update(bad)
    with pytest.raises(ValueError, match=message):
        lc.retrieval_metrics_arrays(arguments.pop("offsets"), arguments.pop("docs"),
                                    arguments.pop("positive_query"), arguments.pop("positive_doc"),
                                    **arguments)


def test_metric_names_and_aliases():
    assert metric_name("MRR") == "reciprocal_rank"
    assert metric_name("recall_normalized") == "recall_normalized"
    with pytest.raises(ValueError, match="unknown retrieval metric"):
        metric_name("map")

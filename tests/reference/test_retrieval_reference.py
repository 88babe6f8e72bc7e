"""Retrieval metrics checked against two independent implementations.

* pytrec_eval (package ``pytrec-eval-terrier`` 0.5.x, the trec_eval 9.0.x measures):
  recall → ``recall_k``, precision → ``P_k``, hit → ``success_k``, ndcg → ``ndcg_cut_k``,
  reciprocal_rank → ``recip_rank`` evaluated on the run cut at rank k (trec_eval's
  reciprocal rank has no cut-off of its own). recall_normalized has no trec_eval measure; it
  is checked through its identity hits/min(|P|, k) = recall_k when |P| ≤ k, else P_k.
* ranx (0.3.x): ``recall@k``, ``precision@k``, ``hit_rate@k``, ``mrr@k``, ``ndcg@k``.

trec_eval scores a judged query without positives as 0 on every measure, which is our
``zero`` policy; both peers skip queries that are not in both the run and the qrels, so the
comparison is over those queries. The data are a hand-written trec_eval-style qrels/run pair
(parsed by pytrec_eval's own parsers) and seeded random runs.
"""

import io
import math

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc

pytrec_eval = pytest.importorskip("pytrec_eval")
ranx = pytest.importorskip("ranx")

# trec_eval format: "<query> 0 <doc> <relevance>" and "<query> Q0 <doc> <rank> <score> <tag>".
QRELS_TEXT = """\
301 0 FT911-3 1
301 0 FT911-7 1
301 0 FT911-9 0
301 0 LA0101-2 1
302 0 AP880-1 1
302 0 AP880-4 0
303 0 WSJ-11 0
303 0 WSJ-12 0
304 0 D1 1
304 0 D2 1
304 0 D3 1
304 0 D4 1
304 0 D5 1
304 0 D6 1
304 0 D7 1
304 0 D8 1
304 0 D9 1
304 0 D10 1
304 0 D11 1
304 0 D12 1
"""
RUN_TEXT = """\
301 Q0 FT911-9 1 9.5 sys
301 Q0 FT911-3 2 9.1 sys
301 Q0 XX-1 3 8.0 sys
301 Q0 LA0101-2 4 7.5 sys
301 Q0 XX-2 5 7.0 sys
301 Q0 FT911-7 6 6.0 sys
302 Q0 AP880-4 1 3.0 sys
302 Q0 AP880-9 2 2.0 sys
303 Q0 WSJ-11 1 5.0 sys
304 Q0 D3 1 20 sys
304 Q0 N1 2 19 sys
304 Q0 D1 3 18 sys
304 Q0 D2 4 17 sys
304 Q0 D5 5 16 sys
304 Q0 D4 6 15 sys
304 Q0 N2 7 14 sys
304 Q0 D7 8 13 sys
304 Q0 D6 9 12 sys
304 Q0 D9 10 11 sys
304 Q0 D8 11 10 sys
"""


def trec_frames(qrels_text, run_text):
    qrels = pd.DataFrame([line.split() for line in qrels_text.splitlines()],
                         columns=["query_id", "iteration", "doc_id", "relevant"])
    run = pd.DataFrame([line.split() for line in run_text.splitlines()],
                       columns=["query_id", "q0", "doc_id", "rank", "score", "tag"])
    return run[["query_id", "doc_id", "rank"]], qrels[["query_id", "doc_id", "relevant"]]


def pytrec_scores(qrels, run, k):
    """pytrec_eval per-query measures at k, with reciprocal rank on the run cut at k."""
    measures = {f"recall.{k}", f"P.{k}", f"success.{k}", f"ndcg_cut.{k}"}
    scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    cut = {q: dict(sorted(docs.items(), key=lambda item: -item[1])[:k]) for q, docs in run.items()}
    reciprocal = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    return {q: {"recall": s[f"recall_{k}"], "precision": s[f"P_{k}"], "hit": s[f"success_{k}"],
                "ndcg": s[f"ndcg_cut_{k}"], "reciprocal_rank": reciprocal[q]["recip_rank"]}
            for q, s in scores.items()}


def ranx_scores(qrels, run, k):
    """ranx per-query measures at k over the queries in both the qrels and the run.

    Ids are renamed to fixed-width codes first (a bijection, so no measure changes): ranx's
    numba kernels compile once per id width, and one width keeps this file fast.
    """
    names = {f"recall@{k}": "recall", f"precision@{k}": "precision", f"hit_rate@{k}": "hit",
             f"mrr@{k}": "reciprocal_rank", f"ndcg@{k}": "ndcg"}
    common = sorted(set(qrels) & set(run))
    docs = sorted({d for q in common for d in (*qrels[q], *run[q])})
    query_code = {q: f"q{i:06d}" for i, q in enumerate(common)}
    doc_code = {d: f"d{i:06d}" for i, d in enumerate(docs)}
    ranx_qrels = ranx.Qrels({query_code[q]: {doc_code[d]: r for d, r in qrels[q].items()}
                             for q in common})
    ranx_run = ranx.Run({query_code[q]: {doc_code[d]: s for d, s in run[q].items()} for q in common})
    ranx.evaluate(ranx_qrels, ranx_run, list(names), return_mean=False)
    return {q: {ours: float(ranx_run.scores[theirs][query_code[q]]) for theirs, ours in names.items()}
            for q in common}


def ours_under_zero_policy(run, qrels, k):
    frame = lc.apply_zero_positive_policy(lc.retrieval_metrics(run, qrels, k=k), "zero")
    return frame.set_index("query_id")


def assert_agree(ours, theirs, label):
    assert theirs, "the peer scored no query"
    for query, values in theirs.items():
        for metric, value in values.items():
            assert ours.loc[query, metric] == pytest.approx(value, abs=1e-12), (label, query, metric)


# ranx compiles its numba kernels on first use (about 20 s on a loaded 2-core machine).
@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_trec_style_files_agree_with_pytrec_eval_and_ranx(k):
    qrels = pytrec_eval.parse_qrel(io.StringIO(QRELS_TEXT))
    run = pytrec_eval.parse_run(io.StringIO(RUN_TEXT))
    run_frame, qrels_frame = trec_frames(QRELS_TEXT, RUN_TEXT)
    ours = ours_under_zero_policy(run_frame, qrels_frame, k)
    assert_agree(ours, pytrec_scores(qrels, run, k), "pytrec_eval")
    assert_agree(ours, ranx_scores(qrels, run, k), "ranx")


def test_hand_checked_values_of_the_trec_style_example():
    # Query 301 at k = 5: positives FT911-3, FT911-7, LA0101-2; ranked at 2, 6, 4.
    run_frame, qrels_frame = trec_frames(QRELS_TEXT, RUN_TEXT)
    row = lc.retrieval_metrics(run_frame, qrels_frame, k=5).set_index("query_id").loc["301"]
    assert row["recall"] == pytest.approx(2 / 3)
    assert row["reciprocal_rank"] == pytest.approx(1 / 2)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert row["ndcg"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_recall_normalized_through_its_identity_with_trec_eval_measures():
    qrels = pytrec_eval.parse_qrel(io.StringIO(QRELS_TEXT))
    run = pytrec_eval.parse_run(io.StringIO(RUN_TEXT))
    run_frame, qrels_frame = trec_frames(QRELS_TEXT, RUN_TEXT)
    k = 10
    scores = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}", f"P.{k}", "num_rel"}).evaluate(run)
    ours = lc.retrieval_metrics(run_frame, qrels_frame, k=k).set_index("query_id")
    for query, s in scores.items():
        if s["num_rel"] == 0:
            continue
        expected = s[f"recall_{k}"] if s["num_rel"] <= k else s[f"P_{k}"]
        assert ours.loc[query, "recall_normalized"] == pytest.approx(expected)
    # Query 304 has 12 positives, 8 of them in the top 10: normalized 8/10, standard 8/12.
    assert ours.loc["304", "recall_normalized"] == pytest.approx(0.8)
    assert ours.loc["304", "recall"] == pytest.approx(8 / 12)


def random_collection(seed, n_queries=150, n_docs=80):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        query = f"q{q}"
        judged = rng.choice(n_docs, size=rng.integers(1, 25), replace=False)
        qrels[query] = {f"d{d}": int(rng.random() < 0.4) for d in judged}
        ranked = rng.choice(n_docs, size=rng.integers(0, 40), replace=False)
        if ranked.size:
            run[query] = {f"d{d}": float(100 - i) for i, d in enumerate(ranked)}
    return qrels, run


def frames_of(qrels, run):
    run_frame = pd.DataFrame([(q, d, int(100 - s)) for q, docs in run.items() for d, s in docs.items()],
                             columns=["query_id", "doc_id", "rank"])
    run_frame["rank"] += 1
    qrels_frame = pd.DataFrame([(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
                               columns=["query_id", "doc_id", "relevant"])
    return run_frame, qrels_frame


@pytest.mark.slow
@pytest.mark.parametrize("seed, k", [(0, 10), (1, 5), (2, 20), (3, 1)])
def test_random_runs_agree_with_pytrec_eval_and_ranx(seed, k):
    qrels, run = random_collection(seed)
    run_frame, qrels_frame = frames_of(qrels, run)
    ours = ours_under_zero_policy(run_frame, qrels_frame, k)
    assert_agree(ours, pytrec_scores(qrels, run, k), "pytrec_eval")
    assert_agree(ours, ranx_scores(qrels, run, k), "ranx")


def test_macro_means_agree_with_pytrec_eval_over_queries_with_positives():
    qrels, run = random_collection(7)
    run_frame, qrels_frame = frames_of(qrels, run)
    judged_with_positives = {q for q, docs in qrels.items() if any(docs.values()) and q in run}
    peer = pytrec_scores({q: qrels[q] for q in judged_with_positives},
                         {q: run[q] for q in judged_with_positives}, 10)
    summary = lc.summarize_retrieval(run_frame[run_frame["query_id"].isin(judged_with_positives)],
                                     qrels_frame[qrels_frame["query_id"].isin(judged_with_positives)],
                                     settings=lc.RetrievalSettings(k=10))
    for item in summary.metrics:
        expected = np.mean([values[item.metric] for values in peer.values()]) \
            if item.metric != "recall_normalized" else None
        if expected is not None:
            assert item.macro == pytest.approx(expected), item.metric

"""Candidate pools: the proof that both arms ranked the same pool, and chance levels."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import langchef_core as lc
from langchef_core.inputs.tables import read_table
from langchef_core.scoring.retrieval import chance_levels, hit_chance_one_positive, pool_counts

METRICS = ("recall", "recall_normalized", "precision", "hit", "reciprocal_rank", "ndcg")


def arm(rows, candidates=None):
    frame = pd.DataFrame({"example_id": [q for q, _ in rows], "retrieved": [d for _, d in rows]})
    if candidates is not None:
        frame["candidates"] = candidates
    return lc.RankedRun.from_frame(frame)


POOL = pd.DataFrame({"query_id": ["q1"] * 3 + ["q2"] * 3,
                     "doc_id": ["a", "b", "c", "x", "y", "z"]})


def test_identical_pool_file_and_retrieval_inside_it_passes():
    check = lc.check_pools(arm([("q1", ["a", "b"]), ("q2", ["z"])]),
                           arm([("q1", ["c"]), ("q2", ["y", "x"])]), pool=POOL, pool_kind="sampled")
    assert check.passed and check.basis == "pool_file" and check.n_queries == 2
    assert check.to_dict()["differing_queries"] == []


def test_a_run_read_to_a_depth_is_refused_by_the_pool_check():
    """Past the depth a doc outside the pool would go unseen (here "outside" at rank 2)."""
    frame = pd.DataFrame({"example_id": ["q1", "q2"], "retrieved": [["a", "outside"], ["z"]]})
    cut = lc.RankedRun.from_frame(frame, depth=1)
    with pytest.raises(ValueError, match="read to a depth"):
        lc.check_pools(cut, arm([("q1", ["c"]), ("q2", ["y"])]), pool=POOL, pool_kind="sampled")
    assert not lc.check_pools(lc.RankedRun.from_frame(frame), arm([("q1", ["c"]), ("q2", ["y"])]),
                              pool=POOL, pool_kind="sampled").passed


def test_arms_bringing_different_candidates_fail_naming_the_first_queries():
    base = arm([("q1", ["a"]), ("q2", ["x"]), ("q3", ["m"])],
               candidates=[["a", "b"], ["x", "y"], ["m", "n"]])
    variant = arm([("q1", ["a"]), ("q2", ["x"]), ("q3", ["m"])],
                  candidates=[["b", "a"], ["x", "w"], ["m"]])
    check = lc.check_pools(base, variant, pool_kind="hard_negative")
    assert not check.passed
    assert check.basis == "candidates"
    assert check.differing_queries == ("q2", "q3") and check.n_differing == 2
    assert "q2, q3" in check.reason


def test_candidates_that_disagree_with_the_pool_file_fail():
    base = arm([("q1", ["a"]), ("q2", ["x"])], candidates=[["a", "b", "c"], ["x", "y", "z"]])
    variant = arm([("q1", ["a"]), ("q2", ["x"])], candidates=[["a", "b", "c"], ["x", "y", "z"]])
    assert lc.check_pools(base, variant, pool=POOL, pool_kind="sampled").passed
    smaller = POOL[POOL["doc_id"] != "c"]
    check = lc.check_pools(base, variant, pool=smaller, pool_kind="sampled")
    assert not check.passed and check.differing_queries == ("q1",)
    assert check.basis == "candidates+pool_file"


def test_a_retrieved_document_outside_the_pool_fails_naming_arm_query_doc_and_row():
    check = lc.check_pools(arm([("q1", ["a"]), ("q2", ["x"])]),
                           arm([("q1", ["a"]), ("q2", ["x", "stray"])]), pool=POOL,
                           pool_kind="sampled")
    assert not check.passed and check.n_outside == 1
    assert check.outside_pool[0] == {"arm": "variant", "query_id": "q2", "doc_id": "stray",
                                     "file": "run", "row": 2}
    assert "'stray'" in check.reason


def test_one_arm_with_candidates_and_no_pool_file_fails():
    check = lc.check_pools(arm([("q1", ["a"])], candidates=[["a", "b"]]), arm([("q1", ["a"])]),
                           pool_kind="sampled")
    assert not check.passed and "variant" in check.reason


def test_without_any_pool_only_a_full_corpus_design_passes():
    base, variant = arm([("q1", ["a"])]), arm([("q1", ["b"])])
    full = lc.check_pools(base, variant, pool_kind="full")
    assert full.passed and full.basis == "declared_full_corpus"
    sampled = lc.check_pools(base, variant, pool_kind="sampled")
    assert not sampled.passed and "pools/<suite>" in sampled.reason


def test_unknown_pool_kind_is_refused():
    with pytest.raises(ValueError, match="pool kind"):
        lc.check_pools(arm([("q1", ["a"])]), arm([("q1", ["a"])]), pool_kind="random")


def test_pool_counts_size_and_positives_inside():
    positives = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "outside", "z"]})
    size, inside = pool_counts(POOL, positives, ["q1", "q2", "q3"])
    assert size.tolist() == [3, 3, 0] and inside.tolist() == [1, 1, 0]


def _reference_check(runs: dict, pool: pd.DataFrame | None):
    """check_pools by Python sets: differing queries, stray entries, queries counted."""
    def pairs(frame):
        return set(zip(frame["query_id"], frame["doc_id"]))
    own = {name: pairs(run.candidates) if run.candidates is not None else pairs(pool)
           for name, run in runs.items()}
    reference = pairs(pool) if pool is not None else own["baseline"]
    differing = {q for name in runs for q, _ in reference ^ own[name]}
    stray = [(name, q, d) for name, run in runs.items()
             for q, d in zip(run.entries["query_id"], run.entries["doc_id"]) if (q, d) not in own[name]]
    queries = {q for run in runs.values() for q in run.queries}
    queries |= {q for name, run in runs.items()
                for q, _ in (pairs(run.candidates) if run.candidates is not None else pairs(pool))}
    return sorted(differing), stray, len(queries)


@pytest.mark.parametrize("seed", range(40))
def test_pool_check_and_counts_agree_with_python_sets_on_random_runs(tmp_path, seed):
    """The pyarrow pair coding (issue 19) against sets and a pandas merge, on random runs
    read as Python lists and from parquet (Arrow lists), with differing pools and strays."""
    rng = np.random.default_rng(seed)
    n, docs = int(rng.integers(1, 30)), [f"d{i}" for i in range(int(rng.integers(1, 12)))]
    queries = [f"q{i}" for i in rng.permutation(n)]

    def draw_arm(path):
        candidates = [list(rng.choice(docs, int(rng.integers(0, len(docs) + 1)), replace=False))
                      for _ in queries]
        retrieved = [list(rng.choice(c, int(rng.integers(0, len(c) + 1)), replace=False)) if c else []
                     for c in candidates]
        if rng.random() < 0.3:  # a stray: a retrieved doc outside the arm's candidates
            at = int(rng.integers(0, n))
            retrieved[at] = [d for d in retrieved[at] if d != "stray"] + ["stray"]
        frame = pd.DataFrame({"example_id": queries, "retrieved": retrieved,
                              "candidates": candidates if rng.random() < 0.7 else None})
        if frame["candidates"].isna().all():
            frame = frame.drop(columns="candidates")
        frame.to_parquet(path)
        return frame

    frames = {name: draw_arm(tmp_path / f"{name}.parquet") for name in ("baseline", "variant")}
    pool = None
    if rng.random() < 0.6 or any("candidates" not in f for f in frames.values()):
        rows = [(q, d) for q in queries for d in docs if rng.random() < 0.6]
        pool = pd.DataFrame(rows or [("q0", "d0")], columns=["query_id", "doc_id"])
    for read in (lambda name: frames[name], lambda name: read_table(tmp_path / f"{name}.parquet")):
        runs = {name: lc.RankedRun.from_frame(read(name)) for name in frames}
        check = lc.check_pools(runs["baseline"], runs["variant"], pool=pool, pool_kind="sampled")
        differing, stray, n_queries = _reference_check(runs, pool)
        assert check.n_differing == len(differing) and list(check.differing_queries) == differing[:10]
        assert check.n_outside == len(stray) and check.n_queries == n_queries
        assert [(o["arm"], o["query_id"], o["doc_id"]) for o in check.outside_pool] == stray[:10]
        assert check.passed == (not differing and not stray)
    if pool is not None:
        positives = pd.DataFrame({"query_id": rng.choice(queries + ["unknown"], 20),
                                  "doc_id": rng.choice(docs, 20)})
        size, inside = pool_counts(pool, positives, sorted(queries))
        deduped = pool.drop_duplicates()
        merged = positives.merge(deduped, on=["query_id", "doc_id"])
        assert size.tolist() == [int((deduped["query_id"] == q).sum()) for q in sorted(queries)]
        assert inside.tolist() == [int((merged["query_id"] == q).sum()) for q in sorted(queries)]


# Chance levels --------------------------------------------------------------------------

@pytest.mark.parametrize("n, k, expected", [(19, 10, 0.5), (999, 10, 0.01), (4, 10, 1.0)])
def test_the_one_positive_formula_of_the_tutorial(n, k, expected):
    # min(k, n + 1)/(n + 1): 19 comparisons at k = 10 give 50 %, 999 give 1 %.
    assert hit_chance_one_positive(n, k) == pytest.approx(expected)
    general = chance_levels(np.array([n + 1]), np.array([1]), k=k)
    assert general.hit[0] == pytest.approx(expected)
    assert general.recall[0] == pytest.approx(expected)


def test_hit_chance_is_one_minus_the_hypergeometric_probability_of_no_positive():
    # P(H > 0) = 1 − hypergeom(M=N, n=m, N=k).pmf(0), scipy.stats.hypergeom.
    n_pool, m, k = np.array([50, 20, 8, 100]), np.array([3, 5, 2, 10]), 10
    levels = chance_levels(n_pool, m, k=k)
    expected = [1 - stats.hypergeom(M=N, n=p, N=min(k, N)).pmf(0) for N, p in zip(n_pool, m)]
    np.testing.assert_allclose(levels.hit, expected, rtol=1e-12)
    # E[H] = Σ_x x·pmf(x), from scipy.stats.hypergeom.pmf.
    means = [sum(x * stats.hypergeom(M=N, n=p, N=min(k, N)).pmf(x) for x in range(p + 1))
             for N, p in zip(n_pool, m)]
    np.testing.assert_allclose(levels.expected_hits, means, rtol=1e-12)


@pytest.mark.parametrize("pool_size, inside, total, k", [(20, 3, 3, 10), (50, 2, 4, 10),
                                                          (7, 7, 7, 10), (30, 1, 1, 5),
                                                          (12, 4, 6, 3)])
def test_chance_levels_match_a_monte_carlo_of_random_rankings(pool_size, inside, total, k):
    rng = np.random.default_rng(pool_size * 100 + inside)
    draws = 40_000
    # Positions of the m positives in a uniformly random permutation of the pool.
    positions = np.argsort(rng.random((draws, pool_size)), axis=1)[:, :inside] + 1
    within = positions <= k
    hits = within.sum(axis=1)
    first = np.where(within, positions, np.inf).min(axis=1)
    dcg = np.where(within, 1 / np.log2(positions + 1), 0).sum(axis=1)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(total, k) + 1))
    simulated = {"recall": hits / total, "recall_normalized": hits / min(total, k),
                 "precision": hits / k, "hit": (hits > 0).astype(float),
                 "reciprocal_rank": np.where(np.isfinite(first), 1 / first, 0.0),
                 "ndcg": dcg / ideal}
    levels = chance_levels(np.array([pool_size]), np.array([inside]), k=k,
                           n_positive=np.array([total]))
    for metric in METRICS:
        values = simulated[metric]
        tolerance = 4 * values.std() / math.sqrt(draws) + 1e-12
        assert abs(levels.values(metric)[0] - values.mean()) <= tolerance, metric


def test_chance_levels_edge_cases():
    levels = chance_levels(np.array([0, 5, 10]), np.array([0, 0, 10]), k=3,
                           n_positive=np.array([2, 0, 10]))
    assert levels.hit.tolist() == [0.0, 0.0, 1.0]
    assert levels.recall[0] == 0.0 and np.isnan(levels.recall[1])
    assert levels.reciprocal_rank[2] == 1.0 and levels.ndcg[2] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="more positives than candidates"):
        chance_levels(np.array([2]), np.array([3]), k=3)
    with pytest.raises(ValueError, match="n_comparisons"):
        hit_chance_one_positive(-1, 10)

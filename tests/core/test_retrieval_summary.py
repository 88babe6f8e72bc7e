"""Zero-positive policy, coverage, macro/micro aggregation, label sources, and the paired
comparison of two arms per metric."""

import json

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.scoring.retrieval import apply_zero_positive_policy

# q1: positives a, b (baseline finds a at 1; variant finds a and b at 1, 2)
# q2: positive c     (baseline misses; variant finds c at 1)
# q3: only a negative judgement (no positives)
# q4: answered by the runs, never judged
# q5: judged (positive e) but missing from the baseline run
BASELINE = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q3", "q4"],
                         "doc_id": ["a", "x", "y", "n", "w"], "rank": [1, 2, 1, 1, 1]})
VARIANT = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q3", "q4", "q5"],
                        "doc_id": ["a", "b", "c", "n", "w", "e"], "rank": [1, 2, 1, 1, 1, 1]})
QRELS = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q3", "q5"],
                      "doc_id": ["a", "b", "c", "n", "e"], "relevant": [1, 1, 1, 0, 1],
                      "source": ["human"] * 5})


def settings(**overrides):
    values = dict(k=2, metrics=("recall", "reciprocal_rank", "precision", "ndcg", "hit"),
                  zero_positive="exclude")
    values.update(overrides)
    return lc.RetrievalSettings(**values)


def summary_of(result, arm, metric, source="human"):
    return next(s for s in result.metrics if s.arm == arm and s.metric == metric and s.source == source)


def test_exclude_drops_zero_positive_queries_and_counts_them():
    result = lc.summarize_retrieval(BASELINE, QRELS, settings=settings(), arm="baseline")
    coverage = result.coverage[0]
    assert (coverage.queries_total, coverage.with_positives, coverage.without_positives) == (5, 3, 2)
    assert (coverage.excluded, coverage.zero_filled, coverage.separate, coverage.scored) == (2, 0, 0, 3)
    assert coverage.in_qrels_not_in_run == 1 and coverage.first_missing_from_run == ("q5",)
    assert coverage.in_run_not_in_qrels == 1 and coverage.first_not_in_qrels == ("q4",)
    recall = summary_of(result, "baseline", "recall")
    # Scored queries q1 (1/2), q2 (0), q5 (0, empty list): macro 1/6, micro 1 hit / 4 positives.
    assert recall.n_queries == 3
    assert recall.macro == pytest.approx(1 / 6) and recall.micro == pytest.approx(1 / 4)
    assert any("missing from the run" in w for w in result.warnings)
    assert any("excluded from every metric" in w for w in result.warnings)


def test_zero_fills_zero_positive_queries_with_zero_on_every_metric():
    result = lc.summarize_retrieval(BASELINE, QRELS, settings=settings(zero_positive="zero"))
    coverage = result.coverage[0]
    assert (coverage.zero_filled, coverage.excluded, coverage.scored) == (2, 0, 5)
    recall = summary_of(result, "arm", "recall")
    assert recall.n_queries == 5 and recall.macro == pytest.approx(0.5 / 5)
    # Micro recall pools positives: the zero-filled queries add no denominator.
    assert recall.micro == pytest.approx(1 / 4)
    hit = summary_of(result, "arm", "hit")
    assert hit.macro == pytest.approx(1 / 5) and hit.micro == pytest.approx(1 / 5)


def test_separate_reports_zero_positive_queries_as_their_own_group():
    result = lc.summarize_retrieval(BASELINE, QRELS, settings=settings(zero_positive="separate"))
    assert result.coverage[0].separate == 2 and result.coverage[0].scored == 3
    group = result.zero_positive_groups[0]
    assert (group.n_queries, group.retrieved_any, group.mean_retrieved) == (2, 2, 1.0)
    assert summary_of(result, "arm", "recall").n_queries == 3


def test_apply_zero_positive_policy_on_a_metrics_frame():
    frame = lc.retrieval_metrics(BASELINE, QRELS, k=2)
    assert len(apply_zero_positive_policy(frame, "exclude")) == 3
    zero = apply_zero_positive_policy(frame, "zero")
    assert len(zero) == 5 and not zero[["recall", "ndcg"]].isna().any().any()
    with pytest.raises(ValueError, match="zero_positive"):
        apply_zero_positive_policy(frame, "drop")


def test_macro_and_micro_differ_when_queries_have_different_numbers_of_positives():
    run = pd.DataFrame({"query_id": ["big"] * 4 + ["small"], "doc_id": ["a", "b", "c", "d", "z"],
                        "rank": [1, 2, 3, 4, 1]})
    labels = pd.DataFrame({"query_id": ["big"] * 4 + ["small"], "doc_id": ["a", "b", "c", "d", "y"],
                           "relevant": 1})
    result = lc.summarize_retrieval(run, labels, settings=settings(k=4, metrics=("recall",)))
    recall = summary_of(result, "arm", "recall", source="unlabelled")
    assert recall.macro == pytest.approx(0.5)  # (1 + 0) / 2 queries
    assert recall.micro == pytest.approx(4 / 5)  # 4 hits / 5 positives


def test_every_source_is_reported_and_mixing_them_is_flagged():
    labels = pd.concat([QRELS, pd.DataFrame({"query_id": ["q4"], "doc_id": ["w"], "relevant": [1],
                                             "source": ["click"]})], ignore_index=True)
    result = lc.summarize_retrieval(BASELINE, labels, settings=settings())
    assert result.sources == ("human", "click", "all")
    click = summary_of(result, "arm", "recall", source="click")
    assert click.n_queries == 1 and click.macro == 1.0
    pooled = summary_of(result, "arm", "recall", source="all")
    assert pooled.n_queries == 4
    assert any("mix them into one number" in w for w in result.warnings)
    single = lc.summarize_retrieval(BASELINE, QRELS, settings=settings())
    assert single.sources == ("human",)
    assert not any("mix" in w for w in single.warnings)


def test_chance_levels_sit_next_to_the_observed_values_for_a_sampled_pool():
    pool = pd.DataFrame({"query_id": np.repeat(["q1", "q2", "q3", "q4", "q5"], 4),
                         "doc_id": ["a", "b", "x", "y", "c", "y", "m", "l", "n", "o", "p", "r",
                                    "w", "s", "t", "u", "e", "f", "g", "h"]})
    result = lc.summarize_retrieval(BASELINE, QRELS, settings=settings(pool_kind="sampled"), pool=pool)
    recall = summary_of(result, "arm", "recall")
    # k = 2 of 4 candidates shown: every query's chance recall is 2/4.
    assert recall.chance_macro == pytest.approx(0.5) and recall.chance_micro == pytest.approx(0.5)
    without_pool = lc.summarize_retrieval(BASELINE, QRELS, settings=settings(pool_kind="sampled"))
    assert summary_of(without_pool, "arm", "recall").chance_macro is None
    assert any("chance levels" in w for w in without_pool.warnings)


def test_compare_retrieval_pairs_queries_under_the_same_policy():
    result = lc.compare_retrieval(BASELINE, VARIANT, QRELS, settings=settings(), resamples=2000)
    recall = result.get("recall")
    # Paired over q1, q2, q5: baseline 1/2, 0, 0; variant 1, 1, 1.
    assert recall.comparison.n == 3
    assert recall.comparison.difference == pytest.approx((0.5 + 1 + 1) / 3)
    assert recall.baseline.macro == pytest.approx(1 / 6) and recall.variant.macro == pytest.approx(1.0)
    direct = lc.compare_continuous([0.5, 0.0, 0.0], [1.0, 1.0, 1.0], resamples=2000, seed=0)
    assert recall.comparison == direct
    table = result.table()
    assert set(table) == {"recall", "reciprocal_rank", "precision", "ndcg", "hit"}
    assert table["recall"]["human"]["comparison"]["difference"] == pytest.approx(2.5 / 3)
    json.dumps(result.to_dict())  # JSON-ready


def test_compare_retrieval_is_deterministic_and_invariant_to_row_order():
    first = lc.compare_retrieval(BASELINE, VARIANT, QRELS, settings=settings(), resamples=1000, seed=4)
    again = lc.compare_retrieval(BASELINE.sample(frac=1, random_state=3),
                                 VARIANT.sample(frac=1, random_state=5),
                                 QRELS.sample(frac=1, random_state=7), settings=settings(),
                                 resamples=1000, seed=4)
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())


def test_a_source_with_too_few_queries_is_skipped_with_a_reason():
    labels = pd.concat([QRELS, pd.DataFrame({"query_id": ["q4"], "doc_id": ["w"], "relevant": [1],
                                             "source": ["teacher"]})], ignore_index=True)
    result = lc.compare_retrieval(BASELINE, VARIANT, labels, settings=settings(), resamples=1000)
    teacher = result.get("recall", "teacher")
    assert teacher.comparison is None and "needs 2" in teacher.skipped
    assert result.get("recall", "human").comparison is not None


def test_a_planted_improvement_is_recovered():
    rng = np.random.default_rng(11)
    n = 300
    queries = [f"q{i}" for i in range(n)]
    labels = pd.DataFrame({"query_id": queries, "doc_id": "gold", "relevant": 1, "source": "human"})

    def run(rank_of_gold):
        rows = []
        for query, rank in zip(queries, rank_of_gold):
            docs = [f"n{j}" for j in range(10)]
            docs[rank - 1] = "gold"
            rows.append({"example_id": query, "retrieved": docs})
        return pd.DataFrame(rows)

    baseline = run(rng.integers(3, 11, n))
    variant = run(np.maximum(1, rng.integers(3, 11, n) - 2))
    result = lc.compare_retrieval(baseline, variant, labels,
                                  settings=settings(k=10, metrics=("reciprocal_rank", "recall")),
                                  resamples=2000)
    assert result.get("reciprocal_rank").comparison.verdict == "improvement"
    # Every gold document is inside the top 10 for both arms: recall cannot move.
    assert result.get("recall").comparison.difference == 0.0
    assert result.get("recall").comparison.verdict == "inconclusive"


def test_clusters_are_passed_on_to_the_comparison():
    clusters = {"q1": "u1", "q2": "u2", "q3": "u1", "q4": "u2", "q5": "u3"}
    result = lc.compare_retrieval(BASELINE, VARIANT, QRELS, settings=settings(), resamples=1000,
                                  clusters=clusters)
    assert result.get("recall").comparison.n_clusters == 3
    with pytest.raises(ValueError, match="no cluster"):
        lc.compare_retrieval(BASELINE, VARIANT, QRELS, settings=settings(), resamples=1000,
                             clusters={"q1": "u1"})


def test_settings_from_a_design_block():
    design = {"retrieval": {"k": 5, "metrics": ["recall", "mrr", "ndcg"], "zero_positive": "zero",
                            "pool": {"kind": "sampled"}}}
    parsed = lc.RetrievalSettings.from_design(design)
    assert parsed.to_dict() == {"k": 5, "metrics": ["recall", "reciprocal_rank", "ndcg"],
                                "zero_positive": "zero", "pool_kind": "sampled",
                                "min_coverage": None}
    assert lc.RetrievalSettings.from_design({"experiment": "e"}) == lc.RetrievalSettings()
    assert lc.RetrievalSettings.from_design(None) == lc.RetrievalSettings()
    block = lc.RetrievalSettings.from_design({"k": 3, "min_coverage": 0.9})
    assert (block.k, block.min_coverage) == (3, 0.9)


def test_settings_from_a_parsed_design_object():
    class Parsed:  # what langchef_core.designs.design.Design exposes: a record with to_dict()
        class retrieval:
            @staticmethod
            def to_dict():
                return {"k": 20, "metrics": ["ndcg"], "zero_positive": "separate",
                        "pool": {"kind": "hard_negative"}}
    parsed = lc.RetrievalSettings.from_design(Parsed())
    assert (parsed.k, parsed.metrics, parsed.zero_positive, parsed.pool_kind) == \
        (20, ("ndcg",), "separate", "hard_negative")


def test_zero_positive_coverage_check():
    result = lc.summarize_retrieval(BASELINE, QRELS, settings=settings())
    check = lc.check_zero_positive_coverage(result.coverage)
    assert check.passed and check.with_positives == 3 and check.queries_total == 5
    assert "2 are handled by zero_positive: exclude" in check.reason
    strict = lc.check_zero_positive_coverage(result.coverage, min_coverage=0.8)
    assert not strict.passed and "60.0%" in strict.reason and "80.0%" in strict.reason
    negatives_only = QRELS.assign(relevant=0)
    empty = lc.summarize_retrieval(BASELINE, negatives_only, settings=settings())
    check = lc.check_zero_positive_coverage(empty.coverage)
    assert not check.passed and "no retrieval metric can be scored" in check.reason
    assert check.to_dict()["passed"] is False


@pytest.mark.parametrize("block, message", [
    ({"k": 0}, "k must be"), ({"zero_positive": "drop"}, "zero_positive"),
    ({"pool": {"kind": "random"}}, "pool kind"), ({"metrics": ["map"]}, "unknown retrieval metric"),
    ({"metrics": ["recall", "recall"]}, "twice"), ({"cutoff": 3}, "unknown key"),
    ({"min_coverage": 1.5}, "min_coverage"),
])
def test_settings_refuse_bad_design_values(block, message):
    with pytest.raises(ValueError, match=message):
        lc.RetrievalSettings.from_design({"retrieval": block})


@pytest.mark.parametrize("run", [BASELINE, VARIANT])
@pytest.mark.parametrize("policy", ["exclude", "zero", "separate"])
@pytest.mark.parametrize("labels", ["human", "mixed", "negatives only"])
def test_coverage_without_scoring_is_the_coverage_of_the_scored_summary(run, policy, labels):
    """The coverage gate reads coverage without scoring a ranking; it must equal what the
    full summary reports, source by source."""
    qrels = {"human": QRELS,
             "mixed": pd.concat([QRELS, pd.DataFrame({"query_id": ["q4", "q9"], "doc_id": ["w", "z"],
                                                      "relevant": [1, 1], "source": ["click"] * 2})],
                                ignore_index=True),
             "negatives only": QRELS.assign(relevant=0)}[labels]
    scored = lc.summarize_retrieval(run, qrels, settings=settings(zero_positive=policy), arm="base")
    from langchef_core.scoring.retrieval import retrieval_coverage
    assert retrieval_coverage(run, qrels, settings=settings(zero_positive=policy),
                                 arm="base") == scored.coverage

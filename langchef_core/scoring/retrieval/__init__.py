"""Retrieval scoring: per-query metrics at k, zero-positive policy and coverage, candidate
pools and their chance levels, and the paired comparison of two arms per metric.

Layers, from the bottom: ``kernel`` (integer-coded, vectorised counting), ``metrics`` (the
per-query measures), ``inputs`` (validated runs, qrels and pools, with file/column/row
errors), ``chance`` (expected metrics under random ranking), ``pools`` (the same-pool proof)
and ``summary`` (policy, coverage, macro/micro, sources, paired comparison).
"""

from .chance import ChanceLevels, chance_levels, hit_chance_one_positive
from .inputs import (Judgements, RankedRun, arm_candidates, arm_run_to_long, candidate_pool,
                     long_run, qrels_table)
from .kernel import QueryCounts, RankedLists, count_hits, ranked_lists
from .metrics import METRICS, QueryMetrics, metric_name, retrieval_metrics, retrieval_metrics_arrays
from .pools import POOL_KINDS, PoolCheck, check_pools, pool_counts
from .results import (Coverage, CoverageCheck, MetricComparison, MetricSummary,
                      RetrievalComparison, RetrievalSettings, RetrievalSummary, ZeroPositiveGroup)
from .summary import (POLICIES, apply_zero_positive_policy, check_zero_positive_coverage,
                      compare_retrieval, retrieval_coverage, summarize_retrieval)

__all__ = [
    "METRICS", "POLICIES", "POOL_KINDS", "ChanceLevels", "Coverage", "CoverageCheck", "Judgements",
    "MetricComparison", "MetricSummary", "PoolCheck", "QueryCounts", "QueryMetrics", "RankedLists",
    "RankedRun", "RetrievalComparison", "RetrievalSettings", "RetrievalSummary",
    "ZeroPositiveGroup", "apply_zero_positive_policy", "arm_candidates", "arm_run_to_long",
    "candidate_pool", "chance_levels", "check_pools", "check_zero_positive_coverage",
    "compare_retrieval", "count_hits", "hit_chance_one_positive", "long_run", "metric_name",
    "pool_counts", "qrels_table", "ranked_lists", "retrieval_coverage", "retrieval_metrics",
    "retrieval_metrics_arrays", "summarize_retrieval",
]

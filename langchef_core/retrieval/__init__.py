"""Retrieval scoring: per-query metrics at k, zero-positive policy and coverage, candidate
pools and their chance levels, and the paired comparison of two arms per metric."""

from .inputs import (Judgements, RankedRun, arm_candidates, arm_run_to_long, candidate_pool,
                     long_run, qrels_table)
from .kernel import QueryCounts, RankedLists, count_hits, ranked_lists
from .metrics import METRICS, QueryMetrics, metric_name, retrieval_metrics, retrieval_metrics_arrays
from .chance import ChanceLevels, chance_levels, hit_chance_one_positive
from .pools import POOL_KINDS, PoolCheck, check_pools, pool_counts
from .summary import (POLICIES, Coverage, MetricComparison, MetricSummary, RetrievalComparison,
                      RetrievalSettings, RetrievalSummary, ZeroPositiveGroup,
                      apply_zero_positive_policy, compare_retrieval, summarize_retrieval)

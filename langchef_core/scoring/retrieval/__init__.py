"""Retrieval scoring: per-query metrics at k, zero-positive policy and coverage, candidate
pools and their chance levels, and the paired comparison of two arms per metric.

Layers, from the bottom: ``kernel`` (integer-coded, vectorised counting), ``metrics`` (the
per-query measures), ``inputs`` (validated runs, qrels and pools, with file/column/row
errors), ``judgements`` (qrels with what scoring derives from them), ``chance`` (expected metrics under random ranking), ``pools`` (the same-pool proof)
and ``summary`` (policy, coverage, macro/micro, sources, paired comparison).
"""

from importlib import import_module

# Each name from the module that defines it, imported on first use (PEP 562): a process that
# scores a run from its files needs inputs, kernel and metrics only, and the comparison's
# modules bring scipy with them (0.3-1.5 s of a benchmark's process, issue 31).
_HOMES = {
    "chance": ("ChanceLevels", "chance_levels", "hit_chance_one_positive"),
    "inputs": ("RankedRun", "arm_candidates", "arm_run_to_long", "candidate_pool", "long_run",
               "qrels_table"),
    "judgements": ("JudgedQueries", "Judgements"),
    "kernel": ("QueryCounts", "RankedLists", "count_hits", "ranked_lists"),
    "metrics": ("METRICS", "QueryMetrics", "metric_name", "retrieval_metrics", "retrieval_metrics_arrays"),
    "pools": ("POOL_KINDS", "PoolCheck", "check_pools", "pool_counts"),
    "results": ("Coverage", "CoverageCheck", "MetricComparison", "MetricSummary", "RetrievalComparison",
                "RetrievalSettings", "RetrievalSummary", "ZeroPositiveGroup"),
    "summary": ("POLICIES", "apply_zero_positive_policy", "check_zero_positive_coverage",
                "compare_retrieval", "retrieval_coverage", "summarize_retrieval"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str):
    if name not in _HOME_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOME_OF[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_HOME_OF))


__all__ = [
    "METRICS", "POLICIES", "POOL_KINDS", "ChanceLevels", "Coverage", "CoverageCheck",
    "JudgedQueries", "Judgements", "MetricComparison", "MetricSummary", "PoolCheck", "QueryCounts",
    "QueryMetrics", "RankedLists", "RankedRun", "RetrievalComparison", "RetrievalSettings",
    "RetrievalSummary", "ZeroPositiveGroup", "apply_zero_positive_policy", "arm_candidates",
    "arm_run_to_long", "candidate_pool", "chance_levels", "check_pools",
    "check_zero_positive_coverage", "compare_retrieval", "count_hits", "hit_chance_one_positive",
    "long_run", "metric_name", "pool_counts", "qrels_table", "ranked_lists", "retrieval_coverage",
    "retrieval_metrics", "retrieval_metrics_arrays", "summarize_retrieval",
]

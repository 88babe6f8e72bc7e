"""Comparison: the paired verdict on the primary metric, the criterion attribution, and the
retrieval metrics, each read from its interval (Tango's score interval for rates, joined
with the cluster-robust t over clusters; the t ∪ bootstrap-t interval for scores)."""


import math

import dagster as dg
import pandas as pd

from langchef_core.inputs.errors import InputError
from langchef_core.inputs.loading import TableLoad
from langchef_core.readout import comparisons as core
from langchef_core.readout.experiment import DesignState
from langchef_core.readout.item_scores import ItemScores
from langchef_pipeline.metadata import markdown_table, verdict_line
from langchef_pipeline.partitions import experiments
from langchef_pipeline.progress import measured

GROUP = "comparison"


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"python"})
@measured
def retrieval_comparison(design: DesignState, arm_runs: dict, qrels: TableLoad, pools: TableLoad,
                         goldens: TableLoad) -> dg.MaterializeResult:
    """Per-query recall, MRR, nDCG … of both arms, compared pairwise per metric and label
    source, with zero-positive coverage and the chance level of sampled pools."""
    runs = {arm: load.frame for arm, load in arm_runs.items()}
    result = core.retrieval_comparison(design.design, runs, qrels.frame, pools.frame, goldens.frame)
    if result is None:
        return dg.MaterializeResult(value=None, metadata={"retrieval": dg.MetadataValue.text("not a retrieval design")})
    rows = [{"metric": item.metric, "source": item.source,
             "difference": item.comparison.difference if item.comparison else None,
             "low": item.comparison.low if item.comparison else None,
             "high": item.comparison.high if item.comparison else None,
             "verdict": item.comparison.verdict if item.comparison else item.skipped}
            for item in result.comparisons]
    return dg.MaterializeResult(value=result, metadata={"metrics": markdown_table(pd.DataFrame(rows))})


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"python"})
@measured
def paired_comparison(design: DesignState, item_scores: ItemScores,
                      retrieval_comparison) -> dg.MaterializeResult:
    """The pre-registered primary metric, compared on paired goldens: exact McNemar, the
    interval that decides the verdict, and the smallest detectable effect."""
    try:
        result = core.primary_result(design.design, item_scores, retrieval_comparison)
    except InputError as refusal:  # e.g. "seeds" that are one checkpoint re-run
        raise dg.Failure(description=str(refusal)) from None
    return dg.MaterializeResult(value=result, metadata={
        "verdict": dg.MetadataValue.md(verdict_line(result, metric=design.design.primary)),
        "difference": dg.MetadataValue.float(result.difference),
        "detection limit": dg.MetadataValue.float(result.detection_limit)
        if math.isfinite(result.detection_limit) else dg.MetadataValue.text("none: too few goldens"),
        "design sha256": dg.MetadataValue.text(design.design.sha256)})


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"python"})
@measured
def criterion_attribution(design: DesignState, item_scores: ItemScores) -> dg.MaterializeResult:
    """Which judge criterion moved: the same paired test inside each cited criterion,
    Holm-corrected across the criteria, plus what no criterion explains."""
    result = core.criterion_attribution(design.design, item_scores)
    if result is None:
        return dg.MaterializeResult(value=None, metadata={"criteria": dg.MetadataValue.text("not a judged design")})
    table = result.criteria[["criterion", "broke", "fixed", "difference", "low", "high", "p_adjusted",
                             "direction", "detection_limit"]]
    return dg.MaterializeResult(value=result, metadata={
        "criteria": markdown_table(table),
        "unattributed difference": dg.MetadataValue.float(result.unattributed.difference)})


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"python"})
@measured
def slice_comparison(design: DesignState, item_scores: ItemScores, goldens: TableLoad) -> dg.MaterializeResult:
    """Per-slice paired comparisons, the difference under the observed and the target
    population weights (stratified bootstrap), protected-slice breaches, exploratory slices."""
    result = core.slice_analysis(design.design, item_scores, goldens.frame)
    if result is None:
        return dg.MaterializeResult(value=None, metadata={"slices": dg.MetadataValue.text("none declared")})
    rows = pd.DataFrame([{"slice": r.slice, "n": r.n, "difference": r.comparison.difference,
                          "low": r.comparison.low, "high": r.comparison.high,
                          "protected": r.protected, "guardrail": r.guardrail} for r in result.slices])
    return dg.MaterializeResult(value=result, metadata={
        "slices": markdown_table(rows), "target-weighted difference": dg.MetadataValue.float(result.target.difference),
        "breaches": len(result.breaches)})


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"python"})
@measured
def cost_comparison(design: DesignState, item_scores: ItemScores) -> dg.MaterializeResult:
    """Paired latency and cost differences (mean, p50, p95) with bootstrap intervals, where
    the runs carry latency_ms / cost_usd; the design's guardrails are read against them."""
    costs = core.cost_comparisons(design.design, item_scores)
    rows = pd.DataFrame([{"metric": metric, **stat} for metric, result in costs.items()
                         for stat in result.to_dict()["statistics"]])
    return dg.MaterializeResult(value=costs, metadata={
        "costs": markdown_table(rows) if len(rows) else dg.MetadataValue.text("no latency or cost recorded")})

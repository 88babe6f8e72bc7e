"""The comparisons read out from an experiment's item scores: the primary metric, criterion
attribution, retrieval metrics, slices, training runs and cost guardrails, each computed
with the design's alpha, power, resamples and seed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..designs.model import Design
from ..inputs.errors import InputError
from ..stats.paired import (BinaryComparison, ContinuousComparison, cluster_floor,
                            compare_binary, noninferiority_from_interval)
from ..stats.records import json_ready
from .experiment import BASELINE, VARIANT, retrieval_settings
from .item_scores import ItemScores


def seed_analysis(design: Design, scores: ItemScores):
    """Between-seed spread and the comparison whose interval resamples seeds and goldens."""
    from ..stats.training_runs import compare_seeds
    if not scores.seeds:
        return None
    (before, before_out), (after, after_out) = scores.seeds[BASELINE], scores.seeds[VARIANT]
    return compare_seeds(before, after, baseline_outputs=before_out, variant_outputs=after_out,
                         declared_seeds=design.seeds, clusters=_clusters(design, scores.frame),
                         margin=design.margin, **_statistics(design))


def seeded_primary(design: Design, scores: ItemScores) -> ContinuousComparison:
    """The primary comparison of a seeded design, from the seed-aware interval and the t test
    that agrees with it (``SeedComparison.p_value_method``). Refused seeds (identical
    outputs: one checkpoint re-run) stop the readout with their reason."""
    analysis = seed_analysis(design, scores)
    if analysis.refused:
        raise InputError("; ".join(analysis.gate_reasons))
    seeded = analysis.comparison
    p_value = seeded.p_value
    method = seeded.p_value_method
    warnings = (seeded.note,) if seeded.note else ()
    return ContinuousComparison(
        n=seeded.n, difference=seeded.difference, low=seeded.low, high=seeded.high, p_value=p_value,
        verdict=seeded.verdict, detection_limit=seeded.detection_limit,
        noninferiority=seeded.noninferiority, margin=seeded.margin, alpha=seeded.alpha,
        power=seeded.power, resamples=seeded.resamples, seed=seeded.seed, n_clusters=seeded.n_clusters,
        design_effect=1.0, p_value_method=method, interval_method=seeded.interval_method,
        evidence=None if seeded.n_clusters is None else cluster_floor(seeded.n_clusters),
        warnings=warnings,
        baseline_mean=seeded.baseline_mean, variant_mean=seeded.variant_mean)


def primary_comparison(design: Design, scores: ItemScores) -> BinaryComparison | ContinuousComparison:
    """The pre-registered primary comparison (pass rate or accuracy) of the two arms."""
    frame = scores.frame
    fixed = compare_binary(frame[f"{BASELINE}_pass"].to_numpy(bool), frame[f"{VARIANT}_pass"].to_numpy(bool),
                           margin=design.margin, clusters=_clusters(design, frame), **_statistics(design))
    if design.sequential:
        from .sequential import sequential_primary
        return sequential_primary(design, scores, fixed)
    return fixed


# ----------------------------------------------------------------------------------------
# Comparisons
# ----------------------------------------------------------------------------------------

def _statistics(design: Design) -> dict:
    return dict(alpha=design.alpha, power=design.power, resamples=design.bootstrap.resamples,
                seed=design.bootstrap.seed)


def _clusters(design: Design, frame: pd.DataFrame):
    """The cluster labels as stats codes them. A text column without gaps is coded here, in
    the sorted order of its labels (np.unique's, so the same codes): a dozen comparisons each
    turning 10^6 strings into Python objects and sorting them took seconds apiece."""
    if design.cluster is None:
        return None
    column = frame[design.cluster]
    if isinstance(column.dtype, pd.StringDtype) and not column.isna().any():
        return pd.factorize(column, sort=True)[0].astype(np.int64)
    return column.astype(str).to_numpy()


def criterion_attribution(design: Design, scores: ItemScores):
    """Which judge criterion moved (judged designs only; None otherwise)."""
    from ..stats.attribution import attribute
    if design.primary != "pass_rate" or scores.seeds:
        return None  # attribution pairs one run per arm; a seeded arm has several
    frame = scores.frame
    result = attribute(frame[f"{BASELINE}_pass"].to_numpy(bool), frame[f"{BASELINE}_criterion"],
                       frame[f"{VARIANT}_pass"].to_numpy(bool), frame[f"{VARIANT}_criterion"],
                       criteria=list(design.criteria), clusters=_clusters(design, frame),
                       **_statistics(design))
    if design.sequential:
        from .sequential import sequential_attribution
        return sequential_attribution(design, scores, result)
    return result


def retrieval_comparison(design: Design, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame | None,
                         pool: pd.DataFrame | None, goldens: pd.DataFrame):
    """Per-query paired comparison of every design retrieval metric (None without retrieval)."""
    from ..scoring.retrieval import compare_retrieval
    if design.retrieval is None or qrels is None:
        return None
    clusters = None
    if design.cluster is not None:
        clusters = dict(zip(goldens["example_id"].astype(str), goldens[design.cluster].astype(str)))
    return compare_retrieval(runs[design.arms.baseline], runs[design.arms.variant], qrels,
                             settings=retrieval_settings(design), pool=pool, clusters=clusters,
                             **_statistics(design))


def repeated_epochs(scores: ItemScores) -> bool:
    """Imported runs that scored some golden more than once (Inspect epochs, promptfoo repeat)."""
    frame = scores.frame
    return any(f"{role}_epochs" in frame.columns and frame[f"{role}_epochs"].max() > 1
               for role in (BASELINE, VARIANT))


def epoch_mean_comparison(design: Design, scores: ItemScores) -> ContinuousComparison:
    """Repeated samples: the paired comparison of each golden's pass rate over its epochs
    (epochs of one golden are not independent goldens, so they are averaged, not pooled)."""
    from ..stats.paired import compare_continuous
    frame = scores.frame
    return compare_continuous(frame[f"{BASELINE}_pass_mean"].astype(float).to_numpy(),
                              frame[f"{VARIANT}_pass_mean"].astype(float).to_numpy(),
                              margin=design.margin, clusters=_clusters(design, frame),
                              **_statistics(design))


def score_comparison(design: Design, scores: ItemScores) -> ContinuousComparison:
    """``primary: score``: each golden's value from the pinned scorer (its mean over epochs)."""
    from ..stats.paired import compare_continuous
    frame = scores.frame
    return compare_continuous(frame[f"{BASELINE}_score"].astype(float).to_numpy(),
                              frame[f"{VARIANT}_score"].astype(float).to_numpy(),
                              margin=design.margin, clusters=_clusters(design, frame),
                              **_statistics(design))


def primary_result(design: Design, scores: ItemScores, retrieval) -> BinaryComparison | ContinuousComparison:
    """The comparison of the design's primary metric: pass rate, accuracy or a retrieval metric."""
    if scores.seeds:
        return seeded_primary(design, scores)
    if design.primary == "score":
        return score_comparison(design, scores)
    if design.primary == "pass_rate" and repeated_epochs(scores):
        return epoch_mean_comparison(design, scores)
    if design.primary in ("pass_rate", "accuracy"):
        return primary_comparison(design, scores)
    chosen = retrieval.get(design.primary)
    if chosen.comparison is None:
        raise InputError(f"the primary metric {design.primary} could not be compared: {chosen.skipped}")
    # The retrieval comparison knows no margin: read its interval against the design's.
    return dataclasses.replace(chosen.comparison, margin=design.margin,
                               noninferiority=noninferiority_from_interval(
                                   chosen.comparison.low, chosen.comparison.high, design.margin))


def classification_section(design: Design, scores: ItemScores) -> dict | None:
    """Per-class counts for accuracy designs (the comparison itself is the primary)."""
    if design.primary != "accuracy":
        return None
    from ..scoring.classification import NORMALIZATION, compare_classification
    frame = scores.frame
    result = compare_classification(frame["ideal"], frame[f"{BASELINE}_output"], frame[f"{VARIANT}_output"],
                                    resamples=1000, seed=design.bootstrap.seed)
    return {"classes": [item.to_dict() for item in result.classes], "normalization": NORMALIZATION}


# ----------------------------------------------------------------------------------------
# Slices and practical-cost guardrails
# ----------------------------------------------------------------------------------------

EXPLORATORY_MAX_VALUES = 20  # a column with more distinct values is an id or free text, not a slice


def slice_analysis(design: Design, scores: ItemScores, goldens: pd.DataFrame):
    """Per-slice paired comparisons, observed- and target-weighted differences, protected
    breaches, and exploratory slices (None when the design declares no slices)."""
    from ..stats.slices import compare_slices
    if design.slices is None or f"{BASELINE}_pass" not in scores.frame.columns:
        return None
    frame = scores.frame
    block = design.slices
    ordered = goldens.set_index("example_id").loc[frame["example_id"]]
    skip = {"example_id", "input", "ideal", "output", block.column, design.cluster}
    exploratory = {column: ordered[column].astype(object).where(ordered[column].notna(), None).tolist()
                   for column in ordered.columns
                   if column not in skip and ordered[column].nunique(dropna=True) <= EXPLORATORY_MAX_VALUES}
    labels = frame[block.column].astype(str)
    # Without declared target weights the question is about the suite as observed.
    weights = block.target_weights or labels.value_counts(normalize=True).sort_index().to_dict()
    return compare_slices(frame[f"{BASELINE}_pass"].to_numpy(bool), frame[f"{VARIANT}_pass"].to_numpy(bool),
                          labels, column=block.column,
                          target_weights=weights, protected=block.protected,
                          clusters=_clusters(design, frame), exploratory=exploratory or None,
                          margin=design.margin, **_statistics(design))


COST_METRICS = ("latency_ms", "cost_usd")


def cost_comparisons(design: Design, scores: ItemScores) -> dict:
    """Paired mean/p50/p95 differences of latency and cost, where both arms carry them."""
    from ..stats.costs import compare_cost
    frame, costs = scores.frame, {}
    for metric in COST_METRICS:
        columns = [f"{BASELINE}_{metric}", f"{VARIANT}_{metric}"]
        if all(c in frame.columns for c in columns) and frame[columns].notna().all().all():
            costs[metric] = compare_cost(frame[columns[0]].astype(float).to_numpy(),
                                         frame[columns[1]].astype(float).to_numpy(), metric=metric,
                                         clusters=_clusters(design, frame), alpha=design.alpha,
                                         resamples=design.bootstrap.resamples, seed=design.bootstrap.seed)
    return costs


def guardrail_entries(design: Design, slices, costs: dict) -> tuple[list, list]:
    """The readout's ``guardrails`` list (each with ``breached``) and extra warnings."""
    from ..stats.costs import check_guardrails
    entries, warnings = [], []
    if slices is not None:
        for result in slices.slices:
            if result.protected:
                entries.append({"name": f"protected slice {slices.column}={result.slice}", "kind": "slice",
                                "breached": result.guardrail == "breached", "status": result.guardrail,
                                "difference": result.comparison.difference, "low": result.comparison.low,
                                "high": result.comparison.high, "p_adjusted": result.p_adjusted,
                                "sentence": next((r for r in slices.gate_reasons if f"{result.slice}" in r), "")})
        warnings += [("slices", sentence) for sentence in slices.warnings]
        if slices.exploratory:
            warnings.append(("exploratory_slices", "slices not declared in the design are shown as "
                             "exploratory only: they never decide the gate and need confirmation on "
                             "held-out data"))
    if design.guardrails:
        missing = [g.metric for g in design.guardrails if g.metric not in costs]
        if missing:
            raise InputError(f"the design sets a guardrail on {missing[0]}, but the runs do not carry "
                             f"{missing[0]} for every golden in both arms", column=missing[0],
                             hint="record it in every run row, or remove the guardrail in a new design")
        check = check_guardrails([g.to_dict() for g in design.guardrails], costs)
        for result in check.results:
            entries.append({"name": f"{result.statistic} {result.metric}", "kind": "cost",
                            "breached": result.status == "failed", "status": result.status,
                            "max_increase": result.max_increase, "increase": result.relative,
                            # null where unbounded: JSON has no infinity
                            **json_ready({"relative_low": result.relative_low,
                                          "relative_high": result.relative_high}),
                            "sentence": result.message})
        warnings += [("guardrail_unresolved", sentence) for sentence in check.warnings]
    return entries, warnings

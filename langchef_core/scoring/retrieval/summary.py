"""From per-query metrics to what a readout says: policy, coverage, macro/micro, per source,
chance levels, and the paired comparison of two arms.

* **Zero-positive policy** (the design's ``retrieval.zero_positive``): recall and nDCG are
  undefined for a query without positives. ``exclude`` drops such queries from every metric
  and counts them; ``zero`` scores them 0 on every metric and counts them; ``separate``
  leaves them out of the metrics and reports them as their own group (how many got any
  document at all: every retrieved document there is a false positive). The same policy
  applies to both arms, on the same queries, since positives come from the shared qrels.
* **Coverage** is always reported: queries in total (run ∪ qrels), with and without
  positives, excluded / zero-filled / separate, scored, judged but missing from the run
  (scored as an empty list) and answered but never judged.
* **Macro** is the mean over scored queries; **micro** pools numerators over denominators
  (hits / positives for recall; see ``QueryMetrics.micro_parts``). Under ``zero`` a
  zero-positive query adds nothing to micro recall or nDCG (its denominator is 0).
* **Label provenance**: metrics are computed per source (human, click, teacher); with more
  than one source a pooled ``all`` row is added and flagged in ``warnings``, because clicks,
  human judgements and teacher labels measure different things.
* **Comparison**: per metric and source, the paired per-query values go through
  ``compare_continuous`` (union of Student t and bootstrap-t intervals of the mean
  difference with a matching zero-mean p-value, minimum evidence, detection limit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...inputs.id_order import sorted_union
from ...inputs.ids import isin
from ...inputs.threads import on_threads
from ...stats._validation import check_alpha, check_power, check_resamples
from ...stats.paired import compare_continuous
from ...stats.sums import exact_sum
from .chance import ChanceLevels, chance_levels
from .inputs import RankedRun, candidate_pool
from .judgements import Judgements
from .metrics import METRICS, QueryMetrics, score_run
from .pools import pool_counts
from .results import (MIN_PAIRS, POLICIES, POOLED, Coverage, CoverageCheck, MetricComparison,
                      MetricSummary, RetrievalComparison, RetrievalSettings, RetrievalSummary,
                      ZeroPositiveGroup)


def check_zero_positive_coverage(coverage, *, min_coverage: float | None = None) -> CoverageCheck:
    """Fails when no query has a positive label (nothing can be scored), or when the share of
    queries with one is below the design's ``retrieval.min_coverage``.

    Judged on the labels of every source together (the ``all`` rows when there are several
    sources); the per-source shares stay in the coverage records.
    """
    records = list(coverage)
    if not records:
        raise ValueError("coverage is empty: summarize or compare the retrieval runs first")
    sources = {record.source for record in records}
    source = POOLED if POOLED in sources else records[0].source
    record = next(r for r in records if r.source == source)
    common = dict(source=source, queries_total=record.queries_total,
                  with_positives=record.with_positives, positive_share=record.positive_share,
                  min_coverage=min_coverage, policy=record.policy)
    if record.with_positives == 0:
        return CoverageCheck(False, f"none of the {record.queries_total} queries has a positive "
                             "label, so no retrieval metric can be scored; label positives in "
                             "the qrels", **common)
    if min_coverage is not None and record.positive_share < min_coverage:
        return CoverageCheck(False, f"only {record.with_positives} of {record.queries_total} "
                             f"queries ({record.positive_share:.1%}) have a positive label, below "
                             f"the design's min_coverage of {min_coverage:.1%}", **common)
    return CoverageCheck(True, f"{record.with_positives} of {record.queries_total} queries "
                         f"({record.positive_share:.1%}) have a positive label; the other "
                         f"{record.without_positives} are handled by zero_positive: {record.policy}",
                         **common)


def summarize_retrieval(run, qrels, *, settings: RetrievalSettings | None = None,
                        pool: pd.DataFrame | None = None, arm: str = "arm") -> RetrievalSummary:
    """One arm's metrics (macro, micro, chance levels) per label source, with coverage."""
    settings = settings or RetrievalSettings()
    scored = _score_arms({arm: _run(run, arm)}, _judgements(qrels), settings, pool)
    return RetrievalSummary(settings, scored.sources, tuple(scored.summaries[arm]),
                            tuple(scored.coverage), tuple(scored.groups), tuple(scored.warnings))


def compare_retrieval(baseline, variant, qrels, *, settings: RetrievalSettings | None = None,
                      pool: pd.DataFrame | None = None, alpha: float = 0.05, power: float = 0.80,
                      resamples: int = 10_000, seed: int = 0, clusters=None) -> RetrievalComparison:
    """Paired per-query comparison of every design metric between two arms, per label source.

    ``baseline``/``variant``: runs (long or arm format, or ``RankedRun``); ``qrels``: frame or
    ``Judgements``; ``pool``: the candidate pool (``query_id``, ``doc_id``) for chance levels
    (the pool check is ``check_pools``). ``clusters``: optional mapping query_id → cluster
    label, passed on to ``compare_continuous``. The zero-positive policy applies identically
    to both arms.
    """
    settings = settings or RetrievalSettings()
    # Refuse bad settings before any scoring work, as compare_continuous would later.
    check_alpha(alpha)
    check_power(power)
    check_resamples(resamples)
    runs = {"baseline": _run(baseline, "baseline"), "variant": _run(variant, "variant")}
    scored = _score_arms(runs, _judgements(qrels), settings, pool)
    warnings = list(scored.warnings)
    comparisons = []
    for source in scored.sources:
        mask = scored.scored_mask[source]
        labels = None
        if clusters is not None:
            labels = _cluster_labels(clusters, scored.queries[mask])
        for metric in settings.metrics:
            summaries = [next(s for s in scored.summaries[arm]
                              if s.metric == metric and s.source == source) for arm in runs]
            values = [_policy_values(scored.metrics[arm][source].values(metric), mask,
                                     settings.zero_positive) for arm in runs]
            if mask.sum() < MIN_PAIRS:
                note = (f"{metric} ({source}): only {int(mask.sum())} scored quer"
                        f"{'y' if mask.sum() == 1 else 'ies'}; a paired comparison needs {MIN_PAIRS}")
                warnings.append(note)
                comparisons.append(MetricComparison(metric, source, settings.k, *summaries,
                                                    comparison=None, skipped=note))
                continue
            result = compare_continuous(values[0], values[1], alpha=alpha, power=power,
                                        resamples=resamples, seed=seed, clusters=labels)
            comparisons.append(MetricComparison(metric, source, settings.k, *summaries, result))
    return RetrievalComparison(settings, scored.sources, tuple(comparisons), tuple(scored.coverage),
                               tuple(scored.groups), tuple(warnings), scored.frame())


def apply_zero_positive_policy(frame: pd.DataFrame, policy: str) -> pd.DataFrame:
    """A ``retrieval_metrics`` frame under a policy: ``exclude``/``separate`` drop the
    zero-positive rows, ``zero`` fills their metrics with 0."""
    if policy not in POLICIES:
        raise ValueError(f"zero_positive must be one of {', '.join(POLICIES)}, got {policy!r}")
    if policy == "zero":
        filled = frame.copy()
        filled[list(METRICS)] = filled[list(METRICS)].fillna(0.0)
        return filled
    return frame[frame["n_positive"] > 0].reset_index(drop=True)


@dataclass
class _Scored:
    sources: tuple[str, ...]
    queries: np.ndarray
    metrics: dict          # arm → source → QueryMetrics
    in_run: dict           # arm → bool array over queries
    scored_mask: dict      # source → bool array over queries
    summaries: dict        # arm → [MetricSummary]
    coverage: list
    groups: list
    warnings: list

    def frame(self) -> pd.DataFrame:
        parts = []
        for arm, by_source in self.metrics.items():
            for source, metrics in by_source.items():
                part = metrics.to_frame(self.queries)
                part.insert(0, "source", source)
                part.insert(0, "arm", arm)
                part["in_run"] = self.in_run[arm]
                part["scored"] = self.scored_mask[source]
                parts.append(part)
        return pd.concat(parts, ignore_index=True)


def _queries(runs: dict, judged) -> np.ndarray:
    """The queries scored: the judged ones and every arm's, sorted (by pyarrow: numpy's
    union of 10^6 texts takes seconds)."""
    return sorted_union(judged, *(r.queries for r in runs.values()))


def _answered(queries: np.ndarray, run) -> np.ndarray:
    """Which of ``queries`` (``_queries``: a union that holds every run's own) the run answers."""
    if len(run.queries) == len(queries):  # every query scored: no lookup of 10^6 texts
        return np.ones(len(queries), bool)
    return isin(pd.Index(np.asarray(queries, dtype=object)), run.queries)


def _sources(judgements: Judgements) -> tuple[str, ...]:
    labelled = judgements.sources
    return labelled + ((POOLED,) if len(labelled) > 1 else ())


def _over(judgements: Judgements, queries: np.ndarray, source: str):
    return judgements.over(queries, None if source == POOLED else source)


def retrieval_coverage(run, qrels, *, settings: RetrievalSettings | None = None,
                       arm: str = "arm") -> tuple[Coverage, ...]:
    """One arm's zero-positive coverage per label source, as ``summarize_retrieval`` reports
    it, without scoring a ranking: coverage depends only on which queries the run answers
    and which carry a positive label (the coverage gate needs nothing else)."""
    settings = settings or RetrievalSettings()
    runs, judgements = {arm: _run(run, arm)}, _judgements(qrels)
    queries = _queries(runs, judgements.queries)
    in_run = _answered(queries, runs[arm])
    records = []
    for source in _sources(judgements):
        judged = _over(judgements, queries, source)
        codes = judged.positive_query
        n_positive = np.bincount(codes[codes >= 0], minlength=queries.size)
        records.append(_coverage(arm, source, settings.zero_positive, queries, n_positive, in_run,
                                 judged.judged))
    return tuple(records)


def _score_arms(runs: dict, judgements: Judgements, settings: RetrievalSettings, pool) -> _Scored:
    judged = judgements.queries
    queries = _queries(runs, judged)
    labelled = judgements.sources
    sources = _sources(judgements)
    warnings = []
    if len(labelled) > 1:
        warnings.append(f"labels come from {len(labelled)} sources ({', '.join(labelled)}): metrics "
                        f"are reported per source; the '{POOLED}' rows mix them into one number, "
                        "and clicks, human judgements and teacher labels measure different things")
    pool_table = None if pool is None else candidate_pool(pool, file="pools")
    if pool_table is None and settings.pool_kind != "full":
        warnings.append(f"the design declares a {settings.pool_kind} pool but no pool was given: "
                        "chance levels under random ranking cannot be reported")
    metrics = {arm: {} for arm in runs}
    summaries = {arm: [] for arm in runs}
    coverage, groups, masks = [], [], {}
    in_run = {arm: _answered(queries, run) for arm, run in runs.items()}
    for source in sources:
        judged_here = _over(judgements, queries, source)
        positives, is_judged = judged_here.positives, judged_here.judged
        scored = _each_arm(runs, lambda run: score_run(
            run, positives, judged, k=settings.k, queries=queries,
            positive_query=judged_here.positive_query)[1])
        for arm in runs:
            metrics[arm][source] = scored[arm]
        positives_per_query = metrics[next(iter(runs))][source].n_positive
        chance = _chance(pool_table, positives, queries, positives_per_query, settings.k)
        mask = positives_per_query > 0 if settings.zero_positive != "zero" else np.ones(queries.size, bool)
        masks[source] = mask
        for arm, run in runs.items():
            values = metrics[arm][source]
            coverage.append(_coverage(arm, source, settings.zero_positive, queries, values.n_positive,
                                      in_run[arm], is_judged))
            summaries[arm] += [_summary(arm, metric, source, settings, values, chance, mask)
                               for metric in settings.metrics]
            if settings.zero_positive == "separate":
                groups.append(_zero_positive_group(arm, source, values))
        warnings += _coverage_warnings(coverage[-len(runs):], settings.zero_positive)
    return _Scored(sources, queries, metrics, in_run, masks, summaries, coverage, groups, warnings)


def _each_arm(runs: dict, score) -> dict:
    """``score(run)`` of every arm, the arms on threads of their own (``inputs.threads``): two
    arms of 10^6 queries score in about 60% of the time one after the other takes. Each
    arm's result is its own: the same numbers in any order."""
    return dict(zip(runs, on_threads(score, runs.values())))


def _summary(arm, metric, source, settings, values: QueryMetrics, chance: ChanceLevels | None,
             mask) -> MetricSummary:
    macro, micro = _aggregate(values, metric, mask, settings.zero_positive)
    chance_macro = chance_micro = None
    if chance is not None:
        chance_macro, chance_micro = _aggregate(chance, metric, mask, settings.zero_positive)
    return MetricSummary(arm=arm, metric=metric, source=source, k=settings.k,
                         n_queries=int(mask.sum()), macro=macro, micro=micro,
                         chance_macro=chance_macro, chance_micro=chance_micro)


def _aggregate(values, metric: str, mask, policy: str) -> tuple[float | None, float | None]:
    if not mask.any():
        return None, None
    per_query = _policy_values(values.values(metric), mask, policy)
    numerator, denominator = values.micro_parts(metric)
    numerator = np.nan_to_num(numerator[mask])
    # The exactly rounded sum, the same in any order: no sort is needed for the same bytes
    # whatever order the files list the queries in.
    pooled = exact_sum(denominator[mask])
    micro = exact_sum(numerator) / pooled if pooled > 0 else None
    return exact_sum(per_query) / per_query.size, micro


def _policy_values(values: np.ndarray, mask, policy: str) -> np.ndarray:
    chosen = values[mask]
    return np.nan_to_num(chosen, nan=0.0) if policy == "zero" else chosen


def _coverage(arm, source, policy, queries, n_positive, in_run, is_judged) -> Coverage:
    without = int(np.count_nonzero(n_positive == 0))
    with_positives = int(queries.size - without)
    missing = queries[is_judged & ~in_run]
    unjudged = queries[in_run & ~is_judged]
    return Coverage(arm=arm, source=source, policy=policy, queries_total=int(queries.size),
                    with_positives=with_positives, without_positives=without,
                    excluded=without if policy == "exclude" else 0,
                    zero_filled=without if policy == "zero" else 0,
                    separate=without if policy == "separate" else 0,
                    scored=with_positives + (without if policy == "zero" else 0),
                    in_qrels_not_in_run=int(missing.size), in_run_not_in_qrels=int(unjudged.size),
                    positive_share=with_positives / queries.size if queries.size else 0.0,
                    first_missing_from_run=tuple(str(q) for q in missing[:10]),
                    first_not_in_qrels=tuple(str(q) for q in unjudged[:10]))


def _coverage_warnings(records, policy) -> list[str]:
    notes = []
    for record in records:
        if record.in_qrels_not_in_run:
            notes.append(f"{record.arm}: {record.in_qrels_not_in_run} judged quer"
                         f"{'y is' if record.in_qrels_not_in_run == 1 else 'ies are'} missing "
                         f"from the run (source {record.source}; first: "
                         f"{', '.join(record.first_missing_from_run[:3])}); scored as empty lists")
    first = records[0]
    if first.without_positives:
        verb = {"exclude": "excluded from", "zero": "scored 0 in",
                "separate": "reported separately from"}[policy]
        notes.append(f"{first.without_positives} of {first.queries_total} queries have no positive "
                     f"label from source {first.source} and are {verb} every metric "
                     f"(zero_positive: {policy})")
    return notes


def _zero_positive_group(arm, source, values: QueryMetrics) -> ZeroPositiveGroup:
    empty = values.n_positive == 0
    n = int(empty.sum())
    retrieved = values.n_retrieved[empty]
    return ZeroPositiveGroup(arm=arm, source=source, n_queries=n,
                             retrieved_any=int(np.count_nonzero(retrieved)),
                             retrieved_any_rate=float(np.count_nonzero(retrieved)) / n if n else None,
                             mean_retrieved=float(retrieved.sum()) / n if n else None)


def _chance(pool_table, positives, queries, n_positive, k) -> ChanceLevels | None:
    if pool_table is None:
        return None
    size, inside = pool_counts(pool_table, positives, queries)
    return chance_levels(size, inside, k=k, n_positive=n_positive)


def _run(run, arm: str) -> RankedRun:
    return run if isinstance(run, RankedRun) else RankedRun.from_frame(run, file=arm)


def _judgements(qrels) -> Judgements:
    return qrels if isinstance(qrels, Judgements) else Judgements.from_frame(qrels)


def _cluster_labels(clusters, queries) -> np.ndarray:
    lookup = dict(clusters) if isinstance(clusters, Mapping) else dict(clusters.items())
    missing = [q for q in queries if q not in lookup]
    if missing:
        raise ValueError(f"clusters gives no cluster for query {missing[0]!r}; map every scored query")
    return np.array([lookup[q] for q in queries], dtype=object)

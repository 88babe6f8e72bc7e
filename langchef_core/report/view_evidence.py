"""View model of the supporting evidence: retrieval metrics and coverage, classification
classes, slices and weights, guardrails and training runs."""

from __future__ import annotations

from dataclasses import dataclass

from .charts import ChartRow, ForestChart, HistogramChart, forest_chart, histogram_chart
from .filters import RATE, SCORE, delta, humanize, interval
from .view_common import (GUARDRAIL_WORDS, POLICY_SENTENCES, SECONDARY_WORDS, TONES, Estimate,
                          estimate_of, need_field, section_of)


@dataclass(frozen=True)
class RetrievalRow:
    metric: str
    source: str
    n_queries: int | None
    baseline_macro: float | None
    variant_macro: float | None
    baseline_micro: float | None
    variant_micro: float | None
    chance_macro: float | None
    estimate: Estimate | None
    word: str
    tone: str
    skipped: str | None


@dataclass(frozen=True)
class CoverageRow:
    arm: str
    source: str
    queries_total: int
    with_positives: int
    without_positives: int
    handled: str
    scored: int
    in_qrels_not_in_run: int
    in_run_not_in_qrels: int


@dataclass(frozen=True)
class ZeroPositiveRow:
    arm: str
    source: str
    n_queries: int
    retrieved_any: int
    retrieved_any_rate: float | None


@dataclass(frozen=True)
class RetrievalView:
    k: int | None
    zero_positive: str | None
    policy_sentence: str
    pool_kind: str | None
    sources: tuple[str, ...]
    rows: tuple[RetrievalRow, ...]
    coverage: tuple[CoverageRow, ...]
    zero_positive_groups: tuple[ZeroPositiveRow, ...]
    warnings: tuple[str, ...]
    has_chance: bool
    chart: ForestChart | None
    per_query: PerQueryView | None = None


@dataclass(frozen=True)
class RankedDoc:
    doc_id: str
    relevant: bool


@dataclass(frozen=True)
class QueryEvidence:
    query_id: str
    input: str | None
    difference: float                       # in the focus metric
    others: tuple[tuple[str, float], ...]   # the other metrics' differences
    baseline: tuple[RankedDoc, ...]
    variant: tuple[RankedDoc, ...]
    relevant: tuple[str, ...]
    missed: tuple[str, ...]                 # relevant, in neither arm's top k


@dataclass(frozen=True)
class MetricDistribution:
    metric: str
    chart: HistogramChart
    lower: int
    unchanged: int
    higher: int


@dataclass(frozen=True)
class PerQueryView:
    source: str
    k: int | None
    focus: str
    n_queries: int
    distributions: tuple[MetricDistribution, ...]
    lost: tuple[QueryEvidence, ...]
    gained: tuple[QueryEvidence, ...]


@dataclass(frozen=True)
class ClassRow:
    label: str
    n: int
    baseline_correct: int
    variant_correct: int
    broke: int
    fixed: int


@dataclass(frozen=True)
class ClassificationView:
    estimate: Estimate | None       # None when the accuracy comparison is the primary itself
    word: str
    tone: str
    baseline_rate: float | None
    variant_rate: float | None
    n: int
    broke: int | None
    fixed: int | None
    classes: tuple[ClassRow, ...]
    normalization: str | None


@dataclass(frozen=True)
class SliceRow:
    slice: str
    n: int
    observed_weight: float | None
    target_weight: float | None
    protected: bool
    estimate: Estimate
    word: str
    tone: str
    p_adjusted: float | None
    guardrail: str | None


@dataclass(frozen=True)
class WeightedRow:
    population: str
    estimate: Estimate
    word: str
    tone: str
    baseline: float | None
    variant: float | None
    resampling: str | None
    interval_method: str | None = None


@dataclass(frozen=True)
class ExploratoryRow:
    column: str
    slice: str
    n: int
    estimate: Estimate | None
    word: str
    tone: str


@dataclass(frozen=True)
class SlicesView:
    column: str
    unit: str
    rows: tuple[SliceRow, ...]
    weighted: tuple[WeightedRow, ...]
    exploratory: tuple[ExploratoryRow, ...]
    protected: tuple[str, ...]
    breaches: tuple[str, ...]
    warnings: tuple[str, ...]
    chart: ForestChart | None


@dataclass(frozen=True)
class GuardrailRow:
    """A cost guardrail (a relative change against an allowed increase) or a protected slice
    (a difference read against zero, Holm-corrected across the protected slices)."""

    name: str
    kind: str | None
    status: str
    breached: bool
    sentence: str | None
    estimate: Estimate | None       # protected slices: the slice's difference
    p_adjusted: float | None
    relative: float | None
    relative_low: float | None
    relative_high: float | None
    max_increase: float | None


@dataclass(frozen=True)
class SeedSpreadRow:
    arm: str
    n_seeds: int
    per_seed: tuple[tuple[str, float], ...]
    mean: float | None
    sd: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True)
class SeedsView:
    unit: str
    spreads: tuple[SeedSpreadRow, ...]
    estimate: Estimate | None
    word: str
    tone: str
    refused: bool
    reasons: tuple[str, ...]


def retrieval_view(section) -> RetrievalView | None:
    if not section:
        return None
    settings = section.get("settings") or {}
    table = section.get("metrics") or {}
    sources = tuple(section.get("sources") or ())
    metric_order = list(settings.get("metrics") or sorted(table))
    metric_order += sorted(name for name in table if name not in metric_order)
    k = settings.get("k")
    rows = []
    for metric in metric_order:
        by_source = table.get(metric) or {}
        order = list(sources) + sorted(s for s in by_source if s not in sources)
        for source in order:
            if source in by_source:
                rows.append(_retrieval_row(by_source[source], metric, source, k))
    policy = settings.get("zero_positive")
    coverage = tuple(_coverage_row(entry) for entry in section.get("coverage") or ())
    groups = tuple(ZeroPositiveRow(
        arm=str(g.get("arm")), source=str(g.get("source")), n_queries=int(g.get("n_queries", 0)),
        retrieved_any=int(g.get("retrieved_any", 0)),
        retrieved_any_rate=g.get("retrieved_any_rate"))
        for g in section.get("zero_positive_groups") or ())
    chart_rows = [ChartRow(
        label=f"{row.metric} · {row.source}", difference=row.estimate.difference,
        low=row.estimate.low, high=row.estimate.high, limit=row.estimate.limit or 0.0,
        tone=row.tone, word=row.word, kind="secondary",
        description=(f"{row.metric}, {row.source} labels: {delta(row.estimate.difference, SCORE)}, "
                     f"interval {interval(row.estimate)}; {row.word}"))
        for row in rows if row.estimate is not None]
    chart = forest_chart(
        chart_rows, unit=SCORE, chart_id="forest-retrieval",
        title="Forest chart of the retrieval metrics",
        description="Each row is one metric under one label source: the mean per-query "
                    "difference on its interval, over a band of ± the smallest effect it could "
                    "have seen.",
        axis_label="difference in the metric, variant − baseline") if chart_rows else None
    return RetrievalView(
        k=k, zero_positive=policy, policy_sentence=POLICY_SENTENCES.get(
            policy, f"Queries without a positive label: policy {policy!r}."),
        pool_kind=settings.get("pool_kind"), sources=sources,
        rows=tuple(rows), coverage=coverage, zero_positive_groups=groups,
        warnings=tuple(str(w) for w in section.get("warnings") or ()),
        has_chance=any(row.chance_macro is not None for row in rows), chart=chart,
        per_query=per_query_view(section.get("per_query"), metric_order))


def per_query_view(section, metric_order) -> PerQueryView | None:
    """Histograms of the per-query differences of every metric and the queries that lost
    and gained most in the focus metric (readout.retrieval.per_query)."""
    if not section:
        return None
    histograms = section.get("histograms") or {}
    k = section.get("k")
    distributions = []
    for metric in [m for m in metric_order if m in histograms]:
        h = histograms[metric]
        name = f"{humanize(metric)}@{k}" if k else humanize(metric)
        distributions.append(MetricDistribution(
            metric=name, lower=int(h.get("lower", 0)), unchanged=int(h.get("unchanged", 0)),
            higher=int(h.get("higher", 0)),
            chart=histogram_chart(
                [int(c) for c in h["counts"]], int(h.get("unchanged", 0)),
                low=float(h.get("low", -1.0)), high=float(h.get("high", 1.0)),
                chart_id=f"per-query-{metric}",
                title=f"Per-query differences in {name}",
                description=(f"How many queries moved by how much in {name}, variant minus "
                             f"baseline, in bins of 0.1: {h.get('lower', 0)} lower, "
                             f"{h.get('unchanged', 0)} unchanged, {h.get('higher', 0)} higher."))))
    focus = str(section.get("focus"))
    return PerQueryView(
        source=str(section.get("source")), k=k, focus=humanize(focus),
        n_queries=int(section.get("n_queries", 0)), distributions=tuple(distributions),
        lost=tuple(_query_evidence(entry, focus, metric_order)
                   for entry in section.get("lost") or ()),
        gained=tuple(_query_evidence(entry, focus, metric_order)
                     for entry in section.get("gained") or ()))


def _query_evidence(entry, focus: str, metric_order) -> QueryEvidence:
    differences = entry.get("differences") or {}
    order = [m for m in metric_order if m in differences]
    order += sorted(m for m in differences if m not in order)
    baseline = tuple(RankedDoc(str(d.get("doc_id")), bool(d.get("relevant")))
                     for d in entry.get("baseline") or ())
    variant = tuple(RankedDoc(str(d.get("doc_id")), bool(d.get("relevant")))
                    for d in entry.get("variant") or ())
    relevant = tuple(str(doc) for doc in entry.get("relevant") or ())
    shown = {doc.doc_id for doc in baseline + variant}
    return QueryEvidence(
        query_id=str(entry.get("query_id")), input=entry.get("input"),
        difference=float(differences.get(focus, 0.0)),
        others=tuple((humanize(metric), float(differences[metric])) for metric in order
                     if metric != focus),
        baseline=baseline, variant=variant, relevant=relevant,
        missed=tuple(doc for doc in relevant if doc not in shown))


def _retrieval_row(entry, metric, source, k) -> RetrievalRow:
    baseline, variant = entry.get("baseline") or {}, entry.get("variant") or {}
    comparison = entry.get("comparison")
    estimate = (estimate_of(comparison, SCORE, f"retrieval.metrics.{metric}.{source}")
                if comparison else None)
    verdict = comparison.get("verdict", "inconclusive") if comparison else "inconclusive"
    return RetrievalRow(
        metric=f"{humanize(metric)}@{k}" if k else humanize(metric), source=str(source),
        n_queries=baseline.get("n_queries"), baseline_macro=baseline.get("macro"),
        variant_macro=variant.get("macro"), baseline_micro=baseline.get("micro"),
        variant_micro=variant.get("micro"), chance_macro=baseline.get("chance_macro"),
        estimate=estimate,
        word=SECONDARY_WORDS.get(verdict, verdict) if comparison else "not compared",
        tone=TONES.get(verdict, "neutral") if comparison else "neutral",
        skipped=entry.get("skipped"))


def _coverage_row(entry) -> CoverageRow:
    policy = entry.get("policy")
    handled = {"exclude": "excluded", "zero": "scored as 0", "separate": "reported apart"}
    return CoverageRow(
        arm=str(entry.get("arm")), source=str(entry.get("source")),
        queries_total=int(entry.get("queries_total", 0)),
        with_positives=int(entry.get("with_positives", 0)),
        without_positives=int(entry.get("without_positives", 0)),
        handled=handled.get(policy, str(policy)), scored=int(entry.get("scored", 0)),
        in_qrels_not_in_run=int(entry.get("in_qrels_not_in_run", 0)),
        in_run_not_in_qrels=int(entry.get("in_run_not_in_qrels", 0)))


def classification_view(section) -> ClassificationView | None:
    """Per-class counts; the accuracy comparison itself may be the primary (then absent here)."""
    if not section:
        return None
    comparison = section.get("comparison")
    verdict = need_field(comparison, "verdict", "classification.comparison") if comparison else None
    classes = tuple(ClassRow(
        label=str(c.get("label")), n=int(c.get("n", 0)),
        baseline_correct=int(c.get("baseline_correct", 0)),
        variant_correct=int(c.get("variant_correct", 0)), broke=int(c.get("broke", 0)),
        fixed=int(c.get("fixed", 0))) for c in section.get("classes") or ())
    if comparison is None:
        return ClassificationView(estimate=None, word="", tone="neutral", baseline_rate=None,
                                  variant_rate=None, n=sum(row.n for row in classes), broke=None,
                                  fixed=None, classes=classes,
                                  normalization=section.get("normalization"))
    return ClassificationView(
        estimate=estimate_of(comparison, RATE, "classification.comparison"),
        word=SECONDARY_WORDS.get(verdict, verdict),
        tone=TONES.get(verdict, "neutral"), baseline_rate=comparison.get("baseline_rate"),
        variant_rate=comparison.get("variant_rate"), n=int(comparison.get("n", 0)),
        broke=comparison.get("broke"), fixed=comparison.get("fixed"), classes=classes,
        normalization=section.get("normalization"))


def slices_view(section) -> SlicesView | None:
    if not section:
        return None
    unit = RATE if section.get("outcome", "binary") == "binary" else SCORE
    rows = []
    for entry in section.get("slices") or ():
        comparison = section_of(entry, "comparison")
        verdict = comparison.get("verdict", "inconclusive")
        rows.append(SliceRow(
            slice=str(entry.get("slice")), n=int(entry.get("n", comparison.get("n", 0))),
            observed_weight=entry.get("observed_weight"), target_weight=entry.get("target_weight"),
            protected=bool(entry.get("protected")),
            estimate=estimate_of(comparison, unit, "slices.slices[].comparison"),
            word=SECONDARY_WORDS.get(verdict, verdict), tone=TONES.get(verdict, "neutral"),
            p_adjusted=entry.get("p_adjusted"), guardrail=entry.get("guardrail")))
    weighted = []
    for population in ("observed", "target"):
        entry = section.get(population)
        if entry:
            verdict = entry.get("verdict", "inconclusive")
            weighted.append(WeightedRow(
                population=population, estimate=estimate_of(entry, unit, f"slices.{population}"),
                word=SECONDARY_WORDS.get(verdict, verdict), tone=TONES.get(verdict, "neutral"),
                baseline=entry.get("baseline"), variant=entry.get("variant"),
                resampling=entry.get("resampling"), interval_method=entry.get("interval_method")))
    exploratory = []
    for entry in section.get("exploratory") or ():
        comparison = entry.get("comparison")
        verdict = comparison.get("verdict", "inconclusive") if comparison else None
        exploratory.append(ExploratoryRow(
            column=str(entry.get("column")), slice=str(entry.get("slice")),
            n=int(entry.get("n", 0)),
            estimate=(estimate_of(comparison, unit, "slices.exploratory[].comparison")
                      if comparison else None),
            word=SECONDARY_WORDS.get(verdict, verdict) if verdict else "too small to compare",
            tone=TONES.get(verdict, "neutral") if verdict else "neutral"))
    chart_rows = [ChartRow(
        label=(f"{row.slice} (protected)" if row.protected else row.slice),
        difference=row.estimate.difference, low=row.estimate.low, high=row.estimate.high,
        limit=row.estimate.limit or 0.0, tone=row.tone, word=row.guardrail or row.word,
        kind="secondary",
        description=f"slice {row.slice}: {delta(row.estimate.difference, unit)}, interval "
                    f"{interval(row.estimate)}; {row.guardrail or row.word}")
        for row in rows]
    chart_rows += [ChartRow(
        label=f"overall, {row.population} weights", difference=row.estimate.difference,
        low=row.estimate.low, high=row.estimate.high, limit=0.0, tone=row.tone, word=row.word,
        kind="secondary",
        description=f"overall under the {row.population} weights: "
                    f"{delta(row.estimate.difference, unit)}, interval {interval(row.estimate)}")
        for row in weighted]
    chart = forest_chart(
        chart_rows, unit=unit, chart_id="forest-slices",
        title="Forest chart of the declared slices",
        description="Each declared slice, then the overall difference under the observed and the "
                    "target weights, as a point on its interval.",
        axis_label=("difference, variant − baseline (percentage points)" if unit == RATE
                    else "difference, variant − baseline")) if chart_rows else None
    return SlicesView(
        column=str(section.get("column")), unit=unit, rows=tuple(rows), weighted=tuple(weighted),
        exploratory=tuple(exploratory), protected=tuple(section.get("protected") or ()),
        breaches=tuple(section.get("breaches") or ()),
        warnings=tuple(str(w) for w in section.get("warnings") or ()), chart=chart)


def guardrail_row(entry, unit: str) -> GuardrailRow:
    breached = bool(entry.get("breached"))
    status = entry.get("status") or ("breached" if breached else "held")
    name = entry.get("name") or " ".join(str(entry[key]) for key in ("statistic", "metric")
                                         if entry.get(key))
    has_difference = all(entry.get(key) is not None for key in ("difference", "low", "high"))
    return GuardrailRow(
        name=str(name or "guardrail"), kind=entry.get("kind"),
        status=GUARDRAIL_WORDS.get(status, str(status)), breached=breached,
        sentence=entry.get("sentence") or entry.get("message") or None,
        estimate=estimate_of(entry, unit, f"guardrails[{name!r}]") if has_difference else None,
        p_adjusted=entry.get("p_adjusted"),
        relative=entry.get("relative", entry.get("increase")), relative_low=entry.get("relative_low"),
        relative_high=entry.get("relative_high"), max_increase=entry.get("max_increase"))


def seeds_view(section, unit: str) -> SeedsView | None:
    if not section:
        return None
    spreads = tuple(SeedSpreadRow(
        arm=str(spread.get("arm")), n_seeds=int(spread.get("n_seeds", 0)),
        per_seed=tuple(sorted((str(name), value)
                              for name, value in (spread.get("per_seed") or {}).items())),
        mean=spread.get("mean"),
        sd=spread.get("sd"), min=spread.get("min"), max=spread.get("max"))
        for spread in (section.get("baseline"), section.get("variant")) if spread)
    comparison = section.get("comparison")
    verdict = comparison.get("verdict", "inconclusive") if comparison else None
    reasons = [refusal.get("reason") for refusal in section.get("refusals") or ()]
    reasons += list(section.get("gate_reasons") or ())
    return SeedsView(
        unit=unit, spreads=spreads,
        estimate=estimate_of(comparison, unit, "seeds.comparison") if comparison else None,
        word=SECONDARY_WORDS.get(verdict, verdict) if verdict else "not compared",
        tone=TONES.get(verdict, "neutral") if verdict else "neutral",
        refused=bool(section.get("refused")), reasons=tuple(str(r) for r in reasons if r))

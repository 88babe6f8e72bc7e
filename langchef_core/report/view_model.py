"""From a readout (ARCHITECTURE.md §7) to what its report shows: the view model.

The readout holds numbers and codes; this module decides what the page says about them —
which verdict word, which sentence, which rows in which order, which sections exist — so
the templates only format. Optional sections (retrieval, classification, slices,
guardrails, seeds, anchors) are ``None`` or empty when the readout does not carry them,
and the template leaves them out.

Wording rules. The primary comparison is a REGRESSION, an IMPROVEMENT or INCONCLUSIVE; an
inconclusive result always states the smallest effect the run could have seen. A judge
criterion is never called a regression or an improvement: it "moved worse", "moved better"
or is "inconclusive", because it is an attribution of the one primary comparison, not a
finding of its own. Secondary metrics (retrieval, slices, classification) read "lower",
"higher" or "inconclusive". Non-inferiority is "held", "failed" or "unresolved".

Order. Every list comes out in an order fixed by the data, never by the order of a
mapping's keys: criteria as the readout lists them (the design's order), retrieval metrics
in the design's order and label sources in provenance order, input files by path. So a
readout whose mappings were built in another order renders to the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from .charts import ChartRow, ForestChart, forest_chart
from .filters import RATE, SCORE, as_json, count, delta, humanize, interval, level, magnitude, pct

VERDICT_WORDS = {"regression": "REGRESSION", "improvement": "IMPROVEMENT",
                 "inconclusive": "INCONCLUSIVE"}
DIRECTION_WORDS = {"moved_worse": "moved worse", "moved_better": "moved better",
                   "inconclusive": "inconclusive"}
SECONDARY_WORDS = {"regression": "lower", "improvement": "higher", "inconclusive": "inconclusive"}
TONES = {"regression": "worse", "moved_worse": "worse", "improvement": "better",
         "moved_better": "better", "inconclusive": "neutral"}
NONINFERIORITY_MEANINGS = (
    ("held", "Held", "The whole interval lies above {bar}: whatever the variant lost is smaller "
                     "than the tolerance fixed before the run."),
    ("failed", "Failed", "The whole interval lies below {bar}: the variant lost more than the "
                         "tolerance allows."),
    ("unresolved", "Unresolved", "The interval straddles {bar}: a loss larger than the "
                                 "tolerance is still consistent with this run. This is not a "
                                 "pass; more goldens would settle it."),
)
POLICY_SENTENCES = {
    "exclude": "Queries without a positive label are left out of every metric "
               "(zero_positive: exclude).",
    "zero": "Queries without a positive label score 0 on every metric (zero_positive: zero).",
    "separate": "Queries without a positive label are left out of the metrics and reported on "
                "their own below (zero_positive: separate).",
    None: "The design does not say how queries without a positive label were handled.",
}
DESIGN_QUESTIONS = {
    "superiority": "a superiority design: does the variant differ from the baseline?",
    "non_inferiority": "a non-inferiority design: does the variant stay within the margin?",
}
WARNING_TITLES = {
    "underpowered": "Underpowered design",
    "repeated_look": "Repeated look at the same experiment",
    "traffic_unverified": "Traffic time could not be verified",
    "label_source_mix": "Retrieval labels from several sources",
    "exploratory_slices": "Exploratory slices",
    "retrieval": "Retrieval coverage",
    "judge_unanchored": "Judge not checked against human reviewers",
    "judge_drift": "Judge agreement with human reviewers",
    "slices": "Slices",
    "guardrail_unresolved": "Guardrail not resolved",
}
GUARDRAIL_WORDS = {"held": "held", "failed": "failed", "unresolved": "unresolved",
                   "breached": "breached", "clear": "clear", "unconfirmed": "unconfirmed"}
DRIFT_LEVEL_WORDS = {"ok": "OK", "warn": "WARNING", "error": "ERROR"}
BINARY_METRICS = ("pass_rate", "accuracy")
RETRIEVAL_METRICS = ("recall", "recall_normalized", "precision", "hit", "reciprocal_rank", "ndcg")


# ── records the templates read ──────────────────────────────────────────────────────────

@dataclass(frozen=True)
class Estimate:
    """A difference (variant − baseline) with its interval, in the unit of its metric."""

    difference: float
    low: float
    high: float
    unit: str                 # "rate" (shown in points) or "score" (its own scale)
    p_value: float | None = None
    limit: float | None = None


@dataclass(frozen=True)
class Header:
    experiment: str
    version: int | None
    hypothesis: str | None
    created_at: datetime
    tool_version: str | None
    format: int | None
    suite: str | None
    baseline_arm: str
    variant_arm: str
    kind: str | None
    design_question: str | None
    gate_passed: bool | None
    gate_reasons: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    key: str
    word: str
    tone: str
    sentence: str
    limit_sentence: str
    limit_caveat: str | None
    inconclusive: bool
    metric: str
    unit: str
    estimate: Estimate
    level: str
    alpha: float
    power: float
    n: int
    baseline_value: float | None
    variant_value: float | None
    p_value_method: str | None
    n_clusters: int | None
    design_effect: float | None
    resamples: int | None
    seed: int | None


@dataclass(frozen=True)
class Outcome:
    key: str
    word: str
    meaning: str
    current: bool


@dataclass(frozen=True)
class NonInferiority:
    outcome: str
    word: str
    margin: float
    unit: str
    sentence: str
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class PairedTable:
    both_pass: int
    broke: int
    fixed: int
    both_fail: int
    n: int

    @property
    def baseline_pass(self) -> int:
        return self.both_pass + self.broke

    @property
    def baseline_fail(self) -> int:
        return self.fixed + self.both_fail

    @property
    def variant_pass(self) -> int:
        return self.both_pass + self.fixed

    @property
    def variant_fail(self) -> int:
        return self.broke + self.both_fail

    @property
    def discordant(self) -> int:
        return self.broke + self.fixed

    @property
    def concordant(self) -> int:
        return self.both_pass + self.both_fail


@dataclass(frozen=True)
class CriterionRow:
    criterion: str
    broke: int
    fixed: int
    estimate: Estimate
    p_adjusted: float | None
    direction: str
    word: str
    tone: str


@dataclass(frozen=True)
class UnattributedRow:
    estimate: Estimate
    broke: int
    fixed: int
    baseline_uncited: int
    variant_uncited: int
    explained: float | None
    overall: float | None


@dataclass(frozen=True)
class AttributionView:
    rows: tuple[CriterionRow, ...]
    family_size: int
    alpha: float
    criterion_alpha: float
    unattributed: UnattributedRow | None


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


@dataclass(frozen=True)
class DriftView:
    became_wrong: int
    became_right: int
    p_value: float | None
    kappa_then: float | None
    kappa_now: float | None
    kappa_change: float | None
    kappa_change_low: float | None
    kappa_change_high: float | None
    significant: bool


@dataclass(frozen=True)
class AnchorsView:
    set: str | None
    set_sha256: str | None
    judge_id: str | None
    n: int
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    kappa_undefined: str | None
    observed: float | None
    caught: float | None            # share of the reviewers' failures the judge failed too
    caught_k: int | None
    caught_n: int | None
    passed_right: float | None      # share of the reviewers' passes the judge passed too
    level: str | None
    level_word: str | None
    meaning: str | None
    reasons: tuple[str, ...]
    drift: DriftView | None
    compared_with: str | None       # the judge id of the earlier run the drift test used
    length_warning: str | None      # set when the judge seems to let longer failures through


@dataclass(frozen=True)
class JudgeView:
    id: str | None
    kind: str | None
    settings: tuple[tuple[str, str], ...]
    anchors: AnchorsView | None


@dataclass(frozen=True)
class ChangedGolden:
    example_id: str
    input: str | None
    ideal: str | None
    baseline_output: str | None
    variant_output: str | None
    baseline_criterion: str | None
    variant_criterion: str | None
    baseline_rationale: str | None
    variant_rationale: str | None


@dataclass(frozen=True)
class GoldensView:
    broke: tuple[ChangedGolden, ...]
    fixed: tuple[ChangedGolden, ...]
    broke_total: int | None
    fixed_total: int | None


@dataclass(frozen=True)
class DesignView:
    sha256: str | None
    approved_by: str | None
    approved_at: str | None
    kind: str | None
    primary: str | None
    suite: str | None
    alpha: float | None
    power: float | None
    margin: float | None
    margin_unit: str
    resamples: int | None
    seed: int | None
    criteria: tuple[str, ...]
    as_approved: str | None


@dataclass(frozen=True)
class InputFile:
    path: str
    rows: int | None
    sha256: str | None


@dataclass(frozen=True)
class Provenance:
    inputs_sha256: str | None
    files: tuple[InputFile, ...]
    traffic_verified: bool | None
    traffic_sentence: str | None
    look_number: int | None
    repeated_look: bool | None


@dataclass(frozen=True)
class WarningView:
    code: str
    title: str
    sentence: str


@dataclass(frozen=True)
class ReportView:
    header: Header
    verdict: Verdict
    noninferiority: NonInferiority | None
    paired: PairedTable | None
    forest: ForestChart
    attribution: AttributionView | None
    retrieval: RetrievalView | None
    classification: ClassificationView | None
    slices: SlicesView | None
    guardrails: tuple[GuardrailRow, ...]
    seeds: SeedsView | None
    judge: JudgeView
    goldens: GoldensView | None     # None when the primary is not pass/fail (nothing flips)
    design: DesignView
    provenance: Provenance
    warnings: tuple[WarningView, ...]
    # Breached guardrails are said before the verdict: they fail the gate whatever it says.
    breaches: tuple[str, ...] = ()


# ── building it ─────────────────────────────────────────────────────────────────────────

def build_report_view(readout: Mapping, created_at: datetime) -> ReportView:
    """The view model of one readout; ``created_at`` must carry a time zone."""
    if not isinstance(readout, Mapping):
        raise ValueError(f"a readout must be a mapping (the parsed readout.json), got "
                         f"{type(readout).__name__}")
    if not isinstance(created_at, datetime) or created_at.tzinfo is None:
        raise ValueError("created_at must be a timezone-aware datetime (e.g. "
                         "datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)), so the page states "
                         "an unambiguous time")
    primary = _section(readout, "primary")
    design = readout.get("design") or {}
    unit = metric_unit(primary)
    verdict = _verdict(primary, design, unit)
    attribution = _attribution(readout, primary)
    return ReportView(
        header=_header(readout, design, created_at),
        verdict=verdict,
        noninferiority=_noninferiority(primary, unit),
        paired=_paired(primary) if unit == RATE and "broke" in primary else None,
        forest=_forest(verdict, attribution),
        attribution=attribution,
        retrieval=_retrieval(readout.get("retrieval")),
        classification=_classification(readout.get("classification")),
        slices=_slices(readout.get("slices")),
        guardrails=tuple(_guardrail(entry, unit) for entry in readout.get("guardrails") or ()),
        seeds=_seeds(readout.get("seeds"), unit),
        judge=_judge(readout.get("judge") or {}),
        goldens=_goldens(readout, primary) if "broke" in primary else None,
        design=_design(design, unit),
        provenance=_provenance(readout),
        warnings=tuple(_warning(entry) for entry in readout.get("warnings") or ()),
        breaches=tuple(str(entry.get("sentence") or entry.get("name") or "a guardrail")
                       for entry in readout.get("guardrails") or () if entry.get("breached")),
    )


def metric_unit(comparison: Mapping) -> str:
    """Rates (a binary comparison, with broke/fixed counts) in points, anything else as a score."""
    if "broke" in comparison or comparison.get("metric") in BINARY_METRICS:
        return RATE
    return SCORE


def verdict_sentence(primary: Mapping, unit: str | None = None) -> str:
    """The verdict in plain words, e.g. "Regression: −20.0 points, 95% interval −27.8 to
    −12.2; 18 goldens broke, none fixed." """
    unit = unit or metric_unit(primary)
    estimate = _estimate(primary, unit)
    verdict = _need(primary, "verdict", "primary")
    lead = (f"{verdict.capitalize()}: {delta(estimate.difference, unit)}, "
            f"{level(primary.get('alpha', 0.05))} interval {interval(estimate)}")
    if unit == RATE and "broke" in primary:
        return f"{lead}; {flips(primary['broke'], primary['fixed'])}."
    metric = primary.get("metric")
    n = int(_need(primary, "n", "primary"))
    pairs = count(n, "query", "queries") if metric in RETRIEVAL_METRICS else count(n, "paired item")
    named = f" in mean {humanize(metric)}" if metric else ""
    return (f"{verdict.capitalize()}: {delta(estimate.difference, unit)}{named}, "
            f"{level(primary.get('alpha', 0.05))} interval {interval(estimate)}, over {pairs}.")


def flips(broke: int, fixed: int) -> str:
    """The flips in words: "18 goldens broke, none fixed"; "none broke, 2 goldens fixed";
    "no golden changed verdict"."""
    if not broke and not fixed:
        return "no golden changed verdict"
    if not fixed:
        return f"{count(broke, 'golden')} broke, none fixed"
    if not broke:
        return f"none broke, {count(fixed, 'golden')} fixed"
    return f"{count(broke, 'golden')} broke, {fixed} fixed"


def limit_sentence(primary: Mapping, unit: str) -> str:
    """"The smallest effect this run could have seen is 11.0 points (…)." """
    limit = _need(primary, "detection_limit", "primary")
    alpha, power = primary.get("alpha", 0.05), primary.get("power", 0.8)
    return (f"The smallest effect this run could have seen is {magnitude(limit, unit)} "
            f"(at {pct(power, 0)} power and a two-sided {pct(alpha, 0)} level).")


def limit_caveat(primary: Mapping) -> str | None:
    """What an inconclusive verdict does and does not say."""
    if primary.get("verdict") != "inconclusive":
        return None
    return ("Inconclusive does not mean “no difference”: a real change smaller than that could "
            "be hiding in this result.")


def _header(readout, design, created_at) -> Header:
    arms = design.get("arms") or {}
    gate = readout.get("gate") or {}
    return Header(
        experiment=str(_need(readout, "experiment", "readout")), version=readout.get("version"),
        hypothesis=readout.get("hypothesis"), created_at=created_at,
        tool_version=readout.get("tool_version"), format=readout.get("format"),
        suite=design.get("suite"), baseline_arm=str(arms.get("baseline", "baseline")),
        variant_arm=str(arms.get("variant", "variant")), kind=design.get("kind"),
        design_question=DESIGN_QUESTIONS.get(design.get("kind")),
        gate_passed=gate.get("passed"), gate_reasons=tuple(gate.get("reasons") or ()))


def _verdict(primary, design, unit) -> Verdict:
    key = _need(primary, "verdict", "primary")
    if key not in VERDICT_WORDS:
        raise ValueError(f"readout field primary.verdict must be one of {sorted(VERDICT_WORDS)}, "
                         f"got {key!r}")
    baseline = primary.get("baseline_rate", primary.get("baseline_mean"))
    variant = primary.get("variant_rate", primary.get("variant_mean"))
    return Verdict(
        key=key, word=VERDICT_WORDS[key], tone=TONES[key], sentence=verdict_sentence(primary, unit),
        limit_sentence=limit_sentence(primary, unit), limit_caveat=limit_caveat(primary),
        inconclusive=key == "inconclusive",
        metric=str(primary.get("metric") or design.get("primary") or "primary metric"),
        unit=unit, estimate=_estimate(primary, unit), level=level(primary.get("alpha", 0.05)),
        alpha=primary.get("alpha", 0.05), power=primary.get("power", 0.8),
        n=int(_need(primary, "n", "primary")), baseline_value=baseline, variant_value=variant,
        p_value_method=primary.get("p_value_method"), n_clusters=primary.get("n_clusters"),
        design_effect=primary.get("design_effect"), resamples=primary.get("resamples"),
        seed=primary.get("seed"))


def _noninferiority(primary, unit) -> NonInferiority | None:
    outcome, margin = primary.get("noninferiority"), primary.get("margin")
    if outcome is None or margin is None:
        return None
    words = {key: word for key, word, _ in NONINFERIORITY_MEANINGS}
    if outcome not in words:
        raise ValueError(f"readout field primary.noninferiority must be held, failed or "
                         f"unresolved, got {outcome!r}")
    estimate = _estimate(primary, unit)
    bar = delta(-margin, unit)
    sentence = {
        "held": f"the whole interval ({interval(estimate)}) lies above {bar}.",
        "failed": f"the whole interval ({interval(estimate)}) lies below {bar}.",
        "unresolved": f"the interval ({interval(estimate)}) reaches past {bar}, so a loss "
                      "larger than the tolerance cannot be ruled out.",
    }[outcome]
    return NonInferiority(
        outcome=outcome, word=words[outcome], margin=margin, unit=unit,
        sentence=sentence[0].upper() + sentence[1:],
        outcomes=tuple(Outcome(key, word, meaning.format(bar=bar), key == outcome)
                       for key, word, meaning in NONINFERIORITY_MEANINGS))


def _paired(primary) -> PairedTable:
    return PairedTable(both_pass=int(primary.get("both_pass", 0)), broke=int(primary["broke"]),
                       fixed=int(primary["fixed"]), both_fail=int(primary.get("both_fail", 0)),
                       n=int(primary["n"]))


def _attribution(readout, primary) -> AttributionView | None:
    rows = readout.get("criteria") or []
    unattributed = readout.get("unattributed")
    if not rows and not unattributed:
        return None
    alpha = float(primary.get("alpha", 0.05))
    criteria = []
    for row in rows:
        direction = _need(row, "direction", "criteria[]")
        if direction not in DIRECTION_WORDS:
            raise ValueError(f"criterion {row.get('criterion')!r}: direction must be one of "
                             f"{sorted(DIRECTION_WORDS)}, got {direction!r}")
        criteria.append(CriterionRow(
            criterion=str(_need(row, "criterion", "criteria[]")), broke=int(row.get("broke", 0)),
            fixed=int(row.get("fixed", 0)),
            estimate=_estimate(row, RATE, f"criteria[{row.get('criterion')!r}]"),
            p_adjusted=row.get("p_adjusted"), direction=direction,
            word=DIRECTION_WORDS[direction], tone=TONES[direction]))
    extra = None
    if unattributed:
        extra = UnattributedRow(
            estimate=_estimate(unattributed, RATE, "unattributed"),
            broke=int(unattributed.get("broke", 0)),
            fixed=int(unattributed.get("fixed", 0)),
            baseline_uncited=int(unattributed.get("baseline_uncited", 0)),
            variant_uncited=int(unattributed.get("variant_uncited", 0)),
            explained=unattributed.get("explained"), overall=unattributed.get("overall"))
    family = len(criteria)
    return AttributionView(rows=tuple(criteria), family_size=family, alpha=alpha,
                           criterion_alpha=alpha / family if family else alpha, unattributed=extra)


def _forest(verdict: Verdict, attribution: AttributionView | None) -> ForestChart:
    estimate = verdict.estimate
    rows = [ChartRow(
        label=f"{humanize(verdict.metric)} (primary)", difference=estimate.difference,
        low=estimate.low, high=estimate.high, limit=estimate.limit, tone=verdict.tone,
        word=verdict.word, kind="primary", description=f"{verdict.metric}: {verdict.sentence}")]
    same_scale = verdict.unit == RATE
    for row in (attribution.rows if attribution and same_scale else ()):
        e = row.estimate
        rows.append(ChartRow(
            label=row.criterion, difference=e.difference, low=e.low, high=e.high,
            limit=e.limit if e.limit is not None else 0.0, tone=row.tone, word=row.word,
            kind="secondary",
            description=(f"{row.criterion}: {delta(e.difference, RATE)}, {verdict.level} interval "
                         f"{interval(e)}; {row.word}")))
    what = "the primary difference" + (" and each criterion's attributed difference"
                                       if len(rows) > 1 else "")
    return forest_chart(
        rows, unit=verdict.unit, chart_id="forest-primary",
        title=f"Forest chart of {what}",
        description=(f"Each row shows a difference (variant minus baseline) as a point on its "
                     f"{verdict.level} interval, over a band of ± the smallest effect that row "
                     f"could have seen; the vertical line is zero."),
        axis_label=("difference, variant − baseline (percentage points)" if verdict.unit == RATE
                    else "difference, variant − baseline"))


def _retrieval(section) -> RetrievalView | None:
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
        has_chance=any(row.chance_macro is not None for row in rows), chart=chart)


def _retrieval_row(entry, metric, source, k) -> RetrievalRow:
    baseline, variant = entry.get("baseline") or {}, entry.get("variant") or {}
    comparison = entry.get("comparison")
    estimate = (_estimate(comparison, SCORE, f"retrieval.metrics.{metric}.{source}")
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


def _classification(section) -> ClassificationView | None:
    """Per-class counts; the accuracy comparison itself may be the primary (then absent here)."""
    if not section:
        return None
    comparison = section.get("comparison")
    verdict = _need(comparison, "verdict", "classification.comparison") if comparison else None
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
        estimate=_estimate(comparison, RATE, "classification.comparison"),
        word=SECONDARY_WORDS.get(verdict, verdict),
        tone=TONES.get(verdict, "neutral"), baseline_rate=comparison.get("baseline_rate"),
        variant_rate=comparison.get("variant_rate"), n=int(comparison.get("n", 0)),
        broke=comparison.get("broke"), fixed=comparison.get("fixed"), classes=classes,
        normalization=section.get("normalization"))


def _slices(section) -> SlicesView | None:
    if not section:
        return None
    unit = RATE if section.get("outcome", "binary") == "binary" else SCORE
    rows = []
    for entry in section.get("slices") or ():
        comparison = _section(entry, "comparison")
        verdict = comparison.get("verdict", "inconclusive")
        rows.append(SliceRow(
            slice=str(entry.get("slice")), n=int(entry.get("n", comparison.get("n", 0))),
            observed_weight=entry.get("observed_weight"), target_weight=entry.get("target_weight"),
            protected=bool(entry.get("protected")),
            estimate=_estimate(comparison, unit, "slices.slices[].comparison"),
            word=SECONDARY_WORDS.get(verdict, verdict), tone=TONES.get(verdict, "neutral"),
            p_adjusted=entry.get("p_adjusted"), guardrail=entry.get("guardrail")))
    weighted = []
    for population in ("observed", "target"):
        entry = section.get(population)
        if entry:
            verdict = entry.get("verdict", "inconclusive")
            weighted.append(WeightedRow(
                population=population, estimate=_estimate(entry, unit, f"slices.{population}"),
                word=SECONDARY_WORDS.get(verdict, verdict), tone=TONES.get(verdict, "neutral"),
                baseline=entry.get("baseline"), variant=entry.get("variant"),
                resampling=entry.get("resampling")))
    exploratory = []
    for entry in section.get("exploratory") or ():
        comparison = entry.get("comparison")
        verdict = comparison.get("verdict", "inconclusive") if comparison else None
        exploratory.append(ExploratoryRow(
            column=str(entry.get("column")), slice=str(entry.get("slice")),
            n=int(entry.get("n", 0)),
            estimate=(_estimate(comparison, unit, "slices.exploratory[].comparison")
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


def _guardrail(entry, unit: str) -> GuardrailRow:
    breached = bool(entry.get("breached"))
    status = entry.get("status") or ("breached" if breached else "held")
    name = entry.get("name") or " ".join(str(entry[key]) for key in ("statistic", "metric")
                                         if entry.get(key))
    has_difference = all(entry.get(key) is not None for key in ("difference", "low", "high"))
    return GuardrailRow(
        name=str(name or "guardrail"), kind=entry.get("kind"),
        status=GUARDRAIL_WORDS.get(status, str(status)), breached=breached,
        sentence=entry.get("sentence") or entry.get("message") or None,
        estimate=_estimate(entry, unit, f"guardrails[{name!r}]") if has_difference else None,
        p_adjusted=entry.get("p_adjusted"),
        relative=entry.get("relative", entry.get("increase")), relative_low=entry.get("relative_low"),
        relative_high=entry.get("relative_high"), max_increase=entry.get("max_increase"))


def _seeds(section, unit: str) -> SeedsView | None:
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
        estimate=_estimate(comparison, unit, "seeds.comparison") if comparison else None,
        word=SECONDARY_WORDS.get(verdict, verdict) if verdict else "not compared",
        tone=TONES.get(verdict, "neutral") if verdict else "neutral",
        refused=bool(section.get("refused")), reasons=tuple(str(r) for r in reasons if r))


def _judge(section) -> JudgeView:
    settings = section.get("settings") or {}
    # kind and id have their own rows; the pipeline's settings repeat them
    shown = tuple((str(key), value if isinstance(value, str) else as_json(value))
                  for key, value in sorted(settings.items()) if key not in ("kind", "id"))
    return JudgeView(id=section.get("id"), kind=section.get("kind"), settings=shown,
                     anchors=_anchors(section.get("anchors")))


def _anchors(section) -> AnchorsView | None:
    if not section:
        return None
    agreement = section.get("agreement") or {}
    status = section.get("status") or {}
    drift = section.get("drift")
    tpr, tnr, observed = (agreement.get(key) or {} for key in ("tpr", "tnr", "observed"))
    level_key = status.get("level")
    earlier = section.get("compared_with") or {}
    length = section.get("length_bias") or {}
    return AnchorsView(
        set=section.get("anchor_set", section.get("set")),
        set_sha256=section.get("anchor_set_sha256"), judge_id=section.get("judge_id"),
        n=int(agreement.get("n", 0)), kappa=agreement.get("kappa"),
        kappa_low=agreement.get("kappa_low"), kappa_high=agreement.get("kappa_high"),
        kappa_undefined=agreement.get("kappa_undefined"), observed=observed.get("value"),
        caught=tpr.get("value"), caught_k=tpr.get("k"), caught_n=tpr.get("n"),
        passed_right=tnr.get("value"), level=level_key,
        level_word=DRIFT_LEVEL_WORDS.get(level_key, level_key) if level_key else None,
        meaning=status.get("meaning"), reasons=tuple(status.get("reasons") or ()),
        drift=DriftView(
            became_wrong=int(drift.get("became_wrong", 0)),
            became_right=int(drift.get("became_right", 0)), p_value=drift.get("p_value"),
            kappa_then=drift.get("kappa_then"), kappa_now=drift.get("kappa_now"),
            kappa_change=drift.get("kappa_change"), kappa_change_low=drift.get("kappa_change_low"),
            kappa_change_high=drift.get("kappa_change_high"),
            significant=bool(drift.get("significant"))) if drift else None,
        compared_with=earlier.get("judge_id"),
        length_warning=length.get("warning") if length.get("significant") else None)


def _goldens(readout, primary) -> GoldensView:
    return GoldensView(
        broke=tuple(_changed(entry) for entry in readout.get("broke") or ()),
        fixed=tuple(_changed(entry) for entry in readout.get("fixed") or ()),
        broke_total=primary.get("broke"), fixed_total=primary.get("fixed"))


def _changed(entry) -> ChangedGolden:
    return ChangedGolden(
        example_id=_text(_need(entry, "example_id", "broke/fixed entry")),
        input=_text(entry.get("input")), ideal=_text(entry.get("ideal")),
        baseline_output=_text(entry.get("baseline_output")),
        variant_output=_text(entry.get("variant_output")),
        baseline_criterion=_text(entry.get("baseline_criterion")),
        variant_criterion=_text(entry.get("variant_criterion")),
        baseline_rationale=_text(entry.get("baseline_rationale")),
        variant_rationale=_text(entry.get("variant_rationale")))


def _design(design, unit) -> DesignView:
    bootstrap = design.get("bootstrap") or {}
    as_approved = design.get("as_approved")
    return DesignView(
        sha256=design.get("sha256"), approved_by=design.get("approved_by"),
        approved_at=design.get("approved_at"), kind=design.get("kind"),
        primary=design.get("primary"), suite=design.get("suite"), alpha=design.get("alpha"),
        power=design.get("power"), margin=design.get("margin"), margin_unit=unit,
        resamples=bootstrap.get("resamples"), seed=bootstrap.get("seed"),
        criteria=tuple(str(c) for c in design.get("criteria") or ()),
        as_approved=as_json(as_approved) if as_approved is not None else None)


def _provenance(readout) -> Provenance:
    inputs = readout.get("inputs") or {}
    files = inputs.get("files") or {}
    traffic = readout.get("traffic") or {}
    looks = readout.get("looks") or {}
    return Provenance(
        inputs_sha256=inputs.get("sha256"),
        files=tuple(InputFile(path=str(path), rows=(files[path] or {}).get("rows"),
                              sha256=(files[path] or {}).get("sha256")) for path in sorted(files)),
        traffic_verified=traffic.get("verified"), traffic_sentence=traffic.get("sentence"),
        look_number=looks.get("look_number"), repeated_look=looks.get("repeated"))


def _warning(entry) -> WarningView:
    code = str(_need(entry, "code", "warnings[]"))
    title = WARNING_TITLES.get(code, code.replace("_", " ").capitalize())
    return WarningView(code=code, title=title, sentence=as_sentence(entry.get("sentence") or ""))


def as_sentence(text: str) -> str:
    """Capitalised, ending in a full stop: core modules write their notes as clauses."""
    text = str(text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


# ── small helpers ───────────────────────────────────────────────────────────────────────

def _estimate(comparison: Mapping, unit: str, where: str = "primary") -> Estimate:
    return Estimate(difference=float(_need(comparison, "difference", where)),
                    low=float(_need(comparison, "low", where)),
                    high=float(_need(comparison, "high", where)), unit=unit,
                    p_value=comparison.get("p_value"), limit=comparison.get("detection_limit"))


def _section(mapping: Mapping, key: str) -> Mapping:
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    if not isinstance(value, Mapping):
        raise ValueError(f"the readout has no {key!r} section (a mapping); is this a readout.json "
                         "written by langchef?")
    return value


def _need(mapping: Mapping, key: str, where: str):
    if not isinstance(mapping, Mapping) or mapping.get(key) is None:
        raise ValueError(f"readout field {where}.{key} is missing; the report cannot be drawn "
                         "without it")
    return mapping[key]


def _text(value) -> str | None:
    """Free text as text; structured inputs (a list of chat messages, say) as pretty JSON."""
    if value is None or isinstance(value, str):
        return value
    return as_json(value)


__all__ = ["ReportView", "build_report_view", "flips", "limit_caveat", "limit_sentence",
           "metric_unit", "verdict_sentence"]

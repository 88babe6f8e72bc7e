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
from .filters import RATE, SCORE, count, delta, humanize, interval, level, magnitude, pct
from .view_common import (BINARY_METRICS, DESIGN_QUESTIONS, DIRECTION_WORDS,
                          NONINFERIORITY_MEANINGS, RETRIEVAL_METRICS, TONES, VERDICT_WORDS,
                          Estimate, estimate_of, need_field, section_of)
from .view_evidence import (ClassificationView, GuardrailRow, RetrievalView, SeedsView, SlicesView,
                            classification_view, guardrail_row, retrieval_view, seeds_view,
                            slices_view)
from .view_provenance import (DesignView, GoldensView, JudgeView, Provenance, WarningView,
                              design_view, goldens_view, judge_view, provenance_view, warning_view)


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
    interval_method: str | None     # which interval the verdict is read from (issue 12)
    evidence: str | None            # why no direction was read, when minimum evidence is missing
    n_clusters: int | None
    design_effect: float | None
    resamples: int | None
    seed: int | None
    # The pre-registered question leads (issue 15): for a non-inferiority design ``word``,
    # ``tone`` and ``sentence`` are HELD/FAILED/UNRESOLVED at −margin, and the superiority
    # reading against zero comes second in ``against_zero``.
    kind: str = "superiority"
    margin: float | None = None
    against_zero: str | None = None
    # Declared target weights: the overall difference under each population, beside the
    # headline (which is the goldens' own mix).
    weighted: tuple[WeightedReading, ...] = ()


@dataclass(frozen=True)
class WeightedReading:
    population: str
    sentence: str
    word: str
    tone: str


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
    # A judged pass/fail reads pass/fail, broke/fixed; a classification correct/incorrect,
    # became wrong/became right (what its reader expects).
    good: str = "pass"
    bad: str = "fail"
    broke_word: str = "broke"
    fixed_word: str = "fixed"
    items: str = "golden"

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
    # Breached guardrails are said once, before the verdict: they fail the gate whatever it
    # says; the gate box and the guardrail table point here instead of repeating them.
    breaches: tuple[str, ...] = ()
    # Imported runs: per arm, goldens whose verdict changed between epochs (templates/_repeatability.html)
    repeatability: tuple[dict, ...] = ()
    other_gate_reasons: tuple[str, ...] = ()


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
    primary = section_of(readout, "primary")
    design = readout.get("design") or {}
    unit = metric_unit(primary)
    verdict = _verdict(primary, design, unit, readout.get("slices"), readout.get("sequential"))
    attribution = _attribution(readout, primary)
    breached = [entry for entry in readout.get("guardrails") or () if entry.get("breached")]
    breach_sentences = {str(entry.get("sentence")) for entry in breached}
    gate_reasons = (readout.get("gate") or {}).get("reasons") or ()
    return ReportView(
        header=_header(readout, design, created_at),
        verdict=verdict,
        noninferiority=_noninferiority(primary, unit),
        paired=(_paired(primary, design.get("primary"))
                if unit == RATE and "broke" in primary else None),
        forest=_forest(verdict, attribution),
        attribution=attribution,
        retrieval=retrieval_view(readout.get("retrieval")),
        classification=classification_view(readout.get("classification")),
        slices=slices_view(readout.get("slices")),
        guardrails=tuple(guardrail_row(entry, unit) for entry in readout.get("guardrails") or ()),
        seeds=seeds_view(readout.get("seeds"), unit),
        judge=judge_view(readout.get("judge") or {}),
        goldens=goldens_view(readout, primary) if "broke" in primary else None,
        design=design_view(design, unit),
        provenance=provenance_view(readout),
        warnings=tuple(warning_view(entry) for entry in readout.get("warnings") or ()),
        breaches=tuple(breach_sentence(entry, unit) for entry in breached),
        other_gate_reasons=tuple(true_minus(str(reason)) for reason in gate_reasons
                                 if str(reason) not in breach_sentences),
        repeatability=repeatability_rows(readout.get("repeatability"), design),
    )


def repeatability_rows(section, design: Mapping) -> tuple[dict, ...]:
    """One row per arm of an imported readout: epochs, and how many goldens changed verdict
    between them (empty when the readout carries no repeatability)."""
    if not isinstance(section, Mapping):
        return ()
    names = design.get("arms") or {}
    return tuple({"arm": str(names.get(role, role)), "role": role,
                  "goldens": int(entry.get("goldens", 0)), "epochs": int(entry.get("epochs", 1)),
                  "changed": int(entry.get("changed", 0)),
                  "changed_ids": tuple(str(i) for i in entry.get("changed_ids") or ())}
                 for role, entry in section.items() if isinstance(entry, Mapping))


def true_minus(text: str) -> str:
    """The readout's plain-text sentences use "-20.0"; the page prints a true minus sign."""
    import re
    return re.sub(r"(?<![\w-])-(?=\d)", "\u2212", text)


def breach_sentence(entry: Mapping, unit: str) -> str:
    """One breached guardrail in the page's own units: a protected slice's difference in
    points with its Holm-corrected p, a cost's relative change against its allowance."""
    from .filters import change, pvalue
    name = str(entry.get("name") or "a guardrail")
    if all(entry.get(key) is not None for key in ("difference", "low", "high")):
        estimate = estimate_of(entry, unit, f"guardrails[{name!r}]")
        held = (f"; Holm-corrected p = {pvalue(entry['p_adjusted'])}"
                if entry.get("p_adjusted") is not None else "")
        return (f"{name[0].upper() + name[1:]} dropped: {delta(estimate.difference, unit)}, "
                f"interval {interval(estimate)}{held}.")
    relative = entry.get("increase", entry.get("relative"))
    if relative is not None and entry.get("max_increase") is not None:
        ends = ""
        if entry.get("relative_low") is not None and entry.get("relative_high") is not None:
            ends = f" (interval {change(entry['relative_low'])} to {change(entry['relative_high'])})"
        return (f"{name} changed {change(relative)}{ends}, beyond the "
                f"allowed {change(entry['max_increase'])}.")
    return str(entry.get("sentence") or name)


def metric_unit(comparison: Mapping) -> str:
    """Rates (a binary comparison, with broke/fixed counts) in points, anything else as a score."""
    if "broke" in comparison or comparison.get("metric") in BINARY_METRICS:
        return RATE
    return SCORE


def verdict_sentence(primary: Mapping, unit: str | None = None, kind: str | None = None) -> str:
    """The answer in plain words, e.g. "Regression: −20.0 points, 95% interval −27.8 to
    −12.2; 18 goldens broke, none fixed." For a non-inferiority design (``kind``) the answer
    is the outcome at the margin: "Held at −5.0 points: +0.0 points, 95% interval …"."""
    unit = unit or metric_unit(primary)
    if kind == "non_inferiority" and primary.get("noninferiority") in NI_SENTENCES and \
            primary.get("margin") is not None:
        return noninferiority_sentence(primary, unit)
    estimate = estimate_of(primary, unit)
    verdict = need_field(primary, "verdict", "primary")
    lead = (f"{verdict.capitalize()}: {delta(estimate.difference, unit)}, "
            f"{level(primary.get('alpha', 0.05))} interval {interval(estimate)}")
    if unit == RATE and "broke" in primary:
        return f"{lead}; {flips(primary['broke'], primary['fixed'])}."
    metric = primary.get("metric")
    n = int(need_field(primary, "n", "primary"))
    pairs = count(n, "query", "queries") if metric in RETRIEVAL_METRICS else count(n, "paired item")
    named = f" in mean {humanize(metric)}" if metric else ""
    return (f"{verdict.capitalize()}: {delta(estimate.difference, unit)}{named}, "
            f"{level(primary.get('alpha', 0.05))} interval {interval(estimate)}, over {pairs}.")


NI_SENTENCES = {"held": "all of it above the margin",
                "failed": "all of it below the margin",
                "unresolved": "reaching past the margin, so a larger loss is not ruled out"}


def noninferiority_sentence(primary: Mapping, unit: str) -> str:
    """"Held at −5.0 points: +0.0 points, 95% interval −4.6 to +4.6, all of it above the
    margin; 2 goldens broke, 2 fixed." """
    outcome = primary["noninferiority"]
    estimate = estimate_of(primary, unit)
    lead = (f"{outcome.capitalize()} at {delta(-primary['margin'], unit)}: "
            f"{delta(estimate.difference, unit)}, {level(primary.get('alpha', 0.05))} interval "
            f"{interval(estimate)}, {NI_SENTENCES[outcome]}")
    if unit == RATE and "broke" in primary:
        return f"{lead}; {flips(primary['broke'], primary['fixed'])}."
    return f"{lead}."


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
    limit = need_field(primary, "detection_limit", "primary")
    alpha, power = primary.get("alpha", 0.05), primary.get("power", 0.8)
    return (f"The smallest effect this run could have seen is {magnitude(limit, unit)} "
            f"(with at least {pct(power, 0)} power at a two-sided {pct(alpha, 0)} level).")


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
        experiment=str(need_field(readout, "experiment", "readout")), version=readout.get("version"),
        hypothesis=readout.get("hypothesis"), created_at=created_at,
        tool_version=readout.get("tool_version"), format=readout.get("format"),
        suite=design.get("suite"), baseline_arm=str(arms.get("baseline", "baseline")),
        variant_arm=str(arms.get("variant", "variant")), kind=design.get("kind"),
        design_question=DESIGN_QUESTIONS.get(design.get("kind")),
        gate_passed=gate.get("passed"), gate_reasons=tuple(gate.get("reasons") or ()))


def _verdict(primary, design, unit, slices=None, sequential=None) -> Verdict:
    key = need_field(primary, "verdict", "primary")
    if key not in VERDICT_WORDS:
        raise ValueError(f"readout field primary.verdict must be one of {sorted(VERDICT_WORDS)}, "
                         f"got {key!r}")
    baseline = primary.get("baseline_rate", primary.get("baseline_mean"))
    variant = primary.get("variant_rate", primary.get("variant_mean"))
    kind = design.get("kind") or "superiority"
    outcome = primary.get("noninferiority")
    word, tone, against_zero = VERDICT_WORDS[key], TONES[key], None
    caveat = limit_caveat(primary)
    # A sequential readout's limit is what its remaining budget could still resolve, not
    # what this look could have seen: its own sentence says which.
    sequential_limit = (str(sequential["detection_limit_sentence"])
                        if isinstance(sequential, Mapping)
                        and sequential.get("detection_limit_sentence") else None)
    if kind == "non_inferiority" and outcome in NI_SENTENCES and primary.get("margin") is not None:
        word, tone = outcome.upper(), NI_TONES[outcome]
        if caveat:  # the caveat is about the reading against zero, not about the margin
            caveat = ("Against zero the run is inconclusive, which does not mean “no "
                      "difference”: a real change smaller than that could be hiding in it.")
        against_zero = ("Read against zero (superiority, not the question this design asked): "
                        + verdict_sentence(primary, unit))
    return Verdict(
        key=key, word=word, tone=tone, sentence=verdict_sentence(primary, unit, kind),
        kind=kind, margin=primary.get("margin"), against_zero=against_zero,
        weighted=_weighted_readings(slices, unit),
        limit_sentence=sequential_limit or limit_sentence(primary, unit), limit_caveat=caveat,
        inconclusive=key == "inconclusive",
        metric=str(primary.get("metric") or design.get("primary") or "primary metric"),
        unit=unit, estimate=estimate_of(primary, unit), level=level(primary.get("alpha", 0.05)),
        alpha=primary.get("alpha", 0.05), power=primary.get("power", 0.8),
        n=int(need_field(primary, "n", "primary")), baseline_value=baseline, variant_value=variant,
        p_value_method=primary.get("p_value_method"),
        interval_method=primary.get("interval_method"), evidence=primary.get("evidence"),
        n_clusters=primary.get("n_clusters"),
        design_effect=primary.get("design_effect"), resamples=primary.get("resamples"),
        seed=primary.get("seed"))


NI_TONES = {"held": "better", "failed": "worse", "unresolved": "neutral"}


def _weighted_readings(slices, unit) -> tuple[WeightedReading, ...]:
    """When the design declared target weights: the overall difference under the target mix
    and under the goldens' own mix, each with the interval method it was read from."""
    if not isinstance(slices, Mapping) or not slices.get("target"):
        return ()
    from .view_common import SECONDARY_WORDS
    readings = []
    for population, label in (("target", "Under the target mix the design declared"),
                              ("observed", "Under the goldens' own mix, stratified by slice")):
        entry = slices.get(population)
        if not entry:
            continue
        estimate = estimate_of(entry, unit, f"slices.{population}")
        verdict = entry.get("verdict", "inconclusive")
        method = entry.get("interval_method")
        readings.append(WeightedReading(
            population=population,
            sentence=(f"{label}: {delta(estimate.difference, unit)}, interval "
                      f"{interval(estimate)}" + (f" ({method})" if method else "") + "."),
            word=SECONDARY_WORDS.get(verdict, verdict), tone=TONES.get(verdict, "neutral")))
    return tuple(readings)


def _noninferiority(primary, unit) -> NonInferiority | None:
    outcome, margin = primary.get("noninferiority"), primary.get("margin")
    if outcome is None or margin is None:
        return None
    words = {key: word for key, word, _ in NONINFERIORITY_MEANINGS}
    if outcome not in words:
        raise ValueError(f"readout field primary.noninferiority must be held, failed or "
                         f"unresolved, got {outcome!r}")
    estimate = estimate_of(primary, unit)
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


def _paired(primary, design_primary=None) -> PairedTable:
    counts = {"both_pass": int(primary.get("both_pass", 0)), "broke": int(primary["broke"]),
              "fixed": int(primary["fixed"]), "both_fail": int(primary.get("both_fail", 0)),
              "n": int(primary["n"])}
    if (primary.get("metric") or design_primary) == "accuracy":
        return PairedTable(**counts, good="correct", bad="incorrect", broke_word="became wrong",
                           fixed_word="became right")
    return PairedTable(**counts)


def _attribution(readout, primary) -> AttributionView | None:
    rows = readout.get("criteria") or []
    unattributed = readout.get("unattributed")
    if not rows and not unattributed:
        return None
    alpha = float(primary.get("alpha", 0.05))
    criteria = []
    for row in rows:
        direction = need_field(row, "direction", "criteria[]")
        if direction not in DIRECTION_WORDS:
            raise ValueError(f"criterion {row.get('criterion')!r}: direction must be one of "
                             f"{sorted(DIRECTION_WORDS)}, got {direction!r}")
        criteria.append(CriterionRow(
            criterion=str(need_field(row, "criterion", "criteria[]")), broke=int(row.get("broke", 0)),
            fixed=int(row.get("fixed", 0)),
            estimate=estimate_of(row, RATE, f"criteria[{row.get('criterion')!r}]"),
            p_adjusted=row.get("p_adjusted"), direction=direction,
            word=DIRECTION_WORDS[direction], tone=TONES[direction]))
    extra = None
    if unattributed:
        extra = UnattributedRow(
            estimate=estimate_of(unattributed, RATE, "unattributed"),
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
    margin = verdict.margin if verdict.kind == "non_inferiority" else None
    return forest_chart(
        rows, unit=verdict.unit, chart_id="forest-primary", margin=margin,
        title=f"Forest chart of {what}",
        description=(f"Each row shows a difference (variant minus baseline) as a point on its "
                     f"{verdict.level} interval, over a band of ± the smallest effect that row "
                     f"could have seen; the vertical line is zero"
                     + (f", the orange line the pre-registered margin at "
                        f"{delta(-margin, verdict.unit)}." if margin is not None else ".")),
        axis_label=("difference, variant − baseline (percentage points)" if verdict.unit == RATE
                    else "difference, variant − baseline"))


__all__ = ["ReportView", "build_report_view", "flips", "limit_caveat", "limit_sentence",
           "metric_unit", "verdict_sentence"]

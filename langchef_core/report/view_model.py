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

from ..readout.verdict import inconclusive_note
from .charts import ChartRow, ForestChart, forest_chart
from .filters import RATE, delta, humanize, interval
from .view_common import (DESIGN_QUESTIONS, DIRECTION_WORDS, TONES, Estimate, PageIdentity,
                          estimate_of, need_field, page_identity, section_of)
from .view_evidence import (ClassificationView, GuardrailRow, RetrievalView, SeedsView, SlicesView,
                            classification_view, guardrail_row, retrieval_view, seeds_view,
                            slices_view)
from .view_provenance import (DesignView, GoldensView, JudgeView, Provenance, WarningView,
                              design_view, goldens_view, judge_view, provenance_view, warning_view)
from .view_verdict import (NonInferiority, Verdict, flips, limit_caveat, limit_sentence,
                           metric_unit, noninferiority_view, verdict_sentence, verdict_view)


@dataclass(frozen=True)
class Header(PageIdentity):
    suite: str | None
    baseline_arm: str
    variant_arm: str
    kind: str | None
    design_question: str | None
    gate_passed: bool | None
    gate_reasons: tuple[str, ...]
    gate_open_question: str | None = None   # "primary inconclusive, limit 10.4 points"


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
    verdict = verdict_view(primary, design, unit, readout.get("slices"), readout.get("sequential"))
    attribution = _attribution(readout, primary)
    breached = [entry for entry in readout.get("guardrails") or () if entry.get("breached")]
    breach_sentences = {str(entry.get("sentence")) for entry in breached}
    gate_reasons = (readout.get("gate") or {}).get("reasons") or ()
    return ReportView(
        header=_header(readout, design, created_at),
        verdict=verdict,
        noninferiority=noninferiority_view(primary, unit),
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


def _header(readout, design, created_at) -> Header:
    arms = design.get("arms") or {}
    gate = readout.get("gate") or {}
    return Header(
        **page_identity(readout, created_at),
        suite=design.get("suite"), baseline_arm=str(arms.get("baseline", "baseline")),
        variant_arm=str(arms.get("variant", "variant")), kind=design.get("kind"),
        design_question=DESIGN_QUESTIONS.get(design.get("kind")),
        gate_passed=gate.get("passed"), gate_reasons=tuple(gate.get("reasons") or ()),
        gate_open_question=inconclusive_note(readout) if readout.get("primary") else None)


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
        low=estimate.low, high=estimate.high,
        limit=estimate.limit if estimate.limit is not None else 0.0, tone=verdict.tone,
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

"""The report's fixed wording (verdict words, tones, sentences) and the small helpers every
section of the view model uses to read a readout."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from .filters import as_json

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


def as_sentence(text: str) -> str:
    """Capitalised, ending in a full stop: core modules write their notes as clauses."""
    text = str(text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


# ── small helpers ───────────────────────────────────────────────────────────────────────

def estimate_of(comparison: Mapping, unit: str, where: str = "primary") -> Estimate:
    return Estimate(difference=float(need_field(comparison, "difference", where)),
                    low=float(need_field(comparison, "low", where)),
                    high=float(need_field(comparison, "high", where)), unit=unit,
                    p_value=comparison.get("p_value"), limit=comparison.get("detection_limit"))


def section_of(mapping: Mapping, key: str) -> Mapping:
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    if not isinstance(value, Mapping):
        raise ValueError(f"the readout has no {key!r} section (a mapping); is this a readout.json "
                         "written by langchef?")
    return value


def need_field(mapping: Mapping, key: str, where: str):
    if not isinstance(mapping, Mapping) or mapping.get(key) is None:
        raise ValueError(f"readout field {where}.{key} is missing; the report cannot be drawn "
                         "without it")
    return mapping[key]


# A golden's text is shown up to this many characters; the rest stays in readout.json.
MAX_CELL_CHARS = 4000


def cell_text(value) -> str | None:
    """Free text for a table cell, cut at MAX_CELL_CHARS with a note saying where the rest is."""
    text = text_or_none(value)
    if text is None or len(text) <= MAX_CELL_CHARS:
        return text
    rest = len(text) - MAX_CELL_CHARS
    return (text[:MAX_CELL_CHARS] + f" … [{rest:,} more characters not shown; the full text "
            "is in readout.json]")


def text_or_none(value) -> str | None:
    """Free text as text; structured inputs (a list of chat messages, say) as pretty JSON."""
    if value is None or isinstance(value, str):
        return value
    return as_json(value)


@dataclass(frozen=True)
class PageIdentity:
    """What every page says first about the readout it shows, read out or refused."""

    experiment: str
    version: int | None
    hypothesis: str | None
    created_at: datetime
    tool_version: str | None
    format: int | None


def page_identity(readout: Mapping, created_at: datetime) -> dict:
    """The :class:`PageIdentity` fields of a readout, to build a page's view with."""
    return {"experiment": str(need_field(readout, "experiment", "readout")),
            "version": readout.get("version"), "hypothesis": readout.get("hypothesis"),
            "created_at": created_at, "tool_version": readout.get("tool_version"),
            "format": readout.get("format")}

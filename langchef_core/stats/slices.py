"""Per-slice comparisons, the overall difference under declared weights, protected slices.

An overall difference is an average over slices, Σ_g w_g · d_g, and the weights w_g decide
whose experience it describes. The design therefore declares them before any traffic: the
slice column, a target population (a weight per slice, summing to 1) and the protected
slices. The readout reports

* per declared slice, the same paired comparison as the whole suite (``compare_binary`` or
  ``compare_continuous`` on that slice's goldens, with the design's seed, so any row can be
  reproduced with one call);
* the overall difference under the observed weights (each slice's share of the goldens) and
  under the target weights, each with a stratified interval (``stratified``): the slice
  sizes — and with them the weights — stay fixed, as they are part of the question. Without
  clusters it is the stratified Wald interval with Agresti–Min adjusted slice variances
  (pass/fail) or Satterthwaite t (scores), which keeps its coverage when a thin slice gets a
  large target weight, and a warning names such a slice; with clusters, the CR2
  cluster-robust t of the weighted contrast, joined for pass/fail outcomes with the
  stratified Wald interval at the effective sample size;
* for protected slices, a guardrail verdict (see ``compare_slices``), Holm-corrected as one
  family;
* values of the slice column that the design did not declare, and any other columns asked
  for, only as exploratory records that never feed a pass/fail.

When the weights disagree, so may the answers: 90% established users going 80% → 85% and
10% new users going 40% → 30% is +3.5 points under the observed weights and −2.5 points for a
target population split 50/50. Both are true; the design says which one is the question.

With clusters (e.g. the user), the weighted difference's variance is cluster-robust: each
cluster's residuals in every slice enter together (CR2, ``stratified``), so a user whose
questions fall in several slices (task types) carries the correlation between them; clusters
nested in slices are the special case in which each cluster touches one slice. A weighted
slice whose goldens all come from one cluster is refused: nothing estimates its variance.

References: Efron & Tibshirani (1993), An Introduction to the Bootstrap, §6.4 (stratified
samples); Davison & Hinkley (1997), Bootstrap Methods and their Application, §3.2 and §3.8
(stratified and clustered resampling); Holm (1979), Scand. J. Statist. 6:65-70.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._validation import (as_binary, as_cluster_codes, as_finite, check_same_length,
                          column_cells, stripped_labels,
                          check_settings)
from .multiplicity import holm
from .paired import BinaryComparison, ContinuousComparison, compare_binary, compare_continuous
from .records import Record, json_ready
from .stratified import WeightedDifference, thin_slice_warnings, weighted_difference
from .display import p_text

BINARY, CONTINUOUS = "binary", "continuous"
OBSERVED, TARGET = "observed", "target"
BREACHED, UNCONFIRMED, CLEAR = "breached", "unconfirmed", "clear"
EXPLORATORY_NOTE = (
    "Exploratory: this slice was not declared in the design, so it never enters the gate; "
    "a difference seen here needs confirmation on held-out goldens before anyone acts on it."
)
# Target weights are read from YAML, where 0.1 + 0.2 + 0.7 is not exactly 1.
_WEIGHT_SUM_TOLERANCE = 1e-6
@dataclass(frozen=True)
class SliceResult(Record):
    """One declared slice: its paired comparison, weights and (if protected) guardrail status."""

    slice: str
    n: int
    observed_weight: float
    target_weight: float
    protected: bool
    comparison: BinaryComparison | ContinuousComparison
    p_adjusted: float | None  # Holm over the protected family; None for unprotected slices
    guardrail: str | None     # "breached" | "unconfirmed" | "clear"; None for unprotected


@dataclass(frozen=True)
class ExploratorySlice(Record):
    """A slice nobody declared: shown for discovery, never part of any pass/fail."""

    column: str
    slice: str
    n: int
    comparison: BinaryComparison | ContinuousComparison | None  # None when too small to compare
    note: str


@dataclass(frozen=True)
class SliceAnalysis(Record):
    """Everything the readout says about slices; ``passed`` is False on a guardrail breach."""

    column: str
    outcome: str
    n: int
    alpha: float
    slices: tuple[SliceResult, ...]
    observed: WeightedDifference
    target: WeightedDifference
    protected: tuple[str, ...]
    breaches: tuple[str, ...]
    passed: bool
    gate_reasons: tuple[str, ...]
    exploratory: tuple[ExploratorySlice, ...]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict:
        return json_ready(dataclasses.asdict(self))


def compare_slices(baseline, variant, slices, *, column: str, target_weights: Mapping,
                   protected=(), outcome: str = BINARY, clusters=None, exploratory=None,
                   margin: float | None = None, alpha: float = 0.05, power: float = 0.80,
                   resamples: int = 10_000, seed: int = 0) -> SliceAnalysis:
    """Compare two arms slice by slice and overall under the observed and target weights.

    ``baseline`` and ``variant`` hold one outcome per golden (pass/fail when ``outcome`` is
    "binary", a real-valued score when "continuous"); ``slices`` holds each golden's value in
    the declared slice ``column``; ``clusters`` one cluster label per golden or None;
    ``exploratory`` maps other column names to one label per golden (missing labels skip
    that golden). Labels are compared as text, so a YAML key ``1`` matches a value ``1``.

    Weights. Observed: w_g = n_g / n over every slice present. Target: the design's
    ``target_weights`` (non-negative, summing to 1); a declared slice without goldens is an
    error, and a slice present in the goldens but absent from the target weights gets target
    weight 0, is named in a warning and is shown only as exploratory.

    Weighted estimate: D_w = Σ_g w_g · d_g with d_g the mean paired difference in slice g;
    its interval is the stratified interval of ``stratified.weighted_difference``.
    Under the observed weights it equals the plain overall mean difference.

    Protected slices (a family of m, m ≥ 0). A protected slice is **breached** when its
    interval lies wholly below zero *and* its Holm-adjusted p-value (over the m protected
    slices) is below alpha. The interval alone is the verdict rule of a single comparison;
    with m protected slices each checked at its own 95% level, the chance that at least one
    falsely shows a drop grows to about 1 − 0.95^m, and a breach fails the whole gate even
    when the overall verdict is an improvement, so it needs the family-wise guarantee that
    Holm gives. Requiring both keeps the direction tied to the interval (as every verdict
    here) and the error rate tied to the family — the same rule as criterion attribution.
    A slice whose comparison lacks its minimum evidence (``paired``: the exact McNemar gate,
    at least 5 clusters, at least 10 pairs) cannot breach. A slice whose interval is below
    zero but which is not breached is reported as **unconfirmed**: visible, named in a
    warning, not gating. Otherwise it is **clear**.
    """
    settings = check_settings(alpha, power, resamples, seed, margin)
    outcome = _check_outcome(outcome)
    column = _check_column(column, "column")
    before, after = _as_outcomes(baseline, variant, outcome)
    n = before.size
    labels = labels_as_text(slices, f"slice column {column!r}", n, allow_missing=False)
    weights = _check_target_weights(target_weights)
    family = _check_protected(protected, weights)
    cluster_codes = as_cluster_codes(clusters, n)
    extra = _check_exploratory(exploratory, column, n)

    names, stratum = np.unique(labels.astype(str), return_inverse=True)
    names = [str(name) for name in names]
    sizes = np.bincount(stratum, minlength=len(names))
    absent = [name for name in weights if name not in names]
    if absent:
        raise ValueError(
            f"the design gives a target weight to slice {absent[0]!r} of column {column!r}, but "
            f"no golden has that value (present: {names}); add goldens for it or remove it "
            "from the target weights")
    undeclared = [name for name in names if name not in weights]
    warnings = []
    if undeclared:
        warnings.append(
            f"slices {undeclared} of column {column!r} have goldens but no target weight: they "
            "count in the observed population, get target weight 0, and appear only as "
            "exploratory")

    observed_weights = {name: int(size) / n for name, size in zip(names, sizes)}
    target_by_slice = {name: weights.get(name, 0.0) for name in names}
    change = (after.astype(float) - before.astype(float))
    options = dict(alpha=settings.alpha, power=settings.power, resamples=settings.resamples,
                   seed=seed, margin=settings.margin)

    results = [
        _declared_slice(name, stratum == index, before, after, clusters, outcome, column,
                        observed_weights[name], target_by_slice[name], name in family, options)
        for index, name in enumerate(names) if name in weights]
    results, breaches, unconfirmed = _protected_family(results, settings.alpha)
    if unconfirmed:
        warnings.append(
            f"protected slices {unconfirmed} have intervals wholly below zero, but the drop is "
            f"not significant after Holm correction over the {len(family)} protected slices "
            "(or short of its minimum evidence): "
            "not a breach, worth a closer look")

    level = dict(names=names, stratum=stratum, before=before, after=after,
                 cluster_codes=cluster_codes, settings=settings, binary=outcome == BINARY)
    observed = weighted_difference(OBSERVED, observed_weights, **level)
    target = weighted_difference(TARGET, target_by_slice, **level)
    flips = {name: int(np.count_nonzero(change[stratum == index]))
             for index, name in enumerate(names)} if outcome == BINARY else None
    warnings += thin_slice_warnings(TARGET, target, n=int(n), observed_share=observed_weights,
                                    flips_by_slice=flips)

    explored = [_exploratory_slice(column, name, stratum == index, before, after, clusters,
                                   outcome, options)
                for index, name in enumerate(names) if name not in weights]
    for other, other_labels in extra.items():
        present = np.array([label is not None for label in other_labels])
        text = np.where(present, other_labels, "").astype(str)
        for value in sorted({label for label in other_labels if label is not None}):
            explored.append(_exploratory_slice(other, value, present & (text == value), before,
                                               after, clusters, outcome, options))

    return SliceAnalysis(
        column=column, outcome=outcome, n=int(n), alpha=settings.alpha, slices=tuple(results),
        observed=observed, target=target, protected=tuple(family), breaches=tuple(breaches),
        passed=not breaches, gate_reasons=tuple(_breach_reason(result, column)
                                                for result in results if result.slice in breaches),
        exploratory=tuple(explored), warnings=tuple(warnings))


# ── per-slice comparisons ───────────────────────────────────────────────────────────────

def labels_as_text(values, name: str, n: int, *, allow_missing: bool) -> np.ndarray:
    """One label per golden as text (object array); None where missing, if that is allowed."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must hold one label per golden, got a single string")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
    values = column_cells(values)
    try:
        items = values if isinstance(values, np.ndarray) and values.ndim == 1 else list(values)
    except TypeError:
        raise ValueError(f"{name} must hold one label per golden, got {type(values).__name__}") \
            from None
    if len(items) != n:
        raise ValueError(f"{name} must give one label per golden: got {len(items)} labels for "
                         f"{n} goldens")
    if isinstance(items, np.ndarray) and items.dtype.kind in "iuUS":
        # Whole-array conversion: integer and text labels cannot be missing.
        return np.char.strip(items.astype(str)).astype(object)
    coded = stripped_labels(items)
    if coded is not None and (allow_missing or coded[0].min(initial=0) >= 0):
        codes, texts = coded
        return np.append(texts, None)[codes]  # code −1 (missing) → None
    text = np.empty(n, dtype=object)
    for position, label in enumerate(items):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            if not allow_missing:
                raise ValueError(f"{name} has no value for the golden at position {position}; "
                                 "every golden needs a slice label")
            text[position] = None
            continue
        label = label.item() if isinstance(label, np.generic) else label
        text[position] = str(label).strip()
    return text


def _declared_slice(name, inside, before, after, clusters, outcome, column, observed_weight,
                    target_weight, is_protected, options) -> SliceResult:
    reason = _too_small(inside, clusters, outcome)
    if reason:
        raise ValueError(f"declared slice {name!r} of column {column!r} {reason}; add goldens to "
                         "it or remove it from the design")
    comparison = _compare(inside, before, after, clusters, outcome, options)
    return SliceResult(slice=name, n=comparison.n, observed_weight=observed_weight,
                       target_weight=float(target_weight), protected=is_protected,
                       comparison=comparison, p_adjusted=None, guardrail=None)


def _exploratory_slice(column, name, inside, before, after, clusters, outcome,
                       options) -> ExploratorySlice:
    reason = _too_small(inside, clusters, outcome)
    comparison = None if reason else _compare(inside, before, after, clusters, outcome, options)
    note = EXPLORATORY_NOTE if not reason else f"{EXPLORATORY_NOTE} Not compared: it {reason}."
    return ExploratorySlice(column=column, slice=name, n=int(np.count_nonzero(inside)),
                            comparison=comparison, note=note)


def _compare(inside, before, after, clusters, outcome, options):
    compare = compare_binary if outcome == BINARY else compare_continuous
    subset = None if clusters is None else np.asarray(clusters, dtype=object)[inside]
    return compare(before[inside], after[inside], clusters=subset, **options)


def _too_small(inside, clusters, outcome) -> str | None:
    """Why a slice cannot be compared on its own, or None when it can."""
    n = int(np.count_nonzero(inside))
    if outcome == CONTINUOUS and n < 2:
        return f"has {n} golden, and a continuous comparison needs at least 2"
    if clusters is not None:
        count = len({str(label) for label in np.asarray(clusters, dtype=object)[inside]})
        if count < 2:
            return f"has {count} cluster, and a clustered comparison needs at least 2"
    return None


def _protected_family(results, alpha):
    """Holm over the protected slices' p-values, then breached / unconfirmed / clear."""
    guarded = [index for index, result in enumerate(results) if result.protected]
    adjusted = holm([results[index].comparison.p_value for index in guarded])
    breaches, unconfirmed = [], []
    results = list(results)
    for index, p_adjusted in zip(guarded, adjusted):
        result = results[index]
        below_zero = result.comparison.high < 0
        # A comparison without its minimum evidence (exact gate, too few clusters or pairs)
        # cannot breach, however its interval and p-value read.
        if below_zero and p_adjusted < alpha and result.comparison.evidence is None:
            status = BREACHED
            breaches.append(result.slice)
        elif below_zero:
            status = UNCONFIRMED
            unconfirmed.append(result.slice)
        else:
            status = CLEAR
        results[index] = dataclasses.replace(result, p_adjusted=float(p_adjusted),
                                             guardrail=status)
    return results, breaches, unconfirmed


def _breach_reason(result: SliceResult, column: str) -> str:
    comparison = result.comparison
    # A pass rate's difference in percentage points, a score's on its own scale.
    if hasattr(comparison, "broke"):
        ends = [f"{100 * value:+.1f}" for value in (comparison.difference, comparison.low,
                                                    comparison.high)]
        ends[0] += " points"
    else:
        ends = [f"{value:+.3f}" for value in (comparison.difference, comparison.low,
                                              comparison.high)]
    return (f"guardrail breach: protected slice {result.slice!r} of {column!r} regressed, "
            f"difference {ends[0]} (interval {ends[1]} to {ends[2]}, Holm-adjusted "
            f"{p_text(result.p_adjusted)}, n = {comparison.n}); the gate fails whatever the "
            "overall verdict")


# ── validation ──────────────────────────────────────────────────────────────────────────

def _check_outcome(outcome) -> str:
    if outcome not in (BINARY, CONTINUOUS):
        raise ValueError(f"outcome must be {BINARY!r} (pass/fail) or {CONTINUOUS!r} (a score), "
                         f"got {outcome!r}")
    return outcome


def _check_column(column, name) -> str:
    if not isinstance(column, str) or not column.strip():
        raise ValueError(f"{name} must be a non-empty column name, got {column!r}")
    return column


def _as_outcomes(baseline, variant, outcome):
    read = as_binary if outcome == BINARY else as_finite
    before, after = read(baseline, "baseline"), read(variant, "variant")
    check_same_length(before, after)
    return before, after


def _check_target_weights(target_weights) -> dict[str, float]:
    if not isinstance(target_weights, Mapping) or not target_weights:
        raise ValueError("target_weights must map each declared slice to its weight in the "
                         f"target population, e.g. {{'new': 0.5, 'established': 0.5}}; got "
                         f"{target_weights!r}")
    weights: dict[str, float] = {}
    for key, weight in target_weights.items():
        if key is None or (isinstance(key, float) and math.isnan(key)) or not str(key).strip():
            raise ValueError(f"target_weights has an empty slice name: {key!r}")
        name = str(key.item() if isinstance(key, np.generic) else key).strip()
        if name in weights:
            raise ValueError(f"target_weights names slice {name!r} twice (as text)")
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or \
                not math.isfinite(weight) or weight < 0:
            raise ValueError(f"target weight of slice {name!r} must be a non-negative number, "
                             f"got {weight!r}")
        weights[name] = float(weight)
    total = math.fsum(weights.values())
    if abs(total - 1.0) > _WEIGHT_SUM_TOLERANCE:
        raise ValueError(f"target weights must sum to 1, got {total:.6g} over {sorted(weights)}; "
                         "give each slice its share of the target population")
    return weights


def _check_protected(protected, weights) -> list[str]:
    if protected is None:
        return []
    if isinstance(protected, (str, bytes)):
        raise ValueError("protected must be a list of slice names, got a single string; "
                         f"write [{protected!r}]")
    family = [str(name).strip() for name in protected]
    if len(set(family)) != len(family):
        raise ValueError(f"protected names a slice twice: {family}")
    unknown = [name for name in family if name not in weights]
    if unknown:
        raise ValueError(f"protected slice {unknown[0]!r} is not among the target weights "
                         f"{sorted(weights)}; declare it there (a weight of 0 is allowed)")
    return sorted(family)


def _check_exploratory(exploratory, column, n) -> dict[str, np.ndarray]:
    if exploratory is None:
        return {}
    if not isinstance(exploratory, Mapping):
        raise ValueError("exploratory must map column names to one label per golden, got "
                         f"{type(exploratory).__name__}")
    checked = {}
    for name in sorted(exploratory, key=str):
        other = _check_column(name, "an exploratory column")
        if other == column:
            raise ValueError(f"column {column!r} is the declared slice column; its undeclared "
                             "values are shown as exploratory already, do not list it again")
        checked[other] = labels_as_text(exploratory[name], f"exploratory column {other!r}", n,
                                        allow_missing=True)
    return checked

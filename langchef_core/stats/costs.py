"""Practical cost of a change: paired latency and cost differences, and the design's guardrails.

A quality gain may not be worth twice the latency. When runs carry ``latency_ms`` or
``cost_usd``, both arms answered the same goldens, so the comparison is paired: each
bootstrap resample draws goldens (or whole clusters) with replacement and applies the *same*
draw to both arms, then takes each arm's statistic — mean, median (p50) or 95th percentile
(p95) — and their difference. A percentile is a property of a distribution, not of a pair,
so the paired quantity is the difference of the arms' percentiles, not a percentile of the
per-golden differences. Each statistic is reported absolutely (variant − baseline) and
relatively ((variant / baseline) − 1), both with 1 − alpha percentile intervals.

A guardrail such as "p95 latency may not rise by more than 10%" reads the relative interval
against its allowed increase m, in the words of non-inferiority: **held** when the whole
interval lies below m, **failed** when it lies wholly above, **unresolved** otherwise. A
failed guardrail fails the gate.

Percentiles use the linear interpolation of Hyndman & Fan (1996) type 7 (numpy's default).
Inside the bootstrap a resample is a count per golden (or cluster), and a percentile of the
expanded sample is read from cumulative counts over the values sorted once. Only a window of
sorted positions around each sample percentile is cumulated per resample (the count below it
is one dot product over units); a resample whose order statistic falls outside is cumulated
in full, so the value is exactly that of sorting the expanded resample. Memory is bounded by
processing resamples in blocks.

References: Hyndman & Fan (1996), "Sample quantiles in statistical packages", The American
Statistician 50:361-365; Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13;
Davison & Hinkley (1997), §3.8 (clusters).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._validation import (as_cluster_codes, as_finite, as_rng, check_alpha, check_resamples,
                          check_same_length)
from .bootstrap import resampled_counts
from .paired import FAILED, HELD, UNRESOLVED
from .products import row_dots
from .records import Record, json_ready

STATISTICS = ("mean", "p50", "p95")
COST_METRICS = ("latency_ms", "cost_usd")
_QUANTILES = {"p50": 0.50, "p95": 0.95}
_WINDOW_MARGIN = 256  # sorted positions added either side of a quantile's window
_WINDOW_SPREADS = 8   # standard deviations of a resampled quantile's position either side
_BATCH_CELLS = 4_000_000  # resamples are worked on in batches of about this many cells


@dataclass(frozen=True)
class CostStatistic(Record):
    """One statistic of one practical cost, both arms, with absolute and relative intervals."""

    statistic: str                 # "mean" | "p50" | "p95"
    baseline: float
    variant: float
    difference: float              # variant − baseline, in the metric's unit
    low: float
    high: float
    relative: float | None         # variant / baseline − 1; None when the baseline is 0
    relative_low: float | None
    relative_high: float | None


@dataclass(frozen=True)
class CostComparison(Record):
    """Paired comparison of one practical cost (``latency_ms`` or ``cost_usd``)."""

    metric: str
    n: int
    n_clusters: int | None
    alpha: float
    resamples: int
    seed: int | None
    statistics: tuple[CostStatistic, ...]

    def statistic(self, name: str) -> CostStatistic:
        for item in self.statistics:
            if item.statistic == name:
                return item
        raise KeyError(f"no statistic {name!r}; available: {list(STATISTICS)}")

    def to_dict(self) -> dict:
        return json_ready(super().to_dict())


@dataclass(frozen=True)
class GuardrailResult(Record):
    """One declared guardrail read against its relative interval."""

    metric: str
    statistic: str
    max_increase: float
    relative: float | None
    relative_low: float | None
    relative_high: float | None
    status: str                    # "held" | "failed" | "unresolved"
    message: str


@dataclass(frozen=True)
class GuardrailCheck(Record):
    """All declared guardrails; ``passed`` is False when any of them failed."""

    results: tuple[GuardrailResult, ...]
    passed: bool
    gate_reasons: tuple[str, ...]  # one sentence per failed guardrail
    warnings: tuple[str, ...]      # one sentence per unresolved guardrail

    def to_dict(self) -> dict:
        return json_ready(super().to_dict())


def compare_cost(baseline, variant, *, metric: str, clusters=None, alpha: float = 0.05,
                 resamples: int = 10_000, seed: int | np.random.Generator = 0) -> CostComparison:
    """Paired bootstrap of the variant − baseline mean, p50 and p95 of a practical cost.

    ``baseline`` and ``variant`` hold the cost (e.g. ``latency_ms``) of each golden under
    each arm, in the same order; values must be finite and non-negative. With ``clusters``
    whole clusters are drawn, and a resample's goldens are every golden of the drawn
    clusters. Both arms always use the same draw. For statistic s the interval is the
    alpha/2 and 1 − alpha/2 quantiles over resamples of s(variant*) − s(baseline*), and of
    s(variant*) / s(baseline*) − 1 (+∞ when a resampled baseline is 0 and the variant not).
    """
    metric = _check_metric_name(metric)
    alpha, resamples, rng = check_alpha(alpha), check_resamples(resamples), as_rng(seed)
    before = _as_costs(baseline, f"baseline {metric}")
    after = _as_costs(variant, f"variant {metric}")
    check_same_length(before, after)
    codes = as_cluster_codes(clusters, before.size)
    if codes is None:
        order = np.lexsort((after, before))  # canonical golden order: ignores row order
        units = np.arange(before.size)
    else:
        order = np.lexsort((after, before, codes))
        units = codes[order]
    before, after = before[order], after[order]
    unit_count = int(units.max()) + 1

    arms = [_SortedArm(before, units, unit_count), _SortedArm(after, units, unit_count)]
    unit_sizes = np.bincount(units, minlength=unit_count).astype(np.int64)
    ones = np.ones((1, unit_count), dtype=np.int64)
    points = [arm.statistics(ones, ones.astype(float), ones @ unit_sizes) for arm in arms]
    draws = {name: np.empty((resamples, 2)) for name in STATISTICS}
    multiplicity = np.ones(unit_count, dtype=np.int64)
    # The draw blocks keep the size they had before windows (it fixes the seeded stream of
    # draws); they are worked on in batches sized by what a row now touches.
    width = 3 * math.ceil(before.size / unit_count)
    row_cells = 3 * unit_count + sum(arm.window_cells for arm in arms)
    blocks = resampled_counts(multiplicity, resamples, rng, columns_per_row=width)
    # Every integer count a resample needs (its goldens, and each arm's goldens before each
    # window) in one product: one pass over the counts instead of three. Integer-valued sums
    # are exact in floats whatever order BLAS adds in, so they are the same integers.
    tallies = np.column_stack([unit_sizes, *(arm.before_windows for arm in arms)]).astype(float)
    arm_columns = np.cumsum([1] + [arm.before_windows.shape[1] for arm in arms])
    for rows, counts in _in_batches(blocks, max(1, _BATCH_CELLS // row_cells)):
        drawn = counts.astype(float)
        tallied = (drawn @ tallies).astype(np.int64)
        total = tallied[:, 0]
        for side, arm in enumerate(arms):
            before_windows = tallied[:, arm_columns[side]:arm_columns[side + 1]]
            for name, values in arm.statistics(counts, drawn, total, before_windows).items():
                draws[name][rows, side] = values
    summaries = tuple(_summary(name, points[0][name][0], points[1][name][0], draws[name], alpha)
                      for name in STATISTICS)
    return CostComparison(metric=metric, n=int(before.size),
                          n_clusters=None if codes is None else unit_count, alpha=alpha,
                          resamples=resamples,
                          seed=None if isinstance(seed, np.random.Generator) else int(seed),
                          statistics=summaries)


def guardrail_from_interval(relative_low: float | None, relative_high: float | None,
                            max_increase: float) -> str:
    """Held when the whole relative interval is below the allowed increase, failed when the
    whole interval is above it, unresolved otherwise (or when no relative change exists)."""
    if relative_low is None or relative_high is None:
        return UNRESOLVED
    if relative_high < max_increase:
        return HELD
    if relative_low > max_increase:
        return FAILED
    return UNRESOLVED


def check_guardrails(guardrails, costs: Mapping[str, CostComparison]) -> GuardrailCheck:
    """Read each declared guardrail against the matching cost comparison.

    ``guardrails`` is the design's list of ``{metric, statistic, max_increase}`` (the allowed
    relative increase of the variant over the baseline, 0.10 for 10%); ``costs`` maps each
    metric to its ``compare_cost`` result. A guardrail on a metric the runs do not carry is
    an error: a pre-registered check cannot be silently skipped.
    """
    declared = _check_guardrails(guardrails)
    if not isinstance(costs, Mapping):
        raise ValueError("costs must map each metric name to its compare_cost result")
    results = []
    for metric, statistic, max_increase in declared:
        if metric not in costs:
            raise ValueError(f"the design sets a guardrail on {metric!r}, but the runs carry no "
                             f"{metric} (compared: {sorted(costs)}); record {metric} for every "
                             "golden in both arms or remove the guardrail")
        measured = costs[metric].statistic(statistic)
        status = guardrail_from_interval(measured.relative_low, measured.relative_high,
                                         max_increase)
        results.append(GuardrailResult(
            metric=metric, statistic=statistic, max_increase=max_increase,
            relative=measured.relative, relative_low=measured.relative_low,
            relative_high=measured.relative_high, status=status,
            message=_guardrail_message(metric, statistic, max_increase, measured, status)))
    return GuardrailCheck(
        results=tuple(results), passed=all(result.status != FAILED for result in results),
        gate_reasons=tuple(result.message for result in results if result.status == FAILED),
        warnings=tuple(result.message for result in results if result.status == UNRESOLVED))


class _SortedArm:
    """One arm's values sorted once, with the resampling unit of each sorted value.

    A resample's k-th smallest element is sorted value j, the first whose cumulative count
    exceeds k. Cumulating the counts over all n sorted values costs n per resample, and at
    10^6 goldens × 10^4 resamples that gather alone took most of a readout. But a resampled
    p50 or p95 lands within a few standard errors of the sample's own: so for each quantile
    a window of sorted positions around it is fixed once (`_Window`), a resample's count
    below the window is one dot product over units, and only the counts inside the window
    are gathered and cumulated. The rare resample whose element k falls outside its window
    is cumulated in full. Either way the j found is the same integer, so every quantile is
    the same float as cumulating everything.
    """

    def __init__(self, values: np.ndarray, units: np.ndarray, unit_count: int):
        order = np.argsort(values, kind="stable")
        self.values = values[order]
        self.units = units[order]
        # Per-unit totals, summed in sorted order so no sum depends on input order.
        self.unit_totals = np.bincount(self.units, weights=self.values, minlength=unit_count)
        self.unit_sizes = np.bincount(self.units, minlength=unit_count).astype(np.int64)
        self.n = self.values.size
        self.windows = {name: _Window.around(q, self.units, self.unit_sizes)
                        for name, q in _QUANTILES.items()}
        self.window_cells = sum(window.stop - window.start for window in self.windows.values())
        # Goldens of each unit before each window, as floats for one BLAS product per batch:
        # integer-valued sums below 2^53 are exact in any order, so BLAS cannot move a bit.
        self.before_windows = np.column_stack([window.before for window in self.windows.values()]).astype(float)

    def statistics(self, unit_counts: np.ndarray, drawn: np.ndarray,
                   total: np.ndarray | None = None,
                   before_windows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Mean, p50 and p95 of every resample in ``unit_counts`` (rows × units, integers;
        ``drawn`` is the same as floats, converted once for both arms; ``total`` the number
        of goldens in each resample and ``before_windows`` its goldens before each window,
        counted here when not given)."""
        if total is None:
            total = unit_counts.astype(np.int64) @ self.unit_sizes
        result = {"mean": row_dots(drawn, self.unit_totals) / total.astype(float)}
        if before_windows is None:
            before_windows = (drawn @ self.before_windows).astype(np.int64)
        for column, (name, q) in enumerate(_QUANTILES.items()):
            result[name] = self._quantile(unit_counts, before_windows[:, column], total, q,
                                          self.windows[name])
        return result

    def _quantile(self, unit_counts: np.ndarray, before_window: np.ndarray, total: np.ndarray,
                  q: float, window: "_Window") -> np.ndarray:
        """Type-7 quantile q of each resample: between the k-th and (k+1)-th smallest
        (``before_window``: each resample's goldens before the window)."""
        position = (total - 1) * q
        below = np.floor(position)
        fraction = position - below
        ranks = np.stack([below.astype(np.int64), np.minimum(below + 1, total - 1).astype(np.int64)])
        found, outside = window.positions(unit_counts, before_window, self.units, ranks)
        if outside.any():  # rare: an order statistic outside the window
            found[:, outside] = self._full_positions(unit_counts[outside], ranks[:, outside])
        low, high = self.values[found[0]], self.values[found[1]]
        # numpy's own lerp, so a resample equal to the data gives np.quantile's value exactly
        return np.where(fraction >= 0.5, high - (high - low) * (1 - fraction),
                        low + (high - low) * fraction)

    def _full_positions(self, unit_counts: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        cumulative = np.cumsum(np.take(unit_counts, self.units, axis=1), axis=1)
        return np.stack([np.count_nonzero(cumulative <= k[:, None], axis=1) for k in ranks])


@dataclass(frozen=True)
class _Window:
    """Sorted positions [start, stop) where a resampled quantile almost always lands, and how
    many goldens of each unit lie before ``start``.

    For the sorted position c of the sample's quantile, a resample's share of goldens below
    c is a ratio of unit sums whose standard deviation, in positions, is about
    sqrt(Σ_u (b_u − s_u·c/n)²) (b_u goldens of unit u below c, s_u its size; the delta
    method). The window spans eight of those either side plus a margin, so a resample
    outside it is a rarity that costs a full cumulation, never a wrong answer.
    """

    start: int
    stop: int
    before: np.ndarray       # per unit, goldens at sorted positions < start

    @classmethod
    def around(cls, q: float, units: np.ndarray, unit_sizes: np.ndarray) -> "_Window":
        n, unit_count = units.size, unit_sizes.size
        centre = int(round(q * (n - 1)))
        below = np.bincount(units[:centre], minlength=unit_count)
        spread = math.sqrt(float(np.sum((below - unit_sizes * (centre / n)) ** 2)))
        half = int(_WINDOW_SPREADS * spread) + _WINDOW_MARGIN
        start, stop = max(0, centre - half), min(n, centre + half + 1)
        return cls(start, stop, np.bincount(units[:start], minlength=unit_count).astype(np.int64))

    def positions(self, unit_counts: np.ndarray, before: np.ndarray, units: np.ndarray,
                  ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each row of ``ranks`` (ranks × resamples), the sorted position of each
        resample's element of that rank, i.e. the first whose cumulative count exceeds it;
        and a mask of the resamples where some position lies outside the window (their
        answer is left to the caller). ``before`` counts each resample's goldens before
        the window."""
        inside = np.cumsum(np.take(unit_counts, units[self.start:self.stop], axis=1), axis=1)
        inside += before[:, None]
        found = np.stack([self.start + np.count_nonzero(inside <= k[:, None], axis=1) for k in ranks])
        outside = (before > ranks.min(axis=0)) | (found.max(axis=0) >= self.stop)
        return found, outside


def _in_batches(blocks, rows: int):
    """Consecutive blocks of resampled counts joined into batches of at least ``rows`` rows
    (a block never split), so per-batch work is not paid once per resample."""
    pending, first = [], 0
    for block_rows, counts in blocks:
        pending.append(counts)
        if sum(part.shape[0] for part in pending) >= rows:
            yield slice(first, block_rows.stop), np.concatenate(pending)
            pending, first = [], block_rows.stop
    if pending:
        yield slice(first, first + sum(part.shape[0] for part in pending)), np.concatenate(pending)


def _summary(name, baseline, variant, draws, alpha) -> CostStatistic:
    differences = draws[:, 1] - draws[:, 0]
    low, high = np.quantile(differences, [alpha / 2, 1 - alpha / 2])
    relative = relative_low = relative_high = None
    if baseline > 0:
        relative = float(variant / baseline - 1)
        ratios = _relative_changes(draws[:, 0], draws[:, 1])
        with np.errstate(invalid="ignore"):  # inf − inf between two infinite resamples
            bounds = np.quantile(ratios, [alpha / 2, 1 - alpha / 2])
        # Interpolating between two infinite resamples gives NaN where the answer is +∞.
        relative_low, relative_high = (float(np.inf) if np.isnan(bound) else float(bound)
                                       for bound in bounds)
    return CostStatistic(statistic=name, baseline=float(baseline), variant=float(variant),
                         difference=float(variant - baseline), low=float(low), high=float(high),
                         relative=relative, relative_low=relative_low, relative_high=relative_high)


def _relative_changes(baseline: np.ndarray, variant: np.ndarray) -> np.ndarray:
    """variant / baseline − 1; 0 when both are 0, +∞ when only the baseline is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = variant / baseline - 1
    ratios[(baseline == 0) & (variant == 0)] = 0.0
    ratios[(baseline == 0) & (variant > 0)] = np.inf
    return ratios


def _bound(relative: float) -> str:
    return f"{relative:+.1%}" if np.isfinite(relative) else "unbounded"


def _level(value: float, metric: str) -> str:
    """A cost or latency level as people read it: US dollars per item in cents (0.32¢, not
    0.00318), anything else with four significant digits."""
    if str(metric).endswith("_usd"):
        return f"{100 * value:.2f}¢"
    return f"{value:.4g}"


def _guardrail_message(metric, statistic, max_increase, measured: CostStatistic, status) -> str:
    allowed = f"{max_increase:+.1%}"
    if measured.relative is None:
        return (f"{statistic} {metric} guardrail unresolved: the baseline {statistic} is 0, so "
                f"a relative increase (allowed {allowed}) is undefined")
    change = (f"{statistic} {metric} changed {measured.relative:+.1%} (interval "
              f"{_bound(measured.relative_low)} to {_bound(measured.relative_high)}; "
              f"{_level(measured.baseline, metric)} → {_level(measured.variant, metric)})")
    if status == HELD:
        return f"{statistic} {metric} guardrail held: {change}, wholly below the allowed {allowed}"
    if status == FAILED:
        return (f"{statistic} {metric} guardrail failed: {change}, wholly above the allowed "
                f"{allowed}; the gate fails")
    return (f"{statistic} {metric} guardrail unresolved: {change}, the interval straddles the "
            f"allowed {allowed}; more goldens would settle it")


def _as_costs(values, name: str) -> np.ndarray:
    array = as_finite(values, name)
    if (array < 0).any():
        position = int(np.flatnonzero(array < 0)[0])
        raise ValueError(f"{name} must be non-negative, got {array[position]} at position "
                         f"{position}")
    return array


def _check_metric_name(metric) -> str:
    if not isinstance(metric, str) or not metric.strip():
        raise ValueError(f"metric must name the cost column, e.g. 'latency_ms', got {metric!r}")
    return metric


def _check_guardrails(guardrails) -> list[tuple[str, str, float]]:
    if guardrails is None:
        return []
    if isinstance(guardrails, (str, bytes, Mapping)):
        raise ValueError("guardrails must be a list of {metric, statistic, max_increase} entries")
    declared, seen = [], set()
    for position, entry in enumerate(guardrails):
        if not isinstance(entry, Mapping):
            raise ValueError(f"guardrail {position} must be a mapping with metric, statistic and "
                             f"max_increase, got {entry!r}")
        unknown = sorted(set(entry) - {"metric", "statistic", "max_increase"})
        if unknown:
            raise ValueError(f"guardrail {position} has unknown field {unknown[0]!r}; use "
                             "metric, statistic and max_increase")
        metric, statistic = entry.get("metric"), entry.get("statistic")
        max_increase = entry.get("max_increase")
        if metric not in COST_METRICS:
            raise ValueError(f"guardrail {position}: metric must be one of {list(COST_METRICS)}, "
                             f"got {metric!r}")
        if statistic not in STATISTICS:
            raise ValueError(f"guardrail {position}: statistic must be one of {list(STATISTICS)}, "
                             f"got {statistic!r}")
        if isinstance(max_increase, bool) or not isinstance(max_increase, numbers.Real) or \
                not math.isfinite(max_increase) or max_increase < 0:
            raise ValueError(f"guardrail {position}: max_increase must be a non-negative relative "
                             f"increase (0.10 for 10%), got {max_increase!r}")
        if (metric, statistic) in seen:
            raise ValueError(f"guardrail {position}: {statistic} {metric} is guarded twice; keep "
                             "one limit per statistic")
        seen.add((metric, statistic))
        declared.append((metric, statistic, float(max_increase)))
    return declared

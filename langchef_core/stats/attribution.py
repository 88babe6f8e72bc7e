"""Which judge criterion moved: the paired comparison inside each criterion, Holm-corrected.

A judge cites exactly one criterion per failing answer. Within criterion c an answer counts
as failing only where the judge failed it *and* cited c, so a golden that failed Correctness
under the baseline and Groundedness under the variant is a Correctness fix and a
Groundedness break, though it failed in both arms. Because each failure is charged to at
most one criterion, the per-criterion differences plus the unattributed remainder (failures
that cited nothing) add up exactly to the overall difference.

The k criteria are one family: p-values are Holm-adjusted, a direction is named only when the
adjusted p-value is below alpha *and* the interval lies on one side of zero, and each
criterion's detection limit is computed at alpha/k, the strictest rung a lone signal faces.
The intervals stay at the nominal level: they show magnitude, the corrected tests decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._validation import (as_binary, as_cluster_codes, check_alpha, check_power, check_same_length,
                          column_cells, stripped_labels)
from .multiplicity import holm
from .paired import BinaryComparison, compare_binary, design_effect
from .power import detection_limit
from .records import Record, json_ready

MOVED_WORSE, MOVED_BETTER = "moved_worse", "moved_better"
CRITERION_COLUMNS = ["criterion", "broke", "fixed", "difference", "low", "high", "p_value",
                     "p_adjusted", "direction", "detection_limit"]


@dataclass(frozen=True)
class Unattributed(Record):
    """What no criterion explains: failures the judge did not attribute to any criterion."""

    difference: float
    low: float
    high: float
    broke: int
    fixed: int
    p_value: float
    baseline_uncited: int
    variant_uncited: int
    explained: float  # the sum of the per-criterion differences
    overall: float    # the overall pass-rate difference: explained + difference


@dataclass(frozen=True, eq=False)
class Attribution:
    """Per-criterion attribution of one paired comparison (one row per criterion)."""

    criteria: pd.DataFrame
    unattributed: Unattributed
    n: int
    alpha: float
    family_size: int

    def to_dict(self) -> dict:
        return {
            "n": self.n, "alpha": self.alpha, "family_size": self.family_size,
            # json_ready: numpy scalars to Python, and a limit no run this small can reach
            # (infinite) to null, so the readout serialises without NaN or Infinity.
            "criteria": [json_ready(row) for row in self.criteria.to_dict(orient="records")],
            "unattributed": self.unattributed.to_dict(),
        }


def attribute(baseline_pass, baseline_criterion, variant_pass, variant_criterion, *,
              alpha: float = 0.05, power: float = 0.80, resamples: int = 10_000, seed: int = 0,
              criteria=None, clusters=None) -> Attribution:
    """Attribute the change in pass rate to the criteria the judge cited on failures.

    ``*_criterion`` holds the cited criterion per golden (a string; None, NaN or "" when the
    judge cited none); criteria on passing answers are ignored. ``criteria`` names the
    pre-registered family; without it, the family is every criterion cited in either arm.
    """
    alpha, power = check_alpha(alpha), check_power(power)
    before = as_binary(baseline_pass, "baseline_pass")
    after = as_binary(variant_pass, "variant_pass")
    check_same_length(before, after)
    cited_before = _cited(baseline_criterion, before, "baseline_criterion")
    cited_after = _cited(variant_criterion, after, "variant_criterion")
    family = _family(criteria, cited_before, cited_after)
    codes = as_cluster_codes(clusters, before.size)
    options = dict(alpha=alpha, power=power, resamples=resamples, seed=seed, clusters=clusters)

    rows = [_criterion_row(name, cited_before == name, cited_after == name, len(family), codes,
                           options) for name in family]
    frame = pd.DataFrame(rows, columns=CRITERION_COLUMNS)
    if rows:
        frame["p_adjusted"] = holm(frame["p_value"].to_numpy())
        frame["direction"] = [_direction(row.p_adjusted, row.low, row.high, alpha)
                              for row in frame.itertuples()]
    uncited_before = ~before & (cited_before == "")
    uncited_after = ~after & (cited_after == "")
    uncited = compare_binary(~uncited_before, ~uncited_after, **options)
    explained = math.fsum(frame["difference"]) if rows else 0.0
    overall = (int(np.count_nonzero(after)) - int(np.count_nonzero(before))) / before.size
    return Attribution(
        criteria=frame,
        unattributed=Unattributed(
            difference=uncited.difference, low=uncited.low, high=uncited.high,
            broke=uncited.broke, fixed=uncited.fixed, p_value=uncited.p_value,
            baseline_uncited=int(np.count_nonzero(uncited_before)),
            variant_uncited=int(np.count_nonzero(uncited_after)),
            explained=explained, overall=overall),
        n=int(before.size), alpha=alpha, family_size=len(family))


def _criterion_row(name, failed_before, failed_after, family_size, codes, options) -> dict:
    """The same paired comparison as the whole suite, on 'failed citing this criterion'."""
    result: BinaryComparison = compare_binary(~failed_before, ~failed_after, **options)
    limit = detection_limit(result.n, result.broke + result.fixed,
                            alpha=options["alpha"] / family_size, power=options["power"])
    if codes is not None:
        change = failed_before.astype(float) - failed_after.astype(float)
        sizes = np.bincount(codes).astype(float)
        limit *= math.sqrt(design_effect(change, np.bincount(codes, weights=change), sizes))
    return dict(criterion=name, broke=result.broke, fixed=result.fixed,
                difference=result.difference, low=result.low, high=result.high,
                p_value=result.p_value, p_adjusted=result.p_value, direction=None,
                detection_limit=limit)


def _direction(p_adjusted: float, low: float, high: float, alpha: float) -> str:
    if p_adjusted < alpha and high < 0:
        return MOVED_WORSE
    if p_adjusted < alpha and low > 0:
        return MOVED_BETTER
    return "inconclusive"


def _cited(labels, passed: np.ndarray, name: str) -> np.ndarray:
    """Cited criterion per golden as strings; "" where the answer passed or nothing was cited."""
    if isinstance(labels, (str, bytes)):
        raise ValueError(f"{name} must hold one label per golden, got a single string")
    values = column_cells(labels)
    values = values if isinstance(values, np.ndarray) and values.ndim == 1 else list(values)
    if len(values) != passed.size:
        raise ValueError(f"{name} must give one label per golden: got {len(values)} labels "
                         f"for {passed.size} goldens")
    cited = np.full(passed.size, "", dtype=object)
    coded = stripped_labels(values[~passed]) if isinstance(values, np.ndarray) else None
    if coded is not None:  # failures' labels by distinct value; a missing one cites nothing
        codes, texts = coded
        cited[~passed] = np.append(texts, "")[codes]
        return cited
    for position, (label, ok) in enumerate(zip(values, passed)):
        if ok or label is None or (isinstance(label, float) and math.isnan(label)):
            continue
        if not isinstance(label, str):
            raise ValueError(f"{name} labels must be strings naming a criterion, got {label!r} "
                             f"({type(label).__name__}) at position {position}")
        cited[position] = label.strip()
    return cited


def _family(criteria, cited_before: np.ndarray, cited_after: np.ndarray) -> list[str]:
    seen = sorted(({*cited_before, *cited_after}) - {""})
    if criteria is None:
        return seen
    if isinstance(criteria, str):
        raise ValueError("criteria must be a list of criterion names, got a single string")
    family = [str(name) for name in criteria]
    if len(set(family)) != len(family) or any(not name.strip() for name in family):
        raise ValueError(f"criteria must be distinct, non-empty names, got {family}")
    unknown = [name for name in seen if name not in family]
    if unknown:
        raise ValueError(f"the judge cited criterion {unknown[0]!r}, which is not among the "
                         f"pre-registered criteria {family}; add it to the design or fix the judge")
    return family

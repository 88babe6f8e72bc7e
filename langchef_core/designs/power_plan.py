"""Planning the size of a run: the smallest effect the suite's goldens can detect at the
assumed discordant rate (or spread), and how many goldens a target effect or a margin
below that limit would need — from the design alone or measured from earlier readouts."""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass
from pathlib import Path

from ..inputs.errors import InputError
from ..inputs.workspace import NAME_PATTERN, Workspace
from ..stats.power import (continuous_detection_limit, goldens_needed, goldens_needed_continuous,
                           limit_at_rate, z_multiplier)
from ..stats.records import Record
from .model import Design
from .parse import load_workspace_design

# --------------------------------------------------------------------------------------
# Power planning
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shortfall(Record):
    """A target effect or margin below the run's detection limit, and what would reach it."""

    field: str
    value: float
    goldens_needed: int | None
    note: str


@dataclass(frozen=True)
class PowerPlan(Record):
    """What this design can detect with its suite, at an assumed discordant rate or spread.

    Binary primaries: the effect at which the readout's rule (Tango and exact McNemar) has
    the design's power at the Wilson upper bound U of the assumed discordant rate
    (``langchef_core.stats.power.limit_at_rate``; infinite when the suite is too small for the
    rule ever to decide). Continuous
    (retrieval) primaries: limit = (z₁₋α/₂ + z_power) · sd/√n. ``underpowered`` is None
    when no limit could be computed (no goldens yet, or nothing to assume).
    """

    experiment: str
    primary: str
    scale: str  # "discordant_rate" (binary primary) or "sd" (continuous primary)
    n_goldens: int | None
    assumed: float | None
    source: str | None
    alpha: float
    power: float
    detection_limit: float | None
    target_effect: float | None
    margin: float | None
    underpowered: bool | None
    shortfalls: tuple[Shortfall, ...]
    sentence: str

    def underpowered_record(self) -> dict | None:
        """What an approval (and every readout) carries as its "underpowered" warning."""
        if not self.underpowered:
            return None
        limit = self.detection_limit
        return {"detection_limit": limit if limit is None or math.isfinite(limit) else None,
                "n_goldens": self.n_goldens,
                "scale": self.scale, "assumed": self.assumed, "source": self.source,
                "shortfalls": [shortfall.to_dict() for shortfall in self.shortfalls],
                "sentence": self.sentence}


def plan_power(design: Design, n_goldens: int | None, *, assumed: float | None = None,
               source: str | None = None, missing: str | None = None,
               no_spread: str | None = None) -> PowerPlan:
    """Detection limit of ``design`` on ``n_goldens`` at an ``assumed`` rate (or sd).

    ``assumed`` defaults to the design's own ``assumed_discordant_rate`` (binary primary)
    or ``assumed_sd`` (retrieval primary). ``missing`` explains a missing goldens count.
    """
    binary = design.primary_is_binary
    scale = "discordant_rate" if binary else "sd"
    if assumed is None:
        assumed = design.assumed_discordant_rate if binary else design.assumed_sd
        source = f"design field 'assumed_{scale}'" if assumed is not None else None
    elif source is None:
        source = "given"
    common = dict(experiment=design.experiment, primary=design.primary, scale=scale,
                  n_goldens=n_goldens, assumed=assumed, source=source, alpha=design.alpha,
                  power=design.power, target_effect=design.target_effect, margin=design.margin)
    if n_goldens is None or n_goldens == 0 or assumed is None:
        reason = missing if n_goldens is None else ("the suite has no goldens"
                                                    if n_goldens == 0 else None)
        if reason is None and no_spread is not None:
            reason = no_spread
        if reason is None:
            what = "assumed_discordant_rate" if binary else "assumed_sd"
            reason = (f"no {scale.replace('_', ' ')} to plan with: set {what} in the design "
                      "or read out an experiment on the same suite first")
        return PowerPlan(**common, detection_limit=None, underpowered=None, shortfalls=(),
                         sentence=f"detection limit unknown: {reason}")
    if binary and design.sequential:
        return _sequential_plan(design, common, n_goldens, assumed, source)
    if binary:
        limit = limit_at_rate(n_goldens, assumed, alpha=design.alpha, power=design.power)
    else:
        limit = continuous_detection_limit(assumed, n_goldens, alpha=design.alpha,
                                           power=design.power)
    shortfalls = tuple(_shortfall(design, name, value, assumed, binary)
                       for name, value in (("target_effect", design.target_effect),
                                           ("margin", design.margin))
                       if value is not None and value < limit)
    measure = "pass-rate difference" if binary else f"difference in mean {design.primary}"
    sentence = (f"with {n_goldens} goldens and an assumed {scale.replace('_', ' ')} of "
                f"{assumed:g} ({source}), the smallest {measure} this design can detect is "
                f"{_size(limit, binary)} (alpha {design.alpha:g}, power {design.power:g})")
    if shortfalls:
        sentence += "; UNDERPOWERED: " + "; ".join(item.note for item in shortfalls)
    return PowerPlan(**common, detection_limit=limit, underpowered=bool(shortfalls),
                     shortfalls=shortfalls, sentence=sentence)


def _sequential_plan(design: Design, common: dict, n_goldens: int, assumed: float,
                     source: str | None) -> PowerPlan:
    """A sequential design plans on its budget (max_goldens), with the limit of the
    confidence sequence its verdict is read from; the fixed-n limit is given beside it."""
    from ..stats.sequential import planned_detection_limit
    budget = design.stopping.max_goldens
    limit = planned_detection_limit(assumed, budget, alpha=design.alpha, power=design.power)
    fixed = limit_at_rate(budget, assumed, alpha=design.alpha, power=design.power)
    shortfalls = tuple(_sequential_shortfall(design, name, value, assumed)
                       for name, value in (("target_effect", design.target_effect),
                                           ("margin", design.margin))
                       if value is not None and value < limit)
    sentence = (f"a sequential design with a budget of {budget} goldens ({n_goldens} in the "
                f"suite now) and an assumed discordant rate of {assumed:g} ({source}): the "
                f"smallest pass-rate difference its confidence sequence can detect by N is "
                f"{limit:.4g}, against {fixed:.4g} for one fixed-n readout at N (alpha "
                f"{design.alpha:g}, power {design.power:g}); larger effects stop it earlier")
    if shortfalls:
        sentence += "; UNDERPOWERED: " + "; ".join(item.note for item in shortfalls)
    return PowerPlan(**{**common, "n_goldens": budget}, detection_limit=limit,
                     underpowered=bool(shortfalls), shortfalls=shortfalls, sentence=sentence)


SEQUENTIAL_SEARCH_LIMIT = 1_000_000


def _sequential_shortfall(design: Design, name: str, value: float, assumed: float) -> Shortfall:
    """The budget whose sequence would reach ``value`` (the limit falls as the budget grows)."""
    from ..stats.sequential import planned_detection_limit

    def reaches(budget: int) -> bool:
        return planned_detection_limit(assumed, budget, alpha=design.alpha,
                                       power=design.power) <= value

    low, high = design.stopping.max_goldens, design.stopping.max_goldens * 2
    while not reaches(high):
        if high >= SEQUENTIAL_SEARCH_LIMIT:
            return Shortfall(name, value, None, f"{name} {value:g} is below the limit and even "
                             f"{SEQUENTIAL_SEARCH_LIMIT:,} goldens would not reach it")
        low, high = high, min(2 * high, SEQUENTIAL_SEARCH_LIMIT)
    while high - low > max(1, low // 100):   # to about one per cent
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return Shortfall(name, value, high, f"{name} {value:g} is below the limit; reaching it "
                                        f"needs a budget of about {high} goldens")


def _shortfall(design: Design, name: str, value: float, assumed: float, binary: bool) -> Shortfall:
    try:
        if binary:
            needed = goldens_needed(value, assumed, alpha=design.alpha, power=design.power)
        else:
            needed = goldens_needed_continuous(value, assumed, alpha=design.alpha,
                                               power=design.power)
    except ValueError as error:
        return Shortfall(name, value, None, f"{name} {value:g} is below the limit and no "
                                            f"number of goldens reaches it ({error})")
    return Shortfall(name, value, needed, f"{name} {value:g} is below the limit; reaching it "
                                          f"needs about {needed} goldens")


def count_goldens(workspace: Workspace, suite: str) -> int | None:
    """Distinct goldens in ``goldens/<suite>``; None when the suite file does not exist yet."""
    from ..inputs.tables import read_table

    path = workspace.goldens_path(suite)
    if not path.exists():
        return None
    frame = read_table(path, label=workspace.relative(path))
    if "example_id" not in frame.columns:
        raise InputError("missing column", file=workspace.relative(path), column="example_id",
                         hint="give every golden a unique example_id")
    return int(frame["example_id"].nunique())


@dataclass(frozen=True)
class MeasuredAssumption(Record):
    value: float
    source: str


def measured_assumption(workspace: Workspace, design: Design) -> MeasuredAssumption | None:
    """The discordant rate (or sd) seen in the latest readout of the same suite and metric.

    Latest by the time the readout was taken (its ``created_at``, else its version's
    ``manifest.json``), then by experiment name and version.

    Binary: (broke + fixed) / n of that readout's primary comparison. Continuous: the sd of
    per-golden differences recovered from the reported limit, sd = limit · √n / (z₁₋α/₂ +
    z_power), the inverse of ``continuous_detection_limit``. Readouts that cannot be read
    are passed over: they are evidence for planning only, and the gate reads them itself.
    """
    candidates = []
    for path in sorted(workspace.reports.glob("*/v*/readout.json")):
        readout = _readable_json(path)
        if readout is None or not _same_suite(workspace, readout, design.suite):
            continue
        primary = readout.get("primary")
        if not isinstance(primary, dict) or primary.get("metric") != design.primary:
            continue
        value = _assumption_from(primary, design.primary_is_binary)
        if value is None:
            continue
        taken = _taken_at(path, readout)
        version = readout.get("version") if isinstance(readout.get("version"), int) else 0
        candidates.append(((taken, str(readout.get("experiment")), version),
                           MeasuredAssumption(value, f"measured in {workspace.relative(path)}")))
    return max(candidates, key=lambda pair: pair[0])[1] if candidates else None


def _taken_at(path: Path, readout: dict) -> str:
    """When a readout was taken: its own field if any, else its version's manifest.json
    (the readout document itself carries no clock, so that re-runs are byte-identical)."""
    manifest = _readable_json(path.parent / "manifest.json") or {}
    for value in (readout.get("created_at"), readout.get("taken_at"), manifest.get("created_at")):
        if isinstance(value, str) and value:
            return value
    return ""


def _readable_json(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _same_suite(workspace: Workspace, readout: dict, suite: str) -> bool:
    design = readout.get("design")
    if isinstance(design, dict) and isinstance(design.get("suite"), str):
        return design["suite"] == suite
    name = readout.get("experiment")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        return False
    try:
        return load_workspace_design(workspace, name).suite == suite
    except InputError:
        return False


def _assumption_from(primary: dict, binary: bool) -> float | None:
    def real(key):
        value = primary.get(key)
        finite = (isinstance(value, numbers.Real) and not isinstance(value, bool)
                  and math.isfinite(value))
        return float(value) if finite else None

    n = real("n")
    if not n or n < 1:
        return None
    if binary:
        broke, fixed = real("broke"), real("fixed")
        if broke is None or fixed is None or broke + fixed > n:
            return None
        return (broke + fixed) / n
    limit, alpha, power = real("detection_limit"), real("alpha"), real("power")
    if limit is None or alpha is None or power is None or not 0 < alpha < 1 or not 0 < power < 1:
        return None
    sd = limit * math.sqrt(n) / z_multiplier(alpha, power)
    return sd if sd > 0 else None


def assess_power(workspace: Workspace, design: Design) -> PowerPlan:
    """The power plan `langchef design check` prints and `langchef approve` records.

    Goldens are counted from the suite file; the assumed rate is the design's field, else
    the one measured in the latest readout of the same suite.
    """
    n = count_goldens(workspace, design.suite)
    missing = None
    if n is None:
        missing = (f"{workspace.relative(workspace.goldens_path(design.suite))} does not exist "
                   "yet, so the number of goldens is unknown")
    explicit = design.assumed_discordant_rate if design.primary_is_binary else design.assumed_sd
    if explicit is None:
        measured = measured_assumption(workspace, design)
        if measured is None and not design.primary_is_binary:
            measured = baseline_spread(workspace, design)
        if measured is not None:
            return plan_power(design, n, assumed=measured.value, source=measured.source,
                              missing=missing)
        if not design.primary_is_binary and n:
            return plan_power(design, n, missing=missing, no_spread=(
                f"no assumed_sd in the design, no readout on suite {design.suite!r} to measure "
                f"it from, and no run of the baseline arm {design.arms.baseline!r} with qrels "
                f"to observe the per-query spread of {design.primary}: set assumed_sd (the "
                "expected sd of per-query differences, e.g. 0.3), or plan again once a "
                "baseline run exists"))
    return plan_power(design, n, missing=missing)


def baseline_spread(workspace: Workspace, design: Design) -> MeasuredAssumption | None:
    """The sd of the baseline's per-query primary metric, from a run of the baseline arm on
    this suite (this experiment's runs, else another experiment's on the same suite) scored
    against the suite's qrels.

    Taken as the sd of the per-query *differences*: for two arms with equal spread that is
    exact when their per-query scores correlate at 0.5; more alike arms have a smaller sd,
    so the plan errs on the side of needing more goldens when the arms are alike.
    """
    from ..scoring.retrieval.metrics import retrieval_metrics
    from ..inputs.tables import read_table

    qrels_path = workspace.qrels_path(design.suite)
    if not qrels_path.exists():
        return None
    candidates = [design.experiment] + [name for name in workspace.experiment_names()
                                        if name != design.experiment]
    for experiment in candidates:
        if not NAME_PATTERN.match(experiment):
            continue
        path = workspace.run_path(experiment, design.arms.baseline)
        if not path.exists():
            continue
        if experiment != design.experiment:
            try:
                if load_workspace_design(workspace, experiment).suite != design.suite:
                    continue
            except InputError:
                continue
        try:
            run = read_table(path, label=workspace.relative(path))
            qrels = read_table(qrels_path, label=workspace.relative(qrels_path))
            scored = retrieval_metrics(run, qrels, k=design.retrieval.k)
        except (InputError, ValueError, KeyError):
            continue
        values = scored.loc[scored["in_run"] & (scored["n_positive"] > 0), design.primary]
        if len(values) < 2:
            continue
        sd = float(values.std(ddof=1))
        if sd > 0 and math.isfinite(sd):
            return MeasuredAssumption(sd, f"the sd of per-query {design.primary} observed in "
                                          f"{workspace.relative(path)} over {len(values)} "
                                          "queries, taken as the sd of differences")
    return None


def _size(value: float, binary: bool) -> str:
    """A detectable difference as people read it: percentage points for a pass rate, the
    metric's own scale (three decimals) otherwise."""
    if not math.isfinite(value):
        return "nothing (too few goldens for the exact test ever to decide)"
    return f"{100 * value:.1f} points" if binary else f"{value:.3f}"

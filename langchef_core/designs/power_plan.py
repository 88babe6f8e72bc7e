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
    sequence: dict | None = None   # a sequential design: what its sequence resolves at N

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
               no_spread: str | None = None, clusters: int | None = None) -> PowerPlan:
    """Detection limit of ``design`` on ``n_goldens`` at an ``assumed`` rate (or sd).

    ``assumed`` defaults to the design's own ``assumed_discordant_rate`` (binary primary)
    or ``assumed_sd`` (retrieval primary). ``missing`` explains a missing goldens count.
    ``clusters`` is the number of distinct values of the design's cluster column in the
    suite (a sequential design reads one unit per cluster).
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
        return _sequential_plan(design, common, n_goldens, assumed, source, clusters)
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
                     source: str | None, clusters: int | None) -> PowerPlan:
    """A sequential design plans on its budget (max_goldens) with the interval its readout
    is read from: the confidence sequence over goldens, or over clusters when the design
    names one, at alpha (and each criterion at alpha/k); the fixed-n limit is given beside."""
    budget = design.stopping.max_goldens
    per_cluster = _goldens_per_cluster(design, n_goldens, clusters)
    sequence = _sequence_plan(design, assumed, budget, per_cluster)
    limit = sequence.detection_limit if sequence.resolves_anything else math.inf
    fixed = limit_at_rate(budget, assumed, alpha=design.alpha, power=design.power)
    shortfalls = tuple(_sequential_shortfall(design, name, value, assumed, per_cluster)
                       for name, value in (("target_effect", design.target_effect),
                                           ("margin", design.margin))
                       if value is not None and value < limit)
    if not sequence.resolves_anything and not shortfalls:
        shortfalls = (Shortfall("max_goldens", budget, None, (
            f"by N = {budget} goldens the sequence can resolve no difference; a fixed-n "
            f"design on the same goldens would resolve {_size(fixed, True)}")),)
    read_as = ""
    if sequence.unit == "cluster":
        read_as = (f", read as about {sequence.units} clusters of {per_cluster:.3g} goldens "
                   f"({design.cluster}; goldens of one cluster assumed to flip independently, "
                   "so correlated ones widen it further)")
    resolves = (f"resolve a pass-rate difference of {_size(limit, True)}"
                if sequence.resolves_anything else "resolve no difference at all")
    sentence = (f"a sequential design with a budget of {budget} goldens ({n_goldens} in the "
                f"suite now){read_as} and an assumed discordant rate of {assumed:g} "
                f"({source}): at N its confidence sequence will be about "
                f"±{100 * sequence.half_width:.1f} points wide and {resolves} (alpha "
                f"{design.alpha:g}, power {design.power:g}), against {_size(fixed, True)} for "
                f"one fixed-n readout at N{_criteria_clause(design, assumed, budget, per_cluster)}"
                "; larger effects stop it earlier")
    if shortfalls:
        sentence += "; UNDERPOWERED: " + "; ".join(item.note for item in shortfalls)
    return PowerPlan(**{**common, "n_goldens": budget}, detection_limit=limit,
                     underpowered=bool(shortfalls), shortfalls=shortfalls, sentence=sentence,
                     sequence=sequence.to_dict())


def _goldens_per_cluster(design: Design, n_goldens: int, clusters: int | None) -> float | None:
    """The suite's mean cluster size, as the readout will find it (None: no clusters)."""
    if design.cluster is None or not clusters:
        return None
    return n_goldens / clusters


def _sequence_plan(design: Design, assumed: float, budget: int, per_cluster: float | None,
                   alpha: float | None = None):
    from ..stats.sequential import plan_sequence
    return plan_sequence(assumed, budget, alpha=design.alpha if alpha is None else alpha,
                         power=design.power, goldens_per_cluster=per_cluster)


def _criteria_clause(design: Design, assumed: float, budget: int,
                     per_cluster: float | None) -> str:
    """Each criterion is read with its own sequence at alpha/k: what that one resolves
    when a criterion carries every flip (one that carries fewer resolves less)."""
    k = len(design.criteria)
    if k < 2:
        return ""
    criterion = _sequence_plan(design, assumed, budget, per_cluster, alpha=design.alpha / k)
    if not criterion.resolves_anything:
        return f"; each of the {k} criteria, read at alpha/{k}, resolves no difference"
    return (f"; each of the {k} criteria, read at alpha/{k}, at best "
            f"{_size(criterion.detection_limit, True)}")


def _sequential_shortfall(design: Design, name: str, value: float, assumed: float,
                          per_cluster: float | None) -> Shortfall:
    """The budget whose sequence would reach ``value`` (with clusters, of the same size)."""
    from ..stats.sequential import SEARCH_LIMIT, budget_needed
    shown = f"{name} {_size(value, True)}"
    needed = budget_needed(value, assumed, alpha=design.alpha, power=design.power,
                           goldens_per_cluster=per_cluster, start=design.stopping.max_goldens)
    if needed is None:
        return Shortfall(name, value, None, f"{shown} is below the limit and even "
                                            f"{SEARCH_LIMIT:,} goldens would not reach it")
    clusters = "" if per_cluster is None else f" (about {round(needed / per_cluster)} clusters)"
    return Shortfall(name, value, needed, f"{shown} is below the limit; reaching it needs a "
                                          f"budget of about {needed} goldens{clusters}")


def _shortfall(design: Design, name: str, value: float, assumed: float, binary: bool) -> Shortfall:
    shown = f"{name} {_size(value, binary)}"
    try:
        if binary:
            needed = goldens_needed(value, assumed, alpha=design.alpha, power=design.power)
        else:
            needed = goldens_needed_continuous(value, assumed, alpha=design.alpha,
                                               power=design.power)
    except ValueError as error:
        return Shortfall(name, value, None, f"{shown} is below the limit and no "
                                            f"number of goldens reaches it ({error})")
    return Shortfall(name, value, needed, f"{shown} is below the limit; reaching it "
                                          f"needs about {needed} goldens")


def count_goldens(workspace: Workspace, suite: str) -> int | None:
    """Distinct goldens in ``goldens/<suite>``; None when the suite file does not exist yet."""
    return count_suite(workspace, suite)[0]


def count_suite(workspace: Workspace, suite: str,
                cluster: str | None = None) -> tuple[int | None, int | None]:
    """Distinct goldens in ``goldens/<suite>``, and distinct values of its ``cluster`` column
    (None when no cluster is named or the column is absent); (None, None) when the suite
    file does not exist yet."""
    from ..inputs.tables import read_table

    path = workspace.goldens_path(suite)
    if not path.exists():
        return None, None
    frame = read_table(path, label=workspace.relative(path))
    if "example_id" not in frame.columns:
        raise InputError("missing column", file=workspace.relative(path), column="example_id",
                         hint="give every golden a unique example_id")
    clusters = (int(frame[cluster].nunique()) if cluster is not None and cluster in frame.columns
                else None)
    return int(frame["example_id"].nunique()), clusters


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
    n, clusters = count_suite(workspace, design.suite, design.cluster)
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
                              missing=missing, clusters=clusters)
        if not design.primary_is_binary and n:
            return plan_power(design, n, missing=missing, no_spread=(
                f"no assumed_sd in the design, no readout on suite {design.suite!r} to measure "
                f"it from, and no run of the baseline arm {design.arms.baseline!r} with qrels "
                f"to observe the per-query spread of {design.primary}: set assumed_sd (the "
                "expected sd of per-query differences, e.g. 0.3), or plan again once a "
                "baseline run exists"))
    return plan_power(design, n, missing=missing, clusters=clusters)


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

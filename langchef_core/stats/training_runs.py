"""Arms trained more than once: between-seed spread and a comparison that includes it.

When an arm is a training method rather than one checkpoint, a second training run with
another seed gives another model, and the question is about the method. Resampling goldens
measures only how the goldens were drawn; it is silent about how much the metric would move
if the model were trained again. So an arm may be a set of independently trained seeds (runs
``<arm>@seed<k>``), all answering the same goldens, and then

* each arm's per-seed metric is reported with its spread (sd, min, max): the between-seed
  variation a single training run would hide;
* the comparison is the mean over the variant's seeds minus the mean over the baseline's,
  D = (1/k_v) Σ_s m_vs − (1/k_b) Σ_s m_bs, and its interval comes from a two-level bootstrap:
  each resample draws the goldens (or whole clusters) with replacement, once, and applies
  that draw to every seed of both arms, so the pairing by golden survives; then it draws k_b
  baseline seeds and k_v variant seeds with replacement. Resampling both levels is the
  standard hierarchical bootstrap; it slightly over-counts the golden-level variance, which
  errs on the side of a wider interval. With two or three seeds per arm the seed level has
  few distinct draws, so the interval is coarse there; the spread is reported beside it.

Re-running one checkpoint is not retraining it. Two "seeds" of one arm with identical
outputs on every golden (or, when outputs are not given, identical outcomes on every golden)
are refused by name, and no comparison is made.

References: Davison & Hinkley (1997), Bootstrap Methods and their Application, §3.8
(two-stage resampling of hierarchical data); Bouthillier et al. (2021), "Accounting for
variance in machine learning benchmarks", MLSys.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._validation import (as_1d, as_cluster_codes, as_rng, check_alpha, check_margin, check_power,
                          check_resamples)
from .bootstrap import resampled_counts
from .paired import noninferiority_from_interval, verdict_from_interval
from .power import z_multiplier
from .records import Record, json_ready

SEED_RUN = re.compile(r"^(?P<arm>.+)@(?P<seed>seed\d+)$")


@dataclass(frozen=True)
class SeedSpread(Record):
    """One arm's metric per seed and how much it varies between seeds."""

    arm: str
    n_seeds: int
    per_seed: dict            # seed name → metric over all goldens
    mean: float
    sd: float | None          # sample sd (n − 1); None with a single seed
    min: float
    max: float


@dataclass(frozen=True)
class SeedRefusal(Record):
    """Two runs of one arm that are the same model presented as two seeds."""

    arm: str
    seeds: tuple[str, str]
    evidence: str             # "outputs" or "outcomes"
    reason: str


@dataclass(frozen=True)
class SeedComparison(Record):
    """Variant − baseline averaged over seeds, with an interval that includes seed variance."""

    n: int
    n_clusters: int | None
    baseline_seeds: int
    variant_seeds: int
    baseline_mean: float
    variant_mean: float
    difference: float
    low: float
    high: float
    verdict: str
    noninferiority: str | None
    margin: float | None
    detection_limit: float    # (z₁₋α/₂ + z_power) · bootstrap standard error
    alpha: float
    power: float
    resamples: int
    seed: int | None
    resampling: str


@dataclass(frozen=True)
class SeedAnalysis(Record):
    """Spread per arm, refusals, and the comparison (None when the seeds were refused)."""

    baseline: SeedSpread
    variant: SeedSpread
    refusals: tuple[SeedRefusal, ...]
    refused: bool
    comparison: SeedComparison | None
    gate_reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return json_ready(super().to_dict())


def parse_seed_run(name: str) -> tuple[str, str | None]:
    """Split a run name ``<arm>@seed<k>`` into (arm, "seed<k>"); (name, None) otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"a run name must be text, got {name!r}")
    match = SEED_RUN.match(name)
    return (match["arm"], match["seed"]) if match else (name, None)


def compare_seeds(baseline: Mapping, variant: Mapping, *, baseline_outputs: Mapping | None = None,
                  variant_outputs: Mapping | None = None, declared_seeds: int | None = None,
                  clusters=None, margin: float | None = None, alpha: float = 0.05,
                  power: float = 0.80, resamples: int = 10_000,
                  seed: int | np.random.Generator = 0) -> SeedAnalysis:
    """Between-seed spread of each arm and the seed-aware paired comparison.

    ``baseline`` and ``variant`` map each seed name to one outcome per golden (pass/fail or
    a score; the metric is their mean), all aligned on the same goldens in the same order.
    An arm with a single run is a fixed system (e.g. the incumbent checkpoint); at least one
    arm needs two seeds or more. With ``declared_seeds`` (the design's ``seeds``) every arm
    with more than one run must have exactly that many. ``*_outputs`` optionally map seed
    names to the output text per golden; where both seeds of a pair have outputs, identical
    outputs on every golden mean one checkpoint was re-run, otherwise identical outcome
    vectors do.
    """
    alpha, power = check_alpha(alpha), check_power(power)
    resamples, margin, rng = check_resamples(resamples), check_margin(margin), as_rng(seed)
    runs = {"baseline": _check_arm(baseline, "baseline"), "variant": _check_arm(variant, "variant")}
    n = _check_aligned(runs)
    if max(len(seeds) for seeds in runs.values()) < 2:
        raise ValueError("neither arm has two seeds or more: this is not a seed comparison; use "
                         "compare_binary or compare_continuous for one run per arm")
    _check_declared(runs, declared_seeds)
    outputs = {"baseline": _check_outputs(baseline_outputs, runs["baseline"], "baseline", n),
               "variant": _check_outputs(variant_outputs, runs["variant"], "variant", n)}
    codes = as_cluster_codes(clusters, n)

    spreads = {arm: _spread(arm, seeds) for arm, seeds in runs.items()}
    refusals = tuple(refusal for arm in runs
                     for refusal in _duplicate_seeds(arm, runs[arm], outputs[arm]))
    if refusals:
        return SeedAnalysis(baseline=spreads["baseline"], variant=spreads["variant"],
                            refusals=refusals, refused=True, comparison=None,
                            gate_reasons=tuple(refusal.reason for refusal in refusals))

    scores = np.vstack([*runs["baseline"].values(), *runs["variant"].values()])
    k_b, k_v = len(runs["baseline"]), len(runs["variant"])
    differences = _two_level_bootstrap(scores, k_b, codes, resamples, rng)
    low, high = (float(bound) for bound in np.quantile(differences, [alpha / 2, 1 - alpha / 2]))
    baseline_mean, variant_mean = spreads["baseline"].mean, spreads["variant"].mean
    units = "goldens" if codes is None else f"{int(codes.max()) + 1} clusters"
    comparison = SeedComparison(
        n=n, n_clusters=None if codes is None else int(codes.max()) + 1,
        baseline_seeds=k_b, variant_seeds=k_v, baseline_mean=baseline_mean,
        variant_mean=variant_mean, difference=variant_mean - baseline_mean, low=low, high=high,
        verdict=verdict_from_interval(low, high),
        noninferiority=noninferiority_from_interval(low, high, margin), margin=margin,
        detection_limit=z_multiplier(alpha, power) * float(np.std(differences, ddof=1)),
        alpha=alpha, power=power, resamples=resamples,
        seed=None if isinstance(seed, np.random.Generator) else int(seed),
        resampling=f"{units} resampled once per resample and shared by every seed of both "
                   f"arms; {k_b} baseline and {k_v} variant seeds resampled within their arm")
    return SeedAnalysis(baseline=spreads["baseline"], variant=spreads["variant"], refusals=(),
                        refused=False, comparison=comparison, gate_reasons=())


def _two_level_bootstrap(scores: np.ndarray, k_b: int, codes: np.ndarray | None,
                         resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Resampled D: goldens (or clusters) drawn once per resample for every seed, then seeds.

    ``scores`` is (seeds × goldens), baseline seeds first. Units are reduced to distinct
    profiles — a unit's vector of per-seed totals and its size — so resampling costs
    O(resamples × distinct profiles × seeds); profiles are sorted, so row order is irrelevant.
    """
    seeds = scores.shape[0]
    if codes is None:
        unit_totals, unit_sizes = scores.T, np.ones(scores.shape[1])
    else:
        order = np.lexsort((*scores[::-1], codes))  # a fixed order for the float sums
        codes_sorted = codes[order]
        starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
        unit_totals = np.add.reduceat(scores[:, order], starts, axis=1).T
        unit_sizes = np.diff(np.r_[starts, codes_sorted.size]).astype(float)
    profiles, multiplicity = np.unique(np.column_stack([unit_totals, unit_sizes]), axis=0,
                                       return_counts=True)
    totals, sizes = profiles[:, :seeds], profiles[:, seeds]
    k_v = seeds - k_b
    differences = np.empty(resamples)
    for rows, counts in resampled_counts(multiplicity, resamples, rng, columns_per_row=seeds):
        drawn = counts.astype(float)
        per_seed = (drawn @ totals) / (drawn @ sizes)[:, None]  # rows × seeds
        picked_b = rng.multinomial(k_b, np.full(k_b, 1 / k_b), size=drawn.shape[0])
        picked_v = rng.multinomial(k_v, np.full(k_v, 1 / k_v), size=drawn.shape[0])
        baseline = np.sum(picked_b * per_seed[:, :k_b], axis=1) / k_b
        variant = np.sum(picked_v * per_seed[:, k_b:], axis=1) / k_v
        differences[rows] = variant - baseline
    return differences


def _spread(arm: str, seeds: dict[str, np.ndarray]) -> SeedSpread:
    per_seed = {name: math.fsum(np.sort(values)) / values.size for name, values in seeds.items()}
    metrics = np.array(sorted(per_seed.values()))
    return SeedSpread(arm=arm, n_seeds=len(per_seed), per_seed=per_seed,
                      mean=math.fsum(metrics) / metrics.size,
                      sd=float(np.std(metrics, ddof=1)) if metrics.size > 1 else None,
                      min=float(metrics[0]), max=float(metrics[-1]))


def _duplicate_seeds(arm: str, seeds: dict[str, np.ndarray],
                     outputs: dict[str, list]) -> list[SeedRefusal]:
    names = list(seeds)
    refusals = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            if first in outputs and second in outputs:
                same, evidence = outputs[first] == outputs[second], "outputs"
            else:
                same, evidence = bool(np.array_equal(seeds[first], seeds[second])), "outcomes"
            if same:
                refusals.append(SeedRefusal(
                    arm=arm, seeds=(first, second), evidence=evidence,
                    reason=f"{arm} seeds {first!r} and {second!r} have identical {evidence} on "
                           "every golden: that is one checkpoint run twice, not two trained "
                           "seeds; retrain with a different seed or declare fewer seeds"))
    return refusals


# ── validation ──────────────────────────────────────────────────────────────────────────

def _check_arm(runs, arm: str) -> dict[str, np.ndarray]:
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"{arm} must map each seed name to its outcomes per golden, e.g. "
                         f"{{'seed1': [...], 'seed2': [...]}}; got {type(runs).__name__}")
    checked = {}
    for name in sorted(runs, key=_natural_key):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{arm} seed names must be non-empty text, got {name!r}")
        checked[name] = _as_scores(runs[name], f"{arm} seed {name!r}")
    return checked


def _natural_key(name) -> list:
    """seed2 before seed10: digits compare as numbers (split keeps text and numbers aligned)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(name))]


def _as_scores(values, name: str) -> np.ndarray:
    """Outcomes per golden as floats: pass/fail becomes 1/0, scores stay as they are."""
    array = as_1d(values, name)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold pass/fail outcomes or real-valued scores, got values "
                         f"of type {array.dtype}")
    array = array.astype(float)
    bad = ~np.isfinite(array)
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} has a missing or infinite value at position {position}; "
                         "score every golden")
    return array


def _check_aligned(runs: dict[str, dict[str, np.ndarray]]) -> int:
    lengths = {f"{arm} seed {name!r}": values.size
               for arm, seeds in runs.items() for name, values in seeds.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("every seed of both arms must score the same goldens in the same order; "
                         f"got lengths {lengths}")
    return next(iter(lengths.values()))


def _check_declared(runs, declared_seeds) -> None:
    if declared_seeds is None:
        return
    if isinstance(declared_seeds, bool) or not isinstance(declared_seeds, numbers.Integral) or \
            declared_seeds < 2:
        raise ValueError(f"declared_seeds must be a whole number of at least 2, got "
                         f"{declared_seeds!r}")
    for arm, seeds in runs.items():
        if len(seeds) > 1 and len(seeds) != declared_seeds:
            raise ValueError(f"the design declares {declared_seeds} seeds, but {arm} has "
                             f"{len(seeds)} runs ({sorted(seeds)}); supply exactly "
                             f"{declared_seeds} runs named <arm>@seed<k>")


def _check_outputs(outputs, seeds: dict, arm: str, n: int) -> dict[str, list]:
    if outputs is None:
        return {}
    if not isinstance(outputs, Mapping):
        raise ValueError(f"{arm}_outputs must map seed names to output text per golden")
    checked = {}
    for name, texts in outputs.items():
        if name not in seeds:
            raise ValueError(f"{arm}_outputs names seed {name!r}, which has no outcomes; "
                             f"seeds are {sorted(seeds)}")
        if isinstance(texts, (str, bytes)):
            raise ValueError(f"{arm} outputs of seed {name!r} must be one text per golden, "
                             "got a single string")
        texts = [None if text is None else str(text) for text in texts]
        if len(texts) != n:
            raise ValueError(f"{arm} outputs of seed {name!r} must give one text per golden: "
                             f"got {len(texts)} for {n} goldens")
        checked[name] = texts
    return checked

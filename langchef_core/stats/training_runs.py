"""Arms trained more than once: between-seed spread and a comparison that includes it.

When an arm is a training method rather than one checkpoint, a second training run with
another seed gives another model, and the question is about the method. Resampling goldens
measures only how the goldens were drawn; it is silent about how much the metric would move
if the model were trained again. So an arm may be a set of independently trained seeds (runs
``<arm>@seed<k>``), all answering the same goldens, and then

* each arm's per-seed metric is reported with its spread (sd, min, max): the between-seed
  variation a single training run would hide;
* the comparison is the mean over the variant's seeds minus the mean over the baseline's,
  D = (1/k_v) Σ_s m_vs − (1/k_b) Σ_s m_bs, with a t interval from the two-way ANOVA of
  golden × seed within each arm (``seed_t_interval``). The variance is an unbiased
  combination of mean squares,

      V = s_e²/n − Σ_a MSE_a/(n k_a) + Σ_a s_a²/k_a,

  (s_e² the variance over goldens of the seed-averaged paired difference, MSE_a arm a's
  golden × seed residual mean square, s_a² the between-seed variance of arm a's metric),
  with each arm's seed part s_a²/k_a − MSE_a/(n k_a) truncated at zero for the standard
  error. The degrees of freedom are Satterthwaite's with the between-seed mean square split
  in two (``_seed_df``): the residual noise in it is known from the MSE with its large df,
  and only what exceeds q · MSE (q the lower 20% F quantile of the residual share) is a seed
  term, pooled over arms at min_a k_a − 1 df (Hsu's conservative rule: with real seed
  variance the per-arm Welch df over-reject, 7% at 2 v 2 seeds). Without seed variance the
  seed term is then small and the df large. The variance the df are computed from keeps
  each arm's seed estimate at no less than −½ · MSE_a/(n k_a), so a small unbiased variance
  still lowers the df. That is not enough when one arm alone has a large seed variance: its
  seed means can land close together by chance, the golden term then dominates the sum, the
  df rise far above k − 1 and the interval is too short (real-valued scores, 2 v 2 seeds:
  90–93% coverage at seed sds (0, 0.2–1.0)). So the half-width is never below that of the t
  interval from either arm's seed means alone, t_{k_a−1} · √(s_a²/k_a − ½ MSE_a/(n k_a)),
  exact as that arm's seed variance grows (``SEED_ONLY_NOISE_REMOVED``; p is the largest of
  the tests, so it agrees with the interval, and ``interval_method`` / ``p_value_method``
  name the bound that set them). Real-valued scores then cover 93.7–99.4% over seed sds
  0.05–1.0 in one arm, the other or both at 2 / 3 / 5 seeds (R = 1500 per cell); the widths
  without seed variance are in README "Statistics" (2 seeds: no interval covering 93.5% at
  every seed sd can be as narrow as the df rule alone, ``benchmarks/seed_width_bound.py``).
  The percentile two-level bootstrap it replaces had 15% false positives at 2 v 2 seeds with
  real seed variance. What 2 seeds per arm can support is stated in ``SeedComparison.note``
  (t_{0.975, 1} = 12.7: only large effects). With clusters (users) the golden part is
  cluster-robust: the CR2 variance of the mean paired difference with its Bell–McCaffrey
  df (``cluster_robust``), each seed mean's residual noise from the residuals' cluster
  totals (``seed_t_interval``); the two-level bootstrap it replaces gave 6–12% false
  positives at 10–40 clusters.

Re-running one checkpoint is not retraining it. Two "seeds" of one arm with identical
outputs on every golden (or, when outputs are not given, identical outcomes on every golden)
are refused by name, and no comparison is made.

References: Satterthwaite (1946), Biometrics Bulletin 2:110-114; Welch (1947), Biometrika
34:28-35; Hsu (1938), Statistical Research Memoirs 2:1-24 (min(k) − 1 df); Searle, Casella &
McCulloch (1992), Variance Components §4 (ANOVA estimators, truncation at zero) and §5
(Satterthwaite approximations for combinations of mean squares); Bancroft (1944), Annals
of Mathematical Statistics 15:190-204 (pooling a mean square after a preliminary test, the
risk the lower F quantile and the −½ floor guard against); Davison & Hinkley (1997),
Bootstrap Methods and their Application, §3.8 (two-stage resampling); Bouthillier et al. (2021), "Accounting for
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
from .cluster_robust import cluster_robust_t
from .distributions import f_quantile, t_quantile, t_upper_tail
from .paired import cluster_floor, noninferiority_from_interval, verdict_from_interval, zero_width
from .records import Record, json_ready

SEED_RUN = re.compile(r"^(?P<arm>.+)@(?P<seed>seed\d+)$")
SEED_TERM_RULE = ("seed term: between-seed mean square beyond its residual noise at the lower "
                  "20% F quantile, at min k − 1 df; never narrower than the t interval of one "
                  "arm's seed means, k − 1 df")


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
    detection_limit: float    # half-width + t_{df,power} · se
    alpha: float
    power: float
    resamples: int
    seed: int | None
    resampling: str
    p_value: float            # t test of a zero difference (same variance and df)
    df: float
    p_value_method: str
    interval_method: str
    note: str | None          # what this many seeds can and cannot support


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
    resamples, margin = check_resamples(resamples), check_margin(margin)
    as_rng(seed)  # refuses a bad seed with the shared message; the interval is analytic
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
    baseline_mean, variant_mean = spreads["baseline"].mean, spreads["variant"].mean
    if codes is not None:  # goldens in a canonical order, so cluster sums ignore row order
        order = np.lexsort((*scores[::-1], codes))
        scores, codes = scores[:, order], codes[order]
    anova = seed_t_interval(scores[:k_b], scores[k_b:], alpha=alpha, codes=codes)
    low, high, p_value, df = anova.low, anova.high, anova.p_value, anova.df
    # The effect that "|D̂| > half-width" reads with the design's power: half-width + t_power · se.
    limit = anova.half_width + float(t_quantile(power, df)) * anova.se
    robust = "" if codes is None else \
        f" with the golden part cluster-robust (CR2, {int(codes.max()) + 1} clusters)"
    method = f"t interval from the golden × seed ANOVA{robust}, Satterthwaite {df:.1f} df ({SEED_TERM_RULE})"
    resampling = "none: analytic variance from the golden × seed ANOVA of both arms" if codes is None \
        else "none: analytic variance, clusters through the CR2 golden part"
    if anova.widened_by is not None:
        method += (f"; width set by the {anova.widened_by}'s seed-only t interval "
                   f"({anova.widened_df} df)")
    p_method = f"t test from the golden × seed ANOVA ({df:.1f} df)" if anova.p_from is None else \
        f"the {anova.p_from}'s seed-only t test (larger p than the ANOVA t test's)"
    # Fewer than 5 clusters: reported, never decided (the rule of every clustered verdict).
    too_few = None if codes is None else cluster_floor(int(codes.max()) + 1)
    no_spread = ("every golden and seed gives the same difference (to within rounding): a "
                 "zero-width interval is not evidence") if zero_width(low, high, scores) else None
    decisive = (low, high) if too_few is None and no_spread is None else (-math.inf, math.inf)
    comparison = SeedComparison(
        n=n, n_clusters=None if codes is None else int(codes.max()) + 1,
        baseline_seeds=k_b, variant_seeds=k_v, baseline_mean=baseline_mean,
        variant_mean=variant_mean, difference=variant_mean - baseline_mean, low=low, high=high,
        verdict=verdict_from_interval(*decisive),
        noninferiority=noninferiority_from_interval(*decisive, margin), margin=margin,
        detection_limit=limit, alpha=alpha, power=power, resamples=resamples,
        seed=None if isinstance(seed, np.random.Generator) else int(seed),
        resampling=resampling, p_value=p_value, df=df, p_value_method=p_method,
        interval_method=method,
        note="; ".join(filter(None, (too_few, no_spread, few_seeds_note(k_b, k_v)))) or None)
    return SeedAnalysis(baseline=spreads["baseline"], variant=spreads["variant"], refusals=(),
                        refused=False, comparison=comparison, gate_reasons=())


@dataclass(frozen=True)
class SeedInterval:
    difference: float
    low: float
    high: float
    p_value: float
    df: float
    se: float
    half_width: float     # t_{df} · se, or an arm's seed-only half-width where that is wider
    widened_by: str | None = None  # "baseline" or "variant" when its seed-only bound is wider
    widened_df: int | None = None  # that bound's df, k − 1
    p_from: str | None = None      # the arm whose seed-only t test gave the (largest) p, if any


def seed_t_interval(baseline: np.ndarray, variant: np.ndarray, *, alpha: float,
                    codes: np.ndarray | None = None) -> SeedInterval:
    """The golden × seed ANOVA t interval (module docstring); arms are (seeds × goldens).
    Never narrower than either arm's seed-only t interval; p is the largest of the t tests.

    With cluster ``codes`` (dense, 0 … K − 1) the golden part is the CR2 variance of the
    mean seed-averaged paired difference, with its Bell–McCaffrey df, and the residual
    noise in each seed mean, MSE/n without clusters, is estimated from the residuals'
    cluster totals R_sc as Σ_s Σ_c R_sc² / ((k − 1) n²) · K/(K − 1) — the same quantity
    when every golden is its own cluster — with (k − 1)(K − 1) df.
    """
    n = baseline.shape[1]
    paired = np.sort(variant.mean(axis=0) - baseline.mean(axis=0))
    difference = math.fsum(variant.mean(axis=1)) / variant.shape[0] - \
        math.fsum(baseline.mean(axis=1)) / baseline.shape[0]
    if codes is None:
        golden = float(np.var(paired, ddof=1)) / n
        golden_df = float(n - 1)
    else:
        pairs = variant.mean(axis=0) - baseline.mean(axis=0)
        robust = cluster_robust_t(np.bincount(codes, weights=pairs), np.bincount(codes),
                                  np.bincount(codes, weights=pairs**2), alpha=alpha)
        golden, golden_df = robust.se**2, robust.df
    labelled = [(arm, _seed_terms(scores, n, codes)) for arm, scores in
                (("baseline", baseline), ("variant", variant)) if scores.shape[0] >= 2]
    terms = [term for _, term in labelled]  # an arm with one run is a fixed system
    fewest = min(term.seeds for term in terms)
    se = math.sqrt(golden + sum(term.seed_variance for term in terms))
    df = _seed_df(golden, golden_df, terms, fewest)
    half_width = float(t_quantile(1 - alpha / 2, df)) * se
    p_value = _t_p_value(difference, se, df)
    widened = p_from = None
    for arm, term in labelled:  # never narrower than one arm's seed means alone (SEED_ONLY_NOISE_REMOVED)
        seed_only_se = math.sqrt(term.seed_only_variance)
        seed_only_half = float(t_quantile(1 - alpha / 2, term.seeds - 1)) * seed_only_se
        if seed_only_half > half_width:
            half_width, widened = seed_only_half, (arm, term.seeds - 1)
        seed_only_p = _t_p_value(difference, seed_only_se, term.seeds - 1)
        if seed_only_p > p_value:
            p_value, p_from = seed_only_p, arm
    return SeedInterval(difference, difference - half_width, difference + half_width, p_value,
                        df, se, half_width, *(widened or (None, None)), p_from)


def _t_p_value(difference: float, se: float, df: float) -> float:
    if se > 0:
        return float(2 * t_upper_tail(abs(difference) / se, df))
    return 1.0 if difference == 0 else 0.0


# Lower F quantile whose multiple of the residual mean square is counted as residual noise in
# the between-seed mean square; and the floor, in residual shares, on each arm's seed
# estimate inside the df. Both chosen by simulation (README "Statistics", issue 28): a
# higher level (0.3) or floor (0.8) narrows 2 and 3 seeds further but lets coverage with a
# large seed variance in one arm fall to 93.2–93.4% in a normal-theory grid of mean squares
# (R = 100 000 per cell), where these give ≥ 94.6%. With real-valued scores that case needs
# the seed-only bound below as well.
NOISE_SHARE_LEVEL = 0.20
NEGATIVE_SEED_FLOOR = 0.5
# The share c of an arm's residual noise (carried by the golden term already) taken out of
# its seed-only t interval t_{k−1} · √(MS_seed/(n k) − c · MSE/(n k)). c = 1 lets 2 v 2 cover
# 92.9 ± 0.6% at seed sds (0, 0.2) (R = 2000); c = 0 makes 2 v 2 seeds without seed variance
# 5.4× / 4.0× (pass/fail / real-valued) a golden-only interval, c = ½ 4.7× / 3.2× with ≥ 94.4%
# coverage over a normal-theory grid of one-arm seed variances (issue 28).
SEED_ONLY_NOISE_REMOVED = 0.5


@dataclass(frozen=True)
class _SeedTerms:
    """One arm's mean squares on the scale of the variance of its seed-averaged metric."""

    seeds: int
    between: float        # MS_seed / (n k): the variance of one seed mean over k
    residual: float       # MSE / (n k): the residual noise in it
    residual_df: float
    noise_share: float    # lower F quantile (k − 1, residual df) at NOISE_SHARE_LEVEL

    @property
    def seed_variance(self) -> float:
        """σ²_seed / k, the ANOVA estimate truncated at zero (a variance is not negative)."""
        return max(self.between - self.residual, 0.0)

    @property
    def seed_only_variance(self) -> float:
        """The variance of the t interval from this arm's seed means alone (k − 1 df), with a
        share SEED_ONLY_NOISE_REMOVED of the residual noise taken out of it."""
        return max(self.between - SEED_ONLY_NOISE_REMOVED * self.residual, 0.0)


def _seed_terms(scores: np.ndarray, n: int, codes: np.ndarray | None) -> _SeedTerms:
    k = scores.shape[0]
    seed_means = scores.mean(axis=1)
    residual = scores - seed_means[:, None] - scores.mean(axis=0)[None, :] + scores.mean()
    mse, residual_df = _residual_mean_square(residual, codes)
    return _SeedTerms(seeds=k, between=float(np.var(seed_means, ddof=1)) / k,
                      residual=mse / (n * k), residual_df=residual_df,
                      noise_share=float(f_quantile(NOISE_SHARE_LEVEL, k - 1, residual_df)))


def _seed_df(golden: float, golden_df: float, terms: list[_SeedTerms], fewest: int) -> float:
    """Satterthwaite df with the between-seed mean square split in two.

    MS_seed = residual part + seed part. The residual part is estimated by the MSE with its
    (k − 1)(n − 1) df; only what exceeds the lower F quantile q of the residual share,
    (MS_seed − q · MSE)⁺, is counted as a seed term of min k − 1 df (Hsu). The variance the
    df are computed from is the unbiased one, with each arm's seed estimate kept at no less
    than −½ · MSE/(n k): a small unbiased V still lowers the df (it is the signal that one
    or two seed means landed close together by chance), without the collapse to 1–2 df at
    zero seed variance that made 2 v 2 seeds 6.4× as wide as a golden-only interval.
    """
    variance = golden + sum(max(term.between, NEGATIVE_SEED_FLOOR * term.residual)
                            - term.residual for term in terms)
    seed_part = sum(max(term.between - term.noise_share * term.residual, 0.0) for term in terms)
    denominator = golden**2 / golden_df + seed_part**2 / (fewest - 1) + \
        sum(term.residual**2 / term.residual_df for term in terms)
    return max(1.0, variance**2 / denominator) if denominator > 0 else golden_df


def _residual_mean_square(residual: np.ndarray, codes: np.ndarray | None) -> tuple[float, float]:
    """n × the golden × seed residual noise in one seed's mean (the MSE without clusters),
    and its degrees of freedom."""
    k, n = residual.shape
    if codes is None:
        return float(np.sum(np.sort((residual**2).ravel()))) / ((k - 1) * (n - 1)), \
            float((k - 1) * (n - 1))
    clusters = int(codes.max()) + 1
    totals = np.stack([np.bincount(codes, weights=row, minlength=clusters) for row in residual])
    return float(np.sum(np.sort((totals**2).ravel()))) / ((k - 1) * n) * clusters / (clusters - 1), \
        float((k - 1) * (clusters - 1))


def few_seeds_note(k_b: int, k_v: int) -> str | None:
    """What this many trained seeds can support, or None when there are enough."""
    fewest = min(k for k in (k_b, k_v) if k >= 2)
    if fewest >= 5:
        return None
    if fewest == 2:
        return ("2 seeds per arm support only large effects: the between-seed variance has 1 "
                "degree of freedom per arm, so when the seeds differ by more than chance the "
                "interval uses t with about 1 df (t = 12.7 at 95%); its width is then several "
                "times that of an interval with the variance known, and power at 3 standard "
                "errors is about 25%. Use at least 3 seeds, 5 for about 70% power.")
    return (f"{fewest} seeds per arm: when the seeds differ by more than chance, the interval "
            "uses t with few degrees of freedom for the between-seed variance, so it is wide; "
            "5 seeds or more give useful power.")


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

"""Issue 12: calibration of every interval where the percentile bootstrap failed.

Targets (nominal 5% / 95%): false-positive rate (FPR) ≤ 6%, coverage ≥ 93.5%, and
non-inferiority "held" at the boundary (true difference = −margin) ≤ 3.5%. Each test
states its Monte Carlo standard error, √(p(1 − p)/R): at R = 2000 about 0.49 points at 5%
or 95% and 0.35 points at 2.5%; at R = 1000, 0.69 and 0.49. Pass/fail tables with n ≤ 300
are enumerated exactly (no Monte Carlo error). The figures for the methods these replaced
(quoted in docstrings as "before") are from the audit in issue 12 and
/work/scratch/issue12/REPORT.md.

Everything is seeded; the whole module runs in about two minutes on one core.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import langchef_core as lc
from langchef_core.stats.mcnemar import mcnemar_exact
from langchef_core.stats.power import limit_at_rate
from langchef_core.stats.score_interval import tango_interval

pytestmark = pytest.mark.slow
ALPHA = 0.05


def mc_se(rate: float, reps: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / reps)


def paired(both_pass, broke, fixed, both_fail):
    baseline = np.r_[np.ones(both_pass + broke), np.zeros(fixed + both_fail)].astype(bool)
    variant = np.r_[np.ones(both_pass), np.zeros(broke), np.ones(fixed),
                    np.zeros(both_fail)].astype(bool)
    return baseline, variant


# ── pass/fail, exact enumeration ──────────────────────────────────────────────────────

def _binary_verdict(broke, fixed, n):
    result = lc.compare_binary(*paired(n - broke - fixed, broke, fixed, 0))
    return result.verdict


def test_conditional_size_given_the_flips_is_at_most_alpha_at_every_d_for_n_up_to_30():
    """Exact: for every n ≤ 30 and every number of flips d, P(direction | d, no effect) with
    fixed ~ Binomial(d, ½), from compare_binary itself. Before: 50% (d = 2, n = 2: 2 of 2
    fixed gave a zero-width interval), 12.5% (d = 4), 7.0% (d = 8). Target ≤ α + 1 point."""
    worst = {}
    for d in range(1, 31):
        for n in sorted({d, min(30, d + 1), 30}):
            size = sum(stats.binom.pmf(fixed, d, 0.5) for fixed in range(d + 1)
                       if _binary_verdict(d - fixed, fixed, n) != "inconclusive")
            worst[d] = max(worst.get(d, 0.0), size)
    print(f"exact conditional size, worst over d ≤ 30: {max(worst.values()):.4f}")
    assert max(worst.values()) <= ALPHA + 0.01, worst
    # The exact gate makes it ≤ α itself: 4.90% at d = 17 is the largest.
    assert max(worst.values()) <= ALPHA, worst


def _trinomial(n, broke, fixed, p_broke, p_fixed):
    same = n - broke - fixed
    log = (math.lgamma(n + 1) - math.lgamma(broke + 1) - math.lgamma(fixed + 1) -
           math.lgamma(same + 1) + broke * math.log(p_broke) + fixed * math.log(p_fixed) +
           (same * math.log(1 - p_broke - p_fixed) if same else 0.0))
    return math.exp(log)


def _tables(n, p_broke, p_fixed, tail=1e-10):
    """(broke, fixed, probability) for every table with probability above ``tail``."""
    out = []
    for broke in range(n + 1):
        for fixed in range(n + 1 - broke):
            p = _trinomial(n, broke, fixed, p_broke, p_fixed)
            if p > tail:
                out.append((broke, fixed, p))
    return out


@pytest.mark.parametrize("n, rate, delta", [(30, 0.1, 0.05), (30, 0.2, 0.0), (30, 0.4, 0.1),
                                            (90, 0.1, 0.05), (90, 0.2, -0.05), (90, 0.1, 0.0)])
def test_tango_coverage_exact(n, rate, delta):
    """Exact coverage of the Tango interval (trinomial enumeration). Before (percentile):
    n = 30, π_d = .1, Δ = .05: 86.6%; n = 90 same: 92.8%; worst over a grid at n = 30 66.4%."""
    intervals = {}
    coverage = 0.0
    for broke, fixed, p in _tables(n, (rate - delta) / 2, (rate + delta) / 2):
        low, high = intervals.setdefault((broke, fixed), tango_interval(broke, fixed, n))
        coverage += p * (low <= delta <= high)
    print(f"Tango exact coverage n={n} π_d={rate} Δ={delta}: {coverage:.4f}")
    assert coverage >= 0.935, f"coverage {coverage:.4f} (exact)"


@pytest.mark.parametrize("n, margin", [(30, 0.05), (90, 0.05), (200, 0.03)])
def test_noninferiority_held_at_the_boundary_exact(n, margin):
    """Exact P(held | Δ = −margin), worst over discordant rates π_d ∈ {.1, .2, .3}. Before
    (percentile): 9.8% (n = 30), 5.7% (n = 90), 5.9% (n = 200, margin 3). Target ≤ 3.5%."""
    held = {}
    worst = 0.0
    for rate in (0.1, 0.2, 0.3):
        rate = max(rate, margin + 0.01)
        p_fixed, p_broke = (rate - margin) / 2, (rate + margin) / 2
        total = 0.0
        for broke, fixed, p in _tables(n, p_broke, p_fixed, tail=1e-9):
            if (broke, fixed) not in held:
                held[(broke, fixed)] = tango_interval(broke, fixed, n)[0] > -margin
            total += p * held[(broke, fixed)]
        worst = max(worst, total)
    print(f"NI held at boundary exact n={n} margin={margin}: {worst:.4f}")
    assert worst <= 0.035, f"held at the boundary {worst:.4f} (exact)"


@pytest.mark.parametrize("rate", [0.1, 0.2, 0.3])
def test_power_at_one_point_two_times_the_limit(rate):
    """Exact P(improvement) at n = 300 and Δ = 1.2 × the planned limit: Tango + exact gate.
    Research: 98.6 / 96.4 / 94.7%; before (percentile) 99.0 / 96.9 / 95.6%. Target ≥ 80%."""
    n = 300
    effect = 1.2 * limit_at_rate(n, rate)
    detected = 0.0
    for broke, fixed, p in _tables(n, (rate - effect) / 2, (rate + effect) / 2, tail=1e-9):
        if fixed > broke and mcnemar_exact(broke, fixed) < ALPHA and \
                tango_interval(broke, fixed, n)[0] > 0:
            detected += p
    print(f"power n=300 π_d={rate} at 1.2×limit: {detected:.4f}")
    assert detected >= 0.80, f"detected {detected:.4f} (exact)"
    spot = lc.compare_binary(*paired(n - 10 - 30, 10, 30, 0))  # one table through the API
    assert spot.verdict == ("improvement" if mcnemar_exact(10, 30) < ALPHA else "inconclusive")


# ── clustered pairs ───────────────────────────────────────────────────────────────────

def _cluster_sizes(rng, clusters):
    return np.maximum(1, np.round(rng.lognormal(math.log(8), 0.9, clusters))).astype(int)


def _clustered_binary(rng, clusters, share_fixed, icc=0.3, rate=0.2):
    """Clusters with ICC 0.3 in which way a pair flips, lognormal sizes (median 8)."""
    sizes = _cluster_sizes(rng, clusters)
    c = 1 / icc - 1
    q = rng.beta(share_fixed * c, (1 - share_fixed) * c, clusters)
    flips = rng.binomial(sizes, rng.beta(rate * 10, (1 - rate) * 10, clusters))
    fixed = rng.binomial(flips, q)
    baseline, variant, labels = [], [], []
    for k, (size, f, b) in enumerate(zip(sizes, fixed, flips - fixed)):
        same = size - f - b
        baseline += [0] * f + [1] * b + [1] * same
        variant += [1] * f + [0] * b + [1] * same
        labels += [k] * size
    return np.array(baseline, bool), np.array(variant, bool), np.array(labels)


@pytest.mark.parametrize("clusters", [10, 20, 40])
def test_clustered_binary_calibration(clusters):
    """ICC 0.3, lognormal sizes. R = 1500 per cell (se ≈ 0.56 at 5%/95%, 0.40 at 2.5%).
    Before (percentile cluster bootstrap): FPR 10.4 / 8.3 / 7.1% at K = 10 / 20 / 40,
    NI held at the boundary 9.2% at K = 10; coverage with an effect 86.9 / 90.5 / 92.6%."""
    reps = 1500
    rng = np.random.default_rng(100 + clusters)
    false, cover, held = 0, 0, 0
    margin = 0.05
    for _ in range(reps):
        b, v, g = _clustered_binary(rng, clusters, 0.5)
        null = lc.compare_binary(b, v, clusters=g)
        false += null.verdict != "inconclusive"
        b, v, g = _clustered_binary(rng, clusters, 0.65)      # true Δ = 0.2 · 0.3 = 0.06
        result = lc.compare_binary(b, v, clusters=g)
        cover += result.low <= 0.06 <= result.high
        b, v, g = _clustered_binary(rng, clusters, 0.5 - margin / 0.4)   # Δ = −margin
        held += lc.compare_binary(b, v, clusters=g, margin=margin).noninferiority == "held"
    fpr, coverage, boundary = false / reps, cover / reps, held / reps
    print(f"clustered binary K={clusters}: FPR {fpr:.4f}, coverage {coverage:.4f}, NI held "
          f"{boundary:.4f} (R={reps})")
    assert fpr <= 0.06, f"FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f}"
    assert coverage >= 0.935, f"coverage {coverage:.4f} ± {mc_se(coverage, reps):.4f}"
    assert boundary <= 0.035, f"NI held {boundary:.4f} ± {mc_se(boundary, reps):.4f}"


def test_clustered_null_uses_the_clusters():
    rng = np.random.default_rng(7)
    b, v, g = _clustered_binary(rng, 20, 0.5)
    result = lc.compare_binary(b, v, clusters=g)
    assert result.interval_method.startswith("cluster-robust t (CR2")


@pytest.mark.parametrize("clusters", [10, 20, 40])
def test_clustered_continuous_calibration(clusters):
    """Continuous differences, ICC 0.3, lognormal sizes; R = 1500 (se ≈ 0.56 / 0.40).
    Before: FPR 11.9 / 8.3% at K = 10 / 20 (16.4% at K = 5); NI held 4.9% at K = 10.
    The interval is location-equivariant, so coverage = 1 − FPR at any true difference."""
    reps = 1500
    rng = np.random.default_rng(200 + clusters)
    false, held = 0, 0
    margin = 0.2
    for _ in range(reps):
        sizes = _cluster_sizes(rng, clusters)
        codes = np.repeat(np.arange(clusters), sizes)
        d = rng.normal(0, math.sqrt(0.3), clusters)[codes] + \
            rng.normal(0, math.sqrt(0.7), codes.size)
        zero = np.zeros(d.size)
        false += lc.compare_continuous(zero, d, clusters=codes).verdict != "inconclusive"
        held += lc.compare_continuous(zero, d - margin, clusters=codes,
                                      margin=margin).noninferiority == "held"
    fpr, boundary = false / reps, held / reps
    print(f"clustered continuous K={clusters}: FPR {fpr:.4f}, NI held {boundary:.4f} (R={reps})")
    assert fpr <= 0.06, f"FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f}"
    assert boundary <= 0.035, f"NI held {boundary:.4f} ± {mc_se(boundary, reps):.4f}"


def test_four_clusters_are_refused():
    rng = np.random.default_rng(3)
    b, v, g = _clustered_binary(rng, 4, 0.9, rate=0.5)
    result = lc.compare_binary(b, v, clusters=g, margin=0.05)
    assert result.verdict == "inconclusive" and "at least 5" in result.evidence
    assert result.noninferiority == "unresolved"


# ── skewed and heavy-tailed continuous differences ───────────────────────────────────

def _skewed(rng, name, n):
    if name == "lognormal σ=1":
        return rng.lognormal(0, 1, n) - math.exp(0.5)
    if name == "lognormal σ=1.5":
        return rng.lognormal(0, 1.5, n) - math.exp(1.125)
    if name == "exponential":
        return rng.exponential(1, n) - 1
    if name == "contaminated normal":
        return np.where(rng.random(n) < 0.1, rng.normal(0, 10, n), rng.normal(0, 1, n))
    if name == "one-sided outliers":
        return np.where(rng.random(n) < 0.05, 8.0, 0.0) + rng.normal(0, 1, n) - 0.4
    if name == "recall-like":
        values, shares = [0.0, 1.0, 0.5, 0.25, 0.75], [.35, .45, .1, .05, .05]
        base = rng.choice(values, p=shares, size=n)
        other = rng.choice(values, p=shares, size=n)
        return np.where(rng.random(n) < 0.7, base, other) - base
    raise ValueError(name)


@pytest.mark.parametrize("name, n, limit, before", [
    ("lognormal σ=1", 40, 0.06, "12.3%"),
    ("exponential", 40, 0.06, "7.3%"),
    ("contaminated normal", 40, 0.06, "8.9%"),
    ("recall-like", 30, 0.06, "6.8-8.1%"),
    # Widened on the skewed side when Cochran's rule fails (9.8% with the plain union).
    ("lognormal σ=1.5", 40, 0.06, "17.4%"),
    # Not fixed (documented in the README; the readout warns by Cochran's rule): a run that
    # drew none of the 5% outliers (0.95^40 = 13% of runs) looks like a shift of −0.4 sd,
    # and no interval built from its 40 differences can tell. What holds is asserted.
    ("one-sided outliers", 40, 0.12, "13.1%"),
])
def test_continuous_false_positive_rate(name, n, limit, before):
    """Mean-zero differences; R = 1200 with 2000 bootstrap-t resamples per run (se ≈ 0.63
    at 5%). The interval is location-equivariant: coverage = 1 − FPR."""
    reps = 1200
    rng = np.random.default_rng(300 + n + len(name))
    false, warned = 0, 0
    for r in range(reps):
        d = _skewed(rng, name, n)
        result = lc.compare_continuous(np.zeros(n), d, resamples=2000, seed=r)
        false += result.verdict != "inconclusive"
        warned += bool(result.warnings)
    fpr = false / reps
    print(f"continuous {name} n={n}: FPR {fpr:.4f}, warned {warned / reps:.3f} (R={reps})")
    assert fpr <= limit, f"{name}: FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f} (before {before})"
    if limit > 0.06:
        assert warned / reps > 0.5  # the Cochran-rule warning fires on most such runs


def test_noninferiority_with_rare_large_drops():
    """10% of pairs drop by 0.6, the rest ±noise, true mean = −margin; R = 1000 (se ≈ 0.49
    at 2.5%). Before (percentile): 10.3% held. Target ≤ 3.5%."""
    reps, n, margin = 1000, 40, 0.05
    rng = np.random.default_rng(400)
    held = 0
    for r in range(reps):
        drops = np.where(rng.random(n) < 0.1, -0.6, 0.0) + rng.normal(0, 0.05, n)
        d = drops + 0.06 - margin  # E[drops] = −0.06, so E[d] = −margin
        held += lc.compare_continuous(np.zeros(n), d, margin=margin, resamples=2000,
                                      seed=r).noninferiority == "held"
    rate = held / reps
    print(f"continuous NI rare drops: held {rate:.4f} (R={reps})")
    assert rate <= 0.035, f"NI held {rate:.4f} ± {mc_se(rate, reps):.4f}"


def test_continuous_power_at_one_point_two_times_the_limit():
    """n = 300 normal differences, effect = 1.2 × the reported limit of a null run with the
    same sd; R = 500 (se ≈ 1.8 at 80%)."""
    reps, n = 500, 300
    rng = np.random.default_rng(500)
    limit = lc.compare_continuous(np.zeros(n), rng.normal(0, 0.3, n)).detection_limit
    hits = sum(lc.compare_continuous(np.zeros(n), rng.normal(1.2 * limit, 0.3, n),
                                     resamples=2000, seed=r).verdict == "improvement"
               for r in range(reps))
    print(f"continuous power n=300 at 1.2×limit: {hits / reps:.4f} (R={reps})")
    assert hits / reps >= 0.80, f"power {hits / reps:.3f} ± {mc_se(hits / reps, reps):.3f}"


# ── seeds ─────────────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("seeds, before", [(2, "15.4%"), (3, "11.2%"), (5, "6.0%")])
def test_few_seeds_false_positive_rate(seeds, before):
    """n = 200 goldens, seed sd 0.1, golden × arm sd 0.3, residual 0.5; R = 1000 (se ≈ 0.69).
    Research (same method without the variance floor): 4.7 / 3.6 / 3.6%. With the issue 28
    df rule (seed term beyond the residual noise's lower F quantile): 3.9 / 3.2 / 4.4%."""
    reps, n = 1000, 200
    rng = np.random.default_rng(600 + seeds)
    false = 0
    for _ in range(reps):
        shared = rng.normal(0, 1, n)
        arms = []
        for _arm in range(2):
            own = shared + rng.normal(0, 0.3, n)
            arms.append({f"seed{k}": own + rng.normal(0, 0.1) + rng.normal(0, 0.5, n)
                         for k in range(1, seeds + 1)})
        result = lc.compare_seeds(*arms).comparison
        false += result.verdict != "inconclusive"
    fpr = false / reps
    print(f"seeds {seeds}v{seeds}: FPR {fpr:.4f} (R={reps})")
    assert fpr <= 0.06, f"FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f} (before {before})"


@pytest.mark.parametrize("clusters", [10, 20, 40])
@pytest.mark.parametrize("seeds", [2, 3, 5])
def test_clustered_seeds_false_positive_rate(clusters, seeds):
    """Goldens in K users (lognormal sizes, median 8) with user effects in the shared score,
    in each arm's own score and in each seed's residual; seed sd 0.1. R = 1500 (se ≈ 0.56
    at 5%). Before (two-level percentile bootstrap, R = 300): 6.3–12% at K = 10–40. With
    the issue 28 df rule: 0.3–3.9%.
    Real-valued scores, so the interval is location-equivariant: coverage = 1 − FPR."""
    reps = 1500
    rng = np.random.default_rng(900 + 10 * clusters + seeds)
    false = 0
    for _ in range(reps):
        sizes = _cluster_sizes(rng, clusters)
        codes = np.repeat(np.arange(clusters), sizes)
        n = codes.size
        shared = rng.normal(0, 1, n) + rng.normal(0, 0.7, clusters)[codes]
        arms = []
        for _arm in range(2):
            own = shared + rng.normal(0, 0.3, n) + rng.normal(0, 0.3, clusters)[codes]
            arms.append({f"seed{k}": own + rng.normal(0, 0.1) + rng.normal(0, 0.5, n)
                         + rng.normal(0, 0.2, clusters)[codes] for k in range(1, seeds + 1)})
        result = lc.compare_seeds(*arms, clusters=codes).comparison
        false += result.verdict != "inconclusive"
    fpr = false / reps
    print(f"clustered seeds K={clusters} {seeds}v{seeds}: FPR {fpr:.4f} (R={reps}); "
          f"{result.interval_method}")
    assert "CR2" in result.interval_method
    assert fpr <= 0.06, f"FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f}"


# ── thin, heavily weighted slice ─────────────────────────────────────────────────────

@pytest.mark.parametrize("label, deltas", [("null", (0.0, 0.0)), ("thin", (0.0, 0.1)),
                                           ("both", (0.05, 0.05))])
def test_thin_weighted_slice(label, deltas):
    """Slices of 180 and 20 goldens, target weights 50/50, 10% flips (15% with an effect);
    R = 1000 (se ≈ 0.69). Before (stratified percentile): FPR 9.3%, coverage 90.5% (effect
    in the thin slice), 89.9% (effect in both)."""
    reps = 1000
    rng = np.random.default_rng(700 + len(label))
    rate = 0.1 if label == "null" else 0.15
    truth = 0.5 * deltas[0] + 0.5 * deltas[1]
    labels = np.array(["big"] * 180 + ["thin"] * 20)
    covered, warned = 0, 0
    for _ in range(reps):
        baseline, variant = [], []
        for size, delta in zip((180, 20), deltas):
            broke, fixed, same = rng.multinomial(size, [(rate - delta) / 2, (rate + delta) / 2,
                                                        1 - rate])
            b, v = paired(same, broke, fixed, 0)
            baseline.append(b)
            variant.append(v)
        result = lc.compare_slices(np.concatenate(baseline), np.concatenate(variant), labels,
                                   column="s", target_weights={"big": 0.5, "thin": 0.5})
        covered += result.target.low <= truth <= result.target.high
        warned += any("Kish" in w or "flipped goldens" in w for w in result.warnings)
    coverage = covered / reps
    print(f"thin slice {label}: coverage {coverage:.4f}, warned {warned / reps:.3f} (R={reps})")
    assert coverage >= 0.935, f"{label}: coverage {coverage:.4f} ± {mc_se(coverage, reps):.4f}"
    assert warned / reps > 0.9  # n_eff = 72 of 200 goldens: always named


def _two_slices(rng, g, clusters, layout):
    """Slice labels with at least 2 clusters in each slice (a spanning draw rarely misses)."""
    while True:
        if layout == "spanning":
            labels = np.where(rng.random(g.size) < 0.15, "thin", "big")
        else:
            labels = np.where(np.isin(g, rng.permutation(clusters)[:int(0.3 * clusters)]),
                              "thin", "big")
        if min(np.unique(g[labels == name]).size for name in ("thin", "big")) >= 2:
            return labels


@pytest.mark.parametrize("clusters", [10, 20, 40])
@pytest.mark.parametrize("layout", ["spanning", "nested"])
def test_clustered_weighted_slices(clusters, layout):
    """ICC 0.3, lognormal sizes, two slices weighted 50/50: 15% of each user's goldens in the
    thin slice (spanning) or 30% of the users (nested). R = 1000 (se ≈ 0.69 at 5%/95%).
    Before (stratified percentile cluster bootstrap, R = 600): FPR 12.5 / 7.5 / 9.0%
    spanning and 16.3 / 11.3 / 8.8% nested at K = 10 / 20 / 40. With the effective-n
    stratified Wald join (pass/fail, issue 28): FPR 0.3 / 1.0 / 2.0% spanning and
    0.3 / 1.5 / 3.6% nested, coverage 98.2–99.4%."""
    reps = 1000
    rng = np.random.default_rng(800 + clusters + len(layout))
    false, cover = 0, 0
    for _ in range(reps):
        for share, tally in ((0.5, "null"), (0.65, "effect")):   # effect: Δ = 0.2 · 0.3 = 0.06
            b, v, g = _clustered_binary(rng, clusters, share)
            labels = _two_slices(rng, g, clusters, layout)
            target = lc.compare_slices(b, v, labels, column="s", clusters=g,
                                       target_weights={"big": 0.5, "thin": 0.5}).target
            if tally == "null":
                false += target.verdict != "inconclusive"
            else:
                cover += target.low <= 0.06 <= target.high
    fpr, coverage = false / reps, cover / reps
    print(f"clustered weighted slices K={clusters} {layout}: FPR {fpr:.4f}, coverage "
          f"{coverage:.4f} (R={reps}); {target.interval_method}")
    assert "CR2" in target.interval_method
    assert fpr <= 0.06, f"FPR {fpr:.4f} ± {mc_se(fpr, reps):.4f}"
    assert coverage >= 0.935, f"coverage {coverage:.4f} ± {mc_se(coverage, reps):.4f}"


# ── κ ─────────────────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("anchors, kappa", [(20, 0.4), (20, 0.7), (40, 0.7), (40, 0.85)])
def test_kappa_interval_coverage(anchors, kappa):
    """Fail rate 0.3 for both raters; R = 600 tables with κ defined (se ≈ 0.9).
    Before (Wald): 89.2% (20, .4), 87.3% (20, .7), 91.0% (40, .7), 91.3% (40, .85)."""
    reps = 600
    rng = np.random.default_rng(800 + anchors + int(kappa * 100))
    p = 0.3
    tp = p * p + kappa * p * (1 - p)
    cells = [tp, p - tp, p - tp, 1 - 2 * p + tp]
    covered = done = 0
    while done < reps:
        counts = rng.multinomial(anchors, cells)
        human = np.repeat([False, True, False, True], counts)   # tp, fp, fn, tn
        judge = np.repeat([False, False, True, True], counts)
        result = lc.agreement(list(range(anchors)), human, judge)
        if result.kappa is None:
            continue
        done += 1
        covered += result.kappa_low <= kappa <= result.kappa_high
    coverage = covered / reps
    print(f"kappa n={anchors} κ={kappa}: coverage {coverage:.4f} (R={reps})")
    assert coverage >= 0.935, f"coverage {coverage:.4f} ± {mc_se(coverage, reps):.4f}"

"""Always-valid sequential readouts (langchef_core.stats.sequential).

Reference values come from independent computations written out here (numerical
integration of the Beta mixture; a literal scalar transcription of the empirical-Bernstein
sequence's equations). The simulations look after *every* golden and stop at the first
decisive look — the monitoring a fixed-n interval cannot survive — and give their Monte
Carlo standard errors in the assertion messages.
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from langchef_core.stats import sequential as seq
from langchef_core.stats.power import detection_limit

ALPHA = 0.05


# ----------------------------------------------------------------------------------------
# Reference values
# ----------------------------------------------------------------------------------------

def _mixture_ratio_by_quadrature(fixed: int, broke: int) -> float:
    """∫ p^F (1 − p)^B Beta(½, ½)(p) dp / (½)^(F+B), by numerical integration."""
    density = stats.beta(0.5, 0.5).pdf
    value, _ = integrate.quad(lambda p: p ** fixed * (1 - p) ** broke * density(p), 0, 1,
                              limit=200, points=[0.5])
    return value * 2.0 ** (fixed + broke)


@pytest.mark.parametrize("fixed, broke", [(18, 0), (6, 0), (7, 1), (30, 20), (3, 3)])
def test_the_mixture_martingale_matches_numerical_integration(fixed, broke):
    flags = [True] * fixed + [False] * broke
    p = seq.msprt_p_values(flags)
    # The running maximum makes p the smallest 1/M_s so far; at the end of a monotone run of
    # fixes followed by breaks that is min over s — check against the quadrature at every s.
    ratios = [_mixture_ratio_by_quadrature(sum(flags[:s]), s - sum(flags[:s]))
              for s in range(1, len(flags) + 1)]
    assert p[-1] == pytest.approx(min(1.0, 1.0 / max(ratios)), rel=1e-7)


def test_eighteen_breaks_and_no_fix_are_decisive_and_six_are_not():
    # 18 broke / 0 fixed (the spec's stale-index table): M = B(½, 18½)/B(½, ½)·2^18.
    expected = math.exp(-(math.lgamma(0.5) + math.lgamma(18.5) - math.lgamma(19) + 18 * math.log(2)
                          - (2 * math.lgamma(0.5) - math.lgamma(1.0))))
    assert seq.msprt_p_values([False] * 18)[-1] == pytest.approx(expected, rel=1e-12)
    assert expected < 1e-4
    # Six one-way flips: exact McNemar p = 0.03125 decides at fixed n; the always-valid p does not.
    assert seq.msprt_p_values([True] * 6)[-1] > ALPHA


def _eb_sequence_by_the_equations(x, alpha):
    """Waudby-Smith & Ramdas (2024), Theorem 2 (PrPl-EB), transcribed one step at a time."""
    lows, highs, low, high = [], [], 0.0, 1.0
    sum_x = sum_sq = sum_lx = sum_l = sum_vpsi = 0.0
    mu_prev, var_prev = 0.5, 0.25
    for t, xt in enumerate(x, start=1):
        lam = min(math.sqrt(2 * math.log(2 / alpha) / (var_prev * t * math.log(1 + t))), 0.5)
        v = 4 * (xt - mu_prev) ** 2
        psi = (-math.log(1 - lam) - lam) / 4
        sum_lx, sum_l, sum_vpsi = sum_lx + lam * xt, sum_l + lam, sum_vpsi + v * psi
        centre, radius = sum_lx / sum_l, (math.log(2 / alpha) + sum_vpsi) / sum_l
        low, high = max(low, centre - radius), min(high, centre + radius)
        lows.append(low)
        highs.append(max(high, low))
        sum_x += xt
        mu = (0.5 + sum_x) / (t + 1)
        sum_sq += (xt - mu) ** 2
        mu_prev, var_prev = mu, (0.25 + sum_sq) / (t + 1)
    return np.array(lows), np.array(highs)


def test_the_confidence_sequence_is_the_papers_equations():
    rng = np.random.default_rng(3)
    d = rng.choice([-1, 0, 0, 0, 1], size=600)
    sequence = seq.confidence_sequence(d, alpha=ALPHA)
    low, high = _eb_sequence_by_the_equations((d + 1) / 2, ALPHA)
    np.testing.assert_allclose(sequence.low, 2 * low - 1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sequence.high, 2 * high - 1, rtol=0, atol=1e-12)


def test_the_sequence_only_narrows_and_is_wider_than_the_fixed_n_interval():
    rng = np.random.default_rng(4)
    d = rng.choice([-1, 0, 0, 0, 1], size=2000)
    sequence = seq.confidence_sequence(d)
    assert np.all(np.diff(sequence.low) >= 0) and np.all(np.diff(sequence.high) <= 0)
    half_fixed = 1.96 * d.std(ddof=1) / math.sqrt(d.size)
    assert (sequence.high[-1] - sequence.low[-1]) / 2 > 1.5 * half_fixed


def test_bad_input_is_refused_with_a_sentence():
    with pytest.raises(ValueError, match=r"\[-1.0, 1.0\]"):
        seq.confidence_sequence([0.5, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        seq.confidence_sequence([0.1, float("nan")])
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        seq.compare_sequential([0.2, 1.5], [0.1, 0.3], binary=False)
    with pytest.raises(ValueError, match="at least 2"):
        seq.compare_sequential([1], [0], binary=True)


# ----------------------------------------------------------------------------------------
# Simulations: look after every golden, stop at the first decisive look
# ----------------------------------------------------------------------------------------

REPLICATIONS = 1000
N = 400


def _se(rate: float, replications: int = REPLICATIONS) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-4) / replications)


def _ever_decisive_binary(before, after) -> bool:
    d = after.astype(float) - before
    sequence = seq.confidence_sequence(d)
    flips = d[d != 0]
    p = np.ones(d.size)
    if flips.size:
        p_flips = seq.msprt_p_values(flips > 0)
        # The p-value after each golden: the one after the last flip so far.
        seen = np.cumsum(d != 0)
        p = np.where(seen > 0, p_flips[np.maximum(seen - 1, 0)], 1.0)
    decisive = ((sequence.low > 0) | (sequence.high < 0)) & (p < ALPHA)
    return bool(decisive.any())


def _naive_ever_decisive(before, after) -> bool:
    """The fixed-n readout (exact McNemar below alpha with a Wald interval off zero) taken
    after every golden — what a team peeking at a running experiment would do."""
    d = after.astype(float) - before
    t = np.arange(1, d.size + 1)
    fixed, broke = np.cumsum(d > 0), np.cumsum(d < 0)
    mean = np.cumsum(d) / t
    variance = (fixed + broke) / t - mean ** 2
    off_zero = np.abs(mean) > 1.96 * np.sqrt(np.maximum(variance, 0) / t)
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(fixed, broke), fixed + broke, 0.5))
    return bool((off_zero & (p < ALPHA) & (fixed + broke > 0)).any())


def _paired_binary(rng, n, pass_rate=0.8, broke=0.1, fixed=0.1):
    before = rng.random(n) < pass_rate
    u = rng.random(n)
    after = np.where(before, u >= broke / pass_rate, u < fixed / (1 - pass_rate))
    return before, after


@pytest.mark.slow
def test_every_look_monitoring_of_pass_fail_keeps_the_false_positive_rate_and_naive_does_not():
    rng = np.random.default_rng(11)
    pairs = [_paired_binary(rng, N) for _ in range(REPLICATIONS)]
    sequential = np.mean([_ever_decisive_binary(b, a) for b, a in pairs])
    naive = np.mean([_naive_ever_decisive(b, a) for b, a in pairs])
    assert sequential <= ALPHA, f"sequential FPR {sequential:.3f} (MC se {_se(sequential):.3f})"
    assert naive >= 3 * ALPHA, f"naive FPR {naive:.3f} (MC se {_se(naive):.3f})"


def _ever_decisive(d) -> bool:
    sequence = seq.confidence_sequence(d)
    return bool(((sequence.low > 0) | (sequence.high < 0)).any())


@pytest.mark.slow
def test_every_look_monitoring_of_bounded_scores_keeps_the_false_positive_rate():
    rng = np.random.default_rng(12)
    hits = []
    for _ in range(REPLICATIONS):
        # Recall-like scores piled at 0 and 1, the two arms exchangeable (true difference 0).
        scores = np.where(rng.random((2, N)) < 0.6, rng.integers(0, 2, (2, N)), rng.random((2, N)))
        hits.append(_ever_decisive(scores[1] - scores[0]))
    rate = float(np.mean(hits))
    assert rate <= ALPHA, f"FPR {rate:.3f} (MC se {_se(rate):.3f})"


@pytest.mark.slow
def test_every_look_monitoring_over_clusters_keeps_the_false_positive_rate():
    rng = np.random.default_rng(13)
    hits = []
    for _ in range(REPLICATIONS):
        sizes = rng.geometric(0.15, size=120)           # unequal users, mean ≈ 6.7 goldens
        users = np.repeat(np.arange(sizes.size), sizes)
        rng.shuffle(users)                               # traffic interleaves the users
        skill = rng.normal(0, 1.0, sizes.size)[users]    # ICC ≈ 0.3 on the latent scale
        before = rng.normal(skill, 1.5) > -0.8
        after = rng.normal(skill, 1.5) > -0.8
        d = seq.cluster_sequence(after.astype(float) - before, users)
        hits.append(_ever_decisive(d))
    rate = float(np.mean(hits))
    assert rate <= ALPHA, f"FPR {rate:.3f} (MC se {_se(rate):.3f})"


@pytest.mark.slow
def test_the_sequence_covers_the_true_difference_at_every_n_at_once():
    rng = np.random.default_rng(14)
    true = 0.08 - 0.03   # P(fixed) − P(broke) as _paired_binary draws them
    covered = []
    for _ in range(REPLICATIONS):
        before, after = _paired_binary(rng, N, broke=0.03, fixed=0.08)
        sequence = seq.confidence_sequence(after.astype(float) - before)
        covered.append(bool(np.all((sequence.low <= true) & (true <= sequence.high))))
    rate = float(np.mean(covered))
    assert rate >= 1 - ALPHA, f"uniform coverage {rate:.3f} (MC se {_se(rate):.3f})"


@pytest.mark.slow
def test_a_planted_effect_twice_the_fixed_n_limit_stops_well_before_the_budget():
    budget, rng = 2000, np.random.default_rng(15)
    discordant = 0.2
    effect = 2 * detection_limit(budget, int(discordant * budget))
    broke = (discordant - effect) / 2
    stopped = []
    for _ in range(300):
        before = rng.random(budget) < 0.5
        u = rng.random(budget)
        # Flips are equally likely in each arm's passes and failures; fixes outnumber breaks.
        after = np.where(before, u >= 2 * broke, u < 2 * (broke + effect))
        result = seq.compare_sequential(before, after, binary=True, max_n=budget)
        stopped.append(result.first_decisive or budget + 1)
    stopped = np.array(stopped)
    detected = float(np.mean(stopped <= budget))
    fraction = float(np.mean(np.minimum(stopped, budget) / budget))
    assert detected >= 0.9, f"detected {detected:.3f} (MC se {_se(detected, 300):.3f})"
    assert fraction <= 0.6, f"mean fraction of the budget used {fraction:.3f}"


def test_a_readout_says_what_the_remaining_budget_can_resolve():
    rng = np.random.default_rng(5)
    before, after = _paired_binary(rng, 300)
    early = seq.compare_sequential(before, after, binary=True, max_n=5000)
    late = seq.compare_sequential(before, after, binary=True, max_n=300)
    assert 0 < early.detection_limit < late.detection_limit
    assert early.path_n[-1] == 300 and len(early.path_n) == len(early.path_low)

"""How narrow can a seed interval be without seed variance and still cover at every seed sd?

Issue 28 asked for seed intervals close to the golden-only width when the seeds do not
differ. This computes the floor any interval of the kind ``compare_seeds`` uses can reach,
under normal theory: one arm's k seeds, whose residual noise is a share ``e`` of the
golden-only variance (e = ½ for pass/fail seeds of two arms that differ only by chance),
carry a seed variance λ · e (λ unknown, ≥ 0); the data say about λ only through
R = MS_seed / MSE ~ (1 + λ) χ²_{k−1} / (k − 1) (MSE known: its df are large), and the
difference is N(0, 1 + λ e) in golden-only units, independent of R. A symmetric interval
±h(R) then covers with probability E[2Φ(h(R) / √(1 + λ e)) − 1]; minimising the mean width
at λ = 0 subject to that coverage at every λ on a grid is a convex program (the coverage
is concave in h). With two seeded arms, averaging h over the other arm's mean square
satisfies the same constraints with the same mean width (Jensen), so the figure is a
floor for two arms as well. R is cut into 70 bins (h constant in each), λ into 41 values
up to 2000.

    .venv/bin/python benchmarks/seed_width_bound.py

Printed while building, pass/fail (e = ½): 95% — 3.67× / 1.47× / 1.12× at 2 / 3 / 5 seeds
per arm; 93.5% — 2.83× / 1.29× / 1.03×. The real-valued scores of
tests/core/test_seed_interval_simulation.py (e = 0.29 / 0.24 / 0.18): 95% — 2.81× / 1.14× /
1.01×; 93.5% — 2.17× / 1.04× / 0.96×. The ``compare_seeds`` rule reaches 4.7× / 1.74× /
1.25× (pass/fail) and 3.15× / 1.24× / 1.06× (real-valued). Its Satterthwaite df alone gave
1.77× at 2 v 2 real-valued seeds, below the 93.5% floor: which is why that rule covered only
90–93% with a large seed variance in one arm, and why no df rule can keep that width.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

GOLDEN_ONLY_QUANTILE = 1.96


def narrowest_mean_width(seeds: int, coverage: float, residual_share: float = 0.5) -> float:
    """Smallest mean of h(R) / 1.96 at no seed variance over intervals covering ≥ coverage."""
    df = seeds - 1
    edges = np.r_[0, np.geomspace(1e-4, 1e3, 70), np.inf]
    seed_variances = np.r_[0, np.geomspace(0.05, 2000, 40)]
    bins = np.array([np.diff(stats.chi2.cdf(edges * df / (1 + lam), df))
                     for lam in seed_variances])
    spread = np.sqrt(1 + residual_share * seed_variances)[:, None]

    def covered(h):
        return (bins * (2 * stats.norm.cdf(h[None, :] / spread) - 1)).sum(axis=1) - coverage

    def covered_gradient(h):
        return bins * 2 * stats.norm.pdf(h[None, :] / spread) / spread

    result = optimize.minimize(
        lambda h: bins[0] @ h, np.full(bins.shape[1], 30.0), jac=lambda h: bins[0],
        method="SLSQP", bounds=[(0, 200)] * bins.shape[1], options={"maxiter": 500},
        constraints=[{"type": "ineq", "fun": covered, "jac": covered_gradient}])
    if not result.success:
        raise RuntimeError(f"the program did not converge: {result.message}")
    return float(result.fun) / GOLDEN_ONLY_QUANTILE


# Residual share of one arm per seed count: pass/fail seeds that differ only by chance, and
# the real-valued generator of the simulation test (residual sd 0.5 per seed, golden × arm
# sd 0.3 per arm: (0.25 / k) / (2 · 0.09 + 2 · 0.25 / k)).
RESIDUAL_SHARES = {"pass/fail": {2: 0.5, 3: 0.5, 5: 0.5},
                   "real-valued": {2: 0.29, 3: 0.24, 5: 0.18}}


def main() -> None:
    for scores, shares in RESIDUAL_SHARES.items():
        for coverage in (0.95, 0.935):
            widths = [narrowest_mean_width(seeds, coverage, share)
                      for seeds, share in shares.items()]
            print(f"{scores}, coverage ≥ {coverage:.1%} at every seed sd: narrowest mean width "
                  "at none = " + " / ".join(f"{width:.2f}×" for width in widths)
                  + " at 2 / 3 / 5 seeds")


if __name__ == "__main__":
    main()

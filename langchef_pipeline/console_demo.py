"""A small built-in example: three planted changes on 90 goldens, read out by langchef_core.

This is the first cut of `langchef demo`; the full demo materialises a generated workspace
through Dagster and writes versioned reports.
"""

from __future__ import annotations

import numpy as np

import langchef_core as lc


def _arms(n: int, broke: int, fixed: int, baseline_pass_rate: float):
    baseline = np.arange(n) < round(baseline_pass_rate * n)
    variant = baseline.copy()
    variant[np.flatnonzero(baseline)[:broke]] = False
    variant[np.flatnonzero(~baseline)[:fixed]] = True
    return baseline, variant


def _line(name: str, result: lc.BinaryComparison) -> str:
    return (f"{name:<16} baseline {result.baseline_rate:6.1%}  variant {result.variant_rate:6.1%}  "
            f"difference {result.difference:+.1%} [{result.low:+.1%}, {result.high:+.1%}]  "
            f"p={result.p_value:.4f}  {result.verdict.upper()}  "
            f"({result.broke} broke, {result.fixed} fixed; smallest effect this run could have "
            f"seen: {result.detection_limit:.1%})")


def run(arguments) -> int:
    for name, broke, fixed in [("stale-index", 18, 0), ("tiny-regression", 3, 0), ("unchanged", 0, 0)]:
        baseline, variant = _arms(90, broke, fixed, 0.833)
        print(_line(name, lc.compare_binary(baseline, variant)))
    return 0

"""Readable Dagster metadata: markdown tables and the verdict line."""

from __future__ import annotations

import math

import dagster as dg
import pandas as pd


def markdown_table(frame: pd.DataFrame, *, limit: int = 50) -> dg.MetadataValue:
    """A markdown table of at most ``limit`` rows, saying how many were left out."""
    shown = frame.head(limit)
    header = "| " + " | ".join(str(column) for column in shown.columns) + " |"
    rule = "|" + "---|" * len(shown.columns)
    rows = ["| " + " | ".join(_cell(value) for value in row) + " |" for row in shown.itertuples(index=False)]
    more = [f"\n… and {len(frame) - limit} more rows"] if len(frame) > limit else []
    return dg.MetadataValue.md("\n".join([header, rule, *rows, *more]))


def verdict_line(comparison, *, metric: str) -> str:
    """One line a reviewer reads first: verdict, difference, interval, p, limit, flips."""
    parts = [f"**{comparison.verdict.upper()}** on {metric}: difference {comparison.difference:+.1%} "
             f"[{comparison.low:+.1%}, {comparison.high:+.1%}], p={comparison.p_value:.4f}, "
             + (f"smallest detectable effect {comparison.detection_limit:.1%}"
                if math.isfinite(comparison.detection_limit)
                else "no effect detectable (too few goldens for the test ever to decide)")]
    if hasattr(comparison, "broke"):
        parts.append(f"{comparison.broke} broke, {comparison.fixed} fixed of {comparison.n} goldens")
    if comparison.noninferiority is not None:
        parts.append(f"non-inferiority at margin {comparison.margin:.1%}: {comparison.noninferiority}")
    return "; ".join(parts)


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")

"""The records a retrieval readout is made of: the settings taken from the design, coverage
of the suite by labels, per-arm metric summaries, zero-positive groups and the paired
per-metric comparisons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from ...stats.paired import ContinuousComparison, Record
from .kernel import check_k
from .metrics import METRICS, metric_name
from .pools import check_pool_kind

POLICIES = ("exclude", "zero", "separate")
POOLED = "all"  # the source name of metrics over every label source at once
MIN_PAIRS = 2


@dataclass(frozen=True)
class RetrievalSettings(Record):
    """The design's ``retrieval`` block: cut-off, metrics, zero-positive policy, pool kind."""

    k: int = 10
    metrics: tuple[str, ...] = METRICS
    zero_positive: str = "exclude"
    pool_kind: str = "full"
    min_coverage: float | None = None

    def __post_init__(self):
        check_k(self.k)
        if self.zero_positive not in POLICIES:
            raise ValueError(f"retrieval.zero_positive must be one of {', '.join(POLICIES)}, "
                             f"got {self.zero_positive!r}")
        check_pool_kind(self.pool_kind)
        names = tuple(metric_name(name) for name in self.metrics)
        if not names:
            raise ValueError("retrieval.metrics must name at least one metric")
        if len(set(names)) != len(names):
            raise ValueError(f"retrieval.metrics names a metric twice: {list(self.metrics)}")
        object.__setattr__(self, "metrics", names)
        if self.min_coverage is not None and not 0 <= self.min_coverage <= 1:
            raise ValueError(f"retrieval.min_coverage is a share between 0 and 1, got "
                             f"{self.min_coverage!r}")

    @classmethod
    def from_design(cls, design) -> "RetrievalSettings":
        """Settings from a parsed ``Design`` (its ``retrieval``), a design mapping with a
        ``retrieval`` key, or the block itself: ``{k, metrics, zero_positive, pool: {kind},
        min_coverage}``. Absent keys take the defaults; no block at all gives the defaults."""
        block = getattr(design, "retrieval", design)
        if block is not None and hasattr(block, "to_dict"):
            block = block.to_dict()
        if isinstance(block, Mapping) and ("retrieval" in block or "experiment" in block):
            block = block.get("retrieval")  # a whole design, with or without the block
        if block is None:
            return cls()
        if not isinstance(block, Mapping):
            raise ValueError("the design's retrieval block must be a mapping")
        unknown = set(block) - {"k", "metrics", "zero_positive", "pool", "min_coverage"}
        if unknown:
            raise ValueError(f"unknown key(s) in retrieval: {', '.join(sorted(unknown))}; "
                             "allowed are k, metrics, zero_positive, pool, min_coverage")
        pool = block.get("pool") or {}
        if not isinstance(pool, Mapping):
            raise ValueError("retrieval.pool must be a mapping like {kind: sampled}")
        metrics = block.get("metrics") or METRICS
        if isinstance(metrics, str):
            metrics = (metrics,)
        return cls(k=block.get("k", 10), metrics=tuple(metrics),
                   zero_positive=block.get("zero_positive") or "exclude",
                   pool_kind=pool.get("kind") or "full", min_coverage=block.get("min_coverage"))

    def to_dict(self) -> dict:
        return {"k": self.k, "metrics": list(self.metrics), "zero_positive": self.zero_positive,
                "pool_kind": self.pool_kind, "min_coverage": self.min_coverage}


@dataclass(frozen=True)
class Coverage(Record):
    """Which queries a metric covers for one arm and one label source."""

    arm: str
    source: str
    policy: str
    queries_total: int
    with_positives: int
    without_positives: int
    excluded: int
    zero_filled: int
    separate: int
    scored: int
    in_qrels_not_in_run: int
    in_run_not_in_qrels: int
    positive_share: float
    first_missing_from_run: tuple[str, ...]
    first_not_in_qrels: tuple[str, ...]

    def to_dict(self) -> dict:
        record = super().to_dict()
        record["first_missing_from_run"] = list(self.first_missing_from_run)
        record["first_not_in_qrels"] = list(self.first_not_in_qrels)
        return record


@dataclass(frozen=True)
class MetricSummary(Record):
    """One arm's metric at k for one label source: macro and micro, with chance levels."""

    arm: str
    metric: str
    source: str
    k: int
    n_queries: int
    macro: float | None
    micro: float | None
    chance_macro: float | None
    chance_micro: float | None


@dataclass(frozen=True)
class ZeroPositiveGroup(Record):
    """The ``separate`` group: queries without positives, and what the arm retrieved for them."""

    arm: str
    source: str
    n_queries: int
    retrieved_any: int
    retrieved_any_rate: float | None
    mean_retrieved: float | None


@dataclass(frozen=True)
class MetricComparison(Record):
    """Paired per-query comparison of one metric for one source (macro: queries weigh equally)."""

    metric: str
    source: str
    k: int
    baseline: MetricSummary
    variant: MetricSummary
    comparison: ContinuousComparison | None
    skipped: str | None = None


@dataclass(frozen=True, eq=False)
class RetrievalSummary:
    """One arm's retrieval readout: every metric per source, coverage, and warnings."""

    settings: RetrievalSettings
    sources: tuple[str, ...]
    metrics: tuple[MetricSummary, ...]
    coverage: tuple[Coverage, ...]
    zero_positive_groups: tuple[ZeroPositiveGroup, ...]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"settings": self.settings.to_dict(), "sources": list(self.sources),
                "metrics": [m.to_dict() for m in self.metrics],
                "coverage": [c.to_dict() for c in self.coverage],
                "zero_positive_groups": [g.to_dict() for g in self.zero_positive_groups],
                "warnings": list(self.warnings)}


@dataclass(frozen=True, eq=False)
class RetrievalComparison:
    """Both arms' retrieval metrics, compared per metric and source, with coverage and warnings."""

    settings: RetrievalSettings
    sources: tuple[str, ...]
    comparisons: tuple[MetricComparison, ...]
    coverage: tuple[Coverage, ...]
    zero_positive_groups: tuple[ZeroPositiveGroup, ...]
    warnings: tuple[str, ...]
    scores: pd.DataFrame = field(repr=False)

    def get(self, metric: str, source: str | None = None) -> MetricComparison:
        source = source or self.sources[0]
        for item in self.comparisons:
            if item.metric == metric_name(metric) and item.source == source:
                return item
        raise KeyError(f"no comparison of {metric!r} for source {source!r}")

    def table(self) -> dict:
        """``{metric: {source: comparison dict}}`` for the readout's ``retrieval`` section."""
        table: dict = {}
        for item in self.comparisons:
            table.setdefault(item.metric, {})[item.source] = item.to_dict()
        return table

    def to_dict(self) -> dict:
        return {"settings": self.settings.to_dict(), "sources": list(self.sources),
                "metrics": self.table(), "coverage": [c.to_dict() for c in self.coverage],
                "zero_positive_groups": [g.to_dict() for g in self.zero_positive_groups],
                "warnings": list(self.warnings)}


@dataclass(frozen=True)
class CoverageCheck(Record):
    """Are there enough queries with a positive label to read the retrieval metrics?"""

    passed: bool
    reason: str
    source: str
    queries_total: int
    with_positives: int
    positive_share: float
    min_coverage: float | None
    policy: str

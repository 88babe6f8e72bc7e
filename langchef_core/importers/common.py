"""What every importer produces: one record per (sample, epoch) of a tool's log, and the
workspace tables langchef reads (goldens, one run file per arm) built from them.

An importer reads a tool's log into :class:`ToolSample` rows and wraps them in an
:class:`ImportedLog`, which knows the tool, the judge id derived from the scorer
configuration the log records, and the dataset the log names. ``ImportedLog.goldens``,
``.run`` and ``.samples`` are the frames; ``langchef_core.importers.write`` puts them into
a workspace after proving the pairing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone

import pandas as pd

from ..scoring.judges.base import canonical_json, judge_id as hashed_judge_id
from ..scoring.judges.imported import imported_cell, sample_sha256

# A numeric score passes when it reaches this value: Inspect's C is 1.0 (I, N: 0.0;
# P: 0.5), lm-eval's acc and exact_match are 0.0 or 1.0. Pass another threshold to read
# graded scores; it becomes part of the judge id.
DEFAULT_THRESHOLD = 1.0


@dataclass(frozen=True)
class ToolSample:
    """One scored answer of a log: a sample in one epoch (repeat)."""

    example_id: str
    epoch: int
    input: str
    ideal: str | None
    output: str | None
    scores: dict            # scorer name → (passed: bool, value: float | None)
    created_at: str | None  # ISO-8601 with a zone
    latency_ms: float | None = None
    cost_usd: float | None = None
    # Where the row is, to name it in a refusal: the log file and its place in it
    # (``results.results[3]``, ``line 7``, ``samples[2]``).
    origin: tuple[str, str] | None = None


@dataclass(frozen=True, eq=False)
class ImportedLog:
    """A tool's log in langchef's terms: samples, judge id, dataset, suggested suite."""

    tool: str
    source: str
    samples: tuple[ToolSample, ...]
    judge_id: str
    scorers: tuple[str, ...]
    dataset: str | None = None
    suite: str | None = None
    details: dict = field(default_factory=dict)

    @property
    def example_ids(self) -> list[str]:
        return sorted({sample.example_id for sample in self.samples})

    @property
    def epochs(self) -> int:
        """How many epochs each sample has (``checked_samples`` proved they all have as many)."""
        return len({sample.epoch for sample in self.samples})

    @property
    def goldens(self) -> pd.DataFrame:
        """One row per golden: ``example_id``, ``input``, ``ideal`` (when the log has one)."""
        rows = {}
        for sample in self.samples:
            rows.setdefault(sample.example_id, {"example_id": sample.example_id,
                                                "input": sample.input, "ideal": sample.ideal})
        frame = pd.DataFrame([rows[key] for key in sorted(rows)],
                             columns=["example_id", "input", "ideal"])
        return frame.drop(columns="ideal") if frame["ideal"].isna().all() else frame

    @property
    def samples_frame(self) -> pd.DataFrame:
        """One row per (golden, epoch) with every scorer's pass and value."""
        rows = []
        for sample in sorted(self.samples, key=lambda s: (s.example_id, s.epoch)):
            row = {"example_id": sample.example_id, "epoch": sample.epoch,
                   "output": sample.output, "created_at": sample.created_at,
                   "latency_ms": sample.latency_ms, "cost_usd": sample.cost_usd}
            for name in self.scorers:
                passed, value = sample.scores.get(name, (None, None))
                row[f"pass:{name}"], row[f"value:{name}"] = passed, value
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def run(self) -> pd.DataFrame:
        """The run file of this arm: one row per golden (``runs/<experiment>/<arm>``).

        ``output`` is the first epoch's answer, ``created_at`` the earliest start, latency
        and cost the mean per epoch; ``imported`` keeps every scorer's per-epoch result and
        the pairing hash, from which the imported judge derives the verdicts."""
        by_id: dict[str, list[ToolSample]] = {}
        for sample in self.samples:
            by_id.setdefault(sample.example_id, []).append(sample)
        rows = []
        for example_id in sorted(by_id):
            epochs = sorted(by_id[example_id], key=lambda s: s.epoch)
            first = epochs[0]
            scores = {name: {"pass": [bool(s.scores[name][0]) for s in epochs],
                             "value": [_number(s.scores[name][1]) for s in epochs]}
                      for name in self.scorers if all(name in s.scores for s in epochs)}
            starts = [s.created_at for s in epochs if s.created_at]
            rows.append({
                "example_id": example_id, "output": first.output,
                "created_at": min(starts, key=_instant) if starts else None,
                "latency_ms": _mean([s.latency_ms for s in epochs]),
                "cost_usd": _mean([s.cost_usd for s in epochs]),
                "judge": self.judge_id,
                "imported": imported_cell(tool=self.tool, scores=scores,
                                          sample_hash=sample_sha256(first.input, first.ideal),
                                          dataset=self.dataset)})
        frame = pd.DataFrame(rows)
        return frame[[c for c in frame.columns if not frame[c].isna().all()]]


def derived_judge_id(tool: str, configuration) -> str:
    """``<tool>:<12 hex>`` over the scorer configuration the log records."""
    return hashed_judge_id(tool, {"scorers": configuration})


def text_of(value) -> str | None:
    """Text as the goldens file will hold it: strings as they are, anything else as
    canonical JSON (chat messages, lists of targets, a test's vars)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return canonical_json(value)


def iso_from_unix(seconds) -> str | None:
    try:
        number = float(seconds)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    return datetime.fromtimestamp(number, tz=timezone.utc).isoformat()


def iso_with_zone(text) -> str | None:
    """An ISO-8601 timestamp that names its zone, or None (a naive time proves nothing)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.isoformat() if parsed.tzinfo is not None else None


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _mean(values):
    present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return sum(present) / len(present) if len(present) == len(values) and present else None


def _number(value):
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None

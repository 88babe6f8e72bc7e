"""The imported judge: verdicts an eval tool (Inspect AI, lm-evaluation-harness, promptfoo)
gave, brought into the run files by ``langchef import``.

A design pins it by what a team knows before running — the tool and its scorer names:

    judge: {kind: imported, tool: inspect, scorer: match}
    criteria: [match]

``langchef import`` writes, beside ``verdict``/``criterion``/``judge``, an ``imported``
column: one JSON object per golden holding every scorer's per-epoch pass and value, the
hash of the golden's input and ideal, and the dataset the log names
(:func:`imported_cell`). This judge re-derives each verdict from it with the design's
scorers, so:

- a log scored by other scorers than the design pins is refused by name;
- each pinned scorer is a criterion; an epoch passes when every pinned scorer passed, and
  a failing epoch cites the first failing scorer **in the design's criteria order**;
- with repeated samples (Inspect epochs, promptfoo ``repeat``) the golden's pass rate is
  the mean over its epochs (``pass_mean``, what the comparison uses); its single verdict,
  for the paired table and the attribution, is pass when more than half of the epochs
  passed, and it cites the criterion its failing epochs cited most (ties: design order);
- the judge id is the one derived from the scorer configuration recorded in the log
  (``inspect:…``, ``lm-eval:…``, ``promptfoo:…``): every row of both arms must carry the
  same one, so a grader changed between the arms is refused rather than compared;
- every row's input/ideal hash must match the golden it claims to answer (pairing proven
  at the readout too, not only at import).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from ...inputs.errors import InputError
from .base import (FAIL, PASS, Judge, Judgement, JudgeUsage, canonical_json, is_missing,
                   item_ids, row_number, sha256_hex)

KIND = "imported"
TOOLS = ("inspect", "lm-eval", "promptfoo")
IMPORTED_COLUMN = "imported"
# The extra per-golden columns this judge adds to its verdict table.
EPOCH_COLUMNS = ["pass_mean", "epochs", "verdict_changed", "score"]


def sample_sha256(input_text, ideal) -> str:
    """The pairing hash of one golden: SHA-256 over its input and ideal as the goldens
    file holds them (text, or None for no ideal)."""
    return sha256_hex(canonical_json({"input": _text(input_text), "ideal": _text(ideal)}))


def imported_cell(*, tool: str, scores: dict, sample_hash: str, dataset: str | None) -> str:
    """The ``imported`` cell of one golden: ``scores`` maps scorer name to
    ``{"pass": [bool per epoch], "value": [float or None per epoch]}``."""
    return canonical_json({"tool": tool, "scores": scores, "sample_sha256": sample_hash,
                           "dataset": dataset})


@dataclass(frozen=True)
class ImportedJudge(Judge):
    """Verdicts from an eval tool's scorers, re-derived with the design's pinned scorers."""

    tool: str
    scorers: tuple[str, ...]
    criteria: tuple[str, ...] | None = None
    kind = KIND
    # The log-derived judge id, fixed by the first run judged (both arms must agree).
    _seen: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if self.tool not in TOOLS:
            raise ValueError(f"an imported judge's tool must be one of {list(TOOLS)}, "
                             f"got {self.tool!r}")
        if not self.scorers or not all(isinstance(name, str) and name.strip()
                                       for name in self.scorers):
            raise ValueError("an imported judge needs the scorer name(s) the tool scored with, "
                             "e.g. judge: {kind: imported, tool: inspect, scorer: match}")
        if self.criteria is not None:
            folded = sorted(name.strip().casefold() for name in self.criteria)
            if folded != sorted(name.strip().casefold() for name in self.scorers):
                raise ValueError(f"an imported judge's criteria are its scorers: the design "
                                 f"lists criteria {list(self.criteria)} but pins scorer(s) "
                                 f"{list(self.scorers)}; list each scorer once under "
                                 f"'criteria', in the order a failure should cite them")

    @property
    def id(self) -> str:
        if "id" in self._seen:
            return self._seen["id"]
        return f"{KIND}:{self.tool}:{','.join(self.scorers)}"

    @property
    def citing_order(self) -> tuple[str, ...]:
        """Scorers in the order a failure cites them: the design's criteria order."""
        if self.criteria is None:
            return self.scorers
        by_key = {name.strip().casefold(): name for name in self.scorers}
        return tuple(by_key[name.strip().casefold()] for name in self.criteria)

    def describe(self) -> dict:
        return {"kind": KIND, "id": self.id, "tool": self.tool, "scorers": list(self.scorers)}

    def run(self, items: pd.DataFrame, *, source: str | None = None) -> Judgement:
        _, ids = item_ids(items, source)
        for required in (IMPORTED_COLUMN, "judge"):
            if required not in items.columns:
                raise InputError(f"no '{required}' column", file=source,
                                 hint=f"an imported judge reads the runs `langchef import "
                                      f"{self.tool}` writes; import the tool's log again")
        rows = []
        for position, (row, example_id) in enumerate(zip(items.index, ids)):
            line = row_number(row)
            self._check_judge(items["judge"].iloc[position], source, line)
            record = _record(items[IMPORTED_COLUMN].iloc[position], source, line)
            self._check_record(record, items.iloc[position], example_id, source, line)
            rows.append(self._verdict(example_id, record))
        frame = pd.DataFrame(rows, columns=[*_VERDICT_AND_EPOCH_COLUMNS], index=items.index)
        frame = frame.astype(object).where(frame.notna(), None)
        return Judgement(frame, JudgeUsage(items=len(rows)))

    def _check_judge(self, value, source, line) -> None:
        found = None if is_missing(value) else str(value)
        expected = self._seen.setdefault("id", found)
        if found is None or found != expected:
            given = "no judge id" if found is None else f"judge {found!r}"
            raise InputError(f"this golden was scored by {given}, but the other rows (or the "
                             f"other arm) by {expected!r}: the grader's configuration changed "
                             "between the logs", file=source, column="judge", row=line,
                             hint="score both arms with the same scorers and settings and "
                                  "import them again")

    def _check_record(self, record: dict, item, example_id: str, source, line) -> None:
        if record.get("tool") != self.tool:
            raise InputError(f"golden {example_id!r} was imported from {record.get('tool')!r}, "
                             f"but the design pins an imported {self.tool} judge",
                             file=source, column=IMPORTED_COLUMN, row=line,
                             hint="import the log of the tool the design names, or pin that "
                                  "tool in a new design")
        scores = record.get("scores")
        missing = [name for name in self.scorers if name not in scores]
        if missing:
            raise InputError(f"the log scored golden {example_id!r} with {sorted(scores)}, not "
                             f"with the pinned scorer {missing[0]!r}", file=source,
                             column=IMPORTED_COLUMN, row=line,
                             hint="run the eval with the scorer the design pins, or pin the "
                                  "scorer the log used in a new design and approve it again")
        if "input" in item.index:
            expected = sample_sha256(item["input"], item.get("ideal"))
            if record.get("sample_sha256") != expected:
                raise InputError(f"golden {example_id!r} in this run does not have the input and "
                                 "ideal of the goldens file: the arms were not run on the same "
                                 "samples", file=source, column=IMPORTED_COLUMN, row=line,
                                 hint="run both arms on the same dataset and import them again")

    def _verdict(self, example_id: str, record: dict) -> dict:
        order = self.citing_order
        scores = record["scores"]
        epochs = min(len(scores[name]["pass"]) for name in order)
        cited = []
        for epoch in range(epochs):
            failing = next((name for name in order if not scores[name]["pass"][epoch]), None)
            cited.append(failing)
        passes = [name is None for name in cited]
        pass_mean = sum(passes) / epochs
        verdict = PASS if pass_mean > 0.5 else FAIL
        criterion = None
        if verdict == FAIL:
            counts = Counter(name for name in cited if name is not None)
            top = max(counts.values())
            criterion = next(name for name in order if counts.get(name) == top)
        score = None
        if len(order) == 1:
            values = [value for value in scores[order[0]]["value"] if value is not None]
            score = sum(values) / len(values) if len(values) == epochs else None
        rationale = f"{self.tool} scorers over {epochs} epoch(s)" if epochs > 1 \
            else f"scored by {self.tool}"
        return {"example_id": example_id, "verdict": verdict, "criterion": criterion,
                "judge": self.id, "rationale": rationale, "pass_mean": pass_mean,
                "epochs": epochs, "verdict_changed": 0 < sum(passes) < epochs, "score": score}


_VERDICT_AND_EPOCH_COLUMNS = ("example_id", "verdict", "criterion", "judge", "rationale",
                              *EPOCH_COLUMNS)


def _record(cell, source, line) -> dict:
    try:
        record = json.loads(cell) if isinstance(cell, str) else None
    except ValueError:
        record = None
    scores = record.get("scores") if isinstance(record, dict) else None
    if not isinstance(scores, dict) or not scores or not all(
            isinstance(entry, dict) and isinstance(entry.get("pass"), list) and entry["pass"]
            and isinstance(entry.get("value"), list) for entry in scores.values()):
        raise InputError("the 'imported' cell is not what `langchef import` writes",
                         file=source, column=IMPORTED_COLUMN, row=line,
                         hint="import the tool's log again rather than editing the run file")
    return record


def _text(value):
    if value is None or is_missing(value):
        return None
    return value if isinstance(value, str) else str(value)

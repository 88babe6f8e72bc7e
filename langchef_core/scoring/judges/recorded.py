"""The recorded judge: verdicts that were given upstream and arrive in the run files.

The run file carries ``verdict`` (pass/fail), ``criterion`` (the one criterion a fail
cites) and ``judge`` (the id of the judge that gave it). Nothing is re-judged: the verdicts
pass through after four checks, each of which names the file, column and row it rejects:

- every verdict is "pass" or "fail" (True/False are read as pass/fail);
- every row was judged by the pinned judge (the design's ``id``) — a verdict from another
  judge cannot be passed off as the pinned one;
- a cited criterion belongs to the design's criteria, when those are known; case does not
  matter (``Correctness`` is ``correctness``) and the design's spelling is kept;
- every fail cites a criterion, when the design lists criteria: a fail without one is
  refused (file, row), not counted as unattributed.

Without criteria in the design a fail stays uncited (None), so the attribution reports it as
unattributed instead of guessing. A criterion on a pass is dropped: a passing answer cites
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...inputs.errors import InputError
from .base import (FAIL, PASS, Judge, Judgement, JudgeUsage, check_pinned, criterion_hint,
                   is_missing, item_ids, row_number, spelled_as, uncited_fail, verdict_frame)

KIND = "recorded"


@dataclass(frozen=True)
class RecordedJudge(Judge):
    """Passes through the ``verdict``/``criterion``/``judge`` columns of a run file."""

    pinned_id: str
    criteria: tuple[str, ...] | None = None
    kind = KIND

    def __post_init__(self):
        if not isinstance(self.pinned_id, str) or not self.pinned_id.strip():
            raise ValueError("a recorded judge needs the id of the judge that gave the verdicts, "
                             "e.g. judge: {kind: recorded, id: 'rubric:3f2a…'}; "
                             f"got {self.pinned_id!r}")

    @property
    def id(self) -> str:
        return self.pinned_id

    def describe(self) -> dict:
        return {"kind": KIND, "id": self.id}

    def run(self, items: pd.DataFrame, *, source: str | None = None) -> Judgement:
        # Column by column: the same frame and errors as _run_by_rows, ~30× faster at 10^5.
        from .recorded_columns import run_recorded
        return run_recorded(self, items, source, _verdict)

    def _run_by_rows(self, items: pd.DataFrame, *, source: str | None = None) -> Judgement:
        """The row-by-row reading that defines ``run``; tests hold ``run`` equal to it."""
        _, ids = item_ids(items, source)
        for required in ("verdict", "judge"):
            if required not in items.columns:
                raise InputError(f"no '{required}' column", file=source,
                                 hint=f"a recorded judge reads the upstream '{required}' of "
                                      "every row; add it or pin a judge that judges the answers")
        self._check_pinned(items, source)
        criteria = items["criterion"] if "criterion" in items.columns else None
        rationale = items["rationale"] if "rationale" in items.columns else None
        rows = []
        for position, (row, example_id) in enumerate(zip(items.index, ids)):
            verdict = _verdict(items["verdict"].iloc[position], source, row_number(row))
            cited = None if criteria is None else criteria.iloc[position]
            cited = None if verdict == PASS or is_missing(cited) or str(cited).strip() == "" \
                else str(cited).strip()
            if verdict != PASS and cited is None and self.criteria:
                raise uncited_fail(source, row_number(row), self.criteria)
            if cited is not None and self.criteria is not None:
                known = spelled_as(cited, self.criteria)
                if known is None:
                    raise InputError(f"criterion {cited!r} is not among the design's criteria",
                                     file=source, column="criterion", row=row_number(row),
                                     hint=criterion_hint(cited, self.criteria))
                cited = known
            note = None if rationale is None or is_missing(rationale.iloc[position]) \
                else str(rationale.iloc[position])
            rows.append({"example_id": example_id, "verdict": verdict, "criterion": cited,
                         "judge": self.id, "rationale": note or "recorded upstream"})
        return Judgement(verdict_frame(rows, items.index), JudgeUsage(items=len(rows)))

    def _check_pinned(self, items: pd.DataFrame, source: str | None) -> None:
        check = check_pinned(items, self.id)
        if check.passed:
            return
        position = next(position for position, value in enumerate(items["judge"])
                        if is_missing(value) or str(value) != self.id)
        found = items["judge"].iloc[position]
        given = "no judge id" if is_missing(found) else f"judge {str(found)!r}"
        raise InputError(f"this verdict was given by {given}, but the design pins judge "
                         f"{self.id!r} ({check.mismatched} of {check.verdicts} rows differ)",
                         file=source, column="judge", row=row_number(items.index[position]),
                         hint="re-judge these answers with the pinned judge, or pin the judge "
                              "that produced them and approve the design again")


def _verdict(value, source, row) -> str:
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()  # numpy bools from a parquet file
    if isinstance(value, bool):
        return PASS if value else FAIL
    if isinstance(value, str) and value.strip().lower() in (PASS, FAIL):
        return value.strip().lower()
    raise InputError(f"verdict must be 'pass' or 'fail', got {value!r}", file=source,
                     column="verdict", row=row)

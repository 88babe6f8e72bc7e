"""Does a design fit its workspace? Checked before approval, so that a design that could
never be read out is refused while fixing it costs nothing.

Every mistake found only at readout costs a team its runs: fixing the design means
approving it again, and every run collected before the new approval no longer counts. So
`langchef design check` and `langchef approve` read the files the design names and refuse
it when any of them is missing or lacks what the design needs:

- the suite's goldens exist, parse, and carry every column the design names (``cluster``,
  ``slices.column``, ``ideal`` for an accuracy primary), with every declared slice present,
  and a sequential design's order column holds one kind of place in traffic (times or
  position numbers) on every golden;
- the anchor set exists, parses, and fits the pinned judge (a recorded judge's anchors carry
  the upstream ``verdict`` and ``judge`` columns, every verdict from the pinned judge, every
  cited criterion one of the design's);
- a retrieval primary has its qrels, and a sampled or hard-negative pool's pool file, when
  there is one, parses (the runs may bring their candidates instead);
- an arm without a run file while runs/<experiment>/ holds one of a near-miss name (a typo
  in the design or the file name; runs not written yet are fine).

Problems come most fundamental first: a missing file before the columns it lacks, a missing
column before the values that depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..inputs.errors import InputError
from ..inputs.schemas import SchemaViolation, read_input
from ..inputs.workspace import Workspace
from ..scoring.judges.base import criterion_hint, is_missing, spelled_as, uncited_fail
from ..stats.records import Record
from .model import Design

# How many problems a refusal spells out before pointing at the whole table.
SHOWN_PROBLEMS = 3


@dataclass(frozen=True)
class Problem(Record):
    """One reason a design does not fit the workspace: where, what, and what to do."""

    file: str | None
    field: str | None      # the design field that needs the thing (cluster, anchors.set …)
    column: str | None
    row: int | None
    message: str
    hint: str | None = None

    def sentence(self) -> str:
        # The same "file, column, row: message; hint" as every input error, without the stop:
        # problems are listed one after another.
        return InputError(self.message, file=self.file, column=self.column, row=self.row,
                          hint=self.hint).describe().rstrip(".")


class DesignDoesNotFit(InputError):
    """The design is valid on its own but cannot be read out against this workspace."""

    def __init__(self, design_file: str, problems: tuple[Problem, ...], *,
                 table: str | None = None):
        self.problems, self.table = tuple(problems), table
        first = self.problems[0]
        count = len(self.problems)
        shown = "; ".join(f"({index}) {problem.sentence()}"
                          for index, problem in enumerate(self.problems[:SHOWN_PROBLEMS], 1))
        message = (f"does not fit this workspace ({count} problem{'s' if count > 1 else ''}, "
                   f"so it could not be read out): {shown}")
        if count > SHOWN_PROBLEMS:
            rest = count - SHOWN_PROBLEMS
            message += f"; and {rest} more" + (f", all listed in {table}" if table else "")
        super().__init__(message, file=design_file, column=first.column, row=first.row,
                         hint="fix these and check again with `langchef design check`")

    def describe(self) -> str:
        # The sentence names the design file; each problem names its own file, column, row.
        text = f"{self.file}: {self.message}"
        return text.rstrip(".") + "; " + self.hint + "."


def goldens_columns(design: Design) -> tuple[str, ...]:
    """Columns the design needs in its goldens beyond the standard ones."""
    needed = []
    if design.slices is not None:
        needed.append(design.slices.column)
    if design.cluster is not None:
        needed.append(design.cluster)
    if design.primary == "accuracy":
        needed.append("ideal")
    if design.sequential:
        needed.append(design.stopping.order)
    return tuple(dict.fromkeys(needed))


def anchors_columns(design: Design) -> tuple[str, ...]:
    """Columns the pinned judge needs in the anchor set: a recorded judge judged the anchors
    upstream, so its verdicts (and the id of the judge that gave them) sit beside the
    reviewers' ones."""
    return ("verdict", "judge") if design.judge_kind == "recorded" else ()


def design_fit(workspace: Workspace, design: Design) -> tuple[Problem, ...]:
    """Every reason ``design`` cannot be read out in ``workspace``; empty when it fits."""
    problems: list[Problem] = []
    problems += _goldens_problems(workspace, design)
    problems += _run_file_problems(workspace, design)
    if design.anchors is not None:
        problems += _anchors_problems(workspace, design)
    if design.retrieval is not None:
        problems += _retrieval_problems(workspace, design)
    return tuple(problems)


# --- goldens ----------------------------------------------------------------------------

_COLUMN_FIELDS = {"ideal": "primary"}


def _field_of(design: Design, column: str) -> str:
    if design.cluster == column:
        return "cluster"
    if design.slices is not None and design.slices.column == column:
        return "slices.column"
    return _COLUMN_FIELDS.get(column, "suite")


@dataclass(frozen=True, eq=False)
class _Read:
    label: str
    frame: pd.DataFrame | None
    failures: tuple = ()


def _read(workspace: Workspace, path, kind: str, required=()) -> _Read:
    label = workspace.relative(path)
    try:
        return _Read(label, read_input(path, kind, label=label, required_columns=required))
    except SchemaViolation as violation:
        return _Read(label, None, violation.failure_list)


def _goldens_problems(workspace: Workspace, design: Design) -> list[Problem]:
    path = workspace.goldens_path(design.suite)
    load = _read(workspace, path, "goldens", goldens_columns(design))
    if load.frame is None:
        return _load_problems(load, design, "suite")
    problems = _order_problems(load, design) if design.sequential else []
    if design.slices is not None and design.slices.declared:
        present = set(load.frame[design.slices.column].astype(str))
        absent = [name for name in design.slices.declared if name not in present]
        if absent:
            problems.append(Problem(
                load.label, "slices.target_weights", design.slices.column, None,
                f"declared slice{'s' if len(absent) > 1 else ''} "
                + ", ".join(repr(name) for name in absent) + " never occur"
                + (f" (it holds {_listed(sorted(present))})" if present else ""),
                "fix the slice names in the design or add goldens for them"))
    return problems


def _order_problems(load: _Read, design: Design) -> list[Problem]:
    """The traffic order a sequential readout will sort the goldens by, read as it will be."""
    from .stopping import traffic_order  # only a sequential design has a traffic order

    try:
        traffic_order(load.frame, design.stopping.order, file=load.label)
    except InputError as error:
        return [Problem(load.label, "stopping.order", error.column, error.row, error.message,
                        error.hint)]
    return []


def _load_problems(load: _Read, design: Design, field: str) -> list[Problem]:
    problems = []
    for failure in load.failures:
        column = failure.column
        needed_by = _field_of(design, column) if column is not None else field
        hint = failure.hint
        if failure.check == "required column missing" and needed_by != "suite":
            hint = (f"the design's '{needed_by}' names it: add the column to the table or "
                    f"change '{needed_by}'")
        elif failure.check.startswith("file not found"):
            hint = f"write the table there, or change the design's '{field}'"
        problems.append(Problem(failure.file, needed_by, column, failure.row, failure.problem(),
                                hint))
    return problems


# --- run files -------------------------------------------------------------------------

@dataclass(frozen=True)
class RunFile(Record):
    """A run file an arm will need: where it goes, and whether it is written yet."""

    arm: str
    file: str
    written: bool


def run_files(workspace: Workspace, design: Design) -> tuple[RunFile, ...]:
    """The run file of each arm (each seed of it, in a seeded design): a readout reads these."""
    out = []
    for role in ("baseline", "variant"):
        arm = getattr(design.arms, role)
        runs = [arm] if not design.seeds else [f"{arm}@seed{k}" for k in range(1, design.seeds + 1)]
        for run in runs:
            path = workspace.run_path(design.experiment, run)
            # Not written yet: named by its stem, since any table format will do.
            name = workspace.relative(path if path.exists() else path.with_suffix(""))
            out.append(RunFile(run, name, path.exists()))
    return tuple(out)


def _run_file_problems(workspace: Workspace, design: Design) -> list[Problem]:
    """An arm with no run file while runs/<experiment>/ holds one of a near-miss name is a
    typo in the design (or the file): found now, fixing it costs no runs."""
    import difflib

    present = {stem.partition("@")[0] for stem in workspace.run_arms(design.experiment)}
    strangers = sorted(present - {design.arms.baseline, design.arms.variant})
    problems = []
    for role in ("baseline", "variant"):
        arm = getattr(design.arms, role)
        if arm in present or not strangers:
            continue
        close = difflib.get_close_matches(arm, strangers, n=1, cutoff=0.6)
        if close:
            written = workspace.relative(workspace.run_path(design.experiment, close[0]))
            problems.append(Problem(
                f"runs/{design.experiment}/", f"arms.{role}", None, None,
                f"arm {arm!r} has no run file, but {written} is there",
                f"did you mean {close[0]!r}? fix the arm's name in the design, or rename the "
                "file if the design is right"))
    return problems


# --- anchors ----------------------------------------------------------------------------

def _anchors_problems(workspace: Workspace, design: Design) -> list[Problem]:
    path = workspace.anchors_path(design.anchors.set)
    load = _read(workspace, path, "anchors", anchors_columns(design))
    if load.frame is None:
        problems = _load_problems(load, design, "anchors.set")
        for index, problem in enumerate(problems):
            if problem.message == "required column missing" and problem.column in ("verdict",
                                                                                   "judge"):
                problems[index] = Problem(
                    problem.file, "judge", problem.column, None,
                    "required column missing: a recorded judge is watched through the "
                    "verdicts it gave the anchors upstream",
                    f"add '{problem.column}' (the upstream judge's "
                    f"{'pass/fail' if problem.column == 'verdict' else 'id'} on every anchor) "
                    "beside human_verdict")
        return problems
    if design.judge_kind != "recorded":
        return []
    frame, problems = load.frame, []
    pinned = design.judge_id
    for row, judge in frame["judge"].items():
        if is_missing(judge) or str(judge) != pinned:
            given = "no judge id" if is_missing(judge) else f"judge {str(judge)!r}"
            others = int((frame["judge"].astype(str) != pinned).sum())
            problems.append(Problem(
                load.label, "judge.id", "judge", int(row),
                f"this anchor was judged by {given}, but the design pins {pinned!r} "
                f"({others} of {len(frame)} anchors differ)",
                "record the pinned judge's verdicts on the anchors, or pin the judge that "
                "gave them"))
            break
    if design.criteria:
        problems += _uncited_anchor_fails(load, design)
    if "criterion" in frame.columns and design.criteria:
        for row, cited in frame["criterion"].items():
            if is_missing(cited) or not str(cited).strip():
                continue
            if spelled_as(str(cited), design.criteria) is None:
                problems.append(Problem(load.label, "criteria", "criterion", int(row),
                                        f"criterion {str(cited)!r} is not among the design's "
                                        "criteria", criterion_hint(str(cited), design.criteria)))
                break
    return problems


def _uncited_anchor_fails(load: _Read, design: Design) -> list[Problem]:
    """The upstream judge's first fail on an anchor that cites no criterion: the readout
    refuses it when it re-judges the anchors, so it is refused here first."""
    frame = load.frame
    cited = frame["criterion"] if "criterion" in frame.columns else pd.Series(None, frame.index)
    for row, verdict in frame["verdict"].items():
        value = cited[row]
        if hasattr(verdict, "item") and not isinstance(verdict, str):
            verdict = verdict.item()  # a numpy bool from a parquet file
        failed = verdict is False or (isinstance(verdict, str)
                                      and verdict.strip().casefold() == "fail")
        if failed and (is_missing(value) or not str(value).strip()):
            error = uncited_fail(load.label, int(row), design.criteria)
            return [Problem(load.label, "criteria", "criterion", int(row), error.message,
                            error.hint)]
    return []


# --- retrieval --------------------------------------------------------------------------

def _retrieval_problems(workspace: Workspace, design: Design) -> list[Problem]:
    problems = []
    qrels = workspace.qrels_path(design.suite)
    if design.primary in _retrieval_metrics() or qrels.exists():
        load = _read(workspace, qrels, "qrels")
        if load.frame is None:
            problems += _load_problems(load, design, "suite")
    if design.retrieval.pool.kind != "full":
        pools = workspace.pools_path(design.suite)
        if pools.exists():
            load = _read(workspace, pools, "pools")
            if load.frame is None:
                problems += _load_problems(load, design, "retrieval.pool")
    return problems


def _retrieval_metrics() -> tuple[str, ...]:
    from .model import RETRIEVAL_METRICS
    return RETRIEVAL_METRICS


def _listed(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(repr(name) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def require_fit(workspace: Workspace, design: Design, *, table_path=None) -> None:
    """Raise :class:`DesignDoesNotFit` when the design does not fit; ``table_path`` (a
    path inside the workspace) receives the whole problem table when some are not shown."""
    problems = design_fit(workspace, design)
    if not problems:
        return
    label = None
    if table_path is not None and len(problems) > SHOWN_PROBLEMS:
        write_problem_table(table_path, problems)
        label = workspace.relative(table_path)
    raise DesignDoesNotFit(workspace.relative(workspace.design_path(design.experiment)),
                           problems, table=label)


def write_problem_table(path, problems) -> None:
    """The whole problem table as CSV, written to a temporary name and renamed into place."""
    import os
    import tempfile
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame([problem.to_dict() for problem in problems],
                         columns=["file", "field", "column", "row", "message", "hint"])
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            frame.to_csv(handle, index=False)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise

"""Putting an imported log into a workspace, after proving it pairs with what is there.

``write_import`` writes ``runs/<experiment>/<arm>.jsonl`` and, when the suite has no goldens
yet, ``goldens/<suite>.jsonl``. Before writing anything it proves the pairing:

- the suite's goldens file passes the readout's checks (a duplicated id names both rows);
- every sample of the log is a golden of the suite, every golden has a sample, and each
  sample's input and ideal hash to the golden's (the first differing samples are named);
- the dataset the log names is the one the other arms' imported runs name.

Files are written to a temporary name and renamed into place, so a refused or interrupted
import leaves nothing half-written; an existing run file is replaced only when asked.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..inputs.errors import InputError
from ..inputs.schemas import read_input, validate_table
from ..inputs.tables import read_table
from ..inputs.workspace import Workspace, check_name
from ..scoring.judges.imported import IMPORTED_COLUMN, sample_sha256
from .common import ImportedLog

SHOWN = 3  # differing samples named in a refusal


@dataclass(frozen=True)
class ImportResult:
    """What one import wrote: the run file, the goldens file (None when it existed)."""

    experiment: str
    arm: str
    suite: str
    run_file: str
    goldens_file: str | None
    goldens: int
    epochs: int
    judge_id: str
    scorers: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"experiment": self.experiment, "arm": self.arm, "suite": self.suite,
                "run_file": self.run_file, "goldens_file": self.goldens_file,
                "goldens": self.goldens, "epochs": self.epochs, "judge_id": self.judge_id,
                "scorers": list(self.scorers)}

    @property
    def sentence(self) -> str:
        wrote = f" and {self.goldens_file}" if self.goldens_file else ""
        epochs = f"{self.epochs} epoch{'s' if self.epochs != 1 else ''}"
        return (f"imported arm {self.arm!r}: {self.goldens} goldens × {epochs} into "
                f"{self.run_file}{wrote} (judge {self.judge_id}, scorers "
                f"{', '.join(self.scorers)})")


def write_import(workspace: Workspace, log: ImportedLog, *, experiment: str, arm: str,
                 suite: str | None = None, replace: bool = False) -> ImportResult:
    """Prove ``log`` pairs with the suite's goldens and the other arms, then write it."""
    check_name(experiment), check_name(arm, "arm")
    suite = suite or _design_suite(workspace, experiment) or log.suite
    if not suite:
        _no_suite(log)
    check_name(suite, "suite")
    run_path = workspace.run_path(experiment, arm)
    if run_path.exists() and not replace:
        raise InputError("this arm already has a run file", file=workspace.relative(run_path),
                         hint="delete it first, or pass --replace to overwrite it")
    if run_path.suffix != ".jsonl":
        run_path = run_path.with_suffix(".jsonl")
    goldens_path = workspace.goldens_path(suite)
    new_goldens = _paired_goldens(workspace, log, goldens_path)
    check_against_other_arms(log, workspace, experiment, arm)
    if new_goldens is not None:
        _write_jsonl(goldens_path, new_goldens)
    _write_jsonl(run_path, log.run)
    wrote_goldens = workspace.relative(goldens_path) if new_goldens is not None else None
    return ImportResult(experiment=experiment, arm=arm, suite=suite,
                        run_file=workspace.relative(run_path), goldens_file=wrote_goldens,
                        goldens=len(log.example_ids), epochs=log.epochs, judge_id=log.judge_id,
                        scorers=log.scorers)


def write_goldens(workspace: Workspace, log: ImportedLog, *, suite: str | None = None) -> str:
    """Only the suite's goldens, from a log (e.g. a dry run with the tool's offline model):
    what a design needs before it can be approved, before any traffic. An existing goldens
    file is kept when the log pairs with it and refused when it does not."""
    suite = suite or log.suite
    if not suite:
        _no_suite(log)
    path = workspace.goldens_path(check_name(suite, "suite"))
    new_goldens = _paired_goldens(workspace, log, path)
    if new_goldens is not None:
        _write_jsonl(path, new_goldens)
    return workspace.relative(path)


def _paired_goldens(workspace: Workspace, log: ImportedLog, path: Path) -> pd.DataFrame | None:
    """None when the suite's goldens file exists and ``log`` pairs with it; else the goldens
    to write. Either way the goldens pass the checks a readout makes (one row per id, …), so
    a file the readout would refuse is refused here, before anything is written."""
    label = workspace.relative(path)
    if path.exists():
        check_against_goldens(log, read_input(path, "goldens", label=label), label)
        return None
    goldens = log.goldens.set_axis(range(1, len(log.goldens) + 1))  # rows as in the file
    validate_table(goldens, "goldens", file=label)
    return goldens


def check_against_goldens(log: ImportedLog, goldens: pd.DataFrame, label: str) -> None:
    """Same ids, and for each id the same input and ideal (by hash)."""
    if "example_id" not in goldens.columns or "input" not in goldens.columns:
        raise InputError("the goldens need 'example_id' and 'input' columns", file=label)
    ideal = goldens["ideal"] if "ideal" in goldens.columns else [None] * len(goldens)
    expected = {str(example_id): sample_sha256(text, answer)
                for example_id, text, answer in zip(goldens["example_id"], goldens["input"], ideal)}
    found = {row.example_id: sample_sha256(row.input, row.ideal) for row in log.goldens.assign(
        ideal=log.goldens["ideal"] if "ideal" in log.goldens.columns else None).itertuples()}
    extra = sorted(set(found) - set(expected))
    if extra:
        raise InputError(f"the log has samples the goldens lack: {_shown(extra)}", file=log.source,
                         hint=f"both arms must run the same samples as {label}; run the eval on "
                              "that dataset (or start a new suite)")
    missing = sorted(set(expected) - set(found))
    if missing:
        raise InputError(f"the log has no sample for goldens {_shown(missing)} of {label}",
                         file=log.source, hint="run every sample of the dataset in both arms "
                                               "(no --limit, no sample subset) and import again")
    differing = sorted(key for key in found if found[key] != expected[key])
    if differing:
        raise InputError(f"samples {_shown(differing)} have a different input or ideal than in "
                         f"{label}: the arms were not run on the same dataset", file=log.source,
                         hint="run both arms on the same version of the dataset")


def check_against_other_arms(log: ImportedLog, workspace: Workspace, experiment: str,
                             arm: str) -> None:
    """The dataset named in this log is the one the other arms' imported runs name."""
    for other in workspace.run_arms(experiment):
        if other == arm:
            continue
        path = workspace.run_path(experiment, other)
        frame = read_table(path, label=workspace.relative(path))
        if IMPORTED_COLUMN not in frame.columns or frame.empty:
            continue
        cell = json.loads(frame[IMPORTED_COLUMN].iloc[0])
        if cell.get("dataset") != log.dataset:
            raise InputError(f"this log ran dataset {log.dataset!r}, but arm {other!r} ran "
                             f"{cell.get('dataset')!r}", file=log.source,
                             hint="run both arms on the same dataset and revision")
        if cell.get("tool") != log.tool:
            raise InputError(f"arm {other!r} was imported from {cell.get('tool')}, this log is "
                             f"from {log.tool}", file=log.source,
                             hint="compare two runs of the same tool")


def _design_suite(workspace: Workspace, experiment: str) -> str | None:
    path = workspace.design_path(experiment)
    if not path.exists():
        return None
    from ..designs.parse import load_workspace_design
    return load_workspace_design(workspace, experiment).suite


def _no_suite(log: ImportedLog):
    raise InputError(f"the {log.tool} log names no dataset to use as the suite", file=log.source,
                     hint="write the experiment's design first (its 'suite' is used), or pass "
                          "--suite NAME")


def _shown(ids: list[str]) -> str:
    text = ", ".join(repr(value) for value in ids[:SHOWN])
    return text + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def _write_jsonl(path: Path, frame: pd.DataFrame) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({key: value for key, value in row.items() if _present(value)},
                        ensure_ascii=False, allow_nan=False)
             for row in frame.to_dict(orient="records")]
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))

"""A workspace table read and validated as a value: the frame and its hash, or the
sentence and failure table explaining why it could not be read."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import InputError
from .schemas import SchemaViolation, read_input
from .workspace import Workspace

FAILURE_COLUMNS = ["file", "column", "row", "value", "check"]


@dataclass(frozen=True, eq=False)
class TableLoad:
    """A workspace table read and validated, or the reason it could not be.

    The pipeline keeps a failed load as a value (instead of raising) so that a blocking
    check can show the failure table in the UI and stop everything downstream. The error
    is kept as plain data (sentence + failure table) so the value pickles between steps.
    """

    label: str
    path: str | None
    frame: pd.DataFrame | None = None
    error: str | None = None
    failures: pd.DataFrame | None = None
    sha256: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def require(self) -> pd.DataFrame:
        if self.error is not None:
            raise InputError(self.error)
        return self.frame


def load_table(workspace: Workspace, path: Path, kind: str, *, required_columns=()) -> TableLoad:
    label = workspace.relative(path)
    try:
        frame = read_input(path, kind, label=label, required_columns=tuple(required_columns))
    except SchemaViolation as violation:
        return TableLoad(label=label, path=str(path), error=str(violation),
                         failures=violation.failures[FAILURE_COLUMNS].copy())
    except InputError as error:
        failures = pd.DataFrame([{"file": error.file or label, "column": error.column,
                                  "row": error.row, "value": error.value, "check": error.message}],
                                columns=FAILURE_COLUMNS)
        return TableLoad(label=label, path=str(path), error=str(error), failures=failures)
    return TableLoad(label=label, path=str(path), frame=frame, sha256=file_sha256(path))


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

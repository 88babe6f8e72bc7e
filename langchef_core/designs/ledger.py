"""The ledger: an append-only record, in the workspace, of every readout taken.

A SQLite file (``langchef.sqlite`` in the workspace root) rather than a folder of JSON
files, because two readouts taken at once must not both believe they were the first look,
and because the append-only rule can be enforced by the database itself: triggers abort any
UPDATE or DELETE of a recorded row.

Why it exists: a design's error rates hold for one look at one set of data. Reading the
same approved design out again on *different* data (a fresh batch of runs) is allowed, but
the readout is marked as a repeated look with its count, so nobody mistakes the third try
for a first result. Re-running the readout on the *same* data is not a new look.

The schema evolves through :data:`MIGRATIONS`, applied in order and tracked in SQLite's
``user_version``; a new table (e.g. anchor-judgement history) is one more entry there.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..inputs.workspace import Workspace
from ..scoring.anchors import AnchorRun
from ..stats.records import Record
from .approval import SHA256_PATTERN, format_utc


@dataclass(frozen=True)
class Migration:
    """One schema step: ``version`` is the ``user_version`` the database has after it."""

    version: int
    description: str
    statements: tuple[str, ...]


def _append_only(table: str) -> tuple[str, ...]:
    message = f"the langchef ledger is append-only: rows of {table} are never changed or removed"
    return (
        f"CREATE TRIGGER {table}_refuse_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END",
        f"CREATE TRIGGER {table}_refuse_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END",
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "readouts taken per design hash", (
        """CREATE TABLE readouts (
               id INTEGER PRIMARY KEY AUTOINCREMENT,
               experiment TEXT NOT NULL,
               design_sha256 TEXT NOT NULL CHECK (length(design_sha256) = 64),
               inputs_sha256 TEXT NOT NULL CHECK (length(inputs_sha256) = 64),
               version INTEGER NOT NULL CHECK (version >= 1),
               verdict TEXT NOT NULL,
               taken_at TEXT NOT NULL
           )""",
        "CREATE INDEX readouts_by_design ON readouts (design_sha256, inputs_sha256)",
        *_append_only("readouts"),
    )),
    Migration(2, "anchor runs: every judging of an anchor set, with its verdicts", (
        """CREATE TABLE anchor_runs (
               id INTEGER PRIMARY KEY AUTOINCREMENT,
               anchor_set TEXT NOT NULL,
               anchor_set_sha256 TEXT NOT NULL CHECK (length(anchor_set_sha256) = 64),
               judge_id TEXT NOT NULL,
               kappa REAL,
               counts TEXT NOT NULL,
               level TEXT NOT NULL CHECK (level IN ('ok', 'warn', 'error')),
               taken_at TEXT NOT NULL,
               verdicts TEXT NOT NULL
           )""",
        "CREATE INDEX anchor_runs_by_set ON anchor_runs (anchor_set_sha256, id)",
        *_append_only("anchor_runs"),
    )),
)


@dataclass(frozen=True)
class LedgerEntry(Record):
    id: int
    experiment: str
    design_sha256: str
    inputs_sha256: str
    version: int
    verdict: str
    taken_at: str


@dataclass(frozen=True)
class Looks(Record):
    """How many times this approved design was read out before, on other data.

    ``earlier_inputs`` counts the distinct input hashes read out for the design hash before
    these inputs were first read out (all of them, for inputs never read out);
    ``look_number`` = earlier_inputs + 1. Re-running a readout on the same inputs is not a
    new look (``same_inputs_readouts`` counts those).
    """

    design_sha256: str
    inputs_sha256: str
    earlier_inputs: int
    same_inputs_readouts: int
    look_number: int
    repeated: bool
    warning: str | None


class Ledger:
    """The workspace's ledger; use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, *, migrations: tuple[Migration, ...] = MIGRATIONS):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: every transaction below is opened explicitly, so nothing is left
        # half-written if a statement fails.
        self._connection = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            self._migrate(migrations)
        except BaseException:
            self._connection.close()
            raise

    @classmethod
    def for_workspace(cls, workspace: Workspace) -> "Ledger":
        return cls(workspace.ledger)

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    @property
    def schema_version(self) -> int:
        return int(self._connection.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        versions = [migration.version for migration in migrations]
        if versions != list(range(1, len(migrations) + 1)):
            raise ValueError(f"migrations must be numbered 1, 2, 3 … in order, got {versions}")
        for migration in migrations:
            # IMMEDIATE takes the write lock first, so two processes opening a new ledger
            # at once cannot both apply the same step.
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                if self.schema_version < migration.version:
                    for statement in migration.statements:
                        self._connection.execute(statement)
                    self._connection.execute(f"PRAGMA user_version = {int(migration.version)}")
                self._connection.execute("COMMIT")
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
        if self.schema_version > len(migrations):
            raise ValueError(f"{self.path} was written by a newer langchef (schema "
                             f"{self.schema_version}, this one knows {len(migrations)}); "
                             "upgrade langchef")

    def looks(self, design_sha256: str, inputs_sha256: str) -> Looks:
        """The look a readout of these inputs under this design would be."""
        design_sha256 = _check_sha(design_sha256, "design_sha256")
        inputs_sha256 = _check_sha(inputs_sha256, "inputs_sha256")
        return self._looks(design_sha256, inputs_sha256)

    def _looks(self, design_sha256: str, inputs_sha256: str) -> Looks:
        rows = self._connection.execute(
            "SELECT inputs_sha256, MIN(id), COUNT(*) FROM readouts WHERE design_sha256 = ? "
            "GROUP BY inputs_sha256", (design_sha256,)).fetchall()
        first_seen = {inputs: first for inputs, first, _ in rows}
        same = sum(count for inputs, _, count in rows if inputs == inputs_sha256)
        # New inputs come after every earlier set; inputs read out before keep their place,
        # so re-rendering the first look never turns it into a repeated one.
        mine = first_seen.get(inputs_sha256)
        earlier = sum(1 for inputs, first in first_seen.items()
                      if inputs != inputs_sha256 and (mine is None or first < mine))
        warning = None
        if earlier:
            warning = (f"repeated look: this approved design was already read out on {earlier} "
                       f"other set{'s' if earlier > 1 else ''} of data (this is look "
                       f"{earlier + 1}); its error rates hold for a single look, so treat this "
                       "result as one of several tries")
        return Looks(design_sha256, inputs_sha256, int(earlier), int(same), int(earlier) + 1,
                     bool(earlier), warning)

    def record_readout(self, experiment: str, design_sha256: str, inputs_sha256: str,
                       version: int, verdict: str, *,
                       taken_at: datetime | None = None) -> tuple[LedgerEntry, Looks]:
        """Append one readout; returns the entry and the look it was (counted before it)."""
        design_sha256 = _check_sha(design_sha256, "design_sha256")
        inputs_sha256 = _check_sha(inputs_sha256, "inputs_sha256")
        if not isinstance(experiment, str) or not experiment:
            raise ValueError(f"experiment must be a non-empty name, got {experiment!r}")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"version must be a whole number from 1, got {version!r}")
        if not isinstance(verdict, str) or not verdict:
            raise ValueError(f"verdict must be a non-empty text, got {verdict!r}")
        moment = format_utc(taken_at if taken_at is not None else datetime.now(timezone.utc))
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            looks = self._looks(design_sha256, inputs_sha256)
            cursor = self._connection.execute(
                "INSERT INTO readouts (experiment, design_sha256, inputs_sha256, version, "
                "verdict, taken_at) VALUES (?, ?, ?, ?, ?, ?)",
                (experiment, design_sha256, inputs_sha256, version, verdict, moment))
            self._connection.execute("COMMIT")
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        entry = LedgerEntry(int(cursor.lastrowid), experiment, design_sha256, inputs_sha256,
                            version, verdict, moment)
        return entry, looks

    def record_anchor_run(self, run: AnchorRun) -> None:
        """Append one judging of an anchor set (its per-anchor verdicts are kept, so a later
        run can be compared anchor by anchor)."""
        _check_sha(run.anchor_set_sha256, "anchor_set_sha256")
        verdicts = json.dumps({anchor: list(pair) for anchor, pair in sorted(run.verdicts.items())},
                              separators=(",", ":"), ensure_ascii=False)
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            self._connection.execute(
                "INSERT INTO anchor_runs (anchor_set, anchor_set_sha256, judge_id, kappa, counts, "
                "level, taken_at, verdicts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run.anchor_set, run.anchor_set_sha256, run.judge_id, run.kappa,
                 json.dumps(run.counts, sort_keys=True), run.level, run.taken_at, verdicts))
            self._connection.execute("COMMIT")
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise

    def anchor_runs(self, *, anchor_set: str | None = None) -> list[AnchorRun]:
        """Recorded anchor runs, oldest first (all content versions of the set)."""
        where, values = ("WHERE anchor_set = ?", (anchor_set,)) if anchor_set else ("", ())
        rows = self._connection.execute(
            "SELECT anchor_set, anchor_set_sha256, judge_id, verdicts, kappa, level, taken_at, counts "
            f"FROM anchor_runs {where} ORDER BY id", values).fetchall()
        return [AnchorRun(name, digest, judge, {a: tuple(p) for a, p in json.loads(verdicts).items()},
                          kappa, level, taken_at, json.loads(counts))
                for name, digest, judge, verdicts, kappa, level, taken_at, counts in rows]

    def readouts(self, *, experiment: str | None = None,
                 design_sha256: str | None = None) -> list[LedgerEntry]:
        """Recorded readouts in the order they were taken, optionally filtered."""
        clauses, values = [], []
        if experiment is not None:
            clauses.append("experiment = ?")
            values.append(experiment)
        if design_sha256 is not None:
            clauses.append("design_sha256 = ?")
            values.append(design_sha256)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self._connection.execute(
            "SELECT id, experiment, design_sha256, inputs_sha256, version, verdict, taken_at "
            f"FROM readouts{where} ORDER BY id", values).fetchall()
        return [LedgerEntry(*row) for row in rows]


def fingerprint_files(files: Mapping[str, str | Path]) -> str:
    """SHA-256 identifying a set of input files: over the canonical JSON of
    ``{label: sha256(file bytes)}``, so neither the order of the mapping nor the place of
    the workspace changes it, and any changed byte does. Labels are usually
    workspace-relative paths (``runs/x/base.jsonl``)."""
    digests = {}
    for label, path in files.items():
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digests[str(label)] = digest.hexdigest()
    text = json.dumps(digests, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_sha(value, name: str) -> str:
    if not isinstance(value, str) or not SHA256_PATTERN.match(value):
        raise ValueError(f"{name} must be a SHA-256 hex digest (64 lowercase hex digits), "
                         f"got {value!r}")
    return value

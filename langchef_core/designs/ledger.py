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

Tamper evidence. Triggers only discourage: anyone who can write the file can drop them.
So every row of every table is also linked into a hash chain (table ``chain``): each link
is SHA-256 over the previous link, the table, the row id and the SHA-256 of the row's
values. Opening the ledger walks the chain and refuses, naming the table and row, a ledger
where a row was changed, removed or added without its link, or where a trigger is gone.
The chain's head is also copied into every published manifest.json, so rewriting the
whole chain consistently still contradicts the reports already published.

Locks. :meth:`Ledger.exclusive` serialises publishing per experiment. On SQLite it is an
advisory lock on a file beside the ledger (``langchef.sqlite.locks/<experiment>.lock``);
the PostgreSQL ledger (ledger_postgres.py, chosen by ``LANGCHEF_DATABASE_URL``) takes an
advisory lock on the experiment instead, behind the same method.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..inputs.errors import InputError
from ..inputs.workspace import Workspace, check_name
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
    Migration(3, "approvals: every approval of a design, recorded with its file", (
        """CREATE TABLE approvals (
               id INTEGER PRIMARY KEY AUTOINCREMENT,
               experiment TEXT NOT NULL,
               design_sha256 TEXT NOT NULL CHECK (length(design_sha256) = 64),
               approved_by TEXT NOT NULL,
               approved_at TEXT NOT NULL,
               recorded_at TEXT NOT NULL,
               tool_version TEXT NOT NULL
           )""",
        "CREATE INDEX approvals_by_experiment ON approvals (experiment, id)",
        *_append_only("approvals"),
    )),
    Migration(4, "publications: a pending row before a version folder is renamed into place", (
        """CREATE TABLE publications (
               id INTEGER PRIMARY KEY AUTOINCREMENT,
               experiment TEXT NOT NULL,
               version INTEGER NOT NULL CHECK (version >= 1),
               readout_sha256 TEXT NOT NULL CHECK (length(readout_sha256) = 64),
               started_at TEXT NOT NULL
           )""",
        *_append_only("publications"),
    )),
    Migration(5, "the hash chain over every row of every table", (
        """CREATE TABLE chain (
               seq INTEGER PRIMARY KEY AUTOINCREMENT,
               table_name TEXT NOT NULL,
               row_id INTEGER NOT NULL,
               row_sha256 TEXT NOT NULL CHECK (length(row_sha256) = 64),
               link_sha256 TEXT NOT NULL CHECK (length(link_sha256) = 64),
               UNIQUE (table_name, row_id)
           )""",
        *_append_only("chain"),
        # Rows written before the chain existed are linked in, oldest table first.
        "-- backfill",
    )),
)

# The tables the chain covers, with their columns in the order their rows are hashed.
CHAINED = {
    "readouts": ("id", "experiment", "design_sha256", "inputs_sha256", "version", "verdict",
                 "taken_at"),
    "anchor_runs": ("id", "anchor_set", "anchor_set_sha256", "judge_id", "kappa", "counts",
                    "level", "taken_at", "verdicts"),
    "approvals": ("id", "experiment", "design_sha256", "approved_by", "approved_at",
                  "recorded_at", "tool_version"),
    "publications": ("id", "experiment", "version", "readout_sha256", "started_at"),
}
GENESIS = "0" * 64


def _row_sha256(values) -> str:
    text = json.dumps(list(values), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _link_sha256(previous: str, table: str, row_id: int, row_sha256: str) -> str:
    return hashlib.sha256(f"{previous}\n{table}\n{int(row_id)}\n{row_sha256}".encode()).hexdigest()


class LedgerError(InputError):
    """The ledger file cannot be used as it is (tampered with, damaged or not writable)."""


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


@dataclass(frozen=True)
class ApprovalEntry(Record):
    """One approval as the ledger holds it."""

    id: int
    experiment: str
    design_sha256: str
    approved_by: str
    approved_at: str
    recorded_at: str
    tool_version: str


class Ledger:
    """The workspace's ledger; use as a context manager or call :meth:`close`.

    Opening it applies pending migrations and verifies the hash chain (``LedgerError``
    naming the table and row when it does not hold)."""

    def __init__(self, path: str | Path, *, migrations: tuple[Migration, ...] = MIGRATIONS,
                 verify: bool = True):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise LedgerError(f"its folder cannot be created ({error.strerror or error})",
                              file=self.path, hint="check the workspace's permissions") from None
        with self._translated():
            # Autocommit mode: every transaction below is opened explicitly, so nothing is
            # left half-written if a statement fails.
            self._connection = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            with self._translated():
                self._migrate(migrations)
                if verify:
                    self.verify()
        except BaseException:
            self._connection.close()
            raise

    @classmethod
    def for_workspace(cls, workspace: Workspace) -> "Ledger":
        """The workspace's ledger: PostgreSQL when ``LANGCHEF_DATABASE_URL`` is set
        (ledger_postgres.py), else the SQLite file in the workspace."""
        from ..inputs.database import database_url
        url = database_url()
        if url is not None:
            from .ledger_postgres import PostgresLedger
            return PostgresLedger(url)
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

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """sqlite3's errors as one sentence naming the ledger file and what to do."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            text = str(error)
            if "readonly" in text or "unable to open" in text or "disk I/O" in text:
                hint = "make the workspace folder and the ledger writable, then run again"
            elif "locked" in text or "busy" in text:
                hint = "another langchef process holds it; wait for it to finish, then run again"
            elif "full" in text:
                hint = "free some disk space, then run again"
            else:
                hint = ("it is damaged or not a langchef ledger; restore it from a backup (moving "
                        "it aside starts a new ledger whose look count is rebuilt from reports/)")
            raise LedgerError(f"the ledger cannot be used (sqlite: {text})", file=self.path,
                              hint=hint) from None
        except MemoryError:
            raise LedgerError("the ledger is too large to read", file=self.path,
                              hint="restore it from a backup") from None

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        versions = [migration.version for migration in migrations]
        if versions != list(range(1, len(migrations) + 1)):
            raise ValueError(f"migrations must be numbered 1, 2, 3 … in order, got {versions}")
        for migration in migrations:
            if self.schema_version >= migration.version:
                continue  # read without the write lock: a read-only ledger can still be read
            # IMMEDIATE takes the write lock first, so two processes opening a new ledger
            # at once cannot both apply the same step.
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                if self.schema_version < migration.version:
                    for statement in migration.statements:
                        if statement == "-- backfill":
                            self._backfill_chain()
                        else:
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

    # ----------------------------------------------------------------------------------
    # The hash chain
    # ----------------------------------------------------------------------------------

    def _chained_tables(self) -> list[str]:
        present = {name for (name,) in self._connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        return [table for table in CHAINED if table in present]

    def _backfill_chain(self) -> None:
        for table in self._chained_tables():
            columns = ", ".join(CHAINED[table])
            for row in self._connection.execute(
                    f"SELECT {columns} FROM {table} ORDER BY id").fetchall():
                self._link(table, row)

    def _link(self, table: str, row) -> str:
        """Append the chain link of ``row`` (its values in CHAINED order); inside a transaction."""
        if not self._has_chain():
            return GENESIS  # a ledger built with fewer migrations (tests of old schemas)
        previous = self.head()
        row_sha = _row_sha256(row)
        link = _link_sha256(previous, table, row[0], row_sha)
        self._connection.execute(
            "INSERT INTO chain (table_name, row_id, row_sha256, link_sha256) VALUES (?, ?, ?, ?)",
            (table, int(row[0]), row_sha, link))
        return link

    def _has_chain(self) -> bool:
        return self._connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chain'").fetchone() \
            is not None

    def head(self) -> str:
        """The newest link of the chain (``GENESIS`` for an empty ledger)."""
        if not self._has_chain():
            return GENESIS
        found = self._connection.execute(
            "SELECT link_sha256 FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
        return found[0] if found else GENESIS

    def verify(self) -> str:
        """Walk the chain; return its head, or raise ``LedgerError`` naming the first break.

        Every read is taken from one snapshot: another process may append a row and its
        link between two of them, and a walk that saw the link but not the row would call
        an honest ledger tampered with."""
        with self._translated(), self._snapshot():
            return self._verify()

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """A read transaction: SQLite's shared lock keeps one view until it ends (a writer
        waits for it, within the connection's busy timeout)."""
        self._connection.execute("BEGIN")
        try:
            yield
        finally:
            self._connection.execute("COMMIT")

    def _verify(self) -> str:
        def broken(table, row, what):
            where = f"{table} row {row}" if row is not None else f"table {table}"
            raise LedgerError(f"the ledger was tampered with: {where} {what}",
                              file=self.path, hint="restore the ledger from a backup; a ledger "
                              "that fails its hash chain is not evidence of anything")

        if self.schema_version >= 5:
            for table in (*CHAINED, "chain"):
                if table not in self._chained_tables() and (table != "chain" or
                                                            not self._has_chain()):
                    broken(table, None, "was dropped")
        if not self._has_chain():
            return GENESIS

        triggers = self._trigger_names()
        for table in (*self._chained_tables(), "chain"):
            for suffix in ("refuse_update", "refuse_delete"):
                if f"{table}_{suffix}" not in triggers:
                    broken(table, None, f"lost its append-only trigger {table}_{suffix}")
        rows = self._chained_rows()
        previous, linked = GENESIS, {table: set() for table in rows}
        for seq, table, row_id, row_sha, link in self._connection.execute(
                "SELECT seq, table_name, row_id, row_sha256, link_sha256 FROM chain ORDER BY seq"):
            if link != _link_sha256(previous, table, row_id, row_sha):
                broken("chain", seq, "does not follow from the link before it")
            if table not in rows or row_id not in rows[table]:
                broken(table, row_id, "was removed")
            if _row_sha256(rows[table][row_id]) != row_sha:
                broken(table, row_id, "was changed after it was written")
            linked[table].add(row_id)
            previous = link
        for table, found in rows.items():
            extra = sorted(set(found) - linked[table])
            if extra:
                broken(table, extra[0], "was added outside langchef (it has no chain link)")
        return previous

    def _trigger_names(self) -> set[str]:
        return {name for (name,) in self._connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'")}

    def _chained_rows(self) -> dict[str, dict[int, tuple]]:
        """Every chained table's rows, by id (read before the chain, in the same snapshot)."""
        return {table: {row[0]: row for row in self._connection.execute(
                    f"SELECT {', '.join(CHAINED[table])} FROM {table}")}
                for table in self._chained_tables()}

    def _insert(self, table: str, values: dict) -> int:
        """INSERT one row and its chain link; the caller holds the transaction."""
        names = [column for column in CHAINED[table] if column != "id"]
        cursor = self._connection.execute(
            f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            tuple(values[name] for name in names))
        row_id = int(cursor.lastrowid)
        row = self._connection.execute(
            f"SELECT {', '.join(CHAINED[table])} FROM {table} WHERE id = ?", (row_id,)).fetchone()
        self._link(table, row)
        return row_id

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._translated():
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._connection.execute("COMMIT")
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise

    # ----------------------------------------------------------------------------------
    # Locks
    # ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def exclusive(self, experiment: str) -> Iterator[None]:
        """Hold the experiment's publishing lock (blocks until it is free)."""
        folder = self.path.with_name(self.path.name + ".locks")
        try:
            folder.mkdir(exist_ok=True)
            handle = open(folder / f"{check_name(experiment)}.lock", "a+b")
        except OSError as error:
            raise LedgerError(f"the lock file cannot be created ({error.strerror or error})",
                              file=folder, hint="make the workspace folder writable") from None
        try:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - not POSIX: fall back to the SQLite lock
                fcntl = None
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            yield
        finally:
            handle.close()  # closing releases the lock

    # ----------------------------------------------------------------------------------
    # Readouts and looks
    # ----------------------------------------------------------------------------------

    def looks(self, design_sha256: str, inputs_sha256: str, *, sequential: bool = False) -> Looks:
        """The look a readout of these inputs under this design would be.

        ``sequential``: the design was pre-registered with an always-valid stopping rule,
        whose error rates hold under any number of looks; looks are still counted, but a
        later one is not a repeated look to warn about."""
        design_sha256 = _check_sha(design_sha256, "design_sha256")
        inputs_sha256 = _check_sha(inputs_sha256, "inputs_sha256")
        with self._translated():
            looks = self._looks(design_sha256, inputs_sha256)
        return dataclasses.replace(looks, repeated=False, warning=None) if sequential else looks

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
        with self._transaction():
            looks = self._looks(design_sha256, inputs_sha256)
            row_id = self._insert("readouts", {
                "experiment": experiment, "design_sha256": design_sha256,
                "inputs_sha256": inputs_sha256, "version": version, "verdict": verdict,
                "taken_at": moment})
        entry = LedgerEntry(row_id, experiment, design_sha256, inputs_sha256, version, verdict,
                            moment)
        return entry, looks

    def record_publication(self, experiment: str, version: int, readout_sha256: str) -> int:
        """The pending row written before version ``version`` is renamed into place."""
        with self._transaction():
            return self._insert("publications", {
                "experiment": check_name(experiment), "version": int(version),
                "readout_sha256": _check_sha(readout_sha256, "readout_sha256"),
                "started_at": format_utc(datetime.now(timezone.utc))})

    def recorded_versions(self, experiment: str) -> set[int]:
        with self._translated():
            return {version for (version,) in self._connection.execute(
                "SELECT version FROM readouts WHERE experiment = ?", (experiment,))}

    def record_anchor_run(self, run: AnchorRun) -> None:
        """Append one judging of an anchor set (its per-anchor verdicts are kept, so a later
        run can be compared anchor by anchor)."""
        _check_sha(run.anchor_set_sha256, "anchor_set_sha256")
        verdicts = json.dumps({anchor: list(pair) for anchor, pair in sorted(run.verdicts.items())},
                              separators=(",", ":"), ensure_ascii=False)
        with self._transaction():
            self._insert("anchor_runs", {
                "anchor_set": run.anchor_set, "anchor_set_sha256": run.anchor_set_sha256,
                "judge_id": run.judge_id, "kappa": run.kappa,
                "counts": json.dumps(run.counts, sort_keys=True), "level": run.level,
                "taken_at": run.taken_at, "verdicts": verdicts})

    def anchor_runs(self, *, anchor_set: str | None = None) -> list[AnchorRun]:
        """Recorded anchor runs, oldest first (all content versions of the set)."""
        where, values = ("WHERE anchor_set = ?", (anchor_set,)) if anchor_set else ("", ())
        with self._translated():
            rows = self._connection.execute(
                "SELECT anchor_set, anchor_set_sha256, judge_id, verdicts, kappa, level, taken_at, "
                f"counts FROM anchor_runs {where} ORDER BY id", values).fetchall()
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
        with self._translated():
            rows = self._connection.execute(
                "SELECT id, experiment, design_sha256, inputs_sha256, version, verdict, taken_at "
                f"FROM readouts{where} ORDER BY id", values).fetchall()
        return [LedgerEntry(*row) for row in rows]

    # ----------------------------------------------------------------------------------
    # Approvals
    # ----------------------------------------------------------------------------------

    def record_approval(self, experiment: str, design_sha256: str, approved_by: str,
                        approved_at: str, tool_version: str, *,
                        write_file=None) -> ApprovalEntry:
        """Append one approval; ``write_file()`` (the approval file's atomic write) runs inside
        the same transaction, so the row is committed only when the file is in place, and
        a failed write leaves no row."""
        recorded_at = format_utc(datetime.now(timezone.utc))
        values = {"experiment": check_name(experiment),
                  "design_sha256": _check_sha(design_sha256, "design_sha256"),
                  "approved_by": approved_by, "approved_at": approved_at,
                  "recorded_at": recorded_at, "tool_version": tool_version}
        with self._transaction():
            row_id = self._insert("approvals", values)
            if write_file is not None:
                write_file()
        return ApprovalEntry(row_id, **values)

    def approvals(self, experiment: str) -> list[ApprovalEntry]:
        """The approvals recorded for an experiment, oldest first."""
        with self._translated():
            rows = self._connection.execute(
                "SELECT id, experiment, design_sha256, approved_by, approved_at, recorded_at, "
                "tool_version FROM approvals WHERE experiment = ? ORDER BY id",
                (experiment,)).fetchall()
        return [ApprovalEntry(*row) for row in rows]


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

"""The ledger: an append-only record of every readout taken, every approval and every
judging of an anchor set.

It lives in a database rather than a folder of JSON files, because two readouts taken at
once must not both believe they were the first look, and because the append-only rule can
be enforced by the database itself: triggers abort any UPDATE or DELETE of a recorded row.
By default the database is a SQLite file in the workspace (``langchef.sqlite``); a team sets
``LANGCHEF_DATABASE_URL`` and shares one PostgreSQL database. This class is written once, on
SQLAlchemy Core; what the two databases do differently (triggers, locks, snapshots) is in
``store/dialects.py``, the tables in ``store/schema.py`` and the schema's history in
``store/migrations`` (Alembic), applied when the ledger is opened.

Why it exists: a design's error rates hold for one look at one set of data. Reading the
same approved design out again on *different* data (a fresh batch of runs) is allowed, but
the readout is marked as a repeated look with its count, so nobody mistakes the third try
for a first result. Re-running the readout on the *same* data is not a new look.

Tamper evidence. Triggers only discourage: anyone who can write the file can drop them.
So every row of every table is also linked into a hash chain (table ``chain``): each link
is SHA-256 over the previous link, the table, the row id and the SHA-256 of the row's
values. Opening the ledger walks the chain and refuses, naming the table and row, a ledger
where a row was changed, removed or added without its link, or where a trigger is gone.
The chain's head is also copied into every published manifest.json, so rewriting the
whole chain consistently still contradicts the reports already published.

Writers. Every write transaction is serialised against every other writer (SQLite's write
lock; PostgreSQL's transaction-level advisory lock): counting the looks, reading the chain's
head and inserting the row and its link are one step, so two readouts of one design at once
cannot both be "the first look" and the chain never forks. :meth:`Ledger.exclusive`
serialises publishing per experiment (a file lock beside the SQLite file; a session advisory
lock in PostgreSQL, which holds across machines).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ..inputs.workspace import Workspace, check_name
from ..stats.records import Record
from ..store import schema
from ..store.connection import open_connection, translated
from ..store.dialects import dialect_of
from ..store.location import LEDGER, Database, StoreError, ledger_database, postgresql, sqlite_file
from ..store.migrate import current_revisions
from ..store.schema import CHAINED, GENESIS, LEDGER_TABLES, link_sha256, row_sha256
from .ledger_pins import LedgerIdentity, LookPin, _Pins
from .stamps import check_sha256, format_utc

if TYPE_CHECKING:  # anchors bring pandas, which the gate and approvals never need
    from ..scoring.anchors import AnchorRun

__all__ = ["CHAINED", "GENESIS", "ApprovalEntry", "Ledger", "LedgerEntry", "LedgerError",
           "LedgerIdentity", "LookPin", "Looks", "fingerprint_files"]

# What to do, by the kind of error the database reported (store/dialects.py describes it).
_HINTS = {
    "unwritable": "make the workspace folder and the ledger writable, then run again",
    "busy": "another langchef process holds it; wait for it to finish, then run again",
    "full": "free some disk space, then run again",
    "damaged": ("it is damaged or not a langchef ledger; restore it from a backup (moving it "
                "aside starts a new ledger whose look count is rebuilt from reports/)"),
    "unreachable": "check that the database server is up and reachable, then run again",
    "privilege": ("the ledger's rows are never changed or removed; grant the role SELECT and "
                  "INSERT on the ledger's tables"),
    "altered": "the database is not a langchef ledger or it was altered; restore it",
}


class LedgerError(StoreError):
    """The ledger cannot be used as it is (tampered with, damaged or not writable)."""


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


class Ledger(_Pins):
    """A ledger; use as a context manager or call :meth:`close`.

    ``Ledger(path)`` is the SQLite file at ``path``, :meth:`in_database` the PostgreSQL
    database at a URL, and :meth:`for_workspace` the one the workspace's configuration names.
    Opening it applies pending migrations and verifies the hash chain (``LedgerError``
    naming the table and row when it does not hold)."""

    def __init__(self, place: str | Path | Database, *, verify: bool = True):
        self.database = place if isinstance(place, Database) else sqlite_file(place, LEDGER)
        self.dialect = self.database.dialect
        self.path = self.database.where  # what errors name as the ledger's place
        self.url = self.database.target if self.dialect == "postgresql" else None
        self._seams = dialect_of(self.database)
        self._connection = open_connection(self.database, "ledger", _HINTS, LedgerError)
        try:
            if verify:
                self.verify()
        except BaseException:
            self.close()
            raise

    @classmethod
    def in_database(cls, url: str, *, verify: bool = True) -> "Ledger":
        """The ledger in the PostgreSQL database at ``url`` (a libpq URL)."""
        return cls(postgresql(url), verify=verify)

    @classmethod
    def for_workspace(cls, workspace: Workspace) -> "Ledger":
        """The workspace's ledger: PostgreSQL when ``LANGCHEF_DATABASE_URL`` is set, else the
        SQLite file in the workspace; refused when the workspace's published manifests show
        it is an older copy or another workspace's (``designs/continuity.py``)."""
        ledger = cls(ledger_database(workspace))
        try:
            from .continuity import check_continuity  # it reads the workspace's manifests
            check_continuity(ledger, workspace.reports, shown=workspace.relative)
        except BaseException:
            ledger.close()
            raise
        return ledger

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    @property
    def schema_revision(self) -> str:
        """The ledger schema's Alembic revision (``ledger_NNNN``)."""
        with self._reading():
            return (current_revisions(self._connection) or {})[LEDGER]

    def _translated(self):
        """The database's errors as one sentence naming the ledger and what to do."""
        return translated(self.database, "ledger", _HINTS, LedgerError)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """One read transaction (none is ever left open between calls: on SQLite an open
        one would hold a lock every writer waits for)."""
        with self._translated(), self._connection.begin():
            yield

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """A write transaction no other writer interleaves with."""
        with self._translated(), self._seams.write(self._connection):
            yield

    def _rows(self, statement) -> list[tuple]:
        return [tuple(row) for row in self._connection.execute(statement)]

    # ----------------------------------------------------------------------------------
    # The hash chain
    # ----------------------------------------------------------------------------------

    def head(self) -> str:
        """The newest link of the chain (``GENESIS`` for an empty ledger)."""
        with self._reading():
            return self._head()

    def _head(self) -> str:
        found = self._connection.execute(sa.select(schema.chain.c.link_sha256)
                                         .order_by(schema.chain.c.seq.desc()).limit(1)).scalar()
        return found or GENESIS

    def _link(self, table: str, row) -> str:
        """Append the chain link of ``row`` (its values in CHAINED order); inside a transaction."""
        return schema.link(self._connection, self._head(), table, row)

    def verify(self) -> str:
        """Walk the chain; return its head, or raise ``LedgerError`` naming the first break.

        Every read is taken from one snapshot: another process may append a row and its
        link between them, and a walk that saw the link but not the row would call
        an honest ledger tampered with."""
        with self._translated(), self._seams.snapshot(self._connection):
            return self._verify()

    def _verify(self) -> str:
        def broken(table, row, what):
            where = f"{table} row {row}" if row is not None else f"table {table}"
            raise LedgerError(f"the ledger was tampered with: {where} {what}",
                              file=self.path, hint="restore the ledger from a backup; a ledger "
                              "that fails its hash chain is not evidence of anything")

        present = set(sa.inspect(self._connection).get_table_names())
        for table in LEDGER_TABLES:
            if table not in present:
                broken(table, None, "was dropped")
        triggers = self._seams.trigger_names(self._connection)
        for table in LEDGER_TABLES:
            for suffix in ("refuse_update", "refuse_delete"):
                if f"{table}_{suffix}" not in triggers:
                    broken(table, None, f"lost its append-only trigger {table}_{suffix}")
        rows = self._chained_rows()
        previous, linked = GENESIS, {table: set() for table in rows}
        links = {GENESIS: 0}
        chain = schema.chain.c
        for seq, table, row_id, row_sha, link in self._connection.execute(sa.select(
                chain.seq, chain.table_name, chain.row_id, chain.row_sha256, chain.link_sha256)
                .order_by(chain.seq)):
            if link != link_sha256(previous, table, row_id, row_sha):
                broken("chain", seq, "does not follow from the link before it")
            if table not in rows or row_id not in rows[table]:
                broken(table, row_id, "was removed")
            if row_sha256(rows[table][row_id]) != row_sha:
                broken(table, row_id, "was changed after it was written")
            linked[table].add(row_id)
            links[link] = len(links)  # how many links the chain held up to this one
            previous = link
        for table, found in rows.items():
            extra = sorted(set(found) - linked[table])
            if extra:
                broken(table, extra[0], "was added outside langchef (it has no chain link)")
        self._links = links
        return previous

    def link_position(self, link: str) -> int | None:
        """How many links the verified chain holds up to ``link`` (0 for GENESIS), or None
        when it never held it: a manifest's head this ledger lacks was written by another
        ledger, or by this one after the copy was taken."""
        if getattr(self, "_links", None) is None:
            self.verify()
        return self._links.get(link)

    def _chained_rows(self) -> dict[str, dict[int, tuple]]:
        """Every chained table's rows, by id (read before the chain, in the same snapshot)."""
        return {name: {row[0]: row for row in self._rows(sa.select(*table.c))}
                for name, table in schema.CHAINED_TABLES.items()}

    def _insert(self, table: str, values: dict) -> int:
        """INSERT one row and its chain link; the caller holds the transaction."""
        clause = schema.CHAINED_TABLES[table]
        names = [column for column in CHAINED[table] if column != "id"]
        row_id = int(self._connection.execute(sa.insert(clause).values(
            {name: values[name] for name in names}).returning(clause.c.id)).scalar_one())
        # The row is hashed as a read gives it back, which RETURNING does not always do
        # (SQLite returns a REAL 1.0 as the integer 1).
        row = self._connection.execute(sa.select(*clause.c).where(clause.c.id == row_id)).one()
        self._link(table, tuple(row))
        return row_id

    # ----------------------------------------------------------------------------------
    # Locks
    # ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def exclusive(self, experiment: str) -> Iterator[None]:
        """Hold the experiment's publishing lock (blocks until it is free)."""
        with self._translated():
            release = self._seams.lock(self.database, self._connection, check_name(experiment))
        try:
            yield
        finally:
            with self._translated():
                release()

    # ----------------------------------------------------------------------------------
    # Readouts and looks
    # ----------------------------------------------------------------------------------

    def looks(self, design_sha256: str, inputs_sha256: str, *, sequential: bool = False) -> Looks:
        """The look a readout of these inputs under this design would be.

        ``sequential``: the design was pre-registered with an always-valid stopping rule,
        whose error rates hold under any number of looks; looks are still counted, but a
        later one is not a repeated look to warn about."""
        design_sha256 = check_sha256(design_sha256, "design_sha256")
        inputs_sha256 = check_sha256(inputs_sha256, "inputs_sha256")
        with self._reading():
            looks = self._looks(design_sha256, inputs_sha256)
        return dataclasses.replace(looks, repeated=False, warning=None) if sequential else looks

    def _looks(self, design_sha256: str, inputs_sha256: str) -> Looks:
        readouts = schema.readouts.c
        rows = self._rows(sa.select(readouts.inputs_sha256, sa.func.min(readouts.id),
                                    sa.func.count()).where(readouts.design_sha256 == design_sha256)
                          .group_by(readouts.inputs_sha256))
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
        design_sha256 = check_sha256(design_sha256, "design_sha256")
        inputs_sha256 = check_sha256(inputs_sha256, "inputs_sha256")
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

    def record_publication(self, experiment: str, version: int,
                           readout_sha256: str) -> tuple[str, int]:
        """The pending row written before version ``version`` is renamed into place; returns
        the chain's head right after it and how many links the chain then holds (what the
        version's manifest carries)."""
        with self._transaction():
            self._insert("publications", {
                "experiment": check_name(experiment), "version": int(version),
                "readout_sha256": check_sha256(readout_sha256, "readout_sha256"),
                "started_at": format_utc(datetime.now(timezone.utc))})
            links = self._connection.execute(sa.select(sa.func.count()).select_from(
                schema.chain)).scalar_one()
            return self._head(), int(links)

    def publication_hashes(self, experiment: str, version: int) -> set[str]:
        """The readout hashes recorded for version ``version`` (more than one only when a
        writer lost the race for that version and moved on to the next)."""
        publications = schema.publications.c
        with self._reading():
            return set(self._connection.execute(
                sa.select(publications.readout_sha256).where(
                    publications.experiment == experiment, publications.version == int(version))
            ).scalars())

    def recorded_versions(self, experiment: str) -> set[int]:
        readouts = schema.readouts.c
        with self._reading():
            return set(self._connection.execute(
                sa.select(readouts.version).where(readouts.experiment == experiment)).scalars())

    def record_anchor_run(self, run: AnchorRun) -> None:
        """Append one judging of an anchor set (its per-anchor verdicts are kept, so a later
        run can be compared anchor by anchor)."""
        check_sha256(run.anchor_set_sha256, "anchor_set_sha256")
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
        from ..scoring.anchors import AnchorRun
        runs = schema.anchor_runs.c
        statement = sa.select(runs.anchor_set, runs.anchor_set_sha256, runs.judge_id,
                              runs.verdicts, runs.kappa, runs.level, runs.taken_at,
                              runs.counts).order_by(runs.id)
        if anchor_set:
            statement = statement.where(runs.anchor_set == anchor_set)
        with self._reading():
            rows = self._rows(statement)
        return [AnchorRun(name, digest, judge, {a: tuple(p) for a, p in json.loads(verdicts).items()},
                          kappa, level, taken_at, json.loads(counts))
                for name, digest, judge, verdicts, kappa, level, taken_at, counts in rows]

    def readouts(self, *, experiment: str | None = None,
                 design_sha256: str | None = None) -> list[LedgerEntry]:
        """Recorded readouts in the order they were taken, optionally filtered."""
        readouts = schema.readouts.c
        statement = sa.select(*schema.readouts.c).order_by(readouts.id)
        if experiment is not None:
            statement = statement.where(readouts.experiment == experiment)
        if design_sha256 is not None:
            statement = statement.where(readouts.design_sha256 == design_sha256)
        with self._reading():
            return [LedgerEntry(*row) for row in self._rows(statement)]

    # ----------------------------------------------------------------------------------
    # Approvals
    # ----------------------------------------------------------------------------------

    def record_approval(self, experiment: str, design_sha256: str, approved_by: str,
                        approved_at: str, tool_version: str, *,
                        write_file=None) -> ApprovalEntry:
        """Append one approval; ``write_file(earlier)`` (the approval file's atomic write) runs
        inside the same transaction, so the row is committed only when the file is in place,
        and a failed write (or one that raises to say nothing changed) leaves no row.
        ``earlier`` is the experiment's approvals before this one, read under the write lock:
        two approvals at once are serialised, and the file the second writes keeps the first
        in its history."""
        recorded_at = format_utc(datetime.now(timezone.utc))
        values = {"experiment": check_name(experiment),
                  "design_sha256": check_sha256(design_sha256, "design_sha256"),
                  "approved_by": approved_by, "approved_at": approved_at,
                  "recorded_at": recorded_at, "tool_version": tool_version}
        with self._transaction():
            earlier = self._approvals(experiment)
            row_id = self._insert("approvals", values)
            if write_file is not None:
                write_file(earlier)
        return ApprovalEntry(row_id, **values)

    def approvals(self, experiment: str) -> list[ApprovalEntry]:
        """The approvals recorded for an experiment, oldest first."""
        with self._reading():
            return self._approvals(experiment)

    def _approvals(self, experiment: str) -> list[ApprovalEntry]:
        approvals = schema.approvals.c
        return [ApprovalEntry(*row) for row in self._rows(
            sa.select(*schema.approvals.c).where(approvals.experiment == experiment)
            .order_by(approvals.id))]


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


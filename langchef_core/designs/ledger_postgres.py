"""The ledger in PostgreSQL, for a team that shares one (``LANGCHEF_DATABASE_URL``).

The same tables, rows, hash chain and look counting as the SQLite ledger (ledger.py, whose
queries this class reuses through a small connection adapter); what differs is how the
database keeps the guarantees when many processes on many machines write at once:

- **Append-only**: triggers refuse UPDATE, DELETE and TRUNCATE on every table, for every
  role including the owner. Grant the application role only ``SELECT, INSERT`` and it
  cannot disable them either (``ALTER TABLE … DISABLE TRIGGER`` needs the owner).
- **One writer at a time**: every write transaction first takes a transaction-level
  advisory lock (``pg_advisory_xact_lock``), held to its COMMIT or ROLLBACK. Counting the
  looks, reading the chain's head and inserting the row and its link are therefore one
  step: two readouts of one design at once cannot both be "the first look", and the chain
  never forks. A writer that dies mid-transaction is rolled back by the server and its lock
  released; a rolled-back write leaves no gap (no SEQUENCE numbers a row).
- **Per-experiment publishing**: :meth:`exclusive` holds a session advisory lock on the
  experiment for the whole publish (folders, ledger rows, ``latest``), so version numbers
  are distinct and gap-free across machines that share the reports folder, where a file
  lock on a network filesystem would not be trusted.

The schema version is the newest row of ``langchef_schema`` (SQLite keeps it in
``user_version``). :data:`PG_MIGRATIONS` is numbered like ledger.MIGRATIONS: a new SQLite
step needs its PostgreSQL twin here, with the same columns in ledger.CHAINED.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..inputs.database import APPEND_ONLY_FUNCTION, LOCK_NAMESPACE, append_only, connect, redacted
from .ledger import CHAINED, Ledger, LedgerError, Migration

WRITE_LOCK = 1  # second key of the advisory lock every ledger write takes
EXPERIMENT_NAMESPACE = LOCK_NAMESPACE + 1  # first key of the per-experiment publishing locks

_ID = "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
PG_MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "readouts taken per design hash", (
        ("CREATE TABLE langchef_schema (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
         "applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())"),
        APPEND_ONLY_FUNCTION,
        *append_only("langchef_schema"),
        f"""CREATE TABLE readouts (
               {_ID},
               experiment TEXT NOT NULL,
               design_sha256 TEXT NOT NULL CHECK (length(design_sha256) = 64),
               inputs_sha256 TEXT NOT NULL CHECK (length(inputs_sha256) = 64),
               version INTEGER NOT NULL CHECK (version >= 1),
               verdict TEXT NOT NULL,
               taken_at TEXT NOT NULL
           )""",
        "CREATE INDEX readouts_by_design ON readouts (design_sha256, inputs_sha256)",
        "CREATE INDEX readouts_by_experiment ON readouts (experiment, version)",
        *append_only("readouts"),
    )),
    Migration(2, "anchor runs: every judging of an anchor set, with its verdicts", (
        f"""CREATE TABLE anchor_runs (
               {_ID},
               anchor_set TEXT NOT NULL,
               anchor_set_sha256 TEXT NOT NULL CHECK (length(anchor_set_sha256) = 64),
               judge_id TEXT NOT NULL,
               kappa DOUBLE PRECISION,
               counts TEXT NOT NULL,
               level TEXT NOT NULL CHECK (level IN ('ok', 'warn', 'error')),
               taken_at TEXT NOT NULL,
               verdicts TEXT NOT NULL
           )""",
        "CREATE INDEX anchor_runs_by_set ON anchor_runs (anchor_set_sha256, id)",
        *append_only("anchor_runs"),
    )),
    Migration(3, "approvals: every approval of a design, recorded with its file", (
        f"""CREATE TABLE approvals (
               {_ID},
               experiment TEXT NOT NULL,
               design_sha256 TEXT NOT NULL CHECK (length(design_sha256) = 64),
               approved_by TEXT NOT NULL,
               approved_at TEXT NOT NULL,
               recorded_at TEXT NOT NULL,
               tool_version TEXT NOT NULL
           )""",
        "CREATE INDEX approvals_by_experiment ON approvals (experiment, id)",
        *append_only("approvals"),
    )),
    Migration(4, "publications: a pending row before a version folder is renamed into place", (
        f"""CREATE TABLE publications (
               {_ID},
               experiment TEXT NOT NULL,
               version INTEGER NOT NULL CHECK (version >= 1),
               readout_sha256 TEXT NOT NULL CHECK (length(readout_sha256) = 64),
               started_at TEXT NOT NULL
           )""",
        *append_only("publications"),
    )),
    Migration(5, "the hash chain over every row of every table", (
        """CREATE TABLE chain (
               seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
               table_name TEXT NOT NULL,
               row_id BIGINT NOT NULL,
               row_sha256 TEXT NOT NULL CHECK (length(row_sha256) = 64),
               link_sha256 TEXT NOT NULL CHECK (length(link_sha256) = 64),
               UNIQUE (table_name, row_id)
           )""",
        *append_only("chain"),
    )),
)


class _Connection:
    """The slice of sqlite3's connection API the ledger's queries use, over psycopg2 in
    autocommit mode (transactions are opened explicitly, as on SQLite)."""

    def __init__(self, raw):
        self.raw = raw
        raw.autocommit = True

    def execute(self, sql: str, parameters=()):
        cursor = self.raw.cursor()
        if parameters:
            cursor.execute(sql.replace("?", "%s"), tuple(parameters))
        else:
            cursor.execute(sql)
        return cursor

    def close(self) -> None:
        self.raw.close()


class PostgresLedger(Ledger):
    """The ledger in the PostgreSQL database at ``url`` (see the module doc)."""

    def __init__(self, url: str, *, migrations: tuple[Migration, ...] = PG_MIGRATIONS,
                 verify: bool = True):
        self.url = url
        self.path = redacted(url)  # what errors name as the ledger's place
        self._connection = _Connection(connect(url))
        try:
            with self._translated():
                self._migrate(migrations)
                if verify:
                    self.verify()
        except BaseException:
            self._connection.close()
            raise

    @property
    def schema_version(self) -> int:
        present = self._connection.execute("SELECT to_regclass('langchef_schema')").fetchone()[0]
        if present is None:
            return 0
        found = self._connection.execute("SELECT max(version) FROM langchef_schema").fetchone()
        return int(found[0] or 0)

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        import psycopg2
        try:
            yield
        except psycopg2.Error as error:
            text = (str(error).strip().splitlines() or [type(error).__name__])[0]
            if isinstance(error, (psycopg2.OperationalError, psycopg2.InterfaceError)):
                hint = "check that the database server is up and reachable, then run again"
            elif isinstance(error, psycopg2.errors.InsufficientPrivilege):
                hint = ("the ledger's rows are never changed or removed; grant the role SELECT "
                        "and INSERT on the ledger's tables")
            else:
                hint = "the database is not a langchef ledger or it was altered; restore it"
            raise LedgerError(f"the ledger cannot be used (postgresql: {text})", file=self.path,
                              hint=hint) from None

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        versions = [migration.version for migration in migrations]
        if versions != list(range(1, len(migrations) + 1)):
            raise ValueError(f"migrations must be numbered 1, 2, 3 … in order, got {versions}")
        for migration in migrations:
            if self.schema_version >= migration.version:
                continue
            with self._locked_transaction(0):  # the schema lock: one process migrates
                if self.schema_version < migration.version:
                    self._connection.execute("SET LOCAL client_min_messages = warning")
                    for statement in migration.statements:
                        self._connection.execute(statement)
                    self._connection.execute(
                        "INSERT INTO langchef_schema (version, description) VALUES (?, ?)",
                        (migration.version, migration.description))
        if self.schema_version > len(migrations):
            raise ValueError(f"{self.path} was written by a newer langchef (schema "
                             f"{self.schema_version}, this one knows {len(migrations)}); "
                             "upgrade langchef")

    def _chained_tables(self) -> list[str]:
        present = {name for (name,) in self._connection.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")}
        return [table for table in CHAINED if table in present]

    def _has_chain(self) -> bool:
        return self._connection.execute("SELECT to_regclass('chain')").fetchone()[0] is not None

    def _trigger_names(self) -> set[str]:
        return {name for (name,) in self._connection.execute(
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal "
            "AND t.tgenabled <> 'D'")}

    def _insert(self, table: str, values: dict) -> int:
        names = [column for column in CHAINED[table] if column != "id"]
        row = self._connection.execute(
            f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
            f"RETURNING {', '.join(CHAINED[table])}",
            tuple(values[name] for name in names)).fetchone()
        self._link(table, row)
        return int(row[0])

    @contextlib.contextmanager
    def _locked_transaction(self, key: int) -> Iterator[None]:
        self._connection.execute("BEGIN")
        try:
            self._connection.execute("SELECT pg_advisory_xact_lock(?, ?)", (LOCK_NAMESPACE, key))
            yield
            self._connection.execute("COMMIT")
        except BaseException:
            if not self._connection.raw.closed:
                self._connection.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """REPEATABLE READ: every statement sees the rows committed when the first began."""
        self._connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield
        finally:
            if not self._connection.raw.closed:
                self._connection.execute("COMMIT")

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._translated(), self._locked_transaction(WRITE_LOCK):
            yield

    @contextlib.contextmanager
    def exclusive(self, experiment: str) -> Iterator[None]:
        """Hold the experiment's publishing lock (blocks until it is free). A session lock:
        it spans the publish's several transactions, and the server drops it if the
        process dies."""
        key = ("SELECT pg_advisory_lock(?, hashtext(?))",
               "SELECT pg_advisory_unlock(?, hashtext(?))")
        with self._translated():
            self._connection.execute(key[0], (EXPERIMENT_NAMESPACE, experiment))
        try:
            yield
        finally:
            if not self._connection.raw.closed:
                with self._translated():
                    self._connection.execute(key[1], (EXPERIMENT_NAMESPACE, experiment))

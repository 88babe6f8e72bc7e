"""Everything that differs between SQLite and PostgreSQL, in one place.

The ledger and the verdict cache are written once, on SQLAlchemy Core; what each database
does its own way is a method here, named for the guarantee it keeps:

- ``engine``: how a connection is made (SQLite: the file, a busy timeout, and SQLAlchemy
  emitting BEGIN itself so that a transaction means one; PostgreSQL: libpq's URL, psycopg2);
- ``write``: a transaction that no other writer interleaves with (SQLite ``BEGIN IMMEDIATE``
  takes the write lock first; PostgreSQL takes a transaction-level advisory lock, released by
  COMMIT or ROLLBACK, or by the server when the writer dies);
- ``snapshot``: a read transaction whose statements all see one state (SQLite: a deferred
  BEGIN, whose shared lock a writer waits for; PostgreSQL: REPEATABLE READ READ ONLY);
- ``lock``: a named lock held across transactions, for publishing one experiment (SQLite: a
  file lock beside the database; PostgreSQL: a session advisory lock, trusted across machines
  where a file lock on a network filesystem would not be);
- ``append_only`` and ``trigger_names``: triggers that refuse changing or removing a row, and
  the ones still enabled (PostgreSQL also refuses TRUNCATE, for every role including the
  owner; a role granted only SELECT, INSERT cannot disable them);
- ``legacy_version`` and ``legacy_mark``: the schema counter langchef kept before Alembic
  (SQLite ``user_version``; PostgreSQL table ``langchef_schema``), still maintained so that
  an older langchef refuses a newer ledger instead of writing to it;
- ``describe``: a driver error as its first line and the kind of remedy it calls for;
- ``insert_new``: an INSERT that leaves an existing row alone (the first writer wins).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from .location import DATABASE_URL_VARIABLE, Database, StoreError, libpq_url, redacted

# Namespace of langchef's advisory locks (pg_advisory_lock takes two int4 keys): 'lc' + 16.
LOCK_NAMESPACE = 0x6C63_0016
SCHEMA_LOCK, WRITE_LOCK = 0, 1  # second keys: migrating the schema, writing a row
EXPERIMENT_NAMESPACE = LOCK_NAMESPACE + 1  # first key of the per-experiment publishing locks
BUSY_TIMEOUT_S = 30.0
_BEGIN = "langchef_begin"  # Connection.info key: the BEGIN statement of the next transaction


class SQLite:
    name = "sqlite"

    def engine(self, database: Database) -> sa.Engine:
        path = Path(database.target)
        # isolation_level=None: sqlite3 never begins a transaction behind our back; the
        # "begin" event emits the BEGIN (deferred, or IMMEDIATE for a write) instead. A
        # connection may serve several threads, one at a time (the cache's lock).
        engine = sa.create_engine(
            "sqlite+pysqlite://", poolclass=NullPool,
            creator=lambda: sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                            check_same_thread=False))
        sa.event.listen(engine, "begin",
                        lambda connection: connection.exec_driver_sql(
                            connection.info.pop(_BEGIN, "BEGIN")))
        return engine

    @contextlib.contextmanager
    def write(self, connection: sa.Connection, key: int = WRITE_LOCK) -> Iterator[None]:
        connection.info[_BEGIN] = "BEGIN IMMEDIATE"  # the write lock first: no upgrade race
        try:
            with connection.begin():
                yield
        finally:
            connection.info.pop(_BEGIN, None)

    @contextlib.contextmanager
    def snapshot(self, connection: sa.Connection) -> Iterator[None]:
        with connection.begin():
            yield

    def lock(self, database: Database, connection: sa.Connection, name: str) -> Callable[[], None]:
        """Take the lock on ``<file>.locks/<name>.lock`` (blocks); returns its release."""
        path = Path(database.target)
        folder = path.with_name(path.name + ".locks")
        try:
            folder.mkdir(exist_ok=True)
            handle = open(folder / f"{name}.lock", "a+b")
        except OSError as error:
            raise StoreError(f"the lock file cannot be created ({error.strerror or error})",
                             file=folder, hint="make the workspace folder writable") from None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: the SQLite write lock still holds
            return handle.close
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        except BaseException:
            handle.close()
            raise
        return handle.close  # closing releases the lock

    def setup(self) -> tuple[str, ...]:
        return ()

    def append_only(self, table: str) -> tuple[str, ...]:
        message = (f"the langchef ledger is append-only: rows of {table} are never changed or "
                   "removed")
        return tuple(f"CREATE TRIGGER {table}_refuse_{operation.lower()} BEFORE {operation} ON "
                     f"{table} BEGIN SELECT RAISE(ABORT, '{message}'); END"
                     for operation in ("UPDATE", "DELETE"))

    def trigger_names(self, connection: sa.Connection) -> set[str]:
        return set(connection.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'").scalars())

    def legacy_setup(self) -> tuple[str, ...]:
        return ()

    def legacy_version(self, connection: sa.Connection) -> int:
        return int(connection.exec_driver_sql("PRAGMA user_version").scalar())

    def legacy_mark(self, version: int, description: str) -> sa.TextClause:
        return sa.text(f"PRAGMA user_version = {int(version)}")

    def now(self) -> sa.TextClause:
        return sa.text("(strftime('%Y-%m-%d %H:%M:%f', 'now'))")

    def describe(self, error: BaseException) -> tuple[str, str]:
        text = str(error)
        if "readonly" in text or "unable to open" in text or "disk I/O" in text:
            return text, "unwritable"
        if "locked" in text or "busy" in text:
            return text, "busy"
        return text, "full" if "full" in text else "damaged"

    def insert_new(self, table: sa.TableClause):
        from sqlalchemy.dialects.sqlite import insert
        return insert(table).on_conflict_do_nothing()


class PostgreSQL:
    name = "postgresql"

    def engine(self, database: Database) -> sa.Engine:
        try:
            import psycopg2
        except ImportError:
            raise StoreError(f"{DATABASE_URL_VARIABLE} is set but the PostgreSQL driver is not "
                             "installed", hint="pip install psycopg2-binary, or unset "
                             f"{DATABASE_URL_VARIABLE} to use the workspace's SQLite files") \
                from None
        url = str(database.target)

        def connect():
            try:
                return psycopg2.connect(libpq_url(url), connect_timeout=10,
                                        application_name="langchef")
            except psycopg2.Error as error:
                raise StoreError(f"cannot connect to the PostgreSQL database {redacted(url)} "
                                 f"({first_line(error)})", hint=f"check {DATABASE_URL_VARIABLE} "
                                 "and that the server is up and reachable") from None

        return sa.create_engine("postgresql+psycopg2://", creator=connect, poolclass=NullPool)

    @contextlib.contextmanager
    def write(self, connection: sa.Connection, key: int = WRITE_LOCK) -> Iterator[None]:
        with connection.begin():
            connection.execute(sa.select(sa.func.pg_advisory_xact_lock(LOCK_NAMESPACE, key)))
            yield

    @contextlib.contextmanager
    def snapshot(self, connection: sa.Connection) -> Iterator[None]:
        with connection.begin():
            connection.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield

    def lock(self, database: Database, connection: sa.Connection, name: str) -> Callable[[], None]:
        """A session lock: it spans the publish's several transactions, and the server drops
        it if the process dies."""
        key = (EXPERIMENT_NAMESPACE, sa.func.hashtext(name))
        with connection.begin():
            connection.execute(sa.select(sa.func.pg_advisory_lock(*key)))

        def release() -> None:
            if not connection.closed and not connection.invalidated:
                with connection.begin():
                    connection.execute(sa.select(sa.func.pg_advisory_unlock(*key)))
        return release

    def setup(self) -> tuple[str, ...]:
        return ("""
CREATE OR REPLACE FUNCTION langchef_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the langchef ledger is append-only: rows of % are never changed or '
                    'removed (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$""",)

    def append_only(self, table: str) -> tuple[str, ...]:
        # The names are SQLite's (<table>_refuse_update …), which verification looks for.
        return tuple(
            f"CREATE OR REPLACE TRIGGER {table}_refuse_{operation.lower()} BEFORE {operation} "
            f"ON {table} FOR EACH {'STATEMENT' if operation == 'TRUNCATE' else 'ROW'} "
            "EXECUTE FUNCTION langchef_refuse_change()"
            for operation in ("UPDATE", "DELETE", "TRUNCATE"))

    def trigger_names(self, connection: sa.Connection) -> set[str]:
        return set(connection.exec_driver_sql(
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal "
            "AND t.tgenabled <> 'D'").scalars())

    def legacy_setup(self) -> tuple[str, ...]:
        return ("CREATE TABLE langchef_schema (version INTEGER PRIMARY KEY, description TEXT NOT "
                "NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())",
                *self.append_only("langchef_schema"))

    def legacy_version(self, connection: sa.Connection) -> int:
        if connection.exec_driver_sql("SELECT to_regclass('langchef_schema')").scalar() is None:
            return 0
        return int(connection.exec_driver_sql(
            "SELECT max(version) FROM langchef_schema").scalar() or 0)

    def legacy_mark(self, version: int, description: str) -> sa.TextClause:
        return sa.text("INSERT INTO langchef_schema (version, description) VALUES "
                       "(:version, :description)").bindparams(version=int(version),
                                                              description=description)

    def now(self) -> sa.TextClause:
        return sa.text("clock_timestamp()")

    def describe(self, error: BaseException) -> tuple[str, str]:
        import psycopg2
        text = first_line(error)
        if isinstance(error, (psycopg2.OperationalError, psycopg2.InterfaceError)):
            return text, "unreachable"
        if isinstance(error, psycopg2.errors.InsufficientPrivilege):
            return text, "privilege"
        return text, "altered"

    def insert_new(self, table: sa.TableClause):
        from sqlalchemy.dialects.postgresql import insert
        return insert(table).on_conflict_do_nothing()


DIALECTS = {dialect.name: dialect for dialect in (SQLite(), PostgreSQL())}


@functools.lru_cache(maxsize=64)
def _engine(dialect: str, target: str) -> sa.Engine:
    return DIALECTS[dialect].engine(Database(dialect, target, ()))


def engine_for(database: Database) -> sa.Engine:
    """The process's engine for ``database``: one per database, so the statements compiled
    for one ledger or cache opened are reused by the next (compiling them again on every
    open is most of what opening costs). No pool: a connection is opened by the store that
    holds it and closed with it, so nothing outlives a store or crosses a fork."""
    return _engine(database.dialect, str(database.target))


def dialect_of(database_or_name: Database | str):
    """The seams of a database (or of a dialect named ``sqlite`` / ``postgresql``)."""
    name = getattr(database_or_name, "dialect", database_or_name)
    return DIALECTS[name]


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__

"""Opening a store's database, and its errors as one sentence naming it and what to do."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import sqlalchemy as sa

from ..inputs.workspace import Workspace
from .dialects import dialect_of, engine_for
from .location import Database, StoreError, workspace_databases
from .migrate import Upgrade, ensure_current, upgrade

# What to do, by the kind of error a database reported (dialects.describe), for a store
# named generically (the ledger and the cache have their own sentences).
HINTS = {
    "unwritable": "make the workspace folder and its database files writable, then run again",
    "busy": "another langchef process holds it; wait for it to finish, then run again",
    "full": "free some disk space, then run again",
    "damaged": "it is damaged or not a langchef database; restore it from a backup",
    "unreachable": "check that the database server is up and reachable, then run again",
    "privilege": ("upgrading creates and alters tables: run it as the role that owns "
                  "langchef's tables"),
    "altered": "the database is not a langchef database or it was altered; restore it",
}


def open_connection(database: Database, what: str, hints: Mapping[str, str],
                    error: type[StoreError] = StoreError) -> sa.Connection:
    """A connection to ``database`` whose schema is at the newest revision (migrated on the
    way when it is not; a SQLite file and its folder are created when missing)."""
    if database.dialect == "sqlite":
        folder = Path(database.target).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as problem:
            raise error(f"its folder cannot be created ({problem.strerror or problem})",
                        file=database.where, hint="check the workspace's permissions") from None
    with translated(database, what, hints, error):
        connection = engine_for(database).connect()
    try:
        with translated(database, what, hints, error):
            ensure_current(database, connection)
    except BaseException:
        connection.close()
        raise
    return connection


def upgrade_workspace(workspace: Workspace) -> list[Upgrade]:
    """``langchef db upgrade``: bring every database the workspace's stores use (the team's
    PostgreSQL database, or the workspace's ledger and verdict cache files) to the newest
    revision, stamping a schema made before Alembic first. A SQLite file that does not
    exist yet is left for its first use (``after`` is None). Opening a store does the same
    on the way; this is for an operator who wants it done, and reported, explicitly."""
    done = []
    for database in workspace_databases(workspace):
        if not database.exists():
            done += [Upgrade(str(database.where), branch, None, None, None)
                     for branch in database.branches]
            continue
        with translated(database, "database", HINTS), \
                engine_for(database).connect() as connection:
            done += upgrade(database, connection)
    return done


@contextlib.contextmanager
def translated(database: Database, what: str, hints: Mapping[str, str],
               error: type[StoreError] = StoreError) -> Iterator[None]:
    """The driver's errors as ``<where>: the <what> cannot be used (<dialect>: <first line>);
    <hint>``, the hint chosen by the kind of error (``hints``: kind → what to do). A failed
    transaction has already been rolled back by the ``with`` that opened it."""
    try:
        yield
    except sa.exc.DBAPIError as wrapped:
        text, kind = dialect_of(database).describe(wrapped.orig)
        raise error(f"the {what} cannot be used ({database.dialect}: {text})",
                    file=database.where, hint=hints[kind]) from None
    except StoreError as problem:
        if isinstance(problem, error):
            raise
        raise error(problem.message, file=problem.file, hint=problem.hint) from None
    except MemoryError:
        raise error(f"the {what} is too large to read", file=database.where,
                    hint="restore it from a backup") from None

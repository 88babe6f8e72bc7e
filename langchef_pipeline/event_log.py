"""Dagster's SQLite event log, with each database's connection kept open between events.

Dagster's own ``SqliteEventLogStorage`` creates a SQLAlchemy engine, opens the file and
closes it again for every event it stores or reads. A demo readout writes 321 events, so on
a DAGSTER_HOME it took 6.5–7.0 s where the same readout on an in-memory instance takes
3.9–4.6 s: the instance's bookkeeping, not the readout, was a third of a readout launched
from `dagster dev` (issue 31: the UI within 1.5× of `langchef readout`). This storage is the
same class, files and tables, and keeps one connection per database open instead, for the
few most recently used runs.

Two things Dagster relied on the closing for are kept:

- the UI's live event view watches each run's ``<run id>.db`` for modification (watchdog),
  and SQLite in WAL mode writes a commit to ``.db`` only at a checkpoint, which closing the
  last connection did. A write to a run's database is therefore followed by a passive
  checkpoint, so ``.db`` changes with every event as before;
- files ``wipe`` deletes, and connections a forked child inherits, are never used again.

`DEFAULT_INSTANCE_YAML` (``langchef_pipeline.materialize``) names this class, so a
DAGSTER_HOME langchef sets up uses it; an existing dagster.yaml is never rewritten.
"""

from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as db
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from sqlalchemy.pool import StaticPool

# Databases whose connection stays open at once: a run writes to its own and to the index;
# the webserver reads the runs a person is looking at. Each holds three file descriptors.
OPEN_DATABASES = 8


class KeptOpenSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with one open connection per database, most recent first."""

    def __init__(self, base_dir: str, inst_data=None):
        self._engines: OrderedDict[str, db.Engine] = OrderedDict()
        self._engines_pid = os.getpid()
        self._inherited: list[db.Engine] = []
        # Closed at exit too, so the last events are checkpointed into the run's .db file.
        weakref.finalize(self, _dispose, self._engines, self._engines_pid)
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[db.Connection]:
        # Dagster's lock serialises every use of this storage, so one connection per
        # database is never used by two threads at once (hence check_same_thread off).
        with self._db_lock:
            with self._engine(shard).connect() as connection:
                raw = connection.connection.dbapi_connection
                changes_before = raw.total_changes
                with connection.begin():
                    yield connection
                if shard != INDEX_SHARD_NAME and raw.total_changes != changes_before:
                    connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def _engine(self, shard: str) -> db.Engine:
        if os.getpid() != self._engines_pid:
            # A forked child: the parent's connections are not ours to use, nor to close (SQLite
            # forbids either across a fork), so they are kept referenced and left alone.
            self._inherited.extend(self._engines.values())
            self._engines.clear()
            self._engines_pid = os.getpid()
            weakref.finalize(self, _dispose, self._engines, self._engines_pid)
        engine = self._engines.get(shard)
        if engine is not None:
            self._engines.move_to_end(shard)
            return engine
        engine = db.create_engine(self.conn_string_for_shard(shard), poolclass=StaticPool,
                                  connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
                                                "check_same_thread": False})
        if shard not in self._initialized_dbs:
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        self._engines[shard] = engine
        while len(self._engines) > OPEN_DATABASES:
            self._engines.popitem(last=False)[1].dispose()
        return engine

    def wipe(self) -> None:
        with self._db_lock:
            _dispose(self._engines, self._engines_pid)   # the files are about to be deleted
        super().wipe()

    def dispose(self) -> None:
        super().dispose()
        with self._db_lock:
            _dispose(self._engines, self._engines_pid)


def _dispose(engines: OrderedDict, pid: int) -> None:
    """Close ``engines`` (a checkpoint each, as the last connection to a database closes)
    when called in the process that opened them."""
    if os.getpid() != pid:
        return
    while engines:
        engines.popitem()[1].dispose()

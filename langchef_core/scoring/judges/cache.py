"""The verdict cache, keyed by (judge id, item hash): a SQLite file in the workspace, or the
team's PostgreSQL database when ``LANGCHEF_DATABASE_URL`` is set.

A verdict depends only on the judge (its id pins model, prompt and settings) and on what
it read (input, output, ideal, context), so re-judging the same content with the same
judge is pure cost. The cache stores each verdict the moment it arrives, so a run that
stops half-way (budget spent, endpoint down) keeps what it already paid for, and the next
run calls the endpoint only for what is missing. Shards of one judging run, a retried step
and a resumed run all read and write one table, so a verdict paid for once is never paid
for again.

Rows are never changed: the first verdict stored for a key wins (two shards that judged
identical content race harmlessly, a judge id pins a deterministic setting), and triggers
refuse UPDATE and DELETE. Written once on SQLAlchemy Core (``store/``); every operation is
its own short transaction, so threads of one process and several processes (a Dagster run
and a CLI call) share the cache, the database serialising their writes.

Close a cache when done (its connection is held open until then).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from ...store import schema
from ...store.connection import open_connection, translated
from ...store.dialects import dialect_of
from ...store.location import (CACHE_FILE_NAME, VERDICTS, Database, cache_database, postgresql,
                               sqlite_file)

__all__ = ["CACHE_FILE_NAME", "CachedVerdict", "VerdictCache", "default_cache_path",
           "open_verdict_cache"]

# A SQLite statement binds at most 999 parameters in older builds; stay well below.
_CHUNK = 500
_HINTS = {
    "unwritable": "make the workspace folder and the verdict cache writable, then run again",
    "busy": "another langchef process holds it; wait for it to finish, then run again",
    "full": "free some disk space, then run again",
    "damaged": ("it is damaged or not a langchef verdict cache; move it aside (judging again "
                "fills a new one)"),
    "unreachable": "check that the database server is up and reachable, then run again",
    "privilege": "grant the role SELECT and INSERT on the table verdicts",
    "altered": "check the database server and the role's privileges, then run again",
}


@dataclass(frozen=True)
class CachedVerdict:
    verdict: str
    criterion: str | None
    rationale: str


def default_cache_path(workspace_root: str | Path) -> Path:
    """``<workspace>/verdict_cache.sqlite``."""
    return Path(workspace_root) / CACHE_FILE_NAME


def open_verdict_cache(path: str | Path) -> "VerdictCache":
    """The verdict cache to use: PostgreSQL when the operator configured
    ``LANGCHEF_DATABASE_URL``, else the SQLite file at ``path``."""
    return VerdictCache(cache_database(path))


@functools.lru_cache(maxsize=8)
def _lookup(size: int) -> sa.Select:
    """The verdicts of ``size`` keys of one judge. Built once per size (at most two: full
    chunks and the last), with one parameter per key rather than an expanding list, whose
    rendering on every call is most of what a readout's lookup of every item would cost."""
    columns = schema.verdicts.c
    return sa.select(columns.item_sha256, columns.verdict, columns.criterion,
                     columns.rationale).where(
        columns.judge_id == sa.bindparam("judge"),
        columns.item_sha256.in_([sa.bindparam(f"k{i}") for i in range(size)]))


class VerdictCache:
    """Verdicts by (judge id, item content hash). ``VerdictCache(path)`` is the SQLite file
    at ``path``; :meth:`in_database` the PostgreSQL database at a URL."""

    def __init__(self, place: str | Path | Database):
        self.database = place if isinstance(place, Database) else sqlite_file(place, VERDICTS)
        self.path = Path(self.database.target) if self.database.dialect == "sqlite" else None
        self._lock = threading.Lock()
        self._insert = dialect_of(self.database).insert_new(schema.verdicts)
        # One connection for the cache's life, one thread at a time (the judge's worker
        # threads share it through the lock); each operation is its own transaction, so a
        # killed run keeps every verdict it was answered.
        self._connection = open_connection(self.database, "verdict cache", _HINTS)

    @classmethod
    def in_database(cls, url: str) -> "VerdictCache":
        return cls(postgresql(url))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sa.Connection]:
        """One short transaction, its errors as one sentence (the lock keeps this object's
        threads from queueing on the database's own write lock)."""
        with self._lock, translated(self.database, "verdict cache", _HINTS), \
                self._connection.begin():
            yield self._connection

    def get_many(self, judge_id: str, keys) -> dict[str, CachedVerdict]:
        """The cached verdicts among ``keys`` (item hashes), by key."""
        keys = sorted(set(keys))
        found: dict[str, CachedVerdict] = {}
        with self._transaction() as connection:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start:start + _CHUNK]
                rows = connection.execute(_lookup(len(chunk)), {
                    "judge": judge_id, **{f"k{i}": key for i, key in enumerate(chunk)}}).all()
                for key, verdict, criterion, rationale in rows:
                    found[key] = CachedVerdict(verdict, criterion, rationale)
        return found

    def put(self, judge_id: str, key: str, verdict: CachedVerdict) -> None:
        """Store a verdict, unless one is stored for the key already (the first one wins)."""
        with self._transaction() as connection:
            connection.execute(self._insert.values(
                judge_id=judge_id, item_sha256=key, verdict=verdict.verdict,
                criterion=verdict.criterion, rationale=verdict.rationale))

    def count(self, judge_id: str | None = None) -> int:
        statement = sa.select(sa.func.count()).select_from(schema.verdicts)
        if judge_id is not None:
            statement = statement.where(schema.verdicts.c.judge_id == judge_id)
        with self._transaction() as connection:
            return int(connection.execute(statement).scalar())

    def close(self) -> None:
        self._connection.close()


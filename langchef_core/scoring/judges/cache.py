"""The verdict cache: one SQLite file in the workspace, keyed by (judge id, item hash).

A verdict depends only on the judge (its id pins model, prompt and settings) and on what
it read (input, output, ideal, context), so re-judging the same content with the same
judge is pure cost. The cache stores each verdict the moment it arrives, so a run that
stops half-way (budget spent, endpoint down) keeps what it already paid for, and the next
run calls the endpoint only for what is missing.

Every operation opens its own short-lived connection: several threads of one process and
several processes (a Dagster run and a CLI call) can share the file, and SQLite's own
locking (with a busy timeout) serialises the writes.

With ``LANGCHEF_DATABASE_URL`` set, :func:`open_verdict_cache` returns the PostgreSQL cache
(cache_postgres.py) instead: same keys, same rows, shared by a team.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

CACHE_FILE_NAME = "verdict_cache.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    judge_id     TEXT NOT NULL,
    item_sha256  TEXT NOT NULL,
    verdict      TEXT NOT NULL,
    criterion    TEXT,
    rationale    TEXT NOT NULL,
    PRIMARY KEY (judge_id, item_sha256)
)
"""
# SQLite allows at most 999 bound parameters in older builds; stay well below.
_CHUNK = 500
_BUSY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class CachedVerdict:
    verdict: str
    criterion: str | None
    rationale: str


def default_cache_path(workspace_root: str | Path) -> Path:
    """``<workspace>/verdict_cache.sqlite``."""
    return Path(workspace_root) / CACHE_FILE_NAME


def open_verdict_cache(path: str | Path):
    """The verdict cache to use: PostgreSQL when the operator configured
    ``LANGCHEF_DATABASE_URL``, else the SQLite file at ``path``."""
    from ...inputs.database import database_url
    url = database_url()
    if url is None:
        return VerdictCache(path)
    from .cache_postgres import PostgresVerdictCache
    return PostgresVerdictCache(url)


class VerdictCache:
    """Verdicts by (judge id, item content hash), persisted in one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as connection:
            connection.execute(_SCHEMA)

    def get_many(self, judge_id: str, keys) -> dict[str, CachedVerdict]:
        """The cached verdicts among ``keys`` (item hashes), by key."""
        keys = sorted(set(keys))
        found: dict[str, CachedVerdict] = {}
        with self._lock, self._connect() as connection:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start:start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT item_sha256, verdict, criterion, rationale FROM verdicts "
                    f"WHERE judge_id = ? AND item_sha256 IN ({marks})", [judge_id, *chunk])
                for key, verdict, criterion, rationale in rows:
                    found[key] = CachedVerdict(verdict, criterion, rationale)
        return found

    def put(self, judge_id: str, key: str, verdict: CachedVerdict) -> None:
        with self._lock, self._connect() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
                (judge_id, key, verdict.verdict, verdict.criterion, verdict.rationale))

    def count(self, judge_id: str | None = None) -> int:
        with self._lock, self._connect() as connection:
            if judge_id is None:
                return connection.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
            return connection.execute("SELECT COUNT(*) FROM verdicts WHERE judge_id = ?",
                                      (judge_id,)).fetchone()[0]

    def close(self) -> None:
        """Nothing to release: every operation closes its own connection."""

    def _connect(self) -> "_Closing":
        return _Closing(sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S))


class _Closing:
    """A connection that commits (or rolls back) and then closes, in one ``with``."""

    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        return self.connection

    def __exit__(self, kind, error, trace):
        try:
            if kind is None:
                self.connection.commit()
            else:
                self.connection.rollback()
        finally:
            self.connection.close()
        return False

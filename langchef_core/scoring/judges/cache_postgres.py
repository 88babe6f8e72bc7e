"""The verdict cache in PostgreSQL (``LANGCHEF_DATABASE_URL``): the same keys and rows as the
SQLite file (cache.py), shared by every process and machine of a team.

Shards of one judging run, a retried step and a resumed run all read and write this one
table, so a verdict paid for once is never paid for again. Rows are never changed: the first
verdict stored for a key wins (``ON CONFLICT DO NOTHING``; two shards that judged identical
content race harmlessly, a judge id pins a deterministic setting), and triggers refuse
UPDATE, DELETE and TRUNCATE.
"""

from __future__ import annotations

import threading

from ...inputs.database import APPEND_ONLY_FUNCTION, append_only, apply_schema, connect, translated
from .cache import CachedVerdict

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS verdicts (
           judge_id     TEXT NOT NULL,
           item_sha256  TEXT NOT NULL,
           verdict      TEXT NOT NULL,
           criterion    TEXT,
           rationale    TEXT NOT NULL,
           recorded_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
           PRIMARY KEY (judge_id, item_sha256)
       )""",
    APPEND_ONLY_FUNCTION,
    *append_only("verdicts"),
)
_CHUNK = 1000


class PostgresVerdictCache:
    """Verdicts by (judge id, item content hash) in one PostgreSQL table.

    One connection per cache object, used by one thread at a time (the judge's worker
    threads share it through the lock); each put commits at once, so a killed run keeps
    every verdict it was answered."""

    def __init__(self, url: str):
        self.url = url
        self.path = None
        self._lock = threading.Lock()
        self._connection = connect(url)
        with self._translated():
            apply_schema(self._connection, SCHEMA)

    def _translated(self):
        return translated(self.url, "verdict cache", self._connection)

    def get_many(self, judge_id: str, keys) -> dict[str, CachedVerdict]:
        keys = sorted(set(keys))
        found: dict[str, CachedVerdict] = {}
        with self._lock, self._translated(), self._connection.cursor() as cursor:
            for start in range(0, len(keys), _CHUNK):
                cursor.execute(
                    "SELECT item_sha256, verdict, criterion, rationale FROM verdicts "
                    "WHERE judge_id = %s AND item_sha256 = ANY(%s)",
                    (judge_id, keys[start:start + _CHUNK]))
                for key, verdict, criterion, rationale in cursor.fetchall():
                    found[key] = CachedVerdict(verdict, criterion, rationale)
            self._connection.commit()
        return found

    def put(self, judge_id: str, key: str, verdict: CachedVerdict) -> None:
        with self._lock, self._translated(), self._connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO verdicts (judge_id, item_sha256, verdict, criterion, rationale) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (judge_id, key, verdict.verdict, verdict.criterion, verdict.rationale))
            self._connection.commit()

    def count(self, judge_id: str | None = None) -> int:
        with self._lock, self._translated(), self._connection.cursor() as cursor:
            if judge_id is None:
                cursor.execute("SELECT COUNT(*) FROM verdicts")
            else:
                cursor.execute("SELECT COUNT(*) FROM verdicts WHERE judge_id = %s", (judge_id,))
            (total,) = cursor.fetchone()
            self._connection.commit()
        return int(total)

    def close(self) -> None:
        self._connection.close()

"""Writes the fixtures of tests/core/test_store_upgrade.py by running the code from before the
store moved onto SQLAlchemy and Alembic: a ledger and a verdict cache as that code made them,
in SQLite and in PostgreSQL, with rows of every table.

    python tests/core/legacy_store/make_fixtures.py   # needs git, pg_dump and
                                                      # LANGCHEF_TEST_DATABASE_URL

The old code is taken from git (commit RELEASED, the last one with the hand-written
Migration list) into a temporary folder and run from there in a fresh interpreter; what it
wrote is dumped as SQL (SQLite's iterdump; pg_dump --inserts of a schema of its own), in
``*.dump`` files, and
``expected.json`` records the rows and the chain's head as the old code read them back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

RELEASED = "8c559aa8e230fd191e900f9dcc4b3b32d82f7337"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SCHEMA = "langchef_legacy_fixture"  # the PostgreSQL schema name the dump carries

# Runs inside the old code: fills a ledger and a cache through their own APIs.
FILL = r'''
import json, sys
from datetime import datetime, timezone
import langchef_core
from langchef_core.designs.ledger import Ledger, MIGRATIONS
from langchef_core.scoring.anchors import AnchorRun
from langchef_core.scoring.judges.cache import CachedVerdict, VerdictCache, open_verdict_cache

assert langchef_core.__file__.startswith(sys.argv[1]), langchef_core.__file__
kind, place = sys.argv[2], sys.argv[3]
D, E = "d" * 64, "e" * 64
A, B, C = "a" * 64, "b" * 64, "c" * 64
at = lambda day: datetime(2026, 3, day, 9, 30, tzinfo=timezone.utc)

def fill(ledger, full=True):
    ledger.record_readout("rerank", D, A, 1, "regression", taken_at=at(1))
    ledger.record_readout("rerank", D, B, 2, "inconclusive", taken_at=at(2))
    ledger.record_anchor_run(AnchorRun("support", "5" * 64, "judge@v1",
                                       {"a1": ("pass", "pass"), "a2": ("fail", "pass")},
                                       0.8125, "warn", "2026-03-02T10:00:00Z",
                                       {"agree": 1, "disagree": 1}))
    if not full:
        return
    ledger.record_readout("short-prompt", E, C, 1, "improvement", taken_at=at(3))
    ledger.record_anchor_run(AnchorRun("support", "6" * 64, "judge@v1", {"a1": ("pass", "pass")},
                                       None, "ok", "2026-03-03T10:00:00Z", {"agree": 1}))
    ledger.record_approval("rerank", D, "Rita Reviewer", "2026-02-27T12:00:00Z", "0.1.0")
    ledger.record_approval("short-prompt", E, "Ada Lovelace — QA", "2026-02-28T12:00:00Z", "0.1.0")
    ledger.record_publication("rerank", 1, "f" * 64)
    ledger.record_publication("rerank", 2, "9" * 64)

def cache(cache):
    cache.put("judge@v1", "1" * 64, CachedVerdict("pass", None, "fine"))
    cache.put("judge@v1", "2" * 64, CachedVerdict("fail", "Correctness", "wrong année"))
    cache.put("judge@v2", "1" * 64, CachedVerdict("pass", "", ""))
    cache.close()

def read(ledger, full=True):
    with ledger:
        found = {"readouts": [entry.to_dict() for entry in ledger.readouts()],
                 "anchor_runs": [{**vars(run), "verdicts": {k: list(v) for k, v in
                                                            run.verdicts.items()}}
                                 for run in ledger.anchor_runs()]}
        if full:
            found.update(head=ledger.verify(), recorded_versions=sorted(
                ledger.recorded_versions("rerank")), approvals=[
                entry.to_dict() for name in ("rerank", "short-prompt")
                for entry in ledger.approvals(name)])
    return found

def cached(cache):
    keys = ["1" * 64, "2" * 64]
    found = {judge: {key: list(vars(value).values())
                     for key, value in sorted(cache.get_many(judge, keys).items())}
             for judge in ("judge@v1", "judge@v2")}
    cache.close()
    return found

if kind == "sqlite":
    with Ledger(place + "/ledger_v5.sqlite") as ledger:
        fill(ledger)
    with Ledger(place + "/ledger_v2.sqlite", migrations=MIGRATIONS[:2]) as ledger:
        fill(ledger, full=False)
    cache(VerdictCache(place + "/verdict_cache.sqlite"))
    expected = {"ledger_v5": read(Ledger(place + "/ledger_v5.sqlite")),
                "ledger_v2": read(Ledger(place + "/ledger_v2.sqlite", migrations=MIGRATIONS[:2]),
                                  full=False),
                "verdict_cache": cached(VerdictCache(place + "/verdict_cache.sqlite"))}
else:
    from langchef_core.designs.ledger_postgres import PostgresLedger
    with PostgresLedger(place) as ledger:
        fill(ledger)
    cache(open_verdict_cache("unused"))
    expected = {"postgresql": {**read(PostgresLedger(place)),
                               "verdict_cache": cached(open_verdict_cache("unused"))}}
print(json.dumps(expected))
'''


def released_code(folder: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", RELEASED,
                              "langchef_core"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def run_old(code_root: Path, kind: str, place: str, env: dict | None = None) -> dict:
    environment = {key: value for key, value in os.environ.items()
                   if key != "LANGCHEF_DATABASE_URL"}
    environment.update(PYTHONPATH=str(code_root), **(env or {}))
    done = subprocess.run([sys.executable, "-c", FILL, str(code_root), kind, place],
                          env=environment, capture_output=True, text=True, cwd=code_root)
    if done.returncode != 0:
        raise SystemExit(f"the old code failed:\n{done.stderr}")
    return json.loads(done.stdout)


def sqlite_dump(path: Path, user_version: int) -> str:
    import sqlite3
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == user_version
        lines = list(connection.iterdump())
    finally:
        connection.close()
    # iterdump leaves out the header's user_version, which the old code kept its schema in.
    return "\n".join([*lines[:-1], f"PRAGMA user_version={user_version};", lines[-1]]) + "\n"


def postgresql_dump(code_root: Path, base: str) -> tuple[str, dict]:
    import psycopg2
    admin = psycopg2.connect(base)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        cursor.execute(f"CREATE SCHEMA {SCHEMA}")
    url = f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{SCHEMA}"
    try:
        expected = run_old(code_root, "postgresql", url, {"LANGCHEF_DATABASE_URL": url})
        dump = subprocess.run(["pg_dump", "--inserts", "--no-owner", "--no-privileges",
                               f"--schema={SCHEMA}", base], check=True, capture_output=True,
                              text=True).stdout
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        admin.close()
    return dump, expected


def main() -> None:
    base = os.environ["LANGCHEF_TEST_DATABASE_URL"]
    with tempfile.TemporaryDirectory() as scratch:
        code = released_code(Path(scratch) / "released")
        files = Path(scratch) / "files"
        files.mkdir()
        expected = run_old(code, "sqlite", str(files))
        header = f"-- written by tests/core/legacy_store/make_fixtures.py from commit {RELEASED}\n"
        for name, version in (("ledger_v5", 5), ("ledger_v2", 2), ("verdict_cache", 0)):
            (HERE / f"{name}.sqlite.dump").write_text(
                header + sqlite_dump(files / f"{name}.sqlite", version), encoding="utf-8")
        dump, from_postgresql = postgresql_dump(code, base)
        (HERE / "postgresql.dump").write_text(header + dump, encoding="utf-8")
    expected.update(from_postgresql)
    (HERE / "expected.json").write_text(json.dumps({"released": RELEASED, **expected},
                                                   indent=1, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    print(f"wrote the fixtures into {HERE}")


if __name__ == "__main__":
    main()

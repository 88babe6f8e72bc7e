"""Ledgers and verdict caches made before Alembic open and upgrade without loss.

The fixtures in legacy_store/ were written by running the code from before the store moved
onto SQLAlchemy and Alembic (commit ``released`` of expected.json; how: the docstring of
legacy_store/make_fixtures.py): SQL dumps of a SQLite ledger at the old schema's last step
(user_version 5) and at a step before the hash chain (2), of a SQLite verdict cache, and of a
PostgreSQL schema holding both, with rows of every table; expected.json holds what that code
read back (rows, the chain's head). Each is restored, opened by today's code, and checked
against it: every row kept, the chain unchanged (or, for a ledger from before the chain,
built over every row), new rows appended after the old ones, and the schema the same as the
one a new database gets.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg2
import pytest
import sqlalchemy as sa

from langchef_core.designs.ledger import GENESIS, Ledger
from langchef_core.scoring.anchors import AnchorRun
from langchef_core.scoring.judges.cache import CachedVerdict, VerdictCache
from langchef_core.store.dialects import dialect_of
from langchef_core.store.location import LEDGER, VERDICTS, Database, postgresql, sqlite_file
from langchef_core.store.migrate import MIGRATIONS, VERSION_TABLE, ensure_current, heads
from tests.postgres import drop_schema, postgres_url, server_url  # noqa: F401 - a fixture

FIXTURES = Path(__file__).resolve().parent / "legacy_store"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
FIXTURE_SCHEMA = "langchef_legacy_fixture"
DESIGN, NEW_DATA = "d" * 64, "7" * 64


def restore_sqlite(path: Path, dump: str) -> Path:
    connection = sqlite3.connect(path)
    try:
        connection.executescript((FIXTURES / dump).read_text(encoding="utf-8"))
    finally:
        connection.close()
    return path


@pytest.fixture
def legacy_postgresql(monkeypatch):
    """The PostgreSQL fixture restored into a schema of its own; yields its URL."""
    base = server_url()
    name = f"t_legacy_{uuid.uuid4().hex[:10]}"
    dump = (FIXTURES / "postgresql.dump").read_text(encoding="utf-8")
    statements = "\n".join(line for line in dump.splitlines() if not line.startswith("\\"))
    connection = psycopg2.connect(base)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(statements.replace(FIXTURE_SCHEMA, name))
    finally:
        connection.close()
    url = f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{name}"
    monkeypatch.setenv("LANGCHEF_DATABASE_URL", url)
    yield url
    drop_schema(base, name)


def read_back(ledger: Ledger) -> dict:
    """What expected.json holds, as today's ledger reads it."""
    return {"readouts": [entry.to_dict() for entry in ledger.readouts()],
            "anchor_runs": [{**vars(run), "verdicts": {a: list(p) for a, p in run.verdicts.items()}}
                            for run in ledger.anchor_runs()],
            "head": ledger.verify(), "recorded_versions": sorted(ledger.recorded_versions("rerank")),
            "approvals": [entry.to_dict() for name in ("rerank", "short-prompt")
                          for entry in ledger.approvals(name)]}


def cached(cache: VerdictCache) -> dict:
    keys = ["1" * 64, "2" * 64]
    return {judge: {key: list(vars(value).values())
                    for key, value in sorted(cache.get_many(judge, keys).items())}
            for judge in ("judge@v1", "judge@v2")}


def appends_after_the_old_rows(ledger: Ledger, rows_before: int) -> None:
    head = ledger.head()
    entry, looks = ledger.record_readout("rerank", DESIGN, NEW_DATA, 3, "improvement")
    assert entry.id == rows_before + 1 and looks.look_number == 3  # after a and b
    ledger.record_anchor_run(AnchorRun("support", "8" * 64, "judge@v2", {"a1": ("pass", None)},
                                       1.0, "ok", "2026-04-01T00:00:00Z", {"agree": 1}))
    assert ledger.verify() == ledger.head() != head


def test_a_sqlite_ledger_at_the_old_last_step_keeps_every_row_and_its_chain(tmp_path):
    path = restore_sqlite(tmp_path / "langchef.sqlite", "ledger_v5.sqlite.dump")
    expected = EXPECTED["ledger_v5"]
    with Ledger(path) as ledger:
        assert ledger.schema_revision == heads()[LEDGER]
        assert read_back(ledger) == expected  # the head too: no link was rewritten
        appends_after_the_old_rows(ledger, len(expected["readouts"]))
    connection = sqlite3.connect(path)
    # The old code refuses a schema newer than its five steps ("written by a newer langchef").
    assert connection.execute("PRAGMA user_version").fetchone() == (6,)
    connection.close()


def test_a_sqlite_ledger_from_before_the_chain_gets_every_row_chained(tmp_path):
    path = restore_sqlite(tmp_path / "langchef.sqlite", "ledger_v2.sqlite.dump")
    expected = EXPECTED["ledger_v2"]
    with Ledger(path) as ledger:
        found = read_back(ledger)
        assert {key: found[key] for key in expected} == expected
        assert found["approvals"] == [] and found["head"] != GENESIS
        with ledger._reading():
            linked = ledger._connection.execute(sa.text(
                "SELECT table_name, row_id FROM chain ORDER BY seq")).all()
        assert [tuple(link) for link in linked] == [("readouts", 1), ("readouts", 2),
                                                     ("anchor_runs", 1)]
        appends_after_the_old_rows(ledger, len(expected["readouts"]))


def test_a_sqlite_verdict_cache_keeps_every_verdict_and_becomes_append_only(tmp_path):
    path = restore_sqlite(tmp_path / "verdict_cache.sqlite", "verdict_cache.sqlite.dump")
    cache = VerdictCache(path)
    assert cached(cache) == EXPECTED["verdict_cache"] and cache.count() == 3
    cache.put("judge@v1", "1" * 64, CachedVerdict("fail", "Correctness", "a later answer"))
    cache.put("judge@v1", "3" * 64, CachedVerdict("pass", None, "new"))
    assert cache.get_many("judge@v1", ["1" * 64])["1" * 64].rationale == "fine"  # first wins
    cache.close()
    connection = sqlite3.connect(path)
    try:
        times = dict(connection.execute("SELECT item_sha256, recorded_at FROM verdicts "
                                        "WHERE judge_id = 'judge@v1'"))
        assert times["1" * 64] is None and times["3" * 64] is not None  # unknown before
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            connection.execute("UPDATE verdicts SET verdict = 'fail'")
    finally:
        connection.close()


def test_a_postgresql_database_upgrades_its_ledger_and_its_cache(legacy_postgresql):
    expected = dict(EXPECTED["postgresql"])
    expected_cache = expected.pop("verdict_cache")
    steps = upgrade_steps(postgresql(legacy_postgresql))
    assert [(s.branch, s.before, s.after, s.recognised) for s in steps] == [
        (LEDGER, "ledger_0005", "ledger_0007", "langchef_schema 5"),
        (VERDICTS, "verdicts_0001", "verdicts_0002", "the verdict cache of langchef before Alembic")]
    with Ledger.in_database(legacy_postgresql) as ledger:
        assert read_back(ledger) == expected
        appends_after_the_old_rows(ledger, len(expected["readouts"]))
    cache = VerdictCache.in_database(legacy_postgresql)
    assert cached(cache) == expected_cache and cache.count() == 3
    cache.close()
    connection = psycopg2.connect(legacy_postgresql)
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(version) FROM langchef_schema")
        assert cursor.fetchone() == (6,)  # the old code refuses it: "newer langchef"
        cursor.execute(f"SELECT version_num FROM {VERSION_TABLE} ORDER BY 1")
        assert cursor.fetchall() == [("ledger_0007",), ("verdicts_0002",)]
    connection.close()


def upgrade_steps(database: Database, **options) -> list:
    engine = dialect_of(database).engine(database)
    try:
        with engine.connect() as connection:
            return ensure_current(database, connection, **options)
    finally:
        engine.dispose()


def upgraded(database: Database) -> Database:
    upgrade_steps(database)
    return database


def schema_of(database: Database) -> dict:
    """Tables, columns, keys, indexes, checks and triggers as the database describes them."""
    engine = dialect_of(database).engine(database)
    with engine.connect() as connection, connection.begin():
        inspector = sa.inspect(connection)
        described = {}
        for table in sorted(inspector.get_table_names()):
            key = inspector.get_pk_constraint(table)["constrained_columns"]
            described[table] = {
                # A SQLite INTEGER PRIMARY KEY is never NULL, declared so or not.
                "columns": [(column["name"], str(column["type"]),
                             column["nullable"] and column["name"] not in key,
                             " ".join(str(column.get("default")).split()),
                             bool(column.get("identity"))) for column in inspector.get_columns(table)],
                "key": key,
                "unique": sorted(tuple(u["column_names"])
                                 for u in inspector.get_unique_constraints(table)),
                "indexes": sorted((index["name"], tuple(index["column_names"]))
                                  for index in inspector.get_indexes(table)),
                "checks": sorted(" ".join(check["sqltext"].split())
                                 for check in inspector.get_check_constraints(table))}
        described["triggers"] = sorted(dialect_of(database).trigger_names(connection))
        described["legacy version"] = dialect_of(database).legacy_version(connection)
        if database.dialect == "sqlite":
            described["autoincrement"] = sorted(connection.execute(sa.text(
                "SELECT name FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'")).scalars())
            described["trigger bodies"] = sorted(" ".join(sql.split()) for sql in connection.execute(
                sa.text("SELECT sql FROM sqlite_master WHERE type = 'trigger'")).scalars())
    engine.dispose()
    return described


@pytest.mark.parametrize("dump, branch", [("ledger_v5.sqlite.dump", LEDGER),
                                          ("ledger_v2.sqlite.dump", LEDGER),
                                          ("verdict_cache.sqlite.dump", VERDICTS)])
def test_an_upgraded_sqlite_file_has_the_schema_a_new_one_gets(tmp_path, dump, branch):
    old = sqlite_file(restore_sqlite(tmp_path / "old.sqlite", dump), branch)
    assert schema_of(upgraded(old)) == schema_of(upgraded(sqlite_file(tmp_path / "new.sqlite",
                                                                         branch)))


def test_an_upgraded_postgresql_schema_is_the_one_a_new_database_gets(legacy_postgresql,
                                                                      postgres_url):
    assert schema_of(upgraded(postgresql(legacy_postgresql))) == \
        schema_of(upgraded(postgresql(postgres_url)))


def test_an_upgrade_that_fails_leaves_the_old_schema_and_rows_as_they_were(tmp_path):
    path = restore_sqlite(tmp_path / "langchef.sqlite", "ledger_v2.sqlite.dump")
    broken = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, broken, ignore=shutil.ignore_patterns("__pycache__"))
    (broken / "versions" / "ledger_0008_fails.py").write_text(
        'revision, down_revision, branch_labels, depends_on = "ledger_0008", "ledger_0007", '
        'None, None\n\ndef upgrade():\n    raise RuntimeError("the disk went away")\n')
    with pytest.raises(RuntimeError, match="disk went away"):
        upgrade_steps(sqlite_file(path, LEDGER), migrations=broken)
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA user_version").fetchone() == (2,)
        tables = {name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {"readouts", "anchor_runs", "sqlite_sequence"}
        assert connection.execute("SELECT count(*) FROM readouts").fetchone() == (2,)
    finally:
        connection.close()
    with Ledger(path) as ledger:  # today's revisions still apply cleanly afterwards
        assert len(ledger.readouts()) == 2


def released_code_at(folder: Path) -> Path | None:
    """The code of ``released`` from this checkout's git history, or None without it."""
    root = Path(__file__).resolve().parents[2]
    archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar",
                              EXPECTED["released"], "langchef_core"], capture_output=True)
    if archive.returncode != 0:
        return None
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


@pytest.mark.slow  # the old code, from git, in a fresh interpreter
def test_the_old_code_refuses_an_upgraded_ledger_instead_of_writing_to_it(tmp_path):
    old_code = released_code_at(tmp_path / "released")
    if old_code is None:
        pytest.skip(f"this checkout's history lacks commit {EXPECTED['released']}")
    path = restore_sqlite(tmp_path / "langchef.sqlite", "ledger_v5.sqlite.dump")
    Ledger(path).close()
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from langchef_core.designs.ledger import Ledger; "
                               "Ledger(sys.argv[1])", str(path)],
        cwd=old_code, env={"PYTHONPATH": str(old_code), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "was written by a newer langchef (schema 6, this one knows 5); upgrade langchef" in \
        done.stderr.strip().splitlines()[-1]

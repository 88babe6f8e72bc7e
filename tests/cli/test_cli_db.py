"""`langchef db upgrade` through the real console script: a workspace's SQLite ledger and
cache made before Alembic, and a team's PostgreSQL database, brought to the newest revision
and reported; running it again does nothing; a database from a newer langchef is one
sentence, exit 2. (What an upgrade keeps: tests/core/test_store_upgrade.py.)"""

from __future__ import annotations

import sqlite3

from langchef_core.store.migrate import heads
from tests.core.test_store_upgrade import EXPECTED, legacy_postgresql, restore_sqlite  # noqa: F401

from .conftest import one_sentence

LEDGER_HEAD, CACHE_HEAD = heads()["ledger"], heads()["verdicts"]


def test_a_workspace_from_before_alembic_is_upgraded_then_left_alone(langchef, tmp_path,
                                                                     monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    root = tmp_path / "evals"
    root.mkdir()
    ledger = restore_sqlite(root / "langchef.sqlite", "ledger_v5.sqlite.dump")
    cache = restore_sqlite(root / "verdict_cache.sqlite", "verdict_cache.sqlite.dump")
    done = langchef("db", "upgrade", "--workspace", root)
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"ledger in {ledger}: upgraded from ledger_0005 (user_version 5) to {LEDGER_HEAD}",
        f"verdict cache in {cache}: upgraded from verdicts_0001 (the verdict cache of langchef "
        f"before Alembic) to {CACHE_HEAD}"]
    again = langchef("db", "upgrade", "--workspace", root, "--json")
    assert again.code == 0, again.stderr
    assert [(step["branch"], step["before"], step["after"], step["changed"])
            for step in again.json["databases"]] == [("ledger", LEDGER_HEAD, LEDGER_HEAD, False),
                                                     ("verdicts", CACHE_HEAD, CACHE_HEAD, False)]
    assert langchef("db", "upgrade", "--workspace", root).stdout.splitlines()[0] == \
        f"ledger in {ledger}: at {LEDGER_HEAD}, the newest revision; nothing to do"
    connection = sqlite3.connect(ledger)
    assert connection.execute("SELECT count(*) FROM readouts").fetchone() == \
        (len(EXPECTED["ledger_v5"]["readouts"]),)
    connection.close()


def test_files_not_created_yet_are_left_for_their_first_use(langchef, tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    (tmp_path / "evals").mkdir()
    done = langchef("db", "upgrade", "--workspace", tmp_path / "evals")
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines()[1] == (
        f"verdict cache in {tmp_path / 'evals' / 'verdict_cache.sqlite'}: not created yet (it is "
        "made at the newest revision on first use)")
    assert not (tmp_path / "evals" / "langchef.sqlite").exists()


def test_the_team_database_is_upgraded_both_stores_at_once(langchef, tmp_path,
                                                           legacy_postgresql):  # noqa: F811
    (tmp_path / "evals").mkdir()
    done = langchef("db", "upgrade", "--workspace", tmp_path / "evals", "--json")
    assert done.code == 0, done.stderr
    steps = done.json["databases"]
    assert [(step["branch"], step["before"], step["after"], step["recognised"])
            for step in steps] == [
        ("ledger", "ledger_0005", LEDGER_HEAD, "langchef_schema 5"),
        ("verdicts", "verdicts_0001", CACHE_HEAD, "the verdict cache of langchef before Alembic")]
    assert all(step["where"].startswith("postgresql://langchef:***@") for step in steps)
    assert not (tmp_path / "evals" / "langchef.sqlite").exists()


def test_a_ledger_from_a_newer_langchef_is_one_sentence(langchef, tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    root = tmp_path / "evals"
    root.mkdir()
    ledger = root / "langchef.sqlite"
    connection = sqlite3.connect(ledger)
    connection.execute("CREATE TABLE langchef_alembic_version (version_num VARCHAR(32) "
                       "PRIMARY KEY)")
    connection.execute("INSERT INTO langchef_alembic_version VALUES ('ledger_9999')")
    connection.commit()
    connection.close()
    refused = langchef("db", "upgrade", "--workspace", root)
    assert refused.code == 2
    assert one_sentence(refused.stderr) == (
        f"langchef: error: {ledger}: it was written by a newer langchef (schema revision "
        f"ledger_9999; this one knows up to {LEDGER_HEAD}); upgrade langchef.")

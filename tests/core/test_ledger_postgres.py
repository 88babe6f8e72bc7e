"""The ledger and the verdict cache in a real PostgreSQL server (LANGCHEF_DATABASE_URL):
the same rows and look counts as SQLite, append-only enforced by the database itself, and
writers serialised by advisory locks (the multi-process race is tests/reliability/
test_concurrent_readouts.py)."""

import threading
import time
from datetime import UTC

import psycopg2
import pytest

import sqlalchemy as sa

from langchef_core.designs.ledger import GENESIS, Ledger, LedgerError
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.workspace import Workspace
from langchef_core.scoring.judges.cache import CachedVerdict, VerdictCache, open_verdict_cache
from langchef_core.store.migrate import heads
from tests.postgres import postgres_url  # noqa: F401 - the fixture

DESIGN, DATA_A, DATA_B = "d" * 64, "a" * 64, "b" * 64


@pytest.fixture
def ledger(tmp_path, postgres_url):  # noqa: F811
    # The database alone: a workspace would give it its identity row first (a chain link).
    with Ledger.in_database(postgres_url) as opened:
        yield opened


def _raw(url):
    connection = psycopg2.connect(url)
    connection.autocommit = True
    return connection


def test_the_url_moves_the_ledger_out_of_the_workspace(tmp_path, ledger):
    assert ledger.dialect == "postgresql"
    assert not (tmp_path / "langchef.sqlite").exists()
    assert ledger.schema_revision == heads()["ledger"]


def test_without_the_url_the_workspace_file_stays_the_default(tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    with Ledger.for_workspace(Workspace(tmp_path)) as opened:
        assert opened.dialect == "sqlite" and opened.path == tmp_path / "langchef.sqlite"
    assert open_verdict_cache(tmp_path / "c.sqlite").database.dialect == "sqlite"


def test_looks_and_chain_match_the_sqlite_ledger(tmp_path, ledger):
    with Ledger(tmp_path / "twin.sqlite") as twin:
        for target in (ledger, twin):
            assert target.head() == GENESIS
            target.record_readout("rerank", DESIGN, DATA_A, 1, "regression",
                                  taken_at=_moment())
            _, second = target.record_readout("rerank", DESIGN, DATA_B, 2, "inconclusive",
                                              taken_at=_moment())
            target.record_publication("rerank", 3, "f" * 64)
            assert second.look_number == 2 and second.repeated
        assert ledger.readouts() == twin.readouts()
        assert ledger.looks(DESIGN, DATA_A) == twin.looks(DESIGN, DATA_A)
        # Publications carry the wall-clock time, so only the first two links must agree.
        links = [chain_links(target) for target in (ledger, twin)]
        assert links[0][:2] == links[1][:2] and len(links[0]) == 3
        assert ledger.verify() == ledger.head() == links[0][-1]


def chain_links(ledger) -> list[str]:
    with ledger._reading():
        return list(ledger._connection.execute(
            sa.text("SELECT link_sha256 FROM chain ORDER BY seq")).scalars())


def test_rows_can_be_neither_updated_nor_deleted_nor_truncated(ledger, postgres_url):  # noqa: F811
    ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
    connection = _raw(postgres_url)
    try:
        for statement in ("UPDATE readouts SET verdict = 'improvement'", "DELETE FROM readouts",
                          "TRUNCATE readouts", "DELETE FROM chain", "TRUNCATE langchef_schema"):
            with (pytest.raises(psycopg2.errors.InsufficientPrivilege, match="append-only"),
                  connection.cursor() as cursor):
                cursor.execute(statement)
    finally:
        connection.close()
    assert [entry.verdict for entry in ledger.readouts()] == ["regression"]


def test_a_disabled_trigger_or_a_row_added_behind_its_back_is_refused(tmp_path, ledger,
                                                                       postgres_url):  # noqa: F811
    ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
    connection = _raw(postgres_url)
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO readouts (experiment, design_sha256, inputs_sha256, version, "
                       "verdict, taken_at) VALUES ('rerank', %s, %s, 2, 'improvement', 'x')",
                       (DESIGN, DATA_B))
    with pytest.raises(LedgerError, match="readouts row 2 was added outside langchef"):
        Ledger.for_workspace(Workspace(tmp_path))
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE readouts DISABLE TRIGGER readouts_refuse_update")
    connection.close()
    with pytest.raises(LedgerError, match="lost its append-only trigger readouts_refuse_update"):
        Ledger.for_workspace(Workspace(tmp_path))


def test_a_publish_lock_is_held_across_connections(tmp_path, ledger):
    order = []
    with Ledger.for_workspace(Workspace(tmp_path)) as other:
        with ledger.exclusive("rerank"):
            waiter = threading.Thread(target=lambda: _take(other, "rerank", order))
            waiter.start()
            time.sleep(0.5)
            order.append("first releases")
        waiter.join(10)
        with other.exclusive("unrelated"), ledger.exclusive("another"):
            order.append("different experiments do not wait")
    assert order == ["first releases", "second holds", "different experiments do not wait"]


def _take(ledger, experiment, order):
    with ledger.exclusive(experiment):
        order.append("second holds")


def test_the_verdict_cache_is_shared_and_first_writer_wins(tmp_path, postgres_url):  # noqa: F811
    cache = open_verdict_cache(tmp_path / "unused.sqlite")
    assert cache.database.dialect == "postgresql" and not (tmp_path / "unused.sqlite").exists()
    cache.put("judge", "k1", CachedVerdict("pass", None, "fine"))
    cache.put("judge", "k1", CachedVerdict("fail", "correctness", "a later, different answer"))
    other = VerdictCache.in_database(postgres_url)
    assert other.get_many("judge", ["k1", "k2"]) == {"k1": CachedVerdict("pass", None, "fine")}
    assert other.count() == other.count("judge") == 1 and other.count("else") == 0
    connection = _raw(postgres_url)
    with (pytest.raises(psycopg2.errors.InsufficientPrivilege, match="append-only"),
          connection.cursor() as cursor):
        cursor.execute("UPDATE verdicts SET verdict = 'fail'")
    connection.close()
    cache.close()
    other.close()


def test_a_bad_url_is_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("LANGCHEF_DATABASE_URL", "mysql://x@y/z")
    with pytest.raises(InputError, match="must be a postgresql:// URL"):
        Ledger.for_workspace(Workspace(tmp_path))
    monkeypatch.setenv("LANGCHEF_DATABASE_URL", "postgresql://me:secret@127.0.0.1:1/none")
    with pytest.raises(InputError, match=r"cannot connect to the PostgreSQL database "
                                         r"postgresql://me:\*\*\*@127.0.0.1:1/none") as raised:
        Ledger.for_workspace(Workspace(tmp_path))
    assert "secret" not in str(raised.value)


def _moment():
    from datetime import datetime
    return datetime(2024, 5, 2, 9, 30, tzinfo=UTC)


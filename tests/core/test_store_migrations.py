"""The store's schema is Alembic's: revision files Alembic reads as we do, a version table of
langchef's own, a cheap check when nothing is to be done, a later revision applied once and
refused by code that does not know it, and two processes creating one database at once.
Each test that holds on both databases runs on a SQLite file and on a fresh PostgreSQL
schema. Upgrading databases made before Alembic: tests/core/test_store_upgrade.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest
import sqlalchemy as sa

from langchef_core.designs.ledger import Ledger, LedgerError
from langchef_core.inputs.workspace import Workspace
from langchef_core.scoring.judges.cache import VerdictCache
from langchef_core.store import schema
from langchef_core.store.connection import upgrade_workspace
from langchef_core.store.dialects import dialect_of
from langchef_core.store.location import (LEDGER, VERDICTS, Database, StoreError, postgresql,
                                          sqlite_file)
from langchef_core.store.migrate import (MIGRATIONS, VERSION_TABLE, current_revisions,
                                         ensure_current, heads, revision_files)
from tests.postgres import postgres_url  # noqa: F401 - the fixture behind PostgreSQL's places
from tests.reliability.conftest import environment

DESIGN, DATA = "d" * 64, "a" * 64


@pytest.fixture(params=["sqlite", "postgresql"])
def places(request, tmp_path) -> dict[str, Database]:
    """Where the ledger and the cache are opened: two SQLite files, or one PostgreSQL schema."""
    if request.param == "sqlite":
        return {LEDGER: sqlite_file(tmp_path / "langchef.sqlite", LEDGER),
                VERDICTS: sqlite_file(tmp_path / "verdict_cache.sqlite", VERDICTS)}
    database = postgresql(request.getfixturevalue("postgres_url"))
    return {LEDGER: database, VERDICTS: database}


def connected(database: Database):
    return dialect_of(database).engine(database)


def spelled(database: Database) -> str:
    """The database as Python source, for a probe in a fresh interpreter."""
    return f"Database({database.dialect!r}, {str(database.target)!r}, {database.branches!r})"


def test_the_revision_files_are_one_numbered_chain_per_branch_as_alembic_reads_them():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    assert set(scripts.get_heads()) == set(heads().values())
    assert heads() == {LEDGER: "ledger_0007", VERDICTS: "verdicts_0002"}
    for branch, revisions in revision_files().items():
        assert revisions == tuple(f"{branch}_{n:04d}" for n in range(1, len(revisions) + 1))
        for before, revision in zip((None, *revisions), revisions):
            script = scripts.get_revision(revision)
            assert script.down_revision == before and script.path.endswith(".py")
            if before is None:
                assert script.branch_labels == {branch}
        assert scripts.get_revision(f"{branch}@head").revision == revisions[-1]


def test_opening_creates_every_table_with_the_columns_statements_are_built_from(places):
    with Ledger(places[LEDGER]) as ledger:
        assert ledger.schema_revision == heads()[LEDGER]
    VerdictCache(places[VERDICTS]).close()
    tables = {"ledger": (*schema.CHAINED_TABLES.values(), schema.chain),
              "verdicts": (schema.verdicts,)}
    for branch, database in places.items():
        engine = connected(database)
        with engine.connect() as connection, connection.begin():
            inspector = sa.inspect(connection)
            names = set(inspector.get_table_names())
            assert VERSION_TABLE in names and "alembic_version" not in names
            assert current_revisions(connection)[branch] == heads()[branch]
            for table in tables[branch]:
                columns = [column["name"] for column in inspector.get_columns(table.name)]
                assert columns == list(table.c.keys()), table.name
        engine.dispose()


def test_a_store_at_its_newest_revision_opens_without_loading_alembic(places, tmp_path):
    with Ledger(places[LEDGER]):
        VerdictCache(places[VERDICTS]).close()
    probe = textwrap.dedent(f"""
        import sys
        from langchef_core.designs.ledger import Ledger
        from langchef_core.scoring.judges.cache import VerdictCache
        from langchef_core.store.location import Database
        with Ledger({spelled(places[LEDGER])}) as ledger:
            ledger.record_readout("rerank", "{DESIGN}", "{DATA}", 1, "regression")
        VerdictCache({spelled(places[VERDICTS])}).close()
        print(sorted(name for name in sys.modules if name.split(".")[0] == "alembic"))
        """)
    done = subprocess.run([sys.executable, "-c", probe], env=environment(), capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_later_revision_is_applied_once_and_older_code_refuses_the_database(places, tmp_path):
    with Ledger(places[LEDGER]) as ledger:
        ledger.record_readout("rerank", DESIGN, DATA, 1, "regression")
    newer = tmp_path / "newer_migrations"
    shutil.copytree(MIGRATIONS, newer, ignore=shutil.ignore_patterns("__pycache__"))
    (newer / "versions" / "ledger_0008_anchor_judgements.py").write_text(textwrap.dedent('''
        """anchor judgements"""
        import sqlalchemy as sa
        from alembic import op

        revision, down_revision, branch_labels, depends_on = "ledger_0008", "ledger_0007", None, None

        def upgrade():
            op.create_table("anchor_judgements", sa.Column("id", sa.Integer, primary_key=True),
                            sa.Column("kappa", sa.Float))
        '''))
    database = places[LEDGER]
    engine = connected(database)
    try:
        with engine.connect() as connection:
            upgraded = ensure_current(database, connection, migrations=newer)
            ledger_step = [step for step in upgraded if step.branch == LEDGER]
            assert [(s.before, s.after, s.changed) for s in ledger_step] == \
                [("ledger_0007", "ledger_0008", True)]
            assert ensure_current(database, connection, migrations=newer) == []  # nothing twice
            with connection.begin():
                assert sa.inspect(connection).has_table("anchor_judgements")
    finally:
        engine.dispose()
    with pytest.raises(LedgerError, match=r"it was written by a newer langchef \(schema revision "
                                          r"ledger_0008; this one knows up to ledger_0007\); "
                                          r"upgrade langchef"):
        Ledger(database)


def test_processes_opening_a_new_ledger_at_once_create_its_schema_once(places, tmp_path):
    database = places[LEDGER]
    opener = textwrap.dedent(f"""
        from langchef_core.designs.ledger import Ledger
        from langchef_core.store.location import Database
        import sys, time
        while time.time() < float(sys.argv[1]):
            time.sleep(0.005)
        with Ledger({spelled(database)}) as ledger:
            ledger.record_readout("rerank", "{DESIGN}", sys.argv[2] * 64, 1, "regression")
        """)
    import time
    start = time.time() + 8  # every interpreter has imported langchef by then
    runs = [subprocess.Popen([sys.executable, "-c", opener, str(start), digit], cwd=tmp_path,
                             env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for digit in "abc"]
    for run in runs:
        _, errors = run.communicate(timeout=300)
        assert run.returncode == 0, errors
    with Ledger(database) as ledger:
        assert sorted(entry.inputs_sha256[0] for entry in ledger.readouts()) == ["a", "b", "c"]
        assert ledger.looks(DESIGN, "d" * 64).look_number == 4
    engine = connected(database)
    with engine.connect() as connection, connection.begin():
        rows = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars()
        assert sorted(rows) == sorted(heads()[branch] for branch in database.branches
                                      if branch == LEDGER or database.dialect == "postgresql")
        assert dialect_of(database).legacy_version(connection) == 6
    engine.dispose()


def test_db_upgrade_brings_the_workspace_databases_to_the_newest_revision(tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    workspace = Workspace(tmp_path)
    assert [(step.branch, step.before, step.after) for step in upgrade_workspace(workspace)] == \
        [(LEDGER, None, None), (VERDICTS, None, None)]  # nothing created before its first use
    assert not workspace.ledger.exists()
    Ledger.for_workspace(workspace).close()
    steps = upgrade_workspace(workspace)
    assert [(step.where, step.branch, step.before, step.after, step.changed) for step in steps] \
        == [(str(workspace.ledger), LEDGER, "ledger_0007", "ledger_0007", False),
            (str(tmp_path / "verdict_cache.sqlite"), VERDICTS, None, None, False)]


def test_a_role_that_may_not_change_the_schema_is_told_to_run_db_upgrade(postgres_url, tmp_path):  # noqa: F811
    database = postgresql(postgres_url)
    Ledger(database).close()
    newer = tmp_path / "newer_migrations"
    shutil.copytree(MIGRATIONS, newer, ignore=shutil.ignore_patterns("__pycache__"))
    # Nobody but a superuser may create tables in pg_catalog: the server refuses with the
    # error a role granted only SELECT, INSERT gets for CREATE TABLE (insufficient_privilege).
    (newer / "versions" / "ledger_0008_refused.py").write_text(
        'from alembic import op\n\nrevision, down_revision = "ledger_0008", "ledger_0007"\n\n'
        'def upgrade():\n    op.execute("CREATE TABLE pg_catalog.langchef_probe (x integer)")\n')
    engine = connected(database)
    try:
        with engine.connect() as connection, pytest.raises(StoreError) as raised:
            ensure_current(database, connection, migrations=newer)
    finally:
        engine.dispose()
    assert raised.value.message == ("its schema (ledger at ledger_0007, verdicts at verdicts_0002) "
                                    "is older than this langchef's (ledger_0008, verdicts_0002), "
                                    "and this role may not change it")
    assert raised.value.hint == ("run `langchef db upgrade` as the role that owns langchef's "
                                 "tables, then run again")
    with Ledger(database) as ledger:  # nothing of the refused step was kept
        assert ledger.schema_revision == "ledger_0007"

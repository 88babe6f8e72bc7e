"""The schema's revisions (Alembic, ``migrations/``): applied when a store is opened and by
``langchef db upgrade``, and how a database made before Alembic is recognised.

Opening a store is on every command's path, so the check is cheap: the newest revision of
each branch is read from the revision files' names (``<branch>_<NNNN>_<what>.py``, a
convention tests/core/test_store_migrations.py holds against Alembic's own reading of the
files), the database's from one small table, and Alembic itself is imported only when they
differ.

The version table is ``langchef_alembic_version`` (one row per branch), never Alembic's
default name, so it cannot clash with Dagster's own Alembic tables in a shared PostgreSQL
database.

Databases made before Alembic carry the schema counter of the released code: SQLite's
``user_version`` or PostgreSQL's table ``langchef_schema``, counting the ledger's steps 1-5,
which revisions ``ledger_0001`` … ``ledger_0005`` reproduce exactly; a verdict cache from then
is the table ``verdicts`` alone (revision ``verdicts_0001``). Such a database is stamped at the
revision it matches and upgraded from there, in one transaction.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import sqlalchemy as sa

from .dialects import SCHEMA_LOCK, dialect_of
from .location import LEDGER, VERDICTS, Database, StoreError

VERSION_TABLE = "langchef_alembic_version"
MIGRATIONS = Path(__file__).resolve().with_name("migrations")
LEGACY_STEPS = 5  # the ledger steps of the code before Alembic (its Migration list)
_REVISION_FILE = re.compile(r"^(?P<branch>[a-z]+)_(?P<number>[0-9]{4})_\w+\.py\Z")


@dataclass(frozen=True)
class Upgrade:
    """What bringing one branch of one database to its newest revision did."""

    where: str
    branch: str
    before: str | None  # its revision before (None: the branch's tables did not exist)
    after: str | None  # None: a SQLite file not created yet, left alone
    recognised: str | None  # the pre-Alembic schema it was stamped from, if any

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_dict(self) -> dict:
        return {**asdict(self), "changed": self.changed}


@functools.cache
def revision_files(migrations: Path = MIGRATIONS) -> dict[str, tuple[str, ...]]:
    """Each branch's revisions in order, from the file names."""
    found: dict[str, list[tuple[int, str]]] = {}
    for path in (migrations / "versions").iterdir():
        match = _REVISION_FILE.match(path.name)
        if match:
            revision = f"{match['branch']}_{match['number']}"
            found.setdefault(match["branch"], []).append((int(match["number"]), revision))
    return {branch: tuple(revision for _, revision in sorted(items))
            for branch, items in found.items()}


def heads(migrations: Path = MIGRATIONS) -> dict[str, str]:
    """The newest revision of each branch."""
    return {branch: revisions[-1] for branch, revisions in revision_files(migrations).items()}


def branch_of(revision: str) -> str:
    return revision.rpartition("_")[0]


def current_revisions(connection: sa.Connection) -> dict[str, str] | None:
    """The database's revision of each branch (None: no version table yet)."""
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(sa.select(sa.column("version_num")).select_from(
        sa.table(VERSION_TABLE))).scalars()
    return {branch_of(revision): revision for revision in rows}


def ensure_current(database: Database, connection: sa.Connection, *,
                   migrations: Path = MIGRATIONS) -> list[Upgrade]:
    """Bring every branch of ``database`` to its newest revision; nothing but one read of
    the version table when it is there already (the usual case)."""
    with connection.begin():
        found = current_revisions(connection)
    if found is not None and _at_head(database, found, migrations):
        return []
    return upgrade(database, connection, migrations=migrations)


def upgrade(database: Database, connection: sa.Connection, *,
            migrations: Path = MIGRATIONS) -> list[Upgrade]:
    """Stamp a pre-Alembic schema at the revision it matches, then upgrade every branch,
    in one transaction under the schema lock (a second process waits, then finds the
    work done)."""
    dialect = dialect_of(database)
    with dialect.write(connection, SCHEMA_LOCK):
        found = current_revisions(connection)
        if found is not None and _at_head(database, found, migrations):
            return [Upgrade(str(database.where), branch, found[branch], found[branch], None)
                    for branch in database.branches]
        found = found or {}
        recognised = {branch: _recognise(database, connection, branch)
                      for branch in database.branches if branch not in found}
        stamps = {branch: revision for branch, (revision, _) in recognised.items() if revision}
        before = {**stamps, **found}
        try:
            _run_alembic(connection, migrations, stamps.values(), database.branches)
        except sa.exc.DBAPIError as error:
            if dialect.describe(error.orig)[1] != "privilege":
                raise
            behind = ", ".join(f"{branch} at {before.get(branch) or 'none'}"
                               for branch in database.branches)
            raise StoreError(f"its schema ({behind}) is older than this langchef's "
                             f"({', '.join(heads(migrations)[b] for b in database.branches)}), "
                             "and this role may not change it", file=database.where,
                             hint="run `langchef db upgrade` as the role that owns langchef's "
                                  "tables, then run again") from None
        after = current_revisions(connection) or {}
    return [Upgrade(str(database.where), branch, before.get(branch), after[branch],
                    recognised.get(branch, (None, None))[1]) for branch in database.branches]


def _at_head(database: Database, found: dict[str, str], migrations: Path) -> bool:
    """True when every branch is at its head; refuses a revision this code does not know."""
    known, newest = revision_files(migrations), heads(migrations)
    for branch in database.branches:
        revision = found.get(branch)
        if revision is not None and revision not in known.get(branch, ()):
            raise StoreError(f"it was written by a newer langchef (schema revision {revision}; "
                             f"this one knows up to {newest.get(branch)})",
                             file=database.where, hint="upgrade langchef")
    return all(found.get(branch) == newest[branch] for branch in database.branches)


def _recognise(database: Database, connection: sa.Connection,
               branch: str) -> tuple[str | None, str | None]:
    """The revision a branch's pre-Alembic tables match, and how they were recognised;
    (None, None) when there are none (a new database)."""
    dialect = dialect_of(database)
    if branch == VERDICTS:
        if sa.inspect(connection).has_table("verdicts"):
            return f"{VERDICTS}_0001", "the verdict cache of langchef before Alembic"
        return None, None
    version = dialect.legacy_version(connection)
    counter = "user_version" if database.dialect == "sqlite" else "langchef_schema"
    if version == 0:
        return None, None
    if version <= LEGACY_STEPS:
        return f"{LEDGER}_{version:04d}", f"{counter} {version}"
    raise StoreError(f"its {counter} is {version} but table {VERSION_TABLE}, which holds the "
                     "schema's revision since then, is missing", file=database.where,
                     hint="restore it from a backup")


def _run_alembic(connection: sa.Connection, migrations: Path, stamps, branches) -> None:
    """Alembic's commands on our connection, inside our transaction (env.py takes it from
    the config), so a failed step leaves the database as it was."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations))
    config.attributes["connection"] = connection
    for revision in stamps:
        command.stamp(config, revision)
    for branch in branches:
        command.upgrade(config, f"{branch}@head")

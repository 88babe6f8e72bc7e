"""The building blocks of the schema's revisions (``migrations/versions``): columns,
append-only tables, the pre-Alembic counter.

The revisions are one file each, named ``<branch>_<NNNN>_<what>.py`` with the revision id
``<branch>_<NNNN>``: the ``ledger`` branch (the evidence: readouts, anchor runs, approvals,
publications, the hash chain) and the ``verdicts`` branch (the verdict cache). In SQLite each
branch is its own file; in PostgreSQL both share one database and one version table. A new
revision takes the next number of its branch, ``down_revision`` the one before, and keeps
both dialects working (``dialect()`` names the seams of ``dialects``). There are no
downgrades: the ledger is evidence, and a schema is taken back by restoring a backup.

Revisions are history, and these helpers are part of it: once released, neither a revision
nor what a helper creates ever changes (every database made before the change would differ
from one made after); add a new helper instead. Nor do revisions use the tables of
``schema``, which follow the newest revision."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from .dialects import dialect_of


def dialect():
    """The seams (``store/dialects.py``) of the database being migrated."""
    return dialect_of(op.get_bind().dialect.name)


def is_postgresql() -> bool:
    return dialect().name == "postgresql"


def run(statements) -> None:
    for statement in statements:
        op.execute(statement)


def identity(name: str = "id") -> sa.Column:
    """A row id the database assigns, never reused (SQLite AUTOINCREMENT; PostgreSQL
    GENERATED ALWAYS AS IDENTITY, which an INSERT cannot override by accident)."""
    return sa.Column(name, sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                     sa.Identity(always=True), primary_key=True)


def text(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.Text(), nullable=nullable)


def sha256(name: str) -> sa.Column:
    return sa.Column(name, sa.Text(), sa.CheckConstraint(f"length({name}) = 64"), nullable=False)


def counting(name: str, integer=sa.Integer) -> sa.Column:
    """A whole number from 1 (a readout's version)."""
    return sa.Column(name, integer(), sa.CheckConstraint(f"{name} >= 1"), nullable=False)


def real(name: str) -> sa.Column:
    return sa.Column(name, sa.Double().with_variant(sa.REAL(), "sqlite"))


def choice(name: str, *values: str) -> sa.Column:
    listed = ", ".join(f"'{value}'" for value in values)
    return sa.Column(name, sa.Text(), sa.CheckConstraint(f"{name} IN ({listed})"), nullable=False)


def append_only_table(name: str, *columns, indexes: dict[str, tuple[str, ...]] | None = None,
                      **options) -> None:
    """CREATE TABLE, its indexes, and the triggers that refuse changing or removing a row."""
    op.create_table(name, *columns, **options)
    for index, on in (indexes or {}).items():
        op.create_index(index, name, list(on))
    run(dialect().append_only(name))


def chained_table(name: str, *columns, indexes: dict[str, tuple[str, ...]] | None = None) -> None:
    """An append-only ledger table whose first column is its identity ``id``."""
    append_only_table(name, identity(), *columns, indexes=indexes, sqlite_autoincrement=True)


def mark(version: int, description: str) -> None:
    """Advance the pre-Alembic schema counter, so that langchef from before Alembic reads
    this database as what it is (and refuses it once it is newer than it knows)."""
    op.execute(dialect().legacy_mark(version, description))

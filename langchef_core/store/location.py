"""Which database a store is in: a SQLite file in the workspace (the default) or one
PostgreSQL database shared by a team (``LANGCHEF_DATABASE_URL``).

The URL is the operator's setting, read when a ledger or cache is opened (never at import
time), like the judge's endpoints: a design file cannot move the evidence elsewhere.
Any libpq URL works (``postgresql://user:password@host:port/db?options=-csearch_path%3Dx``
puts the tables into schema ``x``); ``postgresql+psycopg2://`` (SQLAlchemy's spelling, as in
deploy/dagster.yaml) is accepted too, so one URL can be copied between the two.

The driver is psycopg2 (``pip install psycopg2-binary``): dagster-postgres needs it anyway,
so a team deployment has one PostgreSQL driver, not two.

The schema has two migration branches (``migrations/versions``): ``ledger`` and ``verdicts``.
In SQLite each store is its own file (the ledger is evidence, the cache is a cache you may
delete); in PostgreSQL both live in one database and are upgraded together.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..inputs.errors import InputError
from ..inputs.workspace import Workspace

DATABASE_URL_VARIABLE = "LANGCHEF_DATABASE_URL"
LEDGER, VERDICTS = "ledger", "verdicts"  # the migration branches (one per store)
CACHE_FILE_NAME = "verdict_cache.sqlite"
_SCHEMES = re.compile(r"^postgres(?:ql)?(?:\+psycopg2)?://")


class StoreError(InputError):
    """A ledger or cache that cannot be opened or used as it is (one sentence, what to do)."""


@dataclass(frozen=True)
class Database:
    """One database a store lives in.

    ``dialect`` is ``sqlite`` or ``postgresql``; ``target`` the file's path or the libpq URL;
    ``branches`` the migration branches kept in it."""

    dialect: str
    target: Path | str
    branches: tuple[str, ...]

    @property
    def where(self) -> Path | str:
        """What messages name: the file, or the URL without its password."""
        return self.target if self.dialect == "sqlite" else redacted(str(self.target))

    def exists(self) -> bool:
        """False only for a SQLite file not created yet (a PostgreSQL database is there)."""
        return self.dialect != "sqlite" or Path(self.target).exists()


def database_url() -> str | None:
    """The PostgreSQL URL the operator configured, or None for the SQLite default."""
    url = os.environ.get(DATABASE_URL_VARIABLE, "").strip()
    if not url:
        return None
    if not _SCHEMES.match(url):
        raise StoreError(f"{DATABASE_URL_VARIABLE} must be a postgresql:// URL, got "
                         f"{redacted(url)!r}",
                         hint="unset it to keep the ledger and the verdict cache in the "
                              "workspace's SQLite files")
    return url


def libpq_url(url: str) -> str:
    """The URL as libpq spells it (SQLAlchemy's ``+psycopg2`` taken out)."""
    return _SCHEMES.sub("postgresql://", url)


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(//[^:/@]+):[^@/]*@", r"\1:***@", url)


def sqlite_file(path: str | Path, branch: str) -> Database:
    return Database("sqlite", Path(path), (branch,))


def postgresql(url: str) -> Database:
    return Database("postgresql", url, (LEDGER, VERDICTS))


def ledger_database(workspace: Workspace) -> Database:
    """The workspace's ledger: PostgreSQL when ``LANGCHEF_DATABASE_URL`` is set, else
    ``langchef.sqlite`` in the workspace."""
    url = database_url()
    return postgresql(url) if url is not None else sqlite_file(workspace.ledger, LEDGER)


def cache_database(path: str | Path) -> Database:
    """The verdict cache: PostgreSQL when ``LANGCHEF_DATABASE_URL`` is set, else the SQLite
    file at ``path``."""
    url = database_url()
    return postgresql(url) if url is not None else sqlite_file(path, VERDICTS)


def workspace_databases(workspace: Workspace) -> list[Database]:
    """Every database the workspace's stores use: the team's one, or its two files."""
    url = database_url()
    if url is not None:
        return [postgresql(url)]
    return [sqlite_file(workspace.ledger, LEDGER),
            sqlite_file(workspace.root / CACHE_FILE_NAME, VERDICTS)]

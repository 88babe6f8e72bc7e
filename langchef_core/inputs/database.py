"""Where the ledger and the verdict cache live: SQLite files in the workspace (the default)
or one PostgreSQL database shared by a team (``LANGCHEF_DATABASE_URL``).

The URL is the operator's setting, read when a ledger or cache is opened (never at import
time), like the judge's endpoints: a design file cannot move the evidence elsewhere.
Any libpq URL works (``postgresql://user:password@host:port/db?options=-csearch_path%3Dx``
puts the tables into schema ``x``); ``postgresql+psycopg2://`` (SQLAlchemy's spelling, as in
deploy/dagster.yaml) is accepted too, so one URL can be copied between the two.

The driver is psycopg2 (``pip install psycopg2-binary``): dagster-postgres needs it anyway,
so a team deployment has one PostgreSQL driver, not two.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

from .errors import InputError

DATABASE_URL_VARIABLE = "LANGCHEF_DATABASE_URL"
_SCHEMES = re.compile(r"^postgres(?:ql)?(?:\+psycopg2)?://")
# Namespace of langchef's advisory locks (pg_advisory_lock takes two int4 keys): 'lc' + 16.
LOCK_NAMESPACE = 0x6C63_0016


def database_url() -> str | None:
    """The PostgreSQL URL the operator configured, or None for the SQLite default."""
    url = os.environ.get(DATABASE_URL_VARIABLE, "").strip()
    if not url:
        return None
    if not _SCHEMES.match(url):
        raise InputError(f"{DATABASE_URL_VARIABLE} must be a postgresql:// URL, got "
                         f"{redacted(url)!r}",
                         hint="unset it to keep the ledger and the verdict cache in the "
                              "workspace's SQLite files")
    return url


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(//[^:/@]+):[^@/]*@", r"\1:***@", url)


def connect(url: str):
    """A psycopg2 connection (autocommit off) to ``url``; one clear error when it fails."""
    try:
        import psycopg2
    except ImportError:
        raise InputError(f"{DATABASE_URL_VARIABLE} is set but the PostgreSQL driver is not "
                         "installed", hint="pip install psycopg2-binary, or unset "
                         f"{DATABASE_URL_VARIABLE} to use the workspace's SQLite files") from None
    try:
        return psycopg2.connect(_SCHEMES.sub("postgresql://", url), connect_timeout=10,
                                application_name="langchef")
    except psycopg2.Error as error:
        raise InputError(f"cannot connect to the PostgreSQL database {redacted(url)} "
                         f"({_first_line(error)})", hint=f"check {DATABASE_URL_VARIABLE} and "
                         "that the server is up and reachable") from None


@contextlib.contextmanager
def translated(url: str, what: str, connection=None) -> Iterator[None]:
    """psycopg2's errors as one sentence naming the database and what to do; the failed
    transaction of ``connection`` is rolled back, so nothing is half-written."""
    import psycopg2
    try:
        yield
    except psycopg2.Error as error:
        if connection is not None and not connection.closed:
            connection.rollback()
        raise InputError(f"the {what} in {redacted(url)} cannot be used ({_first_line(error)})",
                         hint="check the database server and the role's privileges, then run "
                              "again") from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


APPEND_ONLY_FUNCTION = """
CREATE OR REPLACE FUNCTION langchef_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the langchef ledger is append-only: rows of % are never changed or '
                    'removed (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$"""


def append_only(table: str) -> tuple[str, ...]:
    """Triggers that refuse UPDATE, DELETE and TRUNCATE of ``table``, for every role (the
    owner included); an application role granted only SELECT, INSERT cannot drop them.
    The names are the SQLite ledger's (``<table>_refuse_update`` …), which the ledger's
    verification looks for."""
    return tuple(
        f"CREATE OR REPLACE TRIGGER {table}_refuse_{operation.lower()} BEFORE {operation} "
        f"ON {table} FOR EACH {'STATEMENT' if operation == 'TRUNCATE' else 'ROW'} "
        "EXECUTE FUNCTION langchef_refuse_change()"
        for operation in ("UPDATE", "DELETE", "TRUNCATE"))


def apply_schema(connection, statements) -> None:
    """Run DDL statements in one transaction under a transaction-level advisory lock, so
    processes starting at the same moment do not race on CREATE … IF NOT EXISTS ("tuple
    concurrently updated"). The lock is released by COMMIT, not by an unlock call that a
    driver could send before the commit."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL client_min_messages = warning")  # no "already exists" notices
        cursor.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_NAMESPACE,))
        for statement in statements:
            cursor.execute(statement)
    connection.commit()

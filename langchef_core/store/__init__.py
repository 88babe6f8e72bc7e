"""Where the ledger and the verdict cache are kept: one schema on SQLAlchemy Core, two dialects.

- ``location``: which database a store is in (a SQLite file in the workspace, or the team's
  PostgreSQL database named by ``LANGCHEF_DATABASE_URL``);
- ``schema``: the tables statements are built from, and the hash-chain arithmetic;
- ``dialects``: everything that differs between SQLite and PostgreSQL, in one place;
- ``connection``: opening a database, its transactions, its errors as one sentence;
- ``migrate``: the schema's Alembic revisions (``migrations/``, built from ``ddl``), applied
  on open and by ``langchef db upgrade``, and how a database made before Alembic is
  recognised.
"""

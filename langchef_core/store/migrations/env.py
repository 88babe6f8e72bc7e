"""Alembic's environment: the migrations run on the connection langchef opened, inside the
transaction it holds under the schema lock (``langchef_core.store.migrate``). Run them with
``langchef db upgrade`` or by opening a store, not with the ``alembic`` command."""

from alembic import context

from langchef_core.store.migrate import VERSION_TABLE

connection = context.config.attributes.get("connection")
if connection is None:
    raise SystemExit("langchef's migrations run on the connection langchef opens: use "
                     "`langchef db upgrade` (it reads LANGCHEF_DATABASE_URL or --workspace)")
context.configure(connection=connection, version_table=VERSION_TABLE)
with context.begin_transaction():
    context.run_migrations()

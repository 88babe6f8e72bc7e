"""the schema is kept by Alembic from here on

The pre-Alembic counter moves past the last step langchef before Alembic knows, so that
code refuses this ledger ("written by a newer langchef") instead of writing rows into a
schema it does not know. SQLite gains the index PostgreSQL's ledger had from its start.
"""

from alembic import op

from langchef_core.store import ddl

revision = "ledger_0006"
down_revision = "ledger_0005"


def upgrade() -> None:
    if not ddl.is_postgresql():
        op.create_index("readouts_by_experiment", "readouts", ["experiment", "version"])
    ddl.mark(6, "the schema is kept by Alembic (table langchef_alembic_version)")

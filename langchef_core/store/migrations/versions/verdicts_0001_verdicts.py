"""the verdict cache: one verdict per (judge id, item hash)

As langchef before Alembic made it: in PostgreSQL with the time each verdict was stored and
append-only triggers (a team's shared cache), in SQLite the bare table.
"""

import sqlalchemy as sa
from alembic import op

from langchef_core.store import ddl

revision = "verdicts_0001"
down_revision = None
branch_labels = ("verdicts",)


def upgrade() -> None:
    columns = [ddl.text("judge_id"), ddl.text("item_sha256"), ddl.text("verdict"),
               ddl.text("criterion", nullable=True), ddl.text("rationale")]
    if not ddl.is_postgresql():
        op.create_table("verdicts", *columns, sa.PrimaryKeyConstraint("judge_id", "item_sha256"))
        return
    ddl.run(ddl.dialect().setup())
    ddl.append_only_table("verdicts", *columns, recorded_at(nullable=False),
                          sa.PrimaryKeyConstraint("judge_id", "item_sha256"))


def recorded_at(*, nullable: bool) -> sa.Column:
    return sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=nullable,
                     server_default=ddl.dialect().now())

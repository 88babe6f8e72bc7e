"""one verdict cache on both dialects: the time each verdict was stored, and append-only

SQLite's cache gains PostgreSQL's column (unknown, NULL, for verdicts stored before it) and
its triggers: the first verdict stored for an item is kept, and never changed.
"""

import sqlalchemy as sa
from alembic import op

from langchef_core.store import ddl

revision = "verdicts_0002"
down_revision = "verdicts_0001"


def upgrade() -> None:
    if ddl.is_postgresql():
        op.alter_column("verdicts", "recorded_at", nullable=True)
        return
    with op.batch_alter_table("verdicts", recreate="always") as batch:
        batch.add_column(sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=True,
                                   server_default=ddl.dialect().now()))
    op.execute("UPDATE verdicts SET recorded_at = NULL")
    ddl.run(ddl.dialect().append_only("verdicts"))

"""the hash chain over every row of every table

Rows written before the chain existed are linked in, oldest table first, each table's rows
by id and hashed over its columns in table order (at this revision: exactly the columns the
ledger hashes).
"""

import sqlalchemy as sa
from alembic import op

from langchef_core.store import ddl
from langchef_core.store.schema import GENESIS, link_sha256, row_sha256

revision = "ledger_0005"
down_revision = "ledger_0004"

TABLES = ("readouts", "anchor_runs", "approvals", "publications")  # the chain's order


def upgrade() -> None:
    ddl.append_only_table(
        "chain", ddl.identity("seq"), ddl.text("table_name"),
        sa.Column("row_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        ddl.sha256("row_sha256"), ddl.sha256("link_sha256"),
        sa.UniqueConstraint("table_name", "row_id"), sqlite_autoincrement=True)
    backfill(op.get_bind())
    ddl.mark(5, "the hash chain over every row of every table")


def backfill(connection) -> None:
    inspector = sa.inspect(connection)
    chain = sa.table("chain", *map(sa.column, ("table_name", "row_id", "row_sha256",
                                               "link_sha256")))
    previous = GENESIS
    for name in TABLES:
        columns = [sa.column(column["name"]) for column in inspector.get_columns(name)]
        rows = connection.execute(sa.select(*columns).select_from(sa.table(name))
                                  .order_by(sa.column("id")))
        for row in rows.all():
            row_sha = row_sha256(row)
            previous = link_sha256(previous, name, row[0], row_sha)
            connection.execute(sa.insert(chain).values(table_name=name, row_id=int(row[0]),
                                                       row_sha256=row_sha, link_sha256=previous))

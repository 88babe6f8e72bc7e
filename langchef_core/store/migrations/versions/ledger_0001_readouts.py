"""readouts taken per design hash"""

from alembic import op

from langchef_core.store import ddl

revision = "ledger_0001"
down_revision = None
branch_labels = ("ledger",)


def upgrade() -> None:
    ddl.run(ddl.dialect().setup())  # the function the append-only triggers call
    ddl.run(ddl.dialect().legacy_setup())
    ddl.chained_table("readouts", ddl.text("experiment"), ddl.sha256("design_sha256"),
                      ddl.sha256("inputs_sha256"), ddl.counting("version"), ddl.text("verdict"),
                      ddl.text("taken_at"),
                      indexes={"readouts_by_design": ("design_sha256", "inputs_sha256")})
    if ddl.is_postgresql():  # SQLite gained it in ledger_0006
        op.create_index("readouts_by_experiment", "readouts", ["experiment", "version"])
    ddl.mark(1, "readouts taken per design hash")

"""approvals: every approval of a design, recorded with its file"""

from langchef_core.store import ddl

revision = "ledger_0003"
down_revision = "ledger_0002"


def upgrade() -> None:
    ddl.chained_table("approvals", ddl.text("experiment"), ddl.sha256("design_sha256"),
                      ddl.text("approved_by"), ddl.text("approved_at"), ddl.text("recorded_at"),
                      ddl.text("tool_version"),
                      indexes={"approvals_by_experiment": ("experiment", "id")})
    ddl.mark(3, "approvals: every approval of a design, recorded with its file")

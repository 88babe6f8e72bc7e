"""anchor runs: every judging of an anchor set, with its verdicts"""

from langchef_core.store import ddl

revision = "ledger_0002"
down_revision = "ledger_0001"


def upgrade() -> None:
    ddl.chained_table("anchor_runs", ddl.text("anchor_set"), ddl.sha256("anchor_set_sha256"),
                      ddl.text("judge_id"), ddl.real("kappa"), ddl.text("counts"),
                      ddl.choice("level", "ok", "warn", "error"), ddl.text("taken_at"),
                      ddl.text("verdicts"),
                      indexes={"anchor_runs_by_set": ("anchor_set_sha256", "id")})
    ddl.mark(2, "anchor runs: every judging of an anchor set, with its verdicts")

"""publications: a pending row before a version folder is renamed into place"""

from langchef_core.store import ddl

revision = "ledger_0004"
down_revision = "ledger_0003"


def upgrade() -> None:
    ddl.chained_table("publications", ddl.text("experiment"), ddl.counting("version"),
                      ddl.sha256("readout_sha256"), ddl.text("started_at"))
    ddl.mark(4, "publications: a pending row before a version folder is renamed into place")

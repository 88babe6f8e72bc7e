"""ledger_identity and look_prefixes: which workspace a ledger belongs to, and the goldens
each sequential look read

``ledger_identity`` holds one row, written the first time a workspace opens the ledger: a
random identity every manifest published from then on carries, and the identities of the
ledgers whose manifests the workspace already held (a ledger started again after the old
one was lost succeeds them). ``look_prefixes`` pins each sequential look to the goldens it
read, in traffic order, so a later look can be checked to extend it.
"""

from langchef_core.store import ddl

revision = "ledger_0007"
down_revision = "ledger_0006"


def upgrade() -> None:
    ddl.chained_table("ledger_identity", ddl.text("workspace_id"), ddl.text("succeeds"),
                      ddl.text("created_at"))
    ddl.chained_table("look_prefixes", ddl.text("experiment"), ddl.sha256("design_sha256"),
                      ddl.sha256("inputs_sha256"), ddl.counting("n"), ddl.sha256("prefix_sha256"),
                      ddl.text("ids"), ddl.text("recorded_at"),
                      indexes={"look_prefixes_by_design": ("design_sha256", "id")})

"""`langchef db upgrade`: bring the ledger's and the verdict cache's schema to this langchef's
revision, and say what was done."""

from __future__ import annotations

from .options import add_command, open_workspace
from .output import emit

UPGRADE_DESCRIPTION = """
    Apply the schema revisions this langchef knows (Alembic; version table
    langchef_alembic_version) to the databases the workspace's ledger and verdict cache use:
    the team's PostgreSQL database when LANGCHEF_DATABASE_URL is set, else the workspace's
    langchef.sqlite and verdict_cache.sqlite. A ledger or cache made by langchef before
    Alembic is recognised and upgraded without losing a row. Opening a store does the same on
    the way; run this after upgrading langchef, as the role that owns langchef's tables."""
UPGRADE_EXAMPLES = ("langchef db upgrade", "langchef db upgrade --workspace evals --json")
STORES = {"ledger": "ledger", "verdicts": "verdict cache"}


def register(commands, common) -> None:
    db = commands.add_parser("db", help="manage the ledger's and verdict cache's database",
                             description="Manage the database of the ledger and the verdict "
                                         "cache.")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="SUBCOMMAND")
    upgrade = add_command(db_commands, "upgrade", common,
                          help="apply the schema's revisions (Alembic)",
                          description=UPGRADE_DESCRIPTION, examples=UPGRADE_EXAMPLES)
    upgrade.set_defaults(handler=run_db_upgrade)


def run_db_upgrade(arguments) -> int:
    from langchef_core.store.connection import upgrade_workspace

    workspace = open_workspace(arguments)
    steps = upgrade_workspace(workspace)
    emit(arguments, {"workspace": str(workspace.root),
                     "databases": [step.to_dict() for step in steps]},
         "\n".join(_sentence(step) for step in steps))
    return 0


def _sentence(step) -> str:
    store = f"{STORES[step.branch]} in {step.where}"
    if step.after is None:
        return f"{store}: not created yet (it is made at the newest revision on first use)"
    if not step.changed:
        return f"{store}: at {step.after}, the newest revision; nothing to do"
    if step.before is None:
        return f"{store}: created at {step.after}"
    recognised = f" ({step.recognised})" if step.recognised else ""
    return f"{store}: upgraded from {step.before}{recognised} to {step.after}"

"""`langchef approve NAME --by PERSON`: record a person's approval of the current design."""

from __future__ import annotations

from .options import add_command, judge_endpoint, open_workspace
from .output import emit


DESCRIPTION = """
    Record that PERSON approved the current version of experiments/NAME.yaml
    (approvals/NAME.json: design hash, approver, UTC time, tool version). Approving an unchanged
    design again changes nothing; approving an edited design keeps the earlier approval in its
    history."""
EXAMPLES = ("langchef approve example --by 'Ada Lovelace'",
            "langchef approve example --by ada@example.org --json")


def register(commands, common) -> None:
    approve = add_command(commands, "approve", common, help="approve a design as a person",
                          description=DESCRIPTION, examples=EXAMPLES)
    approve.add_argument("name", metavar="NAME", help="the experiment to approve")
    approve.add_argument("--by", required=True, metavar="PERSON",
                         help="the person approving (name or e-mail)")
    approve.set_defaults(handler=run_approve)


def run_approve(arguments) -> int:
    from langchef_core.designs.approval import approve
    from langchef_core.designs.parse import load_workspace_design

    workspace = open_workspace(arguments)
    outcome = approve(workspace, arguments.name, by=arguments.by)
    endpoint = judge_endpoint(load_workspace_design(workspace, arguments.name))
    text = outcome.sentence + (f"\n  {endpoint['sentence']}" if endpoint else "")
    emit(arguments, {**outcome.to_dict(), "judge_endpoint": endpoint}, text)
    return 0

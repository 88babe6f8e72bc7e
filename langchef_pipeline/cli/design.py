"""`langchef design check NAME`: validate a design, print its hash, its approval state and
what its goldens can detect."""

from __future__ import annotations

from .options import add_command, judge_endpoint, open_workspace
from .output import emit


CHECK_DESCRIPTION = """
    Validate experiments/NAME.yaml, print its canonical form and SHA-256, its approval state,
    and the power analysis: the smallest effect the suite's goldens can detect at the assumed
    discordant rate, and the goldens a smaller target or margin would need."""
CHECK_EXAMPLES = ("langchef design check example",
                  "langchef design check example --workspace evals --json")


def register(commands, common) -> None:
    design = commands.add_parser("design", help="work with design files",
                                 description="Work with design files (experiments/NAME.yaml).")
    design_commands = design.add_subparsers(dest="design_command", required=True,
                                            metavar="SUBCOMMAND")
    check = add_command(design_commands, "check", common,
                        help="validate a design, show its hash and what it can detect",
                        description=CHECK_DESCRIPTION, examples=CHECK_EXAMPLES)
    check.add_argument("name", metavar="NAME", help="the experiment (file stem of the design)")
    check.set_defaults(handler=run_design_check)


def run_design_check(arguments) -> int:
    from langchef_core.designs.approval import (INVALID, ApprovalStatus, status_of,
                                                verified_approval)
    from langchef_core.designs.fit import require_fit, run_files
    from langchef_core.designs.parse import load_workspace_design
    from langchef_core.designs.power_plan import assess_power
    from langchef_core.inputs.errors import InputError

    workspace = open_workspace(arguments)
    design = load_workspace_design(workspace, arguments.name)
    require_fit(workspace, design, table_path=workspace.failures_table(arguments.name))
    plan = assess_power(workspace, design)
    try:
        status = status_of(design, verified_approval(workspace, arguments.name))
    except InputError as error:  # an approval the ledger does not back: shown, not fatal
        status = ApprovalStatus(design.experiment, INVALID, "approval not valid", design.sha256,
                                None, error.describe())
    endpoint = judge_endpoint(design)
    notes = []
    if design.kind == "superiority" and design.margin is not None:
        notes.append(f"margin {design.margin:g} given for a superiority design: non-inferiority "
                     "is reported beside the verdict, and the verdict alone decides the gate")
    runs = run_files(workspace, design)
    file = workspace.relative(workspace.design_path(arguments.name))
    payload = {"experiment": design.experiment, "file": file, "valid": True,
               "sha256": design.sha256, "canonical": design.canonical_json,
               "design": design.to_dict(), "power": plan.to_dict(),
               "approval": status.to_dict(), "notes": notes, "judge_endpoint": endpoint,
               "runs": [run.to_dict() for run in runs]}
    text = [f"{file}: valid design",
            f"  experiment  {design.experiment}: {design.kind} on {design.primary}, "
            f"{design.arms.baseline} -> {design.arms.variant}, suite {design.suite}",
            f"  sha256      {design.sha256}",
            f"  canonical   {design.canonical_json}",
            f"  workspace   fits: {_fit_summary(design)}",
            "  runs        " + ", ".join(f"{run.arm}: {run.file}"
                                         + ("" if run.written else ".jsonl|.csv|.parquet (not written yet)")
                                         for run in runs),
            f"  power       {plan.sentence}",
            f"  approval    {status.label}: {status.sentence}"]
    if endpoint is not None:
        text.append(f"  endpoint    {endpoint['sentence']}")
    text += [f"  note        {note}" for note in notes]
    emit(arguments, payload, "\n".join(text))
    return 0


def _fit_summary(design) -> str:
    checked = [f"goldens/{design.suite} and the columns the design names"]
    if design.anchors is not None:
        checked.append(f"anchors/{design.anchors.set} for the pinned judge")
    if design.retrieval is not None:
        checked.append(f"qrels/{design.suite}")
    return ", ".join(checked) + " were checked"

"""`langchef status`: every design in the workspace with its state and readout versions."""

from __future__ import annotations

from .options import add_command, open_workspace
from .output import emit


DESCRIPTION = """
    List every design in experiments/ with its state: draft, approved, read out (with the
    versions under reports/), revoked (edited after approval) or invalid."""
EXAMPLES = ("langchef status", "langchef status --workspace evals --json")


def register(commands, common) -> None:
    status = add_command(commands, "status", common, help="list experiments and their state",
                         description=DESCRIPTION, examples=EXAMPLES)
    status.add_argument("--reports", metavar="DIR",
                        help="where readouts are written (default: WORKSPACE/reports)")
    status.set_defaults(handler=run_status)


def run_status(arguments) -> int:
    workspace = open_workspace(arguments, reports=arguments.reports)
    rows = [_status_row(workspace, name) for name in workspace.experiment_names()]
    if not rows:
        text = (f"no experiments in {workspace.experiments}; start from `langchef init` and "
                "write experiments/NAME.yaml")
    else:
        text = _status_table(rows)
    emit(arguments, {"workspace": str(workspace.root), "experiments": rows}, text)
    return 0


def _status_row(workspace, name: str) -> dict:
    from langchef_core.designs.approval import APPROVED, INVALID, STATE_LABELS, approval_status
    from langchef_core.inputs.errors import InputError

    versions = _report_versions(workspace, name) if _valid_name(name) else []
    try:
        status = approval_status(workspace, name)
    except InputError as error:  # an unreadable approval file, shown rather than fatal
        return {"experiment": name, "state": INVALID, "label": STATE_LABELS[INVALID],
                "design_sha256": None, "approved_by": None, "approved_at": None,
                "versions": versions, "sentence": error.describe()}
    state, label = status.state, status.label
    if state == APPROVED and versions:
        state, label = "read_out", "read out"
    approval = status.approval
    return {"experiment": name, "state": state, "label": label,
            "design_sha256": status.design_sha256,
            "approved_by": approval.approved_by if approval else None,
            "approved_at": approval.to_dict()["approved_at"] if approval else None,
            "versions": versions, "sentence": status.sentence}


def _status_table(rows: list[dict]) -> str:
    width = max(len("EXPERIMENT"), *(len(row["experiment"]) for row in rows))
    lines = [f"{'EXPERIMENT':<{width}}  {'STATE':<31}  {'VERSIONS':<10}  DESIGN        "
             "APPROVED BY"]
    for row in rows:
        versions = ", ".join(f"v{v}" for v in row["versions"]) or "-"
        lines.append(f"{row['experiment']:<{width}}  {row['label']:<31}  {versions:<10}  "
                     f"{(row['design_sha256'] or '-')[:12]:<12}  {row['approved_by'] or '-'}")
        if row["state"] in ("invalid", "revoked"):
            lines.append(f"{'':<{width}}  {row['sentence']}")
    return "\n".join(lines)


def _valid_name(name: str) -> bool:
    from langchef_core.inputs.workspace import NAME_PATTERN

    return bool(NAME_PATTERN.match(name)) and ".." not in name


def _report_versions(workspace, experiment: str) -> list[int]:
    """Readout versions found as reports/<experiment>/v<N>/ folders, ascending."""
    folder = workspace.reports / experiment
    if not folder.is_dir():
        return []
    found = [int(entry.name[1:]) for entry in folder.iterdir()
             if entry.is_dir() and entry.name[:1] == "v" and entry.name[1:].isdigit()]
    return sorted(found)

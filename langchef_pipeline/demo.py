"""`langchef demo`: build the demo workspace, read out every experiment through Dagster, and
print each verdict line with its report path."""

import json
from datetime import datetime, timezone
from pathlib import Path

from langchef_core.demo import build_demo_workspace
from langchef_core.inputs.workspace import Workspace
from langchef_pipeline.materialize import ReadoutFailed, instance_for_cli, readout_experiment


def verdict_line(readout: dict) -> str:
    primary = readout["primary"]
    line = (f"{primary['verdict'].upper():<12} {primary['metric']} {primary['difference']:+.1%} "
            f"[{primary['low']:+.1%}, {primary['high']:+.1%}]  p={primary['p_value']:.4f}")
    if "broke" in primary:
        line += f"  {primary['broke']} broke, {primary['fixed']} fixed"
    if primary["verdict"] == "inconclusive":
        line += f"  (smallest effect this run could have seen: {primary['detection_limit']:.1%})"
    if primary.get("noninferiority"):
        line += f"  non-inferiority {primary['noninferiority']} at margin {primary['margin']:.1%}"
    if not readout["gate"]["passed"]:
        line += "  [gate: not passed]"
    return line


def run_demo(root: str | Path, *, out=print) -> int:
    """Build (or rebuild) the demo under ``root`` and read out every experiment."""
    from langchef_core.report import write_index
    manifest = build_demo_workspace(root)
    workspace = Workspace.at(root)
    instance = instance_for_cli()
    out(f"demo workspace: {workspace.root}")
    for planted in manifest.experiments:
        out(f"\n{planted.experiment}: {planted.plant}")
        try:
            path = readout_experiment(workspace, planted.experiment, instance=instance)
        except ReadoutFailed as refused:
            out(f"  REFUSED      {refused}")
            continue
        out(f"  {verdict_line(json.loads(path.read_text()))}")
        out(f"  report: {path.parent / 'index.html'}")
    index = write_index(workspace.reports, datetime.now(timezone.utc))
    out(f"\nall readouts: {index}")
    return 0

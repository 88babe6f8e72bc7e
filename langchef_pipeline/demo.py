"""`langchef demo`: build the demo workspace, read out every experiment through Dagster, and
print each verdict line with its report path."""

import json
from datetime import datetime, timezone
from pathlib import Path

from langchef_core.demo import build_demo_workspace
from langchef_core.inputs.workspace import Workspace
from langchef_core.readout.verdict import verdict_line
from langchef_pipeline.materialize import ReadoutFailed, instance_for_cli, readout_experiment


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
            if getattr(refused, "report_path", None):
                out(f"  report: {refused.report_path}")
            continue
        out(f"  {verdict_line(json.loads(path.read_text()))}")
        out(f"  report: {path.parent / 'index.html'}")
    index = write_index(workspace.reports, datetime.now(timezone.utc))
    out(f"\nall readouts: {index}")
    return 0

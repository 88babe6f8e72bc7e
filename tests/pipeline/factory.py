"""A small recorded-verdict workspace written from scratch, for pipeline tests that break it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from langchef_core.designs.approval import approve
from langchef_core.inputs.workspace import Workspace

APPROVED_AT = datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc)
JUDGE = "upstream-judge@v3"

DESIGN = """\
# Pre-registered: does the shorter prompt hurt quality?
experiment: {name}
hypothesis: The shorter prompt answers at least as well as the current one.
suite: faq
arms:
  baseline: current
  variant: short
kind: superiority
primary: pass_rate
judge:
  kind: recorded
  id: {judge}
criteria: [Correctness, Directness]
bootstrap: {{resamples: 2000, seed: 0}}
"""


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def recorded_workspace(root: Path, *, name: str = "short-prompt", n: int = 40, broke: int = 12,
                       approved: bool = True) -> Workspace:
    """n goldens; the variant breaks ``broke`` of them on Directness (a clear regression)."""
    workspace = Workspace.at(root)
    (root / "experiments").mkdir(parents=True, exist_ok=True)
    (root / "experiments" / f"{name}.yaml").write_text(DESIGN.format(name=name, judge=JUDGE), encoding="utf-8")
    ids = [f"g{i:03d}" for i in range(n)]
    write_jsonl(root / "goldens" / "faq.jsonl",
                [{"example_id": i, "input": f"question {i}", "ideal": f"answer {i}"} for i in ids])
    stamp = "2026-02-01T10:00:00Z"
    for arm, failing in (("current", set()), ("short", set(ids[:broke]))):
        write_jsonl(root / "runs" / name / f"{arm}.jsonl", [
            {"example_id": i, "output": f"{arm} answer {i}", "created_at": stamp,
             "verdict": "fail" if i in failing else "pass",
             "criterion": "Directness" if i in failing else None, "judge": JUDGE}
            for i in ids])
    if approved:
        approve(workspace, name, by="Rita Reviewer", at=APPROVED_AT)
    return workspace


def seeded_workspace(root: Path, *, identical: bool = False) -> Workspace:
    """The recorded workspace with the variant given as three independently trained seeds,
    each breaking a different dozen goldens (or, with ``identical``, one checkpoint re-run)."""
    workspace = recorded_workspace(root, approved=False)
    design = workspace.design_path("short-prompt")
    design.write_text(design.read_text() + "seeds: 3\n")
    folder = workspace.run_path("short-prompt", "short").parent
    workspace.run_path("short-prompt", "short").unlink()
    ids = [f"g{i:03d}" for i in range(40)]
    for k in (1, 2, 3):
        failing = set(ids[:12]) if identical else set(ids[(k - 1) * 4:(k - 1) * 4 + 10 + k])
        write_jsonl(folder / f"short@seed{k}.jsonl", [
            {"example_id": i, "output": f"short answer {i}" + ("" if identical else f" (seed {k})"),
             "created_at": "2026-02-01T10:00:00Z", "verdict": "fail" if i in failing else "pass",
             "criterion": "Directness" if i in failing else None, "judge": JUDGE}
            for i in ids])
    approve(workspace, "short-prompt", by="Rita Reviewer", at=APPROVED_AT)
    return workspace

"""The sequential demo experiment through Dagster: it stops early on its planted regression,
its report draws the confidence sequence, a later look is counted but not warned about, and
a cherry-picked subset of the traffic is refused by the gate."""

import json

import pytest

from langchef_core.demo.build import MANIFEST_NAME
from langchef_core.demo.sequential import LOOK_EVERY, MAX_GOLDENS, NAME, VARIANT
from langchef_core.readout.gate import readout_gate
from langchef_pipeline.materialize import ReadoutFailed, readout_experiment

pytestmark = pytest.mark.slow


def manifest_expected(workspace) -> dict:
    manifest = json.loads((workspace.root / MANIFEST_NAME).read_text())
    return next(e for e in manifest["experiments"] if e["experiment"] == NAME)["expected"]


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_the_planted_regression_stops_the_run_early(demo_workspace):
    expected = manifest_expected(demo_workspace)
    path = readout_experiment(demo_workspace, NAME)
    readout = json.loads(path.read_text())
    primary, section = readout["primary"], readout["sequential"]
    assert primary["verdict"] == "regression" and primary["high"] < 0
    assert (primary["n"], primary["broke"], primary["fixed"]) == \
        (expected["n"], expected["broke"], expected["fixed"])
    assert section["status"] == "stopped_early" and section["n"] == expected["n"]
    assert expected["n"] < MAX_GOLDENS / 2 and expected["n"] % LOOK_EVERY == 0
    assert section["sentence"].startswith(f"stopped early at n = {expected['n']} of N = 2000")
    # The look before the stopping one was still inconclusive (that is why it went on).
    assert expected["n"] - LOOK_EVERY < section["first_decisive"] <= expected["n"]
    assert section["fixed_n"]["high"] - section["fixed_n"]["low"] < section["high"] - section["low"]
    assert readout["looks"] == {"look_number": 1, "repeated": False, "earlier_inputs": 0,
                                "sequential": True}
    assert readout["gate"]["passed"] is False and readout_gate(readout).passed is False
    html = (path.parent / "index.html").read_text()
    assert '<svg class="sequence"' in html and "stopped early at n =" in html
    # The verdict box states the budget's limit as such, not as what this look could have seen.
    assert "smallest effect this run could have seen" not in html
    assert f"With the remaining {MAX_GOLDENS - expected['n']} goldens of the budget" in html


def test_a_later_look_is_counted_without_a_repeated_look_warning(demo_workspace):
    readout_experiment(demo_workspace, NAME)
    expected = manifest_expected(demo_workspace)
    goldens = read_jsonl(demo_workspace.root / "goldens" / "support-faq.jsonl")
    extra = goldens[expected["n"]:expected["n"] + LOOK_EVERY]
    for arm in ("faq-large", VARIANT):
        run = demo_workspace.root / "runs" / NAME / f"{arm}.jsonl"
        rows = read_jsonl(run)
        template = rows[-1]
        rows += [{**template, "example_id": golden["example_id"], "verdict": "pass",
                  "criterion": None} for golden in extra]
        write_jsonl(run, rows)
    second = json.loads(readout_experiment(demo_workspace, NAME).read_text())
    assert second["version"] == 2 and second["sequential"]["n"] == expected["n"] + LOOK_EVERY
    assert second["looks"]["look_number"] == 2 and second["looks"]["repeated"] is False
    assert "repeated_look" not in {warning["code"] for warning in second["warnings"]}


def test_a_cherry_picked_subset_of_the_traffic_is_refused(demo_workspace):
    run = demo_workspace.root / "runs" / NAME / f"{VARIANT}.jsonl"
    rows = read_jsonl(run)
    skipped = rows.pop(10)["example_id"]   # one early golden left unscored in the variant
    write_jsonl(run, rows)
    with pytest.raises(ReadoutFailed) as refused:
        readout_experiment(demo_workspace, NAME)
    reason = refused.value.reasons[0]
    assert reason.startswith("runs_are_complete:") and "not the first goldens in traffic" in reason
    assert f"{skipped!r} (position 11)" in reason


ACCURACY_DESIGN = """\
experiment: router-v2
hypothesis: The new intent router labels requests as well as the current one.
suite: intents
arms: {baseline: router-v1, variant: router-v2}
kind: superiority
primary: accuracy
stopping: {rule: sequential, max_goldens: 200, order: position}
"""


def test_an_accuracy_design_reads_its_prefix_and_caps_the_budget(tmp_path):
    from datetime import datetime, timezone

    import numpy as np

    from langchef_core.designs.approval import approve
    from langchef_core.inputs.workspace import Workspace

    root = tmp_path / "workspace"
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "router-v2.yaml").write_text(ACCURACY_DESIGN)
    rng = np.random.default_rng(7)
    labels = ["billing", "login", "refund", "other"]
    ideal = rng.choice(labels, 300)
    # Positions are a shuffled 1..300, so file order is not traffic order.
    position = rng.permutation(300) + 1
    goldens = [{"example_id": f"r{i:03d}", "input": f"request {i}", "ideal": str(ideal[i]),
                "position": int(position[i])} for i in range(300)]
    (root / "goldens").mkdir()
    write_jsonl(root / "goldens" / "intents.jsonl", goldens)
    by_traffic = sorted(range(300), key=lambda i: position[i])
    for arm, wrong, scored in (("router-v1", 0.05, 250), ("router-v2", 0.30, 230)):
        rows = []
        for i in by_traffic[:scored]:
            guess = str(ideal[i]) if rng.random() >= wrong else "other" if ideal[i] != "other" \
                else "billing"
            rows.append({"example_id": f"r{i:03d}", "predicted": guess,
                         "created_at": "2026-02-01T10:00:00Z"})
        (root / "runs" / "router-v2").mkdir(parents=True, exist_ok=True)
        write_jsonl(root / "runs" / "router-v2" / f"{arm}.jsonl", rows)
    workspace = Workspace.at(root)
    approve(workspace, "router-v2", by="Rita Reviewer",
            at=datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc))
    readout = json.loads(readout_experiment(workspace, "router-v2").read_text())
    section = readout["sequential"]
    assert readout["primary"]["n"] == 200 and section["n"] == 200
    assert section["status"] == "ran_to_max" and section["beyond_cap"] == 30
    assert readout["primary"]["verdict"] == "regression"
    assert "sequential_cap" in {warning["code"] for warning in readout["warnings"]}

"""`langchef import inspect`: logs written by the real `inspect eval` (offline mockllm
provider, a solver that plants which samples each arm answers right) become paired arms,
and the readout recovers the planted broke/fixed goldens exactly."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import (A_CORRECT, B_CORRECT, BROKE, FIXED, IDS, QUESTIONS, TOOLS, approved_design,
                       flipped, langchef, ok, read_out, write_jsonl)

pytestmark = pytest.mark.slow

JUDGE = "{kind: imported, tool: inspect, scorer: [match, includes]}"


def dataset_rows(changed: str | None = None):
    for example_id, (question, answer) in zip(IDS, QUESTIONS):
        reworded = " (reworded)" if example_id == changed else ""
        yield {"id": example_id, "input": question + reworded, "target": answer,
               "metadata": {"a_correct": example_id in A_CORRECT,
                            "b_correct": example_id in B_CORRECT}}


@pytest.fixture
def task_dir(tmp_path):
    folder = tmp_path / "task"
    folder.mkdir()
    shutil.copy(TOOLS / "planted_task.py", folder / "task.py")
    write_jsonl(folder / "samples.jsonl", dataset_rows())
    write_jsonl(folder / "changed.jsonl", dataset_rows(changed="g07"))
    return folder


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "evals"
    write_jsonl(root / "goldens" / "planted_qa.jsonl",
                [{"example_id": i, "input": q, "ideal": a} for i, (q, a) in zip(IDS, QUESTIONS)])
    return root


def inspect_eval(inspect_cli, task_dir, arm: str, *options) -> list:
    logs = task_dir / "logs" / "-".join([arm, *options]).replace("=", "_").replace(",", "_")
    completed = subprocess.run([inspect_cli, "eval", "task.py", "--model", "mockllm/model",
                                "-T", f"arm={arm}", *options, "--log-dir", str(logs),
                                "--display", "none"],
                               cwd=task_dir, capture_output=True, text=True, timeout=300,
                               env={**os.environ, "INSPECT_LOG_LEVEL": "warning"})
    assert completed.returncode == 0, completed.stderr
    found = sorted(logs.glob("*.eval"))
    assert len(found) == 1
    return found


def test_planted_broke_and_fixed_goldens_are_recovered(inspect_cli, task_dir, workspace):
    approved_design(workspace, judge=JUDGE, criteria="[includes, match]", suite="planted_qa")
    for arm in ("a", "b"):
        log = inspect_eval(inspect_cli, task_dir, arm)
        ok(langchef("import", "inspect", *log, "--experiment", "imported", "--arm", arm,
                    "--workspace", workspace, cwd=workspace))
    readout = read_out(workspace)

    assert flipped(readout) == (BROKE, FIXED)
    assert (readout["primary"]["broke"], readout["primary"]["fixed"]) == (3, 3)
    assert readout["primary"]["n"] == 12
    # Both scorers fail on a wrong answer: the design's order makes `includes` the one cited.
    cited = {row["criterion"]: (row["broke"], row["fixed"]) for row in readout["criteria"]}
    assert cited == {"includes": (3, 3), "match": (0, 0)}
    # The judge is the scorer configuration the log recorded, the same for both arms.
    assert readout["judge"]["id"].startswith("inspect:")
    # Traffic time from the samples' own start times, after the approval.
    assert readout["traffic"]["verified"] is True
    # Cost from the planted model usage: 0.0001 per answer character.
    lines = (workspace / "runs/imported/a.jsonl").read_text().splitlines()
    run = [json.loads(line) for line in lines]
    assert {row["example_id"]: round(row["cost_usd"], 6) for row in run}["g02"] == 0.0005
    assert all(row["latency_ms"] > 0 for row in run)
    assert "repeatability" not in readout  # one epoch: nothing to repeat


def test_two_epochs_show_scoring_repeatability(inspect_cli, task_dir, workspace):
    approved_design(workspace, judge="{kind: imported, tool: inspect, scorer: match}",
                    criteria="[match]", suite="planted_qa")
    logs = {"a": inspect_eval(inspect_cli, task_dir, "a", "--epochs", "2", "-T", "flaky=g02,g09"),
            "b": inspect_eval(inspect_cli, task_dir, "b", "--epochs", "2")}
    for arm, log in logs.items():
        result = ok(langchef("import", "inspect", *log, "--experiment", "imported", "--arm", arm,
                             "--workspace", workspace, cwd=workspace))
        assert result.stdout.startswith(f"imported arm '{arm}': 12 goldens × 2 epochs into")
    readout = read_out(workspace)

    repeat = readout["repeatability"]
    assert (repeat["baseline"]["epochs"], repeat["baseline"]["changed"]) == (2, 2)
    assert repeat["baseline"]["changed_ids"] == ["g02", "g09"]
    assert repeat["variant"]["changed"] == 0
    # The comparison is of per-golden pass rates over the epochs (g02 and g09 count 0.5).
    baseline = {i: 1.0 if i in A_CORRECT else 0.0 for i in IDS} | {"g02": 0.5, "g09": 0.5}
    variant = {i: 1.0 if i in B_CORRECT else 0.0 for i in IDS}
    expected = sum(variant[i] - baseline[i] for i in IDS) / len(IDS)
    assert readout["primary"]["difference"] == pytest.approx(expected)
    assert "broke" not in readout["primary"]
    page = (workspace / "reports/imported/latest/index.html").read_text()
    assert "Scoring repeatability" in page and "<code>g09</code>" in page


def test_a_log_of_another_dataset_is_refused_naming_the_sample(inspect_cli, task_dir, workspace):
    log = inspect_eval(inspect_cli, task_dir, "b", "-T", "data=changed.jsonl")
    result = langchef("import", "inspect", *log, "--experiment", "imported", "--arm", "b",
                      "--suite", "planted_qa", "--workspace", workspace, cwd=workspace)
    assert result.returncode == 2
    assert "samples 'g07' have a different input or ideal than in goldens/planted_qa.jsonl" \
        in result.stderr
    assert not (workspace / "runs").exists()


def test_a_design_pinning_another_scorer_refuses_the_logs(inspect_cli, task_dir, workspace):
    approved_design(workspace, judge="{kind: imported, tool: inspect, scorer: exact}",
                    criteria="[exact]", suite="planted_qa")
    for arm in ("a", "b"):
        ok(langchef("import", "inspect", *inspect_eval(inspect_cli, task_dir, arm),
                    "--experiment", "imported", "--arm", arm, "--workspace", workspace,
                    cwd=workspace))
    result = langchef("readout", "imported", "--workspace", workspace, cwd=workspace)
    assert result.returncode == 2
    assert "not with the pinned scorer 'exact'" in result.stderr


def test_without_the_extra_the_sentence_names_it(tmp_path):
    code = ("import sys; sys.modules['inspect_ai'] = None\n"
            "from langchef_core.importers import read_inspect_log\n"
            "try:\n    read_inspect_log('x.eval')\nexcept ValueError as error:\n    print(error)\n")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120)
    assert "pip install 'langchef[inspect]'" in completed.stdout


def test_a_numeric_scorer_is_a_continuous_primary(inspect_cli, task_dir, workspace):
    approved_design(workspace, judge="{kind: imported, tool: inspect, scorer: answer_length}",
                    criteria="[answer_length]", suite="planted_qa", primary="score")
    for arm in ("a", "b"):
        ok(langchef("import", "inspect", *inspect_eval(inspect_cli, task_dir, arm),
                    "--experiment", "imported", "--arm", arm, "--workspace", workspace,
                    cwd=workspace))
    readout = read_out(workspace)

    def length(example_id, correct):
        return len(dict(zip(IDS, QUESTIONS))[example_id][1]) if example_id in correct \
            else len("I do not know")
    expected = sum(length(i, B_CORRECT) - length(i, A_CORRECT) for i in IDS) / len(IDS)
    assert readout["primary"]["metric"] == "score"
    assert readout["primary"]["difference"] == pytest.approx(expected)
    assert "broke" not in readout["primary"]
    assert (workspace / "reports/imported/latest/index.html").is_file()


def test_a_file_that_is_not_an_inspect_log_gets_one_sentence(inspect_cli, tmp_path):
    bad = tmp_path / "notes.eval"
    bad.write_text("not a zip")
    result = langchef("import", "inspect", bad, "--experiment", "x", "--arm", "a",
                      "--workspace", tmp_path, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"langchef: error: {bad}: not an Inspect AI log")
    assert "pass a .eval or .json log written by `inspect eval`" in result.stderr


def test_a_sample_twice_in_one_epoch_is_refused_naming_both_rows(inspect_cli, task_dir,
                                                                   workspace):
    from inspect_ai.log import read_eval_log, write_eval_log
    log, = inspect_eval(inspect_cli, task_dir, "a", "--epochs", "2")
    read = read_eval_log(str(log))
    # Two epochs of every sample are the run; a second g03 in epoch 2 (scored another way) is not.
    index = next(i for i, s in enumerate(read.samples) if (s.id, s.epoch) == ("g03", 2))
    copy = read.samples[index].model_copy(deep=True)
    copy.scores["match"].value = "I"
    read.samples.append(copy)
    edited = task_dir / "edited.json"
    write_eval_log(read, str(edited))
    index, again = (i for i, s in enumerate(read_eval_log(str(edited)).samples)
                    if (s.id, s.epoch) == ("g03", 2))  # the writer orders the samples

    def refused(*logs) -> str:
        result = langchef("import", "inspect", *logs, "--experiment", "imported", "--arm", "a",
                          "--workspace", workspace, cwd=workspace)
        assert result.returncode == 2, result.stdout
        assert not (workspace / "runs").exists()
        return result.stderr

    assert (f"{edited}: sample 'g03' has two conflicting rows in epoch 2: samples[{index}] and "
            f"samples[{again}] differ in scorer 'match' (pass 1 vs fail 0)") in refused(edited)
    # A sample missing from one epoch: the epochs differ between samples.
    read.samples = [s for s in read.samples if s is not copy and (s.id, s.epoch) != ("g05", 2)]
    write_eval_log(read, str(edited))
    assert (f"{edited}: sample 'g05' has 1 epoch (1) where the other 11 samples have 2 epochs "
            "(1, 2); every sample of a run has the same epochs") in refused(edited)
    # The same run passed twice as shards: every sample twice, the rows identical.
    shard = log.with_name("copy.eval")
    shutil.copy(log, shard)
    first = read.samples[0]
    assert (f"sample {first.id!r} has two rows in epoch {first.epoch}: samples[0] of {log} and "
            f"samples[0] of {shard} are identical copies") in refused(log, shard)
    assert f"{log}: this log is passed twice" in refused(log, log)


def test_goldens_with_a_duplicated_id_are_refused_at_import(inspect_cli, task_dir, tmp_path):
    # Issue 30: the import wrote the goldens, a row was then duplicated, and the next import
    # accepted them; only the readout refused.
    workspace = tmp_path / "fresh"
    workspace.mkdir()
    log, = inspect_eval(inspect_cli, task_dir, "a")
    ok(langchef("import", "inspect", log, "--experiment", "imported", "--arm", "a",
                "--workspace", workspace, cwd=workspace))
    goldens = workspace / "goldens" / "planted_qa.jsonl"
    rows = goldens.read_text().splitlines()
    goldens.write_text("\n".join([*rows, rows[2]]) + "\n")
    expected = ("goldens/planted_qa.jsonl, column 'example_id', row 13: duplicated id 'g03'; "
                "first seen at row 3")
    other = inspect_eval(inspect_cli, task_dir, "b")
    for only in (("--experiment", "imported", "--arm", "b"), ("--goldens-only",)):
        result = langchef("import", "inspect", *other, *only,
                          "--workspace", workspace, cwd=workspace)
        assert result.returncode == 2 and expected in result.stderr
    assert sorted(path.name for path in (workspace / "runs" / "imported").iterdir()) == ["a.jsonl"]


def test_a_refused_import_writes_no_goldens(inspect_cli, task_dir, tmp_path):
    # The other arm's run names another tool: refused before the missing goldens are written.
    workspace = tmp_path / "fresh"
    write_jsonl(workspace / "runs" / "imported" / "a.jsonl",
                [{"example_id": "g01", "output": "4", "imported": json.dumps(
                    {"tool": "promptfoo", "dataset": "planted_qa", "scores": {}})}])
    result = langchef("import", "inspect", *inspect_eval(inspect_cli, task_dir, "b"),
                      "--experiment", "imported", "--arm", "b", "--workspace", workspace,
                      cwd=workspace)
    assert result.returncode == 2 and "arm 'a' was imported from promptfoo" in result.stderr
    assert not (workspace / "goldens").exists()
    assert not (workspace / "runs" / "imported" / "b.jsonl").exists()

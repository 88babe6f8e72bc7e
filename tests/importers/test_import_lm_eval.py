"""`langchef import lm-eval`: sample logs written by the real lm-evaluation-harness CLI
(`lm-eval run --log_samples`, a local YAML task over a local JSONL file, a planted local
model registered in tools/planted_lm.py; the harness's `dummy` model cannot plant answers)
become paired arms, and the readout recovers the planted broke/fixed goldens exactly."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import (A_CORRECT, B_CORRECT, BROKE, FIXED, IDS, QUESTIONS, TOOLS, approved_design,
                       flipped, langchef, ok, read_out, write_jsonl)

pytestmark = pytest.mark.slow

TASK = """\
task: planted_qa
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Q: {{{{question}}}}\\nA:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n"]
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
metadata:
  version: 1.0
"""


@pytest.fixture
def task_dir(tmp_path):
    folder = tmp_path / "lm-eval"
    (folder / "tasks").mkdir(parents=True)
    (folder / "tasks" / "planted_qa.yaml").write_text(TASK.format(data="tasks/data.jsonl"))
    write_jsonl(folder / "tasks" / "data.jsonl",
                [{"id": i, "question": q, "answer": a, "a_correct": i in A_CORRECT,
                  "b_correct": i in B_CORRECT} for i, (q, a) in zip(IDS, QUESTIONS)])
    shutil.copy(TOOLS / "planted_lm.py", folder)
    shutil.copy(TOOLS / "run_lm_eval.py", folder)
    return folder


def lm_eval(python: str, task_dir, arm: str, model: str = "planted"):
    output = task_dir / "logs" / arm
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                   "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(task_dir / "hf_home")}
    environment.pop("PYTHONPATH", None)  # the harness's own venv, not langchef's
    # The harness's own CLI: plain for its dummy model, through run_lm_eval.py for the planted one.
    command = [str(Path(python).parent / "lm-eval"), "run", "--model", "dummy", "--model_args",
               "pretrained=dummy"] if model == "dummy" else \
        [python, "run_lm_eval.py", "run", "--model", model, "--model_args",
         f"pretrained=planted-{arm},arm={arm}"]
    completed = subprocess.run(
        [*command, "--tasks", "planted_qa",
         "--include_path", "tasks", "--log_samples", "--output_path", str(output)],
        cwd=task_dir, env=environment, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return output


def test_planted_broke_and_fixed_goldens_are_recovered(lm_eval_python, task_dir, tmp_path):
    workspace = tmp_path / "evals"
    workspace.mkdir()
    # Goldens before any traffic, from a dry run with the harness's own offline dummy model.
    ok(langchef("import", "lm-eval", lm_eval(lm_eval_python, task_dir, "dry", model="dummy"),
                "--goldens-only", "--workspace", workspace, cwd=workspace))
    goldens = (workspace / "goldens" / "planted_qa.jsonl").read_text().splitlines()
    first = json.loads(goldens[0])
    assert len(goldens) == 12 and json.loads(first["input"])["question"] == QUESTIONS[0][0]
    approved_design(workspace, judge="{kind: imported, tool: lm-eval, scorer: exact_match}",
                    criteria="[exact_match]", suite="planted_qa")
    for arm in ("a", "b"):
        ok(langchef("import", "lm-eval", lm_eval(lm_eval_python, task_dir, arm),
                    "--experiment", "imported", "--arm", arm, "--workspace", workspace,
                    cwd=workspace))
    readout = read_out(workspace)

    assert flipped(readout) == (BROKE, FIXED)
    assert readout["primary"]["n"] == 12
    assert readout["judge"]["id"].startswith("lm-eval:")
    assert readout["traffic"]["verified"] is True


def test_an_edited_sample_line_is_refused(lm_eval_python, task_dir, tmp_path):
    output = lm_eval(lm_eval_python, task_dir, "a")
    samples = next(output.rglob("samples_planted_qa_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[2] = lines[2].replace('"Colour of a clear sky?"', '"Colour of the sea?"')
    samples.write_text("\n".join(lines) + "\n")
    result = langchef("import", "lm-eval", output, "--experiment", "x", "--arm", "a",
                      "--workspace", tmp_path, cwd=tmp_path)
    assert result.returncode == 2
    assert f"{samples}, row 3: sample 'g03': the document or target does not match" in result.stderr


def test_a_second_line_for_one_document_is_refused_naming_both_lines(lm_eval_python, task_dir,
                                                                      tmp_path):
    output = lm_eval(lm_eval_python, task_dir, "a")
    samples = next(output.rglob("samples_planted_qa_*.jsonl"))
    lines = samples.read_text().splitlines()
    third = json.loads(lines[2])
    assert third["doc"]["id"] == "g03" and third["exact_match"] == 1.0
    for name, added in (("conflicting", {**third, "exact_match": 0.0}), ("identical", third)):
        samples.write_text("\n".join([*lines, json.dumps(added)]) + "\n")
        result = langchef("import", "lm-eval", output, "--experiment", "x", "--arm", "a",
                          "--workspace", tmp_path, cwd=tmp_path)
        assert result.returncode == 2
        assert not (tmp_path / "runs").exists() and not (tmp_path / "goldens").exists()
        assert f"{samples}: sample 'g03' has two " in result.stderr
        assert ("conflicting rows in epoch 1: line 3 and line 13 differ in exact_match"
                if name == "conflicting" else
                "rows in epoch 1: line 3 and line 13 are identical copies") in result.stderr

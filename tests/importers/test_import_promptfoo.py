"""`langchef import promptfoo`: results written by the real promptfoo (npm package, run
offline with a local script provider that plants which tests each arm answers right)
become paired arms; `repeat: 2` shows scoring repeatability."""

import json
import os
import shutil
import subprocess

import pytest

from .conftest import (A_CORRECT, B_CORRECT, BROKE, FIXED, IDS, QUESTIONS, TOOLS, approved_design,
                       flipped, langchef, ok, read_out, write_jsonl)

pytestmark = pytest.mark.slow

OFFLINE = {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_DISABLE_SHARING": "1", "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
           "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
           "PROMPTFOO_DISABLE_RUNTIME_WARNINGS": "1", "PROMPTFOO_FAILED_TEST_EXIT_CODE": "0",
           "NO_COLOR": "1"}


def planted_tests() -> str:
    lines = []
    for example_id, (question, answer) in zip(IDS, QUESTIONS):
        correct = ",".join(arm for arm, chosen in (("a", A_CORRECT), ("b", B_CORRECT))
                           if example_id in chosen)
        lines += [f"- description: {example_id}",
                  "  vars: " + json.dumps({"id": example_id, "question": question,
                                           "ideal": answer, "correct": correct}),
                  "  assert:",
                  '    - {type: equals, value: "{{ideal}}"}',
                  '    - {type: contains, value: "{{ideal}}"}']
    return "\n".join(lines) + "\n"


def config(arm: str, *, repeat: int = 1, flaky: str = "") -> str:
    return (f"description: planted arm {arm}\nprompts: ['Answer briefly: {{{{question}}}}']\n"
            f"providers:\n  - id: file://provider.js\n    label: planted-{arm}\n"
            f"    config: {{arm: {arm}, flaky: '{flaky}'}}\ntests: file://tests.yaml\n"
            f"evaluateOptions: {{repeat: {repeat}, maxConcurrency: 1}}\n")


@pytest.fixture
def eval_dir(tmp_path):
    folder = tmp_path / "promptfoo"
    folder.mkdir()
    shutil.copy(TOOLS / "planted_provider.js", folder / "provider.js")
    (folder / "tests.yaml").write_text(planted_tests())
    return folder


def promptfoo_eval(cli: str, folder, name: str, text: str):
    (folder / f"{name}.yaml").write_text(text)
    output = folder / f"{name}.json"
    environment = {**os.environ, **OFFLINE, "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
                   "PROMPTFOO_CACHE_PATH": str(folder / ".promptfoo" / "cache")}
    completed = subprocess.run([cli, "eval", "-c", f"{name}.yaml", "-o", str(output), "--no-cache",
                                "--no-progress-bar", "--no-table"],
                               cwd=folder, env=environment, capture_output=True, text=True,
                               timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return output


def goldens(workspace):
    rows = []
    for line in planted_tests().split("- description: ")[1:]:
        variables = json.loads(line.split("vars: ", 1)[1].split("\n", 1)[0])
        rows.append({"example_id": variables["id"],
                     "input": json.dumps(variables, sort_keys=True, separators=(",", ":"))})
    write_jsonl(workspace / "goldens" / "planted.jsonl", rows)


JUDGE = "{kind: imported, tool: promptfoo, scorer: [equals, contains]}"


def test_planted_broke_and_fixed_goldens_are_recovered(promptfoo_cli, eval_dir, tmp_path):
    workspace = tmp_path / "evals"
    goldens(workspace)
    approved_design(workspace, judge=JUDGE, criteria="[equals, contains]", suite="planted",
                    extra="guardrails: [{metric: cost_usd, statistic: mean, max_increase: 0.5}]\n")
    for arm in ("a", "b"):
        log = promptfoo_eval(promptfoo_cli, eval_dir, arm, config(arm))
        result = ok(langchef("import", "promptfoo", log, "--experiment", "imported", "--arm", arm,
                             "--workspace", workspace, cwd=workspace))
        assert result.stdout.startswith(f"imported arm '{arm}': 12 goldens × 1 epoch into "
                                        f"runs/imported/{arm}.jsonl")
    readout = read_out(workspace)

    assert flipped(readout) == (BROKE, FIXED)
    assert {row["criterion"]: row["broke"] for row in readout["criteria"]} == \
        {"equals": 3, "contains": 0}
    assert readout["judge"]["id"].startswith("promptfoo:")
    assert readout["traffic"]["verified"] is True
    # promptfoo's latencyMs and cost arrive, so latency and cost guardrails can be read.
    assert set(readout["costs"]) == {"latency_ms", "cost_usd"}
    guardrail, = readout["guardrails"]
    assert guardrail["name"] == "mean cost_usd" and guardrail["status"] in ("held", "failed",
                                                                           "unresolved")


def test_repeat_two_shows_scoring_repeatability(promptfoo_cli, eval_dir, tmp_path):
    workspace = tmp_path / "evals"
    goldens(workspace)
    approved_design(workspace, judge=JUDGE, criteria="[equals, contains]", suite="planted")
    runs = {"a": config("a", repeat=2, flaky="g03"), "b": config("b", repeat=2)}
    for arm, text in runs.items():
        result = ok(langchef("import", "promptfoo",
                             promptfoo_eval(promptfoo_cli, eval_dir, arm, text), "--experiment",
                             "imported", "--arm", arm, "--workspace", workspace, "--json",
                             cwd=workspace))
        assert (json.loads(result.stdout)["goldens"], json.loads(result.stdout)["epochs"]) == \
            (12, 2)
    readout = read_out(workspace)
    assert readout["repeatability"]["baseline"]["changed_ids"] == ["g03"]
    assert readout["repeatability"]["variant"]["changed"] == 0


def test_two_providers_in_one_eval_need_a_choice(promptfoo_cli, eval_dir, tmp_path):
    both = config("a").replace("tests:", "  - id: file://provider.js\n    label: planted-b\n"
                                         "    config: {arm: b}\ntests:")
    output = promptfoo_eval(promptfoo_cli, eval_dir, "both", both)
    result = langchef("import", "promptfoo", output, "--experiment", "x", "--arm", "a",
                      "--workspace", tmp_path, cwd=tmp_path)
    assert result.returncode == 2 and "--provider LABEL" in result.stderr
    ok(langchef("import", "promptfoo", output, "--provider", "planted-b", "--suite", "planted",
                "--experiment", "x", "--arm", "b", "--workspace", tmp_path, cwd=tmp_path))


def edited(log, name: str, change) -> str:
    """A copy of a real results file with ``change`` applied to its rows."""
    document = json.loads(log.read_text())
    change(document["results"]["results"])
    copy = log.with_name(f"{name}.json")
    copy.write_text(json.dumps(document))
    return copy


def refused(log, workspace) -> str:
    result = langchef("import", "promptfoo", log, "--experiment", "imported", "--arm", "a",
                      "--suite", "planted", "--workspace", workspace, cwd=workspace)
    assert result.returncode == 2, result.stdout
    assert not (workspace / "runs").exists() and not (workspace / "goldens").exists()
    return result.stderr


def test_a_second_row_for_one_test_is_refused_naming_both_rows(promptfoo_cli, eval_dir,
                                                                 tmp_path):
    # Issue 30: a conflicting duplicate row was read as a second epoch of g03, which turned
    # the exact paired test into a comparison of pass rates.
    workspace = tmp_path / "evals"
    workspace.mkdir()
    log = promptfoo_eval(promptfoo_cli, eval_dir, "a", config("a"))
    third = next(index for index, row in enumerate(json.loads(log.read_text())["results"]
                                                   ["results"]) if row["vars"]["id"] == "g03")

    def copy_of_g03(rows, verdict=None, **changes):
        copy = json.loads(json.dumps(rows[third]))
        copy["gradingResult"]["componentResults"][0].update(verdict or {})
        rows.append(copy | changes)

    conflicting = edited(log, "conflicting", lambda rows: copy_of_g03(
        rows, verdict={"pass": False, "score": 0}))
    assert (f"{conflicting}: sample 'g03' has two conflicting rows in epoch 1: "
            f"results.results[{third}] and results.results[12] differ in scorer 'equals' "
            "(pass 1 vs fail 0); a log holds one row per sample and epoch") in refused(
        conflicting, workspace)

    identical = edited(log, "identical", copy_of_g03)
    assert (f"sample 'g03' has two rows in epoch 1: results.results[{third}] and "
            "results.results[12] are identical copies") in refused(identical, workspace)

    # Numbered as a further repeat, it is one row more than every other test has.
    renumbered = edited(log, "renumbered", lambda rows: copy_of_g03(
        rows, testIdx=12, verdict={"pass": False, "score": 0}))
    assert (f"sample 'g03' has 2 rows where the other 11 samples have 1 each (one per epoch): "
            f"results.results[{third}] and results.results[12] differ in scorer 'equals'") \
        in refused(renumbered, workspace)

    # Every row twice, as repeats promptfoo never ran: the file says repeat 1.
    doubled = edited(log, "doubled", lambda rows: rows.extend(
        dict(row, testIdx=row["testIdx"] + 12) for row in list(rows)))
    assert f"{doubled}: each test has 2 rows, but the eval ran with repeat 1" in refused(
        doubled, workspace)

    assert "this log is passed twice" in langchef(
        "import", "promptfoo", log, log, "--experiment", "imported", "--arm", "a", "--suite",
        "planted", "--workspace", workspace, cwd=workspace).stderr


def test_a_test_with_its_own_repeat_is_refused(promptfoo_cli, eval_dir, tmp_path):
    # One epoch count per arm: g03 run twice where the others ran once is not read as epochs.
    tests = eval_dir / "tests.yaml"
    tests.write_text(tests.read_text().replace("- description: g03\n",
                                               "- description: g03\n  options: {repeat: 2}\n"))
    log = promptfoo_eval(promptfoo_cli, eval_dir, "a", config("a"))
    assert (f"{log}: the tests ran different numbers of repeats (test 'g01' 1, test 'g03' 2); "
            "every golden of an arm needs the same number of epochs") in refused(log, tmp_path)

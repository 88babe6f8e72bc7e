"""A new team's own workspace, built from `langchef init` and the README, through the real
console script: every mistake is refused before approval, or works (issue 14)."""

import csv
import json
import random
from datetime import datetime, timezone
from pathlib import Path

import pytest

from .conftest import one_sentence, states

JUDGE = "example-judge-v1"
N_GOLDENS, N_USERS, N_ANCHORS = 60, 12, 40


def init_workspace(langchef, root: Path) -> Path:
    result = langchef("init", root)
    assert result.code == 0, result.stderr
    return root


def write_csv(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_goldens(root: Path, *, user_column="user_id") -> Path:
    return write_csv(root / "goldens" / "example.csv",
                     [{"example_id": f"g{i}", "input": f"question {i}", user_column: f"u{i % N_USERS}"}
                      for i in range(N_GOLDENS)])


def anchor_rows(*, flipped=(), judge=JUDGE, criterion="correctness") -> list[dict]:
    """Human-reviewed anchors with the upstream judge's verdicts beside the reviewers';
    the anchors in ``flipped`` get the opposite verdict from the judge."""
    rows = []
    for i in range(N_ANCHORS):
        human = "fail" if i % 3 == 0 else "pass"
        verdict = human if i not in flipped else ("pass" if human == "fail" else "fail")
        rows.append({"anchor_id": f"a{i}", "input": f"q{i}", "output": f"answer {i}",
                     "human_verdict": human,
                     "human_criterion": "correctness" if human == "fail" else "",
                     "verdict": verdict, "criterion": criterion if verdict == "fail" else "",
                     "judge": judge})
    return rows


def enable(root: Path, *lines: str) -> None:
    """Uncomment optional lines of the example design `langchef init` wrote."""
    path = root / "experiments" / "example.yaml"
    text = path.read_text(encoding="utf-8")
    for line in lines:
        assert f"# {line}" in text, line
        text = text.replace(f"# {line}", line)
    path.write_text(text, encoding="utf-8")


def edit(root: Path, old: str, new: str) -> None:
    path = root / "experiments" / "example.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


ANCHORS_LINE = "anchors: {set: example-anchors, warn_kappa: 0.6, fail_kappa: 0.4}"


def recorded_workspace(langchef, root: Path, *, anchors: list[dict] | None = None) -> Path:
    init_workspace(langchef, root)
    write_goldens(root)
    write_csv(root / "anchors" / "example-anchors.csv", anchors or anchor_rows())
    enable(root, "cluster: user_id", ANCHORS_LINE)
    return root


def traffic_now() -> str:
    """A created_at for runs collected right after `langchef approve` (which records now):
    after the approval, and not in the future (issue 13 refuses future traffic)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def write_runs(root: Path, *, seed=1, created_at="now", criterion=None,
               verdict_column="verdict", suffix=".jsonl") -> None:
    rng = random.Random(seed)
    created_at = traffic_now() if created_at == "now" else created_at
    folder = root / "runs" / "example"
    folder.mkdir(parents=True, exist_ok=True)
    for arm, rate in (("current", 0.6), ("reranked", 0.75)):
        rows = []
        for i in range(N_GOLDENS):
            verdict = "pass" if rng.random() < rate else "fail"
            cited = None if verdict == "pass" else (
                criterion or rng.choice(["correctness", "groundedness", "directness"]))
            row = {"example_id": f"g{i}", "output": f"answer {i}", verdict_column: verdict,
                   "criterion": cited, "judge": JUDGE}
            if created_at is not None:
                row["created_at"] = created_at
            rows.append(row)
        if suffix == ".csv":
            write_csv(folder / f"{arm}.csv", [{k: ("" if v is None else v) for k, v in row.items()}
                                               for row in rows])
        else:
            (folder / f"{arm}{suffix}").write_text(
                "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def approve(langchef, root: Path):
    return langchef("approve", "example", "--by", "Ada", "--workspace", root)


def readout(langchef, root: Path, *extra):
    return langchef("readout", "example", "--workspace", root, *extra)


def latest_readout(root: Path) -> dict:
    versions = sorted((root / "reports" / "example").glob("v*/readout.json"),
                      key=lambda path: int(path.parent.name[1:]))
    return json.loads(versions[-1].read_text(encoding="utf-8"))


# --- case 1: a recorded judge is watched, end to end --------------------------------------

def test_a_recorded_judge_with_anchors_and_user_clusters_is_watched_end_to_end(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    checked = langchef("design", "check", "example", "--workspace", root)
    assert checked.code == 0, checked.stderr
    assert "fits:" in checked.stdout and "anchors/example-anchors" in checked.stdout
    assert approve(langchef, root).code == 0
    write_runs(root)
    result = readout(langchef, root)
    assert result.code == 0, result.stderr
    document = latest_readout(root)
    anchors = document["judge"]["anchors"]
    assert anchors["anchor_set"] == "example-anchors" and anchors["judge_id"] == JUDGE
    assert anchors["agreement"]["n"] == N_ANCHORS and anchors["agreement"]["kappa"] == 1.0
    assert anchors["status"]["level"] == "ok"
    assert document["primary"]["n_clusters"] == N_USERS  # resampled by user, as designed
    assert document["design"]["as_approved"]["cluster"] == "user_id"
    report = (root / "reports" / "example" / "v1" / "index.html").read_text(encoding="utf-8")
    assert "Agreement with human reviewers" in report and "example-anchors" in report

    # The scheduled re-judging of a recorded judge reads the verdicts recorded last: the team
    # re-exports the upstream judge's verdicts on the same anchors, and the drift test pairs
    # them with the earlier run.
    write_csv(root / "anchors" / "example-anchors.csv", anchor_rows(flipped={1, 2}))
    again = readout(langchef, root)
    assert again.code == 0, again.stderr
    rejudged = latest_readout(root)["judge"]["anchors"]
    assert rejudged["compared_with"] == {"judge_id": JUDGE, "kappa": 1.0}
    assert rejudged["drift"]["became_wrong"] == 2
    assert rejudged["agreement"]["kappa"] < 1.0


def test_a_drifted_recorded_judge_blocks_the_readout(langchef, tmp_path):
    drifted = anchor_rows(flipped=set(range(0, N_ANCHORS, 2)))
    root = recorded_workspace(langchef, tmp_path / "evals", anchors=drifted)
    assert approve(langchef, root).code == 0
    write_runs(root)
    result = readout(langchef, root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "judge_has_not_drifted" in sentence and "κ" in sentence
    assert "the refusal is recorded in reports/example/v1/index.html" in sentence
    # Issue 15: the refusal is published as evidence, never with a verdict.
    refused = json.loads((root / "reports" / "example" / "v1" / "readout.json").read_text())
    assert refused["refused"]["check"] == "judge_has_not_drifted" and "primary" not in refused


def test_anchors_without_the_upstream_verdicts_are_refused_before_approval(langchef, tmp_path):
    rows = [{key: value for key, value in row.items() if key not in ("verdict", "judge")}
            for row in anchor_rows()]
    root = recorded_workspace(langchef, tmp_path / "evals", anchors=rows)
    result = approve(langchef, root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "anchors/example-anchors.csv, column 'verdict': required column missing" in sentence
    assert "beside human_verdict" in sentence
    assert not (root / "approvals" / "example.json").exists()


def test_anchors_judged_by_another_judge_are_refused_before_approval(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals", anchors=anchor_rows(judge="old-judge"))
    result = approve(langchef, root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "column 'judge', row 1" in sentence and "'old-judge'" in sentence
    assert f"pins '{JUDGE}'" in sentence


# --- case 2: the design is checked against the workspace ----------------------------------

@pytest.mark.parametrize("mistake, expected", [
    ("cluster", "goldens/example.csv, column 'userid': required column missing; the design's "
                "'cluster' names it"),
    ("suite", "goldens/other.jsonl: file not found (looked for goldens/other.jsonl, "
              "goldens/other.csv and goldens/other.parquet)"),
    ("anchors", "anchors/no-such-set.jsonl: file not found (looked for anchors/no-such-set.jsonl, "
                "anchors/no-such-set.csv and anchors/no-such-set.parquet)"),
])
def test_a_design_that_cannot_be_read_out_is_refused_before_approval(langchef, tmp_path, mistake,
                                                                     expected):
    root = recorded_workspace(langchef, tmp_path / "evals")
    if mistake == "cluster":
        edit(root, "cluster: user_id", "cluster: userid")
    elif mistake == "suite":
        edit(root, "suite: example ", "suite: other ")
    else:
        edit(root, "set: example-anchors", "set: no-such-set")
    for command in (("design", "check", "example"), ("approve", "example", "--by", "Ada")):
        result = langchef(*command, "--workspace", root)
        assert result.code == 2, result.stdout
        sentence = one_sentence(result.stderr)
        assert sentence.startswith("langchef: error: experiments/example.yaml: does not fit "
                                   "this workspace"), sentence
        assert expected in sentence
        assert "Error" not in sentence
    assert not (root / "approvals" / "example.json").exists()


def test_many_problems_show_the_first_few_and_where_the_whole_table_is(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    rows = [{"anchor_id": "", "input": "q", "output": "", "human_verdict": "maybe",
             "verdict": "perhaps", "judge": JUDGE} for _ in range(3)]
    write_csv(root / "anchors" / "example-anchors.csv", rows)
    result = approve(langchef, root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "(1) " in sentence and "(3) " in sentence and "(4) " not in sentence
    assert "all listed in failures/example.csv" in sentence
    table = list(csv.DictReader(open(root / "failures" / "example.csv", encoding="utf-8")))
    assert len(table) > 3 and {"file", "column", "row", "message", "hint"} <= set(table[0])


def test_status_after_an_edit_says_reapproval_needs_fresh_runs(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    assert approve(langchef, root).code == 0
    write_runs(root)
    edit(root, "alpha: 0.05", "alpha: 0.01")
    row = states(langchef, root)["example"]
    assert row["state"] == "revoked"
    assert "approve it again to read it out" not in row["sentence"]
    assert "120 run rows in 2 files" in row["sentence"]
    assert "collected again" in row["sentence"]
    text = langchef("status", "--workspace", root).stdout
    assert "collected again" in text


def test_status_counts_the_runs_that_predate_the_approval(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    assert approve(langchef, root).code == 0
    write_runs(root, created_at="2001-01-01T00:00:00Z")
    row = states(langchef, root)["example"]
    assert "120 of 120 run rows in 2 files predate the approval" in row["sentence"]


# --- case 3: accuracy and retrieval designs without a judge; metric names -----------------

ACCURACY = """\
experiment: example
hypothesis: The new classifier labels tickets at least as well.
suite: example
arms: {baseline: current, variant: reranked}
kind: superiority
primary: accuracy
assumed_discordant_rate: 0.2
"""


# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_an_accuracy_design_needs_no_judge_and_its_report_shows_none(langchef, tmp_path):
    root = init_workspace(langchef, tmp_path / "evals")
    (root / "experiments" / "example.yaml").write_text(ACCURACY, encoding="utf-8")
    write_csv(root / "goldens" / "example.csv",
              [{"example_id": f"g{i}", "input": f"ticket {i}", "ideal": "bug" if i % 2 else "ask"}
               for i in range(40)])
    checked = langchef("design", "check", "example", "--workspace", root, "--json")
    assert checked.code == 0, checked.stderr
    assert "judge" not in checked.json["design"] and "criteria" not in checked.json["design"]
    assert approve(langchef, root).code == 0
    folder = root / "runs" / "example"
    for arm, wrong in (("current", 8), ("reranked", 4)):
        write_csv(folder / f"{arm}.csv",
                  [{"example_id": f"g{i}", "predicted": ("ask" if i % 2 else "bug") if i < wrong
                    else ("bug" if i % 2 else "ask"), "created_at": traffic_now()}
                   for i in range(40)])
    result = readout(langchef, root)
    assert result.code == 0, result.stderr
    report = (root / "reports" / "example" / "v1" / "index.html").read_text(encoding="utf-8")
    assert 'id="judge"' not in report and "The judge" not in report


def test_an_accuracy_design_without_ideal_answers_is_refused_before_approval(langchef, tmp_path):
    root = init_workspace(langchef, tmp_path / "evals")
    (root / "experiments" / "example.yaml").write_text(ACCURACY, encoding="utf-8")
    write_goldens(root)
    result = approve(langchef, root)
    assert result.code == 2
    assert ("column 'ideal': required column missing; the design's 'primary' names it"
            in one_sentence(result.stderr))


RETRIEVAL = """\
experiment: example
hypothesis: The new embeddings retrieve the relevant passages more often.
suite: example
arms: {baseline: current, variant: reranked}
kind: superiority
primary: PRIMARY
retrieval: {k: 5, metrics: [recall, mrr]}
"""


def retrieval_workspace(langchef, root: Path, primary="recall") -> Path:
    init_workspace(langchef, root)
    (root / "experiments" / "example.yaml").write_text(RETRIEVAL.replace("PRIMARY", primary),
                                                       encoding="utf-8")
    write_goldens(root)
    write_csv(root / "qrels" / "example.csv",
              [{"query_id": f"g{i}", "doc_id": f"d{i}", "relevant": 1, "source": "human"}
               for i in range(N_GOLDENS)])
    return root


def test_a_retrieval_design_plans_without_assumed_sd_and_says_when_it_cannot(langchef, tmp_path):
    root = retrieval_workspace(langchef, tmp_path / "evals", primary="mrr")
    checked = langchef("design", "check", "example", "--workspace", root, "--json")
    assert checked.code == 0, checked.stderr
    assert checked.json["design"]["primary"] == "reciprocal_rank"
    assert checked.json["design"]["retrieval"]["metrics"] == ["recall", "reciprocal_rank"]
    assert "no run of the baseline arm 'current'" in checked.json["power"]["sentence"]
    # A baseline run on the suite (from earlier traffic) gives the per-query spread.
    rng = random.Random(3)
    other = root / "runs" / "earlier"
    other.mkdir(parents=True)
    (root / "experiments" / "earlier.yaml").write_text(
        RETRIEVAL.replace("experiment: example", "experiment: earlier")
        .replace("PRIMARY", "reciprocal_rank"), encoding="utf-8")
    (other / "current.jsonl").write_text("".join(json.dumps(
        {"example_id": f"g{i}", "retrieved": rng.sample([f"d{i}", "x1", "x2", "x3"], 4)}) + "\n"
        for i in range(N_GOLDENS)), encoding="utf-8")
    planned = langchef("design", "check", "example", "--workspace", root, "--json")
    assert planned.code == 0, planned.stderr
    power = planned.json["power"]
    assert power["detection_limit"] is not None and power["assumed"] > 0
    assert "runs/earlier/current.jsonl" in power["source"]


def test_a_cut_off_written_into_the_metric_name_is_refused_with_the_rewrite(langchef, tmp_path):
    root = retrieval_workspace(langchef, tmp_path / "evals", primary="recall@10")
    result = langchef("design", "check", "example", "--workspace", root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "field 'primary'" in sentence and "write 'recall'" in sentence
    assert "'retrieval: {k: 10}'" in sentence


# --- case 4: criteria match without regard to case ---------------------------------------

# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_criteria_match_without_regard_to_case_and_unknown_ones_get_a_suggestion(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    edit(root, "criteria: [correctness, groundedness, directness]",
         "criteria: [Correctness, Groundedness, Directness]")
    assert approve(langchef, root).code == 0
    write_runs(root)  # the judge cites lower-case names, the anchors' humans too
    result = readout(langchef, root)
    assert result.code == 0, result.stderr
    criteria = {row["criterion"] for row in latest_readout(root)["criteria"]}
    assert criteria == {"Correctness", "Groundedness", "Directness"}
    write_runs(root, criterion="Corectness")
    refused = readout(langchef, root)
    assert refused.code == 2
    sentence = one_sentence(refused.stderr)
    assert "criterion 'Corectness' is not among the design's criteria" in sentence
    assert "did you mean 'Correctness'?" in sentence


# --- case 5: errors a command-line user can act on ---------------------------------------

# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_a_misspelt_verdict_column_is_named_first_with_a_suggestion(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    assert approve(langchef, root).code == 0
    write_runs(root, verdict_column="verdcit")
    result = readout(langchef, root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "column 'verdcit': column not allowed; did you mean 'verdict'?" in sentence
    assert sentence.index("verdcit") < sentence.index("'criterion' column needs")
    assert "langchef_core" not in sentence and "InputError" not in sentence
    as_json = readout(langchef, root, "--json")
    assert as_json.code == 2 and as_json.stdout == ""
    error = json.loads(as_json.stderr)
    assert (error["file"], error["column"], error["row"]) == (
        "runs/example/current.jsonl", "verdcit", None)


# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_a_missing_csv_arm_file_names_every_extension_tried(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    assert approve(langchef, root).code == 0
    write_runs(root, suffix=".csv")
    (root / "runs" / "example" / "reranked.csv").unlink()
    result = readout(langchef, root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert ("looked for runs/example/reranked.jsonl, runs/example/reranked.csv and "
            "runs/example/reranked.parquet") in sentence
    assert "langchef_core" not in sentence


def test_zero_goldens_is_refused_in_the_words_of_the_option(langchef):
    result = langchef("power", "--goldens", "0", "--discordant-rate", "0.2")
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert "--goldens 0" in sentence and "n must be" not in sentence


# --- case 6: a strict gate needs every proof ----------------------------------------------

# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_the_strict_gate_fails_without_traffic_times_and_the_default_still_passes(langchef,
                                                                                  tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    assert approve(langchef, root).code == 0
    write_runs(root, created_at=None)
    assert readout(langchef, root).code == 0
    path = root / "reports" / "example" / "v1" / "readout.json"
    default = langchef("gate", path)
    assert default.code == 0 and "--strict" in default.stdout
    strict = langchef("gate", path, "--strict", "--json")
    assert strict.code == 1
    assert strict.json["missing_proofs"] == ["traffic_unverified"]
    assert any(reason.startswith("strict gate: traffic time unverifiable")
               for reason in strict.json["reasons"])


# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_a_design_that_asks_for_a_strict_gate_fails_its_own_readout(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    path = root / "experiments" / "example.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "gate: {strict: true}\n", encoding="utf-8")
    assert approve(langchef, root).code == 0
    write_runs(root, created_at=None)
    result = readout(langchef, root)
    assert result.code == 0 and "gate did not pass: " in result.stdout
    document = latest_readout(root)
    assert document["gate"]["strict"] is True
    assert [proof["code"] for proof in document["gate"]["missing_proofs"]] == ["traffic_unverified"]
    report = (root / "reports" / "example" / "v1" / "index.html").read_text(encoding="utf-8")
    assert "traffic time unverifiable" in report
    assert langchef("gate", root / "reports" / "example" / "v1").code == 1


# --- case 7: the readout's verdict line; errors as JSON ----------------------------------

# A readout through Dagster in a console-script run (seconds each): slow.
@pytest.mark.slow
def test_readout_prints_the_demo_verdict_line(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    assert approve(langchef, root).code == 0
    write_runs(root)
    result = readout(langchef, root)
    assert result.code == 0, result.stderr
    from langchef_core.readout.verdict import verdict_line
    assert verdict_line(latest_readout(root)) in result.stdout


def test_json_errors_are_an_object_on_stderr(langchef, tmp_path):
    root = recorded_workspace(langchef, tmp_path / "evals")
    edit(root, "cluster: user_id", "cluster: userid")
    result = langchef("approve", "example", "--by", "Ada", "--workspace", root, "--json")
    assert result.code == 2 and result.stdout == ""
    error = json.loads(result.stderr)
    assert set(error) >= {"error", "file", "column", "row", "hint"}
    assert error["file"] == "experiments/example.yaml" and error["column"] == "userid"
    assert error["problems"][0]["field"] == "cluster"
    bad = langchef("power", "--goldens", "0", "--discordant-rate", "0.2", "--json")
    assert bad.code == 2 and json.loads(bad.stderr)["error"].startswith("--goldens 0")

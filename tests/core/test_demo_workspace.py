"""The demo workspace: valid, approved before its runs, reproducible, and every plant recovered.

The workspace is built once per module; each experiment's two arms are judged with the
judge its design pins (the rubric judge) and read out with the core statistics, and every
planted effect must come back as planted — several of them to the numbers of the spec's
worked examples.
"""

import functools
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

import langchef_core as lc
from langchef_core.designs.approval import approval_status, read_approval
from langchef_core.demo import MANIFEST_NAME, build_demo_workspace, plan_demo
from langchef_core.demo.arms import EMBELLISHMENT, WELCOME_FLUFF
from langchef_core.demo.plants import INTENDED, INTENDED_DRIFTED
from langchef_core.scoring.judges import build_judge, content_tokens
from langchef_core.scoring.retrieval import retrieval_metrics
from langchef_core.inputs.schemas import read_input
from langchef_core.inputs.tables import read_table
from langchef_core.inputs.workspace import Workspace


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "workspace"
    return root, build_demo_workspace(root)


def files_of(root: Path) -> dict:
    """The generated files. The ledger (langchef.sqlite) is left out: approving records each
    approval there with the moment it was recorded, which is evidence, not demo content."""
    return {path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and not path.relative_to(root).as_posix().startswith("langchef.sqlite")}


@functools.lru_cache(maxsize=None)
def judged(root: Path, experiment: str):
    """(design, goldens, baseline verdicts, variant verdicts) for one demo experiment."""
    design = lc.load_design(root / "experiments" / f"{experiment}.yaml")
    judge = build_judge(design.judge.to_dict(), criteria=design.criteria)
    goldens = read_table(root / "goldens" / f"{design.suite}.jsonl")
    verdicts = []
    for arm in design.arm_names:
        run = read_table(root / "runs" / experiment / f"{arm}.jsonl")
        items = goldens[["example_id", "input", "ideal"]].merge(run, on="example_id",
                                                                validate="one_to_one")
        verdicts.append(judge.judge(items))
    return design, goldens, verdicts[0], verdicts[1]


def passes(verdicts: pd.DataFrame) -> np.ndarray:
    return (verdicts["verdict"] == "pass").to_numpy()


def readout(root: Path, experiment: str):
    design, goldens, before, after = judged(root, experiment)
    clusters = goldens[design.cluster].to_numpy() if design.cluster else None
    options = dict(alpha=design.alpha, power=design.power, resamples=design.bootstrap.resamples,
                   seed=design.bootstrap.seed, clusters=clusters)
    comparison = lc.compare_binary(passes(before), passes(after), margin=design.margin, **options)
    attribution = lc.attribute(passes(before), before["criterion"].tolist(), passes(after),
                               after["criterion"].tolist(), criteria=design.criteria, **options)
    return comparison, attribution.criteria.set_index("criterion")


# ---------------------------------------------------------------------------------------
# The workspace itself
# ---------------------------------------------------------------------------------------

def test_two_builds_are_byte_identical(demo, tmp_path):
    root, manifest = demo
    other = build_demo_workspace(tmp_path / "again")
    assert files_of(tmp_path / "again") == files_of(root)
    assert other.to_dict() == manifest.to_dict()
    on_disk = files_of(root)
    assert json.loads(on_disk[MANIFEST_NAME]) == manifest.to_dict()
    assert set(manifest.files) == set(on_disk) - {MANIFEST_NAME}


def test_rebuilding_in_place_keeps_other_files_and_refuses_foreign_folders(tmp_path):
    root = tmp_path / "ws"
    build_demo_workspace(root)
    first = files_of(root)
    (root / "reports").mkdir()
    (root / "reports" / "index.html").write_text("kept")
    (root / "runs" / "stale-index" / "production.jsonl").write_text("tampered\n")
    build_demo_workspace(root)
    again = files_of(root)
    assert again.pop("reports/index.html") == b"kept"
    assert again == first
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("do not touch")
    with pytest.raises(ValueError, match="not empty and holds no earlier demo"):
        build_demo_workspace(foreign)
    assert (foreign / "notes.txt").read_text() == "do not touch"


def test_every_table_passes_the_workspace_schemas(demo):
    root, manifest = demo
    goldens = read_input(root / "goldens/kitchen.jsonl", "goldens",
                         required_columns=["ideal", "user_segment", "user_id"])
    assert len(goldens) == manifest.goldens >= 90
    assert goldens["example_id"].is_unique and goldens["ideal"].notna().all()
    assert set(goldens["user_segment"]) == {"established", "new"}
    assert goldens.groupby("user_id").size().max() > 1  # clusters hold several goldens
    read_input(root / "qrels/kitchen.jsonl", "qrels")
    read_input(root / "pools/kitchen.jsonl", "pools")
    anchors = read_input(root / "anchors/kitchen-anchors.jsonl", "anchors")
    assert len(anchors) >= 40
    for path in sorted((root / "runs").rglob("*.jsonl")):
        if lc.load_design(root / "experiments" / f"{path.parent.name}.yaml").suite != "kitchen":
            continue  # the sequential plant's own suite: tests/core/test_demo_sequential.py
        run = read_input(path, "run")
        assert set(run["example_id"]) == set(goldens["example_id"])  # every golden answered
        for column in ("output", "context", "retrieved", "created_at", "latency_ms", "cost_usd"):
            assert run[column].notna().all(), (path, column)


def test_designs_validate_and_were_approved_by_a_person_before_any_run(demo):
    root, manifest = demo
    workspace = Workspace(root)
    names = workspace.experiment_names()
    assert names == sorted(planted.experiment for planted in manifest.experiments)
    for name in names:
        design = lc.load_design(workspace.design_path(name))
        status = approval_status(workspace, name)
        assert status.state == "approved", status.sentence
        approval = read_approval(workspace, name)
        assert approval.approved_by == manifest.approved_by
        assert approval.design_sha256 == design.sha256
        for arm in design.arm_names:
            run = read_input(workspace.run_path(name, arm), "run")
            assert run["created_at"].min() > pd.Timestamp(approval.approved_at)


def test_the_manifest_lists_every_file_with_its_hash(demo):
    root, manifest = demo
    for relative, digest in manifest.files.items():
        assert hashlib.sha256((root / relative).read_bytes()).hexdigest() == digest


def test_embellishments_use_no_word_of_the_handbook(demo):
    root, _ = demo
    corpus = read_table(root / "corpus/kitchen.jsonl")
    handbook = set(content_tokens(" ".join(corpus["text"])))
    added = set(content_tokens(EMBELLISHMENT)) | set(content_tokens(WELCOME_FLUFF))
    assert added and not added & handbook


# ---------------------------------------------------------------------------------------
# The judge reads the plants as intended
# ---------------------------------------------------------------------------------------

def test_the_rubric_judge_gives_every_answer_its_intended_verdict(demo):
    root, manifest = demo
    plan = plan_demo(manifest.seed)
    for experiment in plan.experiments:
        intended = INTENDED_DRIFTED if experiment.judge == "drifted" else INTENDED
        _, _, before, after = judged(root, experiment.name)
        for arm, verdicts in ((experiment.baseline, before), (experiment.variant, after)):
            expected = [intended[arm.behaviour[example]] for example in verdicts["example_id"]]
            got = list(zip(verdicts["verdict"] == "pass", verdicts["criterion"]))
            mismatches = [(example, want, have) for example, want, have
                          in zip(verdicts["example_id"], expected, got) if want != have]
            assert not mismatches, (experiment.name, arm.name, mismatches[:3])


# ---------------------------------------------------------------------------------------
# Each plant, recovered
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("experiment", ["stale-index", "eager-hedging", "prompt-trim",
                                        "cheaper-model", "friendly-tone", "lenient-judge"])
def test_the_pass_rate_readout_recovers_the_plant(demo, experiment):
    root, manifest = demo
    expected = manifest.experiment(experiment).expected
    comparison, criteria = readout(root, experiment)
    assert comparison.n == expected["n"]
    assert round(comparison.baseline_rate * comparison.n) == expected["baseline_passes"]
    assert round(comparison.variant_rate * comparison.n) == expected["variant_passes"]
    assert (comparison.broke, comparison.fixed) == (expected["broke"], expected["fixed"])
    for name, flips in expected["criterion_flips"].items():
        assert (criteria.loc[name, "broke"], criteria.loc[name, "fixed"]) == \
            (flips["broke"], flips["fixed"]), name
    if manifest.experiment(experiment).primary == "pass_rate":
        assert comparison.verdict == expected["verdict"]
    if "noninferiority" in expected:
        assert comparison.noninferiority == expected["noninferiority"]
    for name, direction in expected.get("criteria", {}).items():
        assert criteria.loc[name, "direction"] == direction, name


def test_stale_index_matches_the_spec_worked_example(demo):
    root, _ = demo
    comparison, criteria = readout(root, "stale-index")
    assert comparison.baseline_rate == pytest.approx(75 / 90)   # 83.3%
    assert comparison.variant_rate == pytest.approx(57 / 90)    # 63.3%
    assert (comparison.broke, comparison.fixed) == (18, 0)
    assert comparison.verdict == "regression" and comparison.high < 0
    assert criteria.loc["Correctness", "direction"] == "moved_worse"
    assert criteria.loc["Correctness", "broke"] == 18


def test_eager_hedging_blames_directness_and_not_correctness(demo):
    root, _ = demo
    comparison, criteria = readout(root, "eager-hedging")
    assert comparison.difference == pytest.approx(-10 / 90) and comparison.verdict == "regression"
    assert criteria.loc["Directness", "broke"] == 15
    assert criteria.loc["Directness", "difference"] == pytest.approx(-15 / 90)  # −16.7 points
    assert criteria.loc["Directness", "direction"] == "moved_worse"
    assert criteria.loc["Correctness", "fixed"] == 5
    # Five flips one way: exact two-sided p = 2 · 0.5⁵ = 0.0625, as
    # scipy.stats.binomtest(0, 5).pvalue gives; the interval alone would claim a gain.
    assert criteria.loc["Correctness", "p_value"] == pytest.approx(stats.binomtest(0, 5).pvalue)
    assert criteria.loc["Correctness", "low"] > 0
    assert criteria.loc["Correctness", "direction"] == "inconclusive"


def test_a_regression_below_the_detection_limit_is_honestly_inconclusive(demo):
    root, manifest = demo
    planted = manifest.experiment("prompt-trim").expected["planted_difference"]
    comparison, _ = readout(root, "prompt-trim")
    assert comparison.difference == pytest.approx(planted) == pytest.approx(-3 / 90)
    assert comparison.verdict == "inconclusive" and comparison.low < 0 < comparison.high
    assert comparison.detection_limit > abs(planted)
    assert read_approval(Workspace(root), "prompt-trim").underpowered is not None


def test_the_drifted_judge_hides_the_hedging_regression(demo):
    root, manifest = demo
    hidden, _ = readout(root, "lenient-judge")
    shown, _ = readout(root, "eager-hedging")
    assert shown.verdict == "regression" and hidden.verdict == "inconclusive"
    ids = {name: judge["id"] for name, judge in manifest.judges.items()}
    assert set(judged(root, "lenient-judge")[3]["judge"]) == {ids["drifted"]}
    assert set(judged(root, "eager-hedging")[3]["judge"]) == {ids["stable"]} != {ids["drifted"]}


def test_the_retrieval_change_lowers_recall_but_not_the_answers(demo):
    root, manifest = demo
    expected = manifest.experiment("retriever-swap").expected
    design = lc.load_design(root / "experiments/retriever-swap.yaml")
    qrels = read_table(root / "qrels/kitchen.jsonl")
    scores = [retrieval_metrics(read_table(root / "runs/retriever-swap" / f"{arm}.jsonl")
                                [["example_id", "retrieved"]], qrels, k=design.retrieval.k)
              .set_index("query_id") for arm in design.arm_names]
    judged_queries = scores[0]["n_positive"] > 0   # zero_positive: exclude
    assert judged_queries.sum() == expected["scored_queries"]
    assert (~judged_queries).sum() == expected["zero_positive_queries"] > 0
    for metric, verdict in expected["retrieval"].items():
        result = lc.compare_continuous(scores[0].loc[judged_queries, metric].to_numpy(),
                                       scores[1].loc[judged_queries, metric].to_numpy())
        assert result.verdict == verdict, metric
        if metric == "recall":
            assert result.difference == pytest.approx(expected["planted_mean_difference"])
    comparison, _ = readout(root, "retriever-swap")
    assert (comparison.broke, comparison.fixed) == (0, 0)


def test_the_stale_index_also_shows_in_recall(demo):
    root, _ = demo
    qrels = read_table(root / "qrels/kitchen.jsonl")
    recall = [retrieval_metrics(read_table(root / "runs/stale-index" / f"{arm}.jsonl")
                                [["example_id", "retrieved"]], qrels, k=5)
              .set_index("query_id") for arm in ("production", "stale-index")]
    scored = recall[0]["n_positive"] > 0
    result = lc.compare_continuous(recall[0].loc[scored, "recall"].to_numpy(),
                                   recall[1].loc[scored, "recall"].to_numpy())
    assert result.verdict == "regression"
    assert result.difference == pytest.approx(-18 / scored.sum())


def test_the_overall_improvement_hides_a_regression_for_new_users(demo):
    root, manifest = demo
    expected = manifest.experiment("friendly-tone").expected
    design, goldens, before, after = judged(root, "friendly-tone")
    analysis = lc.compare_slices(passes(before), passes(after),
                                 goldens[design.slices.column].to_numpy(),
                                 column=design.slices.column,
                                 target_weights=design.slices.target_weights,
                                 protected=design.slices.protected,
                                 resamples=design.bootstrap.resamples, seed=design.bootstrap.seed)
    assert analysis.observed.verdict == expected["verdict"] == "improvement"
    by_slice = {result.slice: result for result in analysis.slices}
    assert by_slice["new"].comparison.broke == 7 and by_slice["new"].comparison.fixed == 0
    assert by_slice["new"].comparison.verdict == "regression"
    assert by_slice["new"].guardrail == expected["slices"]["new"]
    assert analysis.passed is expected["slice_gate_passed"] is False
    # Weighted to the target population, the gain shrinks to one the run cannot establish.
    assert analysis.target.difference < analysis.observed.difference


@pytest.mark.parametrize("experiment", ["friendly-tone", "cheaper-model"])
def test_latency_and_cost_guardrails_read_as_planted(demo, experiment):
    root, manifest = demo
    design, goldens, _, _ = judged(root, experiment)
    runs = [read_table(root / "runs" / experiment / f"{arm}.jsonl") for arm in design.arm_names]
    assert all((run["example_id"] == goldens["example_id"]).all() for run in runs)
    clusters = goldens[design.cluster].to_numpy() if design.cluster else None
    costs = {metric: lc.compare_cost(runs[0][metric], runs[1][metric], metric=metric,
                                     clusters=clusters)
             for metric in ("latency_ms", "cost_usd")}
    check = lc.check_guardrails([guardrail.to_dict() for guardrail in design.guardrails], costs)
    got = {f"{result.metric}/{result.statistic}": result.status for result in check.results}
    assert got == manifest.experiment(experiment).expected["guardrails"]


# ---------------------------------------------------------------------------------------
# Anchors: the stable judge agrees with people, the drifted one does not
# ---------------------------------------------------------------------------------------

def test_anchor_agreement_separates_the_stable_judge_from_the_drifted_one(demo):
    root, manifest = demo
    anchors = read_table(root / "anchors/kitchen-anchors.jsonl")
    planted = manifest.anchors
    assert planted.n == len(anchors) >= 40 and len(planted.hard) >= 3
    kappa = {}
    for name, judge in manifest.judges.items():
        verdicts = build_judge(judge["spec"]).judge(anchors)
        disagree = set(anchors.loc[anchors["human_verdict"].to_numpy()
                                   != verdicts["verdict"].to_numpy(), "anchor_id"])
        expected = set(planted.hard) | (set(planted.hedged) if name == "drifted" else set())
        assert disagree == expected, name
        # Reference: sklearn.metrics.cohen_kappa_score(human, judge).
        kappa[name] = cohen_kappa_score(anchors["human_verdict"], verdicts["verdict"])
        assert kappa[name] == pytest.approx(planted.expected_kappa[name])
        agreement = lc.agreement(anchors["anchor_id"], anchors["human_verdict"],
                                 verdicts["verdict"], human_criterion=anchors["human_criterion"],
                                 judge_criterion=verdicts["criterion"])
        assert agreement.kappa == pytest.approx(kappa[name])
        level = lc.drift_status(agreement, None, lc.length_bias(
            anchors["human_verdict"], verdicts["verdict"], anchors["output"].str.len()),
            warn_kappa=planted.warn_kappa, fail_kappa=planted.fail_kappa).level
        for planted_experiment in manifest.experiments:
            if planted_experiment.judge == name:
                assert level == planted_experiment.expected["judge_drift"], name
    assert kappa["stable"] >= planted.warn_kappa
    assert kappa["drifted"] < planted.fail_kappa
    assert not math.isclose(kappa["stable"], kappa["drifted"])


# ---------------------------------------------------------------------------------------
# Each description, counted from the runs (issue 29, point 8)
# ---------------------------------------------------------------------------------------

# What each plant's sentence says, as counts of the judged runs: (pattern, names of its groups).
DESCRIBED_COUNTS = {
    "stale-index": (r"(\d+) goldens that passed now answer", ("broke",)),
    "eager-hedging": (r"hedges (\d+) answers that passed", ("broke",)),
    "prompt-trim": (r"breaks (\d+) answers and fixes (\d+): a real −(\d+\.\d)-point",
                    ("broke", "fixed", "drop_points")),
    "cheaper-model": (r"breaks (\d+) answers? and fixes (\d+)", ("broke", "fixed")),
    "friendly-tone": (r"answers (\d+) questions .* buries (\d+) answers", ("fixed", "broke")),
    "faq-distilled": (r"breaks (\d+) of the (\d+) answers .* fixes (\d+) of its (\d+) failures in "
                      r"the (\d+) goldens", ("broke", "baseline_passes", "fixed",
                                             "baseline_failures", "n")),
}


def counts_from_runs(root: Path, experiment: str) -> dict:
    design, goldens, before, after = judged(root, experiment)
    was, now = passes(before), passes(after)
    return {"broke": int(np.sum(was & ~now)), "fixed": int(np.sum(~was & now)),
            "baseline_passes": int(was.sum()), "baseline_failures": int((~was).sum()),
            "n": int(was.size), "drop_points": f"{100 * (was.sum() - now.sum()) / was.size:.1f}"}


@pytest.mark.parametrize("experiment", sorted(DESCRIBED_COUNTS))
def test_every_description_states_the_counts_its_runs_hold(demo, experiment):
    import re
    root, manifest = demo
    plant = manifest.experiment(experiment).plant
    pattern, names = DESCRIBED_COUNTS[experiment]
    found = re.search(pattern, plant)
    assert found, (experiment, plant)
    counted = counts_from_runs(root, experiment)
    stated = dict(zip(names, found.groups()))
    assert stated == {name: str(counted[name]) for name in names}, (plant, counted)

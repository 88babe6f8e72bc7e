"""Gate rules as pure functions: each refusal has a code, a sentence and details."""

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from langchef_core.designs.approval import Approval
from langchef_core.designs.parse import parse_design
from langchef_core.inputs.errors import InputError
from langchef_core.designs.gate_checks import GateRefusal
from langchef_core.designs.traffic import approved_before_traffic
from langchef_core.designs.gates import (arms_match_design, check_gates, design_is_approved,
                                         judge_is_pinned, runs_are_complete, score_column)
from langchef_core.readout.gate import readout_gate

DESIGN = """\
experiment: rerank
hypothesis: Reranking raises the pass rate.
suite: qa
arms: {baseline: base, variant: rerank}
kind: superiority
primary: pass_rate
judge: {kind: recorded, id: judge-v1}
criteria: [correctness]
"""
AT = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
FILES = {"base": "runs/rerank/base.jsonl", "rerank": "runs/rerank/rerank.jsonl"}
IDS = ["q1", "q2", "q3", "q4"]


def design(text=DESIGN):
    return parse_design(text, file="experiments/rerank.yaml", experiment="rerank")


def approval_of(the_design, at=AT, **changes):
    fields = dict(experiment="rerank", design_sha256=the_design.sha256, approved_by="ada",
                  approved_at=at, tool_version="0.1.0")
    fields.update(changes)
    return Approval(**fields)


def frame(rows):
    """Rows as read_table gives them: the index is the 1-based data row."""
    return pd.DataFrame(rows, index=pd.RangeIndex(1, len(rows) + 1, name="row"))


def arm(ids=IDS, *, verdict="pass", judge="judge-v1", created=AT + timedelta(hours=1)):
    rows = []
    for example_id in ids:
        row = {"example_id": example_id, "output": "answer", "verdict": verdict, "judge": judge}
        if created is not None:
            row["created_at"] = created.isoformat().replace("+00:00", "Z")
        rows.append(row)
    return frame(rows)


def goldens(ids=IDS):
    return frame([{"example_id": example_id, "input": "?"} for example_id in ids])


def complete_runs(**changes):
    runs = {"base": arm(), "rerank": arm()}
    runs.update(changes)
    return runs


# -- design_is_approved --------------------------------------------------------------------

def test_no_approval_is_refused():
    check = design_is_approved(design(), None)
    assert not check.passed and check.refusal.code == "no_approval"
    assert "langchef approve rerank" in check.refusal.sentence


def test_an_approval_of_another_version_is_refused_as_edited():
    approved = design()
    edited = design(DESIGN.replace("judge-v1", "judge-v2"))
    check = design_is_approved(edited, approval_of(approved))
    assert check.refusal.code == "design_edited"
    assert check.details["approved_sha256"] == approved.sha256
    assert check.details["design_sha256"] == edited.sha256


def test_a_forged_approval_with_a_wrong_hash_is_refused():
    check = design_is_approved(design(), approval_of(design(), design_sha256="f" * 64))
    assert check.refusal.code == "design_edited"


def test_a_matching_approval_passes_and_underpowered_is_carried_as_a_warning():
    the_design = design()
    assert design_is_approved(the_design, approval_of(the_design)).passed
    weak = approval_of(the_design, underpowered={"sentence": "margin 0.01 is below the limit"})
    check = design_is_approved(the_design, weak)
    assert check.passed and len(check.warnings) == 1
    assert check.warnings[0].startswith("UNDERPOWERED") and "margin 0.01" in check.warnings[0]


# -- approved_before_traffic ---------------------------------------------------------------

def test_rows_created_after_approval_pass():
    check = approved_before_traffic(approval_of(design()), complete_runs(), files=FILES)
    assert check.passed and check.warnings == ()


def test_first_row_created_before_approval_is_named_by_file_and_row():
    early = arm()
    early.loc[3, "created_at"] = "2024-05-01T11:59:59Z"
    early.loc[4, "created_at"] = "2024-04-30T00:00:00+00:00"
    check = approved_before_traffic(approval_of(design()), complete_runs(rerank=early),
                                    files=FILES, design=design())
    assert check.refusal.code == "traffic_before_approval"
    assert check.refusal.sentence.startswith("runs/rerank/rerank.jsonl, row 3: created at "
                                             "2024-05-01T11:59:59Z, before the approval")
    assert check.details["count"] == 2 and check.details["first"]["arm"] == "rerank"


def test_offsets_are_compared_in_utc():
    # 13:30 in UTC+02:00 is 11:30 UTC: before a 12:00 UTC approval.
    early = arm()
    early.loc[2, "created_at"] = "2024-05-01T13:30:00+02:00"
    check = approved_before_traffic(approval_of(design()), complete_runs(base=early), files=FILES)
    assert check.refusal.code == "traffic_before_approval" and "row 2" in check.refusal.sentence


def test_timezone_aware_timestamps_from_parquet_are_accepted():
    timed = arm()
    timed["created_at"] = pd.to_datetime(["2024-05-02T00:00:00Z"] * 4, utc=True)
    assert approved_before_traffic(approval_of(design()), complete_runs(base=timed)).passed
    timed["created_at"] = pd.to_datetime(["2024-04-02T00:00:00Z"] * 4, utc=True)
    assert not approved_before_traffic(approval_of(design()), complete_runs(base=timed)).passed


@pytest.mark.parametrize("value, words", [
    ("2024-05-01T13:00:00", "has no time zone"),
    ("yesterday", "is not an ISO-8601 time"),
])
def test_a_naive_or_unreadable_time_is_refused_naming_file_column_and_row(value, words):
    bad = arm()
    bad.loc[2, "created_at"] = value
    check = approved_before_traffic(approval_of(design()), complete_runs(base=bad), files=FILES)
    assert check.refusal.code == "invalid_timestamp"
    assert check.refusal.sentence.startswith("runs/rerank/base.jsonl, column 'created_at', row 2:")
    assert words in check.refusal.sentence


def test_runs_without_times_pass_with_a_could_not_verify_warning():
    runs = complete_runs(base=arm(created=None), rerank=arm(created=None))
    check = approved_before_traffic(approval_of(design()), runs, files=FILES)
    assert check.passed and "could not be verified" in check.sentence
    assert "could not be verified" in check.warnings[0] and "4 rows of arm 'base'" in check.warnings[0]


def test_partly_timed_runs_warn_about_the_untimed_rows_only():
    partly = arm()
    partly.loc[1, "created_at"] = None
    check = approved_before_traffic(approval_of(design()), complete_runs(rerank=partly))
    assert check.passed and "1 row of arm 'rerank'" in check.warnings[0]


# -- arms_match_design ---------------------------------------------------------------------

def test_arms_must_be_exactly_the_designs():
    assert arms_match_design(design(), complete_runs()).passed
    missing = arms_match_design(design(), {"base": arm()})
    assert missing.refusal.code == "arms_mismatch" and missing.details["missing"] == ["rerank"]
    extra = arms_match_design(design(), complete_runs(other=arm()))
    assert extra.refusal.code == "arms_mismatch" and extra.details["extra"] == ["other"]
    renamed = arms_match_design(design(), {"base": arm(), "rerank_v2": arm()})
    assert "'rerank'" in renamed.refusal.sentence and "'rerank_v2'" in renamed.refusal.sentence


# -- runs_are_complete ---------------------------------------------------------------------

def test_complete_runs_pass():
    check = runs_are_complete(design(), goldens(), complete_runs(), files=FILES)
    assert check.passed and check.details["n_goldens"] == 4


def test_missing_goldens_are_counted_per_arm():
    runs = complete_runs(rerank=arm(["q1", "q3"]))
    check = runs_are_complete(design(), goldens(), runs, files=FILES)
    assert check.refusal.code == "incomplete_runs"
    assert check.details["missing"] == {"rerank": 2}
    assert check.details["first_missing"]["rerank"] == "q2"
    assert "2 of 4 missing from 'rerank'" in check.refusal.sentence


def test_a_row_without_a_verdict_is_not_scored():
    unscored = arm()
    unscored.loc[4, "verdict"] = None
    check = runs_are_complete(design(), goldens(), complete_runs(base=unscored))
    assert check.details["missing"] == {"base": 1} and check.details["first_missing"]["base"] == "q4"


def test_an_absent_arm_counts_every_golden_as_missing():
    check = runs_are_complete(design(), goldens(), {"base": arm()})
    assert check.details["missing"] == {"rerank": 4}


def test_repeated_and_unknown_example_ids_are_refused_with_their_row():
    repeated = runs_are_complete(design(), goldens(), complete_runs(base=arm(IDS + ["q2"])),
                                 files=FILES)
    assert repeated.refusal.code == "duplicate_examples"
    assert repeated.refusal.sentence.startswith("runs/rerank/base.jsonl, column 'example_id', row 5")
    unknown = runs_are_complete(design(), goldens(), complete_runs(rerank=arm(IDS + ["zz"])),
                                files=FILES)
    assert unknown.refusal.code == "unknown_examples" and "row 5" in unknown.refusal.sentence


def test_score_column_follows_the_primary_metric():
    assert score_column(design()) == "verdict"
    assert score_column(design(DESIGN.replace("kind: recorded, id: judge-v1", "kind: rubric"))) \
        == "output"
    assert score_column(design(DESIGN.replace("primary: pass_rate", "primary: accuracy"))) \
        == "predicted"
    retrieval = design(DESIGN.replace("primary: pass_rate", "primary: recall"))
    assert score_column(retrieval) == "retrieved"
    runs = {name: frame([{"example_id": i, "retrieved": ["d1", "d2"] if i != "q3" else []}
                         for i in IDS]) for name in ("base", "rerank")}
    assert runs_are_complete(retrieval, goldens(), runs).passed  # an empty ranking is scored


def test_goldens_without_example_id_are_an_input_error():
    with pytest.raises(InputError, match="goldens/qa, column 'example_id'"):
        runs_are_complete(design(), frame([{"input": "?"}]), complete_runs())


# -- judge_is_pinned -----------------------------------------------------------------------

def test_verdicts_from_the_pinned_judge_pass():
    assert judge_is_pinned(complete_runs(), "judge-v1", files=FILES).passed


def test_verdicts_from_another_judge_are_refused():
    check = judge_is_pinned(complete_runs(base=arm(judge="judge-v2"),
                                          rerank=arm(judge="judge-v2")), "judge-v1", files=FILES)
    assert check.refusal.code == "judge_not_pinned"
    assert "'judge-v2'" in check.refusal.sentence and "'judge-v1'" in check.refusal.sentence


def test_verdicts_from_two_judges_are_refused_even_without_a_pin():
    runs = complete_runs(rerank=arm(judge="judge-v2"))
    for pinned in ("judge-v1", None):
        check = judge_is_pinned(runs, pinned, files=FILES)
        assert check.refusal.code == "judge_not_pinned"
        assert check.details["judges"] == ["judge-v1", "judge-v2"]


def test_a_verdict_without_a_judge_id_is_refused_by_row():
    unnamed = arm()
    unnamed.loc[3, "judge"] = None
    check = judge_is_pinned(complete_runs(base=unnamed), "judge-v1", files=FILES)
    assert check.refusal.code == "judge_not_pinned"
    assert check.refusal.sentence.startswith("runs/rerank/base.jsonl, column 'judge', row 3")


def test_runs_without_upstream_verdicts_pass():
    runs = {name: arm().drop(columns=["verdict", "judge"]) for name in ("base", "rerank")}
    assert judge_is_pinned(runs, "judge-v1").passed


# -- all together --------------------------------------------------------------------------

def test_check_gates_passes_a_clean_experiment():
    the_design = design()
    result = check_gates(the_design, approval_of(the_design), complete_runs(), goldens(),
                         files=FILES)
    assert result.passed and result.refusals == ()
    assert [check.name for check in result.checks] == [
        "design_is_approved", "approved_before_traffic", "arms_match_design",
        "runs_are_complete", "judge_is_pinned"]
    result.raise_if_refused()  # nothing to raise


def test_check_gates_collects_every_refusal_once_and_raises():
    the_design = design()
    result = check_gates(the_design, None, complete_runs(rerank=arm(["q1"], judge="other")),
                         goldens(), files=FILES)
    assert not result.passed
    assert [r.code for r in result.refusals] == ["no_approval", "incomplete_runs",
                                                 "judge_not_pinned"]
    with pytest.raises(GateRefusal) as caught:
        result.raise_if_refused()
    assert caught.value.codes == ("no_approval", "incomplete_runs", "judge_not_pinned")
    assert "(and 2 more refusals)" in str(caught.value)


def test_check_gates_uses_an_explicit_judge_id_for_computed_judges():
    rubric = design(DESIGN.replace("kind: recorded, id: judge-v1", "kind: rubric, model: m"))
    runs = complete_runs()
    assert check_gates(rubric, approval_of(rubric), runs, goldens()).passed
    refused = check_gates(rubric, approval_of(rubric), runs, goldens(), judge_id="rubric-abc")
    assert [r.code for r in refused.refusals] == ["judge_not_pinned"]


def test_results_are_plain_data():
    the_design = design()
    result = check_gates(the_design, None, complete_runs(), goldens())
    plain = result.to_dict()
    assert plain["refusals"][0]["code"] == "no_approval"
    assert plain["checks"][0]["refusal"]["sentence"] == result.refusals[0].sentence


# -- readout_gate --------------------------------------------------------------------------

# Intervals that make each (verdict, non-inferiority) label true at a margin of 0.03: the
# gate re-derives both labels from these numbers.
INTERVALS = {("improvement", None): (0.03, 0.01, 0.05), ("improvement", "held"): (0.03, 0.01, 0.05),
             ("regression", None): (-0.2, -0.28, -0.12), ("regression", "failed"): (-0.2, -0.28, -0.12),
             ("inconclusive", None): (-0.01, -0.04, 0.02),
             ("inconclusive", "unresolved"): (-0.01, -0.04, 0.02),
             ("inconclusive", "held"): (0.0, -0.02, 0.02)}


def readout(verdict="inconclusive", noninferiority=None, passed=True, reasons=(), kind=None,
            guardrails=None):
    difference, low, high = INTERVALS[verdict, noninferiority]
    document = {"format": 1, "experiment": "rerank", "version": 1,
                "design": {"kind": kind or ("non_inferiority" if noninferiority else
                                            "superiority")},
                "primary": {"metric": "pass_rate", "verdict": verdict,
                            "noninferiority": noninferiority, "difference": difference,
                            "low": low, "high": high,
                            "margin": 0.03 if noninferiority else None},
                "gate": {"passed": passed, "reasons": list(reasons)}}
    if guardrails is not None:
        document["guardrails"] = guardrails
    return document


LATENCY_BREACH = {"kind": "cost", "metric": "latency_ms", "statistic": "p95", "breached": True,
                  "increase": 0.25, "relative_low": 0.15, "max_increase": 0.1}


def test_passing_readouts_pass():
    assert readout_gate(readout("improvement")).passed
    assert readout_gate(readout("inconclusive")).passed
    assert readout_gate(readout("inconclusive", "held")).passed


@pytest.mark.parametrize("document, words", [
    (readout("regression", passed=False, reasons=["pass_rate regressed"]), "regressed"),
    (readout("regression", "failed", passed=False, reasons=["non-inferiority failed"]),
     "non-inferiority failed"),
    (readout("improvement", passed=False, reasons=["guardrail breached: p95 of latency_ms"],
             guardrails=[LATENCY_BREACH]), "p95 of latency_ms"),
])
def test_failing_readouts_fail_with_reasons(document, words):
    decision = readout_gate(document)
    assert not decision.passed and any(words in reason for reason in decision.reasons)


def test_a_recorded_failure_for_another_reason_is_trusted():
    decision = readout_gate(readout("improvement", passed=False,
                                    reasons=["protected slice 'de' regressed"]))
    assert not decision.passed and decision.reasons == ("protected slice 'de' regressed",)


def test_a_failure_without_recorded_reasons_is_explained_from_the_content():
    decision = readout_gate(readout("regression", passed=False))
    assert decision.reasons == decision.derived_reasons
    # Issue 15: a rate difference reads in points, like the report and the CLI line.
    assert decision.reasons == ("pass_rate regressed: -20.0 points [-28.0, -12.0]",)


@pytest.mark.parametrize("document", [
    readout("regression", passed=True),
    readout("regression", "failed", passed=True),
    readout("improvement", passed=True, guardrails=[{**LATENCY_BREACH, "name": "p95 latency"}]),
])
def test_a_readout_claiming_to_pass_against_its_own_numbers_is_refused(document):
    with pytest.raises(InputError) as caught:
        readout_gate(document, file="reports/rerank/v1/readout.json")
    assert str(caught.value).startswith("reports/rerank/v1/readout.json, column 'gate.passed': "
                                        "says the gate passed, but the readout's own content "
                                        "fails it")


def test_fail_on_inconclusive_fails_the_open_question_only():
    assert not readout_gate(readout("inconclusive"), fail_on_inconclusive=True).passed
    assert readout_gate(readout("improvement"), fail_on_inconclusive=True).passed
    # For non-inferiority the question is the margin, not the sign.
    assert not readout_gate(readout("inconclusive", "unresolved"), fail_on_inconclusive=True).passed
    assert readout_gate(readout("inconclusive", "held"), fail_on_inconclusive=True).passed


@pytest.mark.parametrize("breakage, field", [
    (lambda d: d.pop("format"), "format"),
    (lambda d: d.pop("gate"), "gate.passed"),
    (lambda d: d["gate"].update(passed="yes"), "gate.passed"),
    (lambda d: d["gate"].update(reasons="bad"), "gate.reasons"),
    (lambda d: d["primary"].update(verdict="better"), "primary.verdict"),
    (lambda d: d["primary"].update(noninferiority="maybe"), "primary.noninferiority"),
    (lambda d: d.update(guardrails=[{"metric": "cost_usd"}]), "guardrails[1].breached"),
    (lambda d: d.update(guardrails=[{"breached": False}]), "guardrails[1].kind"),
    (lambda d: d.update(guardrails=[{"kind": "cost", "breached": False, "relative_low": 0.2}]),
     "guardrails[1].max_increase"),
    (lambda d: d["primary"].pop("low"), "primary.low"),
    (lambda d: d["primary"].update(high=float("nan")), "primary.high"),
    (lambda d: d["gate"].update(passed=False), "gate.reasons"),
])
def test_malformed_readouts_are_input_errors_naming_the_field(breakage, field):
    document = readout()
    breakage(document)
    with pytest.raises(InputError) as caught:
        readout_gate(document, file="readout.json")
    assert caught.value.column == field


@pytest.mark.parametrize("relabel, field", [
    # Issue 13, defect 4: a regression relabelled inconclusive, interval left in place.
    (lambda d: d["primary"].update(verdict="inconclusive"), "primary.verdict"),
    (lambda d: d["primary"].update(verdict="improvement"), "primary.verdict"),
    (lambda d: d["primary"].update(margin=0.03, noninferiority="held"), "primary.noninferiority"),
    (lambda d: d.update(guardrails=[{**LATENCY_BREACH, "breached": False}]),
     "guardrails[1].breached"),
    (lambda d: d.update(guardrails=[{"kind": "slice", "name": "new", "breached": False,
                                     "high": -0.1, "p_adjusted": 0.001}]), "guardrails[1].breached"),
])
def test_labels_that_contradict_their_numbers_are_refused(relabel, field):
    document = readout("regression", passed=False, reasons=["pass_rate regressed"])
    relabel(document)
    with pytest.raises(InputError, match="altered") as caught:
        readout_gate(document, file="readout.json")
    assert caught.value.column == field


@pytest.mark.parametrize("times", [
    ["2024-05-01T12:00:01Z", "2024-05-01T12:30:00+02:00", None, "2024-05-01T13:00:00Z"],
    ["2024-05-01T12:00:00.000001Z", "2024-05-01T11:59:59.999999Z", None, "2024-05-01T11:00:00Z"],
    ["2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z"],
    [None, None, None, None],
    ["2024-05-01T12:00:01Z", "2200-01-01T00:00:00Z", "2024-05-01T11:00:00Z", None],
])
def test_a_validated_time_column_is_judged_as_the_row_rule_judges_its_values(times):
    """The typed (tz-aware) column is read in bulk; its verdict, sentence and details must be
    those of the same times read one by one as text."""
    def runs(column):
        rows = [{"example_id": i, "verdict": "pass"} for i in IDS]
        made = {arm: frame(rows) for arm in ("base", "rerank")}
        made["rerank"]["created_at"] = column
        return made
    as_text = pd.Series(times, index=pd.RangeIndex(1, 5, name="row"), dtype=object)
    typed = pd.to_datetime(as_text, utc=True, format="ISO8601").dt.as_unit("ns")
    now = datetime(2025, 1, 1, tzinfo=timezone.utc)
    text_check = approved_before_traffic(approval_of(design()), runs(as_text), files=FILES, now=now)
    typed_check = approved_before_traffic(approval_of(design()), runs(typed), files=FILES, now=now)
    assert typed_check == text_check

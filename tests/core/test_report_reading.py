"""How a page reads (issue 15): the pre-registered answer first, refused readouts kept as
evidence, per-query retrieval evidence, one unit per number."""

from __future__ import annotations

import copy
import json
import re
from datetime import timedelta

import pytest

from langchef_core.designs.ledger import Ledger
from langchef_core.inputs.workspace import Workspace
from langchef_core.readout.gate import readout_gate
from langchef_core.readout.publish import publish_readout, reconcile
from langchef_core.readout.refusal import refusal_document, split_reason
from langchef_core.readout.retrieval_evidence import histogram
from langchef_core.readout.verdict import readout_answer, summary_record, verdict_line
from langchef_core.report import read_listings, render_report, write_index
from langchef_core.report.charts import histogram_chart
from langchef_core.report.filters import MINUS
from tests.core.test_report_render import CREATED_AT, Page, regression_readout, section
from tests.core.test_report_specimen import frozen_specimen

REASON = ("judge_has_not_drifted: Do not act on this verdict: the judge agrees with human "
          "reviewers too weakly (κ = 0.35, below 0.5)")


def held_readout() -> dict:
    readout = copy.deepcopy(frozen_specimen())
    readout["primary"].update(noninferiority="held", low=-0.03, high=0.02, difference=-0.005,
                              verdict="inconclusive")
    return readout


# ── the question the design asked comes first ───────────────────────────────────────────

def test_a_noninferiority_design_leads_with_its_outcome_at_the_margin():
    page = Page(render_report(held_readout(), CREATED_AT))
    assert page.text("verdict-word") == "HELD"
    assert page.text("verdict-sentence") == (
        f"Held at {MINUS}5.0 points: {MINUS}0.5 points, 95% interval {MINUS}3.0 to +2.0, all "
        "of it above the margin; 10 goldens broke, 4 fixed.")
    assert page.text("against-zero").startswith("Read against zero")
    html = render_report(held_readout(), CREATED_AT)
    forest = section(html, "attribution")
    assert 'class="margin-line"' in forest and f"margin {MINUS}5.0" in forest
    # A superiority design draws no margin.
    assert 'class="margin-line"' not in render_report(regression_readout(), CREATED_AT)


def test_the_cli_line_and_the_summary_answer_the_same_question():
    readout = held_readout()
    answer = readout_answer(readout)
    assert (answer.answer, answer.word, answer.superiority) == ("held", "HELD", "inconclusive")
    line = verdict_line(readout)
    assert line.startswith("HELD at -5.0 points pass_rate -0.5 points [-3.0, +2.0]")
    assert "superiority: inconclusive" in line and "%" not in line
    summary = summary_record(readout)
    assert summary["answer"] == "held" and summary["line"] == line
    regression = regression_readout()
    assert verdict_line(regression).startswith("REGRESSION   pass_rate -20.0 points [")
    assert summary_record(regression)["answer"] == "regression"


def test_the_index_lists_the_answer_not_the_superiority_word(tmp_path):
    publish_readout(tmp_path, held_readout(), created_at=CREATED_AT, render_html=render_report)
    (listing,) = read_listings(tmp_path)
    entry = listing.versions[0]
    assert (entry.word, entry.tone) == ("HELD", "better")
    assert entry.sentence.startswith(f"Held at {MINUS}5.0 points")


def test_target_weights_put_the_target_reading_in_the_verdict_box():
    page = Page(render_report(frozen_specimen(), CREATED_AT))
    assert page.text("weighted-target").startswith("Under the target mix the design declared:")
    assert page.text("weighted-observed").startswith("Under the goldens' own mix")
    assert "weighted-readings" not in Page(render_report(regression_readout(), CREATED_AT)).ids()


def test_a_classification_paired_table_says_correct_and_incorrect():
    readout = copy.deepcopy(regression_readout())
    readout["primary"]["metric"] = "accuracy"
    block = section(render_report(readout, CREATED_AT), "paired")
    assert "variant correct" in block and "baseline incorrect" in block
    assert "became wrong" in block and "became right" in block
    assert "pass" not in block.replace("passed", "")


def test_a_breach_is_stated_once_in_the_pages_units():
    readout = copy.deepcopy(frozen_specimen())
    raw = ("guardrail breach: protected slice 'safety' of 'task' regressed, difference "
           "-0.2333 (interval -0.4093 to -0.0933)")
    readout["guardrails"] = [{"name": "protected slice task=safety", "kind": "slice",
                              "breached": True, "status": "breached", "difference": -0.2333,
                              "low": -0.4093, "high": -0.0933, "p_adjusted": 0.0156,
                              "sentence": raw}]
    readout["gate"] = {"passed": False, "reasons": [raw]}
    html = render_report(readout, CREATED_AT)
    page = Page(html)
    assert page.text("breaches").count("task=safety dropped") == 1
    assert f"{MINUS}23.3 points, interval {MINUS}40.9 to {MINUS}9.3" in page.text("breaches")
    assert "-0.2333" not in html and "guardrail breach:" not in html


# ── refused readouts ────────────────────────────────────────────────────────────────────

def refused_workspace(tmp_path) -> Workspace:
    root = tmp_path / "evals"
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "blocked.yaml").write_text("experiment: blocked\n", encoding="utf-8")
    return Workspace.at(root)


def test_a_refusal_is_published_with_its_check_and_fingerprints_and_no_verdict(tmp_path):
    workspace = refused_workspace(tmp_path)
    document = refusal_document(workspace, "blocked", [REASON, "runs_are_complete: 3 missing"])
    assert "primary" not in document and document["gate"]["passed"] is False
    assert document["refused"]["check"] == "judge_has_not_drifted"
    assert document["summary"]["answer"] == "refused"
    assert "experiments/blocked.yaml" in document["inputs"]["files"]
    assert document["design"]["sha256"] is None and "unreadable" in document["design"]
    with Ledger.for_workspace(workspace) as ledger:
        published = publish_readout(workspace.reports, document, created_at=CREATED_AT,
                                    render_html=render_report, ledger=ledger)
        # Versioned like any readout, but never a look at the data.
        assert published.version == 1 and ledger.recorded_versions("blocked") == set()
        assert reconcile(ledger, workspace.reports, "blocked") == []
        again = publish_readout(workspace.reports, document, created_at=CREATED_AT,
                                render_html=render_report, ledger=ledger)
        assert again.version == 1 and not again.new
    assert (workspace.reports / "blocked" / "latest").resolve().name == "v1"
    page = Page((workspace.reports / "blocked" / "v1" / "index.html").read_text("utf-8"))
    assert page.text("verdict-word") == "REFUSED"
    assert page.text("refusal-check") == "judge_has_not_drifted"
    assert page.text("refusal-reason").startswith("Do not act on this verdict")
    assert "verdict-sentence" not in page.ids()
    index = Page(write_index(workspace.reports, CREATED_AT).read_text("utf-8"))
    assert "REFUSED" in index.text("experiment-blocked")
    assert "Blocked by judge_has_not_drifted" in index.text("experiment-blocked")
    decision = readout_gate(json.loads(
        (workspace.reports / "blocked" / "v1" / "readout.json").read_text("utf-8")))
    assert not decision.passed and decision.verdict == "refused"


def test_a_refusal_page_escapes_what_it_quotes(tmp_path):
    workspace = refused_workspace(tmp_path)
    document = refusal_document(workspace, "blocked", ["design_is_approved: <script>x</script>"])
    html = render_report({**document, "version": 1}, CREATED_AT + timedelta(days=1))
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html


def test_split_reason_keeps_a_sentence_without_a_check_name():
    assert split_reason(REASON)[0] == "judge_has_not_drifted"
    assert split_reason("the readout run failed: boom") == ("readout",
                                                            "the readout run failed: boom")


# ── per-query retrieval evidence ────────────────────────────────────────────────────────

def test_the_histogram_counts_unchanged_queries_apart():
    counts = histogram([0.0, 0.0, -0.5, -0.45, 0.1, 1.0, -1.0, 0.05])
    assert counts["unchanged"] == 2 and counts["lower"] == 3 and counts["higher"] == 3
    assert counts["counts"][0] == 1           # −1.0
    assert counts["counts"][5] == 2           # −0.5 and −0.45 in [−0.5, −0.4)
    assert counts["counts"][10] == 1          # 0.05 in [0, 0.1)
    assert counts["counts"][11] == 1          # 0.1 in [0.1, 0.2)
    assert counts["counts"][19] == 1          # +1.0 falls in the last bin
    assert sum(counts["counts"]) + counts["unchanged"] == 8


def test_the_histogram_chart_draws_losses_gains_and_the_unchanged_bar():
    chart = histogram_chart([0] * 5 + [30] + [0] * 14, 57, low=-1.0, high=1.0, chart_id="h",
                            title="t", description="d")
    drawn = [bar for bar in chart.bars if bar.count]
    assert [(bar.tone, bar.count) for bar in drawn] == [("worse", 30), ("neutral", 57)]
    tallest = max(drawn, key=lambda bar: bar.count)
    assert tallest.height == 80.0 and drawn[0].height == pytest.approx(80 * 30 / 57, abs=0.1)
    with pytest.raises(ValueError, match="non-negative"):
        histogram_chart([-1], 0, low=-1, high=1, chart_id="h", title="t", description="d")


def test_the_retrieval_page_lists_the_queries_that_lost_with_both_rankings():
    readout = copy.deepcopy(frozen_specimen())
    ranking = [{"doc_id": "d<1>", "relevant": True}, {"doc_id": "d2", "relevant": False}]
    readout["retrieval"]["per_query"] = {
        "source": "human", "k": 10, "focus": "recall", "n_queries": 3, "bin_width": 0.1,
        "histograms": {"recall": histogram([-0.5, 0.0, 0.2])},
        "lost": [{"query_id": "q1", "input": "<b>where</b>", "differences": {"recall": -0.5},
                  "baseline": ranking, "variant": ranking[::-1], "relevant": ["d<1>", "d9"]}],
        "gained": []}
    html = render_report(readout, CREATED_AT)
    page = Page(html)
    assert "per-query-recall" in page.ids() and "worst-queries" in page.ids()
    assert "&lt;b&gt;where&lt;/b&gt;" in html and "d&lt;1&gt;" in html
    assert f"{MINUS}0.500" in page.text("worst-queries")
    assert "in neither top 10: d9" in page.text("worst-queries")
    assert page.text("best-queries") == "No query gained in recall."


def test_no_rendered_number_is_a_stray_fraction():
    """Every number the specimen page shows is in points, percent or the metric's own three
    decimals; a raw fraction like -0.2333 or 0.06503 would be a unit that escaped."""
    html = render_report(frozen_specimen(), CREATED_AT)
    body = re.sub(r"<(style|svg|pre)\b.*?</\1>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", body)
    stray = [m.group(0) for m in re.finditer(r"(?<![\w.])[-\u2212+]?\d+\.\d{4,}(?![\w.])", text)
             if not text[max(0, m.start() - 8):m.start()].rstrip().endswith("=")]
    assert stray == []


def test_gate_reasons_use_points_for_rates():
    from langchef_core.readout.assemble import gate_reasons
    primary = {"metric": "pass_rate", "broke": 18, "fixed": 0, "difference": -0.2,
               "low": -0.294, "high": -0.13, "verdict": "regression", "noninferiority": None}
    assert gate_reasons(primary, []) == ["pass_rate regressed: -20.0 points [-29.4, -13.0]"]
    recall = {"metric": "recall", "difference": -0.172, "low": -0.223, "high": -0.121,
              "verdict": "regression"}
    assert gate_reasons(recall, []) == [
        "recall regressed: -0.172 [-0.223, -0.121] on the recall scale"]

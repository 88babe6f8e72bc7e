"""The readout of a sequential design: verdict from the confidence sequence, attribution at
α/k, where the run stopped, and the report's section with its chart."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from langchef_core.designs.parse import parse_design
from langchef_core.readout.comparisons import criterion_attribution, primary_result
from langchef_core.readout.item_scores import ItemScores
from langchef_core.readout.sequential import sequential_section, sequential_warnings
from langchef_core.report import render_report
from langchef_core.stats.paired import compare_binary
from langchef_core.stats.sequential import compare_sequential

DESIGN = """\
experiment: distil
hypothesis: The distilled model answers as well.
suite: faq
arms: {baseline: large, variant: small}
kind: superiority
primary: pass_rate
judge: {kind: recorded, id: judge-v1}
criteria: [correctness, directness]
stopping: {rule: sequential, max_goldens: 2000, order: created_at}
"""
START = datetime(2025, 3, 4, 9, 0, tzinfo=timezone.utc)


def design(text=DESIGN):
    return parse_design(text, file="experiments/distil.yaml", experiment="distil")


def scores(n=600, *, breaks=0.12, seed=1) -> ItemScores:
    """Paired verdicts in traffic order; the frame is held in example_id order (as
    item_scores gives it), with ids that run against arrival so the order matters."""
    rng = np.random.default_rng(seed)
    before = rng.random(n) < 0.85
    after = np.where(before, rng.random(n) >= breaks, rng.random(n) < 0.05)
    frame = pd.DataFrame({
        "example_id": [f"g{n - i:05d}" for i in range(n)],
        "created_at": [(START + timedelta(seconds=30 * i)).isoformat() for i in range(n)],
        "baseline_pass": before, "variant_pass": after,
        "baseline_criterion": np.where(before, None, "directness"),
        "variant_criterion": np.where(after, None, np.where(before, "correctness", "directness")),
    })
    return ItemScores(frame=frame.sort_values("example_id").reset_index(drop=True),
                      judge_id="judge-v1")


def test_the_verdict_is_read_from_the_sequence_in_traffic_order():
    d, s = design(), scores()
    primary = primary_result(d, s, None)
    traffic = s.frame.sort_values("created_at")
    expected = compare_sequential(traffic["baseline_pass"], traffic["variant_pass"], binary=True,
                                  max_n=2000)
    assert (primary.low, primary.high, primary.verdict, primary.p_value) == \
        (expected.low, expected.high, expected.verdict, expected.p_value)
    assert primary.verdict == "regression" and primary.high < 0
    # The fixed-n interval of the same goldens is narrower: the price of looking.
    fixed = compare_binary(s.frame["baseline_pass"], s.frame["variant_pass"])
    assert primary.high - primary.low > fixed.high - fixed.low
    assert primary.fixed_n.low == fixed.low
    # The readout's primary keeps the fixed-n record's keys (the contract) and nothing else.
    assert set(primary.to_dict()) == set(fixed.to_dict())
    assert primary.broke == fixed.broke and primary.interval_method.startswith("predictable")


def test_criteria_are_read_at_alpha_over_k():
    d, s = design(), scores()
    attribution = criterion_attribution(d, s)
    row = attribution.criteria.set_index("criterion").loc["correctness"]
    traffic = s.frame.sort_values("created_at")
    failed_after = ~traffic["variant_pass"] & (traffic["variant_criterion"] == "correctness")
    failed_before = ~traffic["baseline_pass"] & (traffic["baseline_criterion"] == "correctness")
    at_half = compare_sequential(~failed_before, ~failed_after, binary=True, alpha=0.025,
                                 max_n=2000)
    assert (row["low"], row["high"]) == (at_half.low, at_half.high)
    assert row["direction"] == "moved_worse"
    assert row["p_adjusted"] == pytest.approx(min(1.0, 2 * row["p_value"]))


def test_the_section_says_where_the_run_stands():
    d = design()
    early = sequential_section(d, primary_result(d, scores(), None))
    assert early["status"] == "stopped_early"
    assert early["sentence"].startswith("stopped early at n = 600 of N = 2000")
    assert "remaining 1400 goldens" in early["detection_limit_sentence"]
    assert early["path"]["n"][-1] == 600 and early["first_decisive"] <= 600
    quiet = sequential_section(d, primary_result(d, scores(breaks=0.0), None))
    assert quiet["status"] == "interim" and "not decided yet" in quiet["sentence"]
    assert "sequential_interim" in {code for code, _ in sequential_warnings(d, quiet)}
    small = design(DESIGN.replace("max_goldens: 2000", "max_goldens: 600"))
    full = sequential_section(small, primary_result(small, scores(breaks=0.0), None))
    assert full["status"] == "ran_to_max" and full["sentence"] == "ran to N = 600 goldens"
    assert "budget is spent" in full["detection_limit_sentence"]


def readout_with(section: dict) -> dict:
    return {"format": 1, "experiment": "distil", "version": 1, "hypothesis": "h",
            "design": {"sha256": "a" * 64, "kind": "superiority", "primary": "pass_rate",
                       "arms": {"baseline": "large", "variant": "small"}, "alpha": 0.05},
            "primary": {"metric": "pass_rate", "n": section["n"], "difference": -0.06,
                        "low": section["low"], "high": section["high"], "p_value": 1e-5,
                        "verdict": "regression", "detection_limit": 0.02, "noninferiority": None,
                        "broke": 21, "fixed": 0, "baseline_rate": 0.86, "variant_rate": 0.8,
                        "alpha": 0.05, "interval_method": section["interval_method"]},
            "criteria": [], "warnings": [], "gate": {"passed": False, "reasons": ["x"]},
            "sequential": section}


def test_the_report_draws_the_sequence_and_escapes_what_it_prints():
    d = design()
    section = sequential_section(d, primary_result(d, scores(), None))
    html = render_report(readout_with(section), datetime(2025, 3, 5, tzinfo=timezone.utc))
    assert '<section id="sequential"' in html and '<svg class="sequence"' in html
    assert "stopped early at n = 600 of N = 2000" in html
    assert "wider than fixed-n ones at the same n" in html
    assert 'class="look"' in html and 'class="fixed"' in html and "<polygon" in html
    section = {**section, "order": "<script>alert(1)</script>"}
    html = render_report(readout_with(section), datetime(2025, 3, 5, tzinfo=timezone.utc))
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_a_fixed_n_report_has_no_sequential_section():
    section = sequential_section(design(), primary_result(design(), scores(), None))
    readout = readout_with(section)
    del readout["sequential"]
    html = render_report(readout, datetime(2025, 3, 5, tzinfo=timezone.utc))
    assert 'id="sequential"' not in html and "_sequential" not in html


def test_clusters_and_a_margin_are_read_from_the_sequence_too():
    clustered = design(DESIGN.replace("criteria:", "cluster: user_id\ncriteria:")
                       .replace("kind: superiority", "kind: non_inferiority\nmargin: 0.2"))
    s = scores()
    frame = s.frame.assign(user_id=[f"u{i % 150}" for i in range(len(s.frame))])
    s = ItemScores(frame=frame, judge_id="judge-v1")
    primary = primary_result(clustered, s, None)
    assert primary.sequence.n == 150 and "over clusters" in primary.interval_method
    assert primary.noninferiority in ("held", "unresolved", "failed")
    assert primary.noninferiority == ("held" if primary.low > -0.2 else
                                      "failed" if primary.high < -0.2 else "unresolved")
    section = sequential_section(clustered, primary)
    assert section["unit"] == "cluster" and section["n_units"] == 150 and section["n"] == 600
    html = render_report(readout_with(section), datetime(2025, 3, 5, tzinfo=timezone.utc))
    assert "over 150 clusters in the order they completed" in html


def test_the_ci_gate_re_derives_a_sequential_verdict_with_its_always_valid_p():
    from langchef_core.inputs.errors import InputError
    from langchef_core.readout.gate import readout_gate
    section = sequential_section(design(), primary_result(design(), scores(), None))
    readout = readout_with(section)
    readout["gate"] = {"passed": True, "reasons": []}
    # Off zero, 30 broke / 5 fixed (exact McNemar p < 0.001), but the always-valid p is 0.2:
    # the sequential rule reads no direction, and the gate must agree rather than cry foul.
    readout["primary"].update(low=-0.08, high=-0.01, p_value=0.2, verdict="inconclusive",
                              broke=30, fixed=5)
    assert readout_gate(readout).passed
    readout["primary"]["verdict"] = "regression"
    readout["gate"] = {"passed": False, "reasons": ["pass_rate regressed"]}
    with pytest.raises(InputError, match="makes it 'inconclusive'"):
        readout_gate(readout)
    # Without the sequential section the same numbers are a fixed-n regression.
    del readout["sequential"]
    assert not readout_gate(readout).passed

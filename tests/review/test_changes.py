"""The page of vN links to v(N−1) and states what differs: inputs' hashes, design hash,
answer and interval."""

import copy
import json
from datetime import datetime, timezone

from langchef_core.readout.changes import readout_changes
from langchef_core.readout.publish import publish_readout
from langchef_core.report import render_report
from tests.core.test_report_specimen import build_specimen_readout

CREATED_AT = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)


def moved(readout: dict) -> dict:
    """The readout after new runs: other run file, other inputs hash, a worse interval."""
    later = copy.deepcopy(readout)
    name = sorted(later["inputs"]["files"])[-1]
    later["inputs"]["files"][name] = {**later["inputs"]["files"][name], "sha256": "b" * 64}
    later["inputs"]["files"]["runs/extra.jsonl"] = {"sha256": "c" * 64, "rows": 3}
    later["inputs"]["sha256"] = "d" * 64
    primary = later["primary"]
    primary.update(difference=primary["difference"] - 0.01, low=primary["low"] - 0.01,
                   high=primary["high"] - 0.01)
    return later


def test_the_changes_name_the_inputs_the_interval_and_the_files():
    readout = {**build_specimen_readout(), "version": 1}
    found = readout_changes(readout, {**moved(readout), "version": 2})
    whats = [change.what for change in found.changes]
    assert found.previous_version == 1 and found.inputs_changed
    assert "interval" in whats and "inputs" in whats and "design" not in whats
    assert "file runs/extra.jsonl" in whats
    extra = next(change for change in found.changes if change.what == "file runs/extra.jsonl")
    assert extra.before is None and extra.after == "c" * 64
    assert readout_changes(readout, readout).changes == ()


def test_a_new_version_links_to_the_one_before_and_says_what_differs(tmp_path):
    reports = tmp_path / "reports"
    readout = build_specimen_readout()
    first = publish_readout(reports, readout, created_at=CREATED_AT, render_html=render_report)
    page_one = open(first.report_path, encoding="utf-8").read()
    assert 'id="changes"' not in page_one  # nothing before v1
    second = publish_readout(reports, moved(readout), created_at=CREATED_AT,
                             render_html=render_report)
    assert second.version == 2
    page = open(second.report_path, encoding="utf-8").read()
    assert '<a href="../v1/index.html" id="previous-version">version 1</a>' in page
    assert "read out from other inputs than v1" in page
    assert f'<code title="{"d" * 64}">{"d" * 12}</code>' in page
    assert "file runs/extra.jsonl" in page and "absent" in page
    # The readout itself is unchanged by this: the comparison lives on the page only.
    assert "changes" not in json.loads(open(second.readout_path).read())
    # Rendering stays a pure function: the same pair renders the same bytes.
    assert render_report({**moved(readout), "version": 2}, CREATED_AT,
                         previous=json.loads(open(first.readout_path).read())) == page


def test_a_refusal_after_a_readout_says_the_answer_went_and_why(tmp_path):
    reports = tmp_path / "reports"
    readout = build_specimen_readout()
    publish_readout(reports, readout, created_at=CREATED_AT, render_html=render_report)
    refused = {key: value for key, value in moved(readout).items()
               if key not in ("primary", "gate")}
    refused["refused"] = {"check": "judge_has_not_drifted", "sentence": "The judge drifted.",
                          "reasons": ["judge_has_not_drifted: The judge drifted."]}
    second = publish_readout(reports, refused, created_at=CREATED_AT, render_html=render_report)
    page = open(second.report_path, encoding="utf-8").read()
    assert 'id="refusal-check"' in page and '<a href="../v1/index.html"' in page
    assert "REFUSED by judge_has_not_drifted" in page

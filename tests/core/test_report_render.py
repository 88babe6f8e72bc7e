"""The readout page: golden file, wording, escaping, self-containment, determinism.

The golden file is the specimen readout (tests/core/test_report_specimen.py, stored frozen
in tests/reference/golden/) rendered at a fixed creation time. After an intended change to
the report, regenerate both files and review the diff of the HTML:

    LANGCHEF_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/core/test_report_render.py
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from datetime import datetime, timedelta, timezone
from html import unescape
from html.parser import HTMLParser

import jinja2
import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.report import build_report_view, render, render_report, template_sha256
from langchef_core.report.filters import MINUS
from tests.core.test_report_specimen import (FROZEN_READOUT, GOLDEN, build_specimen_readout,
                                             frozen_specimen)

CREATED_AT = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
GOLDEN_HTML = GOLDEN / "specimen_report.html"
REGRESSION = GOLDEN / "regression_readout.json"
UPDATE = os.environ.get("LANGCHEF_UPDATE_GOLDEN") == "1"


def regression_readout() -> dict:
    """The lead's example: stale-index, −20 points, 18 broke, no optional sections."""
    return json.loads(REGRESSION.read_text(encoding="utf-8"))


class Page(HTMLParser):
    """Tags, attributes and the text of every element id, from a rendered page."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed",
            "source", "track", "wbr", "line", "circle", "rect", "path"}

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.texts, self.stack, self.all_text = [], {}, [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(dict(attrs).get("id"))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        self.all_text.append(data)
        for element_id in self.stack:
            if element_id:
                self.texts[element_id] = self.texts.get(element_id, "") + data

    def text(self, element_id: str) -> str:
        return " ".join(self.texts.get(element_id, "").split())

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.tags if attrs.get("id")}


def section(html: str, element_id: str) -> str:
    """The markup of one top-level <section id=...> of the report."""
    match = re.search(rf'<section id="{element_id}"[^>]*>(.*?)</section>', html, re.S)
    assert match, f"no section {element_id!r}"
    return match.group(1)


# ── the golden file ─────────────────────────────────────────────────────────────────────

def test_the_specimen_renders_exactly_as_the_golden_file():
    if UPDATE:
        fresh = {**build_specimen_readout(), "version": 1}
        FROZEN_READOUT.write_text(json.dumps(fresh, indent=2, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
        GOLDEN_HTML.write_text(render_report(fresh, CREATED_AT), encoding="utf-8")
    html = render_report(frozen_specimen(), CREATED_AT)
    expected = GOLDEN_HTML.read_text(encoding="utf-8")
    if html != expected:
        pairs = zip(html.splitlines(), expected.splitlines())
        line = next((number for number, (got, want) in enumerate(pairs, 1) if got != want), "end")
        pytest.fail(f"the rendered specimen differs from {GOLDEN_HTML.name} from line {line} on; "
                    "if the change is intended, regenerate with LANGCHEF_UPDATE_GOLDEN=1 and "
                    "review the diff")


def test_rendering_is_byte_identical_and_ignores_the_order_of_mapping_keys():
    readout = frozen_specimen()

    def reversed_keys(value):
        if isinstance(value, dict):
            return {key: reversed_keys(value[key]) for key in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(item) for item in value]
        return value

    first = render_report(readout, CREATED_AT)
    assert render_report(copy.deepcopy(readout), CREATED_AT) == first
    assert render_report(reversed_keys(readout), CREATED_AT) == first


def test_the_creation_time_is_passed_in_and_must_carry_a_time_zone():
    readout = frozen_specimen()
    later = render_report(readout, CREATED_AT + timedelta(days=1))
    assert "2026-11-03 10:00:00 UTC" in later and "2026-11-02 10:00:00 UTC" not in later
    # the same instant in another zone is the same page
    shifted = CREATED_AT.astimezone(timezone(timedelta(hours=2)))
    assert render_report(readout, shifted) == render_report(readout, CREATED_AT)
    with pytest.raises(ValueError, match="timezone-aware"):
        render_report(readout, datetime(2026, 11, 2, 10, 0))


# ── content in reading order ────────────────────────────────────────────────────────────

def test_the_verdict_sentence_of_the_regression_example():
    html = render_report(regression_readout(), CREATED_AT)
    page = Page(html)
    assert page.text("verdict-sentence") == (
        # Tango interval of 18 broke / 0 fixed of 90 (issue 12; the bootstrap gave −28.9 to −12.2)
        f"Regression: {MINUS}20.0 points, 95% interval {MINUS}29.4 to {MINUS}13.0; "
        "18 goldens broke, none fixed.")
    assert page.text("verdict-word") == "REGRESSION"
    assert "16.0 points" in page.text("detection-limit")
    assert "Inconclusive does not mean" not in html  # only an inconclusive run says so


def test_an_inconclusive_verdict_always_states_what_the_run_could_have_seen():
    page = Page(render_report(frozen_specimen(), CREATED_AT))
    # Issue 15: a non-inferiority design answers its own question first (at the margin),
    # and the reading against zero second.
    assert page.text("verdict-word") == "UNRESOLVED"
    assert page.text("verdict-sentence").startswith(
        f"Unresolved at {MINUS}5.0 points: {MINUS}5.0 points, 95% interval")
    assert page.text("against-zero").startswith(
        "Read against zero (superiority, not the question this design asked): "
        f"Inconclusive: {MINUS}5.0 points, 95% interval")
    limit = page.text("detection-limit")
    assert limit.startswith("The smallest effect this run could have seen is 11.0 points")
    assert "does not mean “no difference”" in limit


def test_sections_appear_in_reading_order():
    html = render_report(frozen_specimen(), CREATED_AT)
    order = ["verdict", "noninferiority", "paired", "attribution", "retrieval", "slices",
             "guardrails", "judge", "goldens", "design", "provenance", "warnings", "limits"]
    positions = [html.index(f'id="{name}"') for name in order]
    assert positions == sorted(positions)


def test_a_breached_guardrail_is_said_before_the_verdict():
    readout = frozen_specimen()
    readout["guardrails"] = [{"name": "protected slice segment=new", "kind": "slice", "breached": True,
                              "status": "breached", "sentence": "protected slice 'new' regressed"}]
    html = render_report(readout, CREATED_AT)
    assert html.index('id="breaches"') < html.index('id="verdict"')
    assert "protected slice &#39;new&#39; regressed" in html
    assert 'id="breaches"' not in render_report(regression_readout(), CREATED_AT)


def test_optional_sections_appear_only_when_the_readout_carries_them():
    html = render_report(regression_readout(), CREATED_AT)
    ids = Page(html).ids()
    assert {"verdict", "paired", "attribution", "forest-primary", "judge", "goldens",
            "broke-list", "fixed-list", "design", "provenance", "warnings", "limits"} <= ids
    absent = {"noninferiority", "retrieval", "classification", "slices", "guardrails", "seeds",
              "forest-retrieval", "forest-slices"}
    assert not absent & ids
    assert "No anchor set was re-judged" in html
    specimen_ids = Page(render_report(frozen_specimen(), CREATED_AT)).ids()
    assert {"noninferiority", "retrieval", "slices", "guardrails", "forest-retrieval",
            "forest-slices"} <= specimen_ids


def test_noninferiority_names_its_outcome_and_explains_all_three():
    readout = frozen_specimen()
    for outcome, word in (("unresolved", "Unresolved"), ("held", "Held"), ("failed", "Failed")):
        readout["primary"]["noninferiority"] = outcome
        block = section(render_report(readout, CREATED_AT), "noninferiority")
        assert re.search(rf'<li class="current"><b>{word}</b> \(this run\)', block)
        assert block.count("<li") == 3 and "5.0 points" in block
    assert "This is not a pass" in block


def test_the_paired_table_counts_each_golden_once():
    block = section(render_report(frozen_specimen(), CREATED_AT), "paired")
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", block)
    # both pass, broke, row total / fixed, both fail, row total / column totals
    assert cells == ["86", "10 broke", "96", "4 fixed", "20", "24", "90", "30", "120"]


def test_criteria_are_attributions_and_never_called_regressions():
    html = render_report(frozen_specimen(), CREATED_AT)
    block = section(html, "attribution")
    rows = re.findall(r"<tr>(.*?)</tr>", block.split("<tbody>")[1], re.S)
    criteria = {re.search(r'<th scope="row">(\w+)', row).group(1):
                unescape(re.sub("<[^>]+>", " ", row)) for row in rows}
    assert "moved worse" in criteria["Groundedness"]
    assert "inconclusive" in criteria["Correctness"] and "inconclusive" in criteria["Directness"]
    for text in criteria.values():
        assert not re.search("regression|improvement", text, re.I)
    svg_rows = re.findall(r'<g class="row row-secondary[^"]*">(.*?)</g>', block, re.S)
    assert len(svg_rows) == 3
    for row in svg_rows:
        assert not re.search("regression|improvement", row, re.I)
    assert "not 3 separate findings" in block and "Holm-corrected" in block
    assert "not simultaneous" in block and "α/3 = 0.0167" in block


def test_the_forest_chart_is_an_accessible_inline_svg_with_the_primary_first():
    html = render_report(frozen_specimen(), CREATED_AT)
    svg = re.search(r'<svg class="forest" id="forest-primary"(.*?)</svg>', html, re.S).group(0)
    assert 'role="img"' in svg and '<title id="forest-primary-title">' in svg
    labels = re.findall(r'<text class="row-label"[^>]*>([^<]*)</text>', svg)
    assert labels == ["pass rate (primary)", "Correctness", "Groundedness", "Directness"]
    coordinates = re.findall(r'(?:x|y|x1|x2|y1|y2|cx|cy|width)="(-?[0-9.]+)"', svg)
    assert coordinates and all(re.fullmatch(r"-?\d+(\.\d)?", value) for value in coordinates)


def test_retrieval_shows_coverage_chance_and_label_sources():
    block = section(render_report(frozen_specimen(), CREATED_AT), "retrieval")
    assert "zero_positive: exclude" in block and "sampled" in block
    assert "<th scope=\"col\" class=\"num\">chance</th>" in block
    assert block.count("<th scope=\"row\">recall@10</th>") == 3  # human, click, all
    assert "Coverage" in block and "different things" in block  # the label-mix note


def test_judge_identity_and_anchor_status():
    block = section(render_report(frozen_specimen(), CREATED_AT), "judge")
    assert "rubric:5f1c0ffee123" in block and "kitchen-anchors" in block
    # κ interval: smoothed percentile bootstrap since issue 12 (the Wald interval, 0.57 to
    # 0.96, undercovers at a few dozen anchors).
    assert "0.76 (0.50 to 0.91)" in block and "no significant drift" in block
    assert "became wrong on 3 anchors" in block


def test_the_design_as_approved_and_the_fingerprints():
    readout = frozen_specimen()
    html = render_report(readout, CREATED_AT)
    design = section(html, "design")
    assert readout["design"]["sha256"] in design and "Ada Reviewer" in design
    assert "2026-10-28 14:05:00 UTC" in design and "5.0 points" in design
    assert "2000 resamples, seed 11" in design
    provenance = section(html, "provenance")
    assert readout["inputs"]["sha256"] in provenance
    for path, entry in readout["inputs"]["files"].items():
        assert path in provenance and entry["sha256"] in provenance
    assert "0.1.0" in provenance


def test_every_warning_code_has_a_plain_title():
    readout = regression_readout()
    codes = ["underpowered", "repeated_look", "traffic_unverified", "label_source_mix",
             "exploratory_slices", "something_new"]
    readout["warnings"] = [{"code": code, "sentence": f"note about {code}"} for code in codes]
    block = section(render_report(readout, CREATED_AT), "warnings")
    titles = re.findall(r"<li><b>([^<]+)</b>", block)
    assert titles == ["Underpowered design", "Repeated look at the same experiment",
                      "Traffic time could not be verified", "Retrieval labels from several sources",
                      "Exploratory slices", "Something new"]
    assert "Note about underpowered." in block


def test_the_footer_states_what_the_readout_cannot_tell():
    text = Page(render_report(frozen_specimen(), CREATED_AT)).text("limits")
    assert "It is one look." in text and "It compares two arms." in text
    assert "not simultaneous" in text


def test_a_continuous_primary_reads_in_its_own_unit():
    rng = np.random.default_rng(3)
    baseline = rng.uniform(0.3, 0.9, 60)
    primary = lc.compare_continuous(baseline, baseline - 0.05 + rng.normal(0, 0.02, 60),
                                    resamples=2000).to_dict()
    readout = regression_readout()
    readout.update(primary={"metric": "ndcg", **primary}, criteria=[], unattributed=None,
                   broke=[], fixed=[])
    html = render_report(readout, CREATED_AT)
    sentence = Page(html).text("verdict-sentence")
    assert re.fullmatch(rf"Regression: {MINUS}0\.0\d\d in mean ndcg, 95% interval "
                        rf"{MINUS}0\.\d{{3}} to {MINUS}0\.\d{{3}}, over 60 queries\.",
                        sentence), sentence
    # nothing flips on a score: no paired table and no list of changed goldens
    assert 'id="paired"' not in html and 'id="goldens"' not in html


# ── escaping and self-containment ───────────────────────────────────────────────────────

HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', "{{ 7*7 }}",
           "{% raw %}x", "'; DROP TABLE goldens; --", "</style><b>bold</b>"]


def hostile_readout() -> dict:
    readout = frozen_specimen()
    readout["experiment"] = HOSTILE[0]
    readout["hypothesis"] = HOSTILE[1]
    readout["design"]["approved_by"] = HOSTILE[5]
    readout["criteria"][0]["criterion"] = HOSTILE[1]
    readout["criteria"][1]["criterion"] = HOSTILE[0] * 3  # long: shortened inside the chart
    readout["broke"][0].update(input=HOSTILE[0], baseline_output=HOSTILE[1],
                               variant_output=HOSTILE[2], ideal=HOSTILE[3],
                               variant_criterion=HOSTILE[4])
    readout["fixed"][0].update(input=HOSTILE[2], example_id=HOSTILE[1])
    readout["warnings"][0]["sentence"] = HOSTILE[0]
    readout["judge"]["settings"] = {"prompt": HOSTILE[1]}
    return readout


def test_hostile_strings_appear_as_text_and_never_as_markup():
    html = render_report(hostile_readout(), CREATED_AT)
    page, plain = Page(html), Page(render_report(frozen_specimen(), CREATED_AT))
    tags = sorted(tag for tag, _ in page.tags)
    assert tags == sorted(tag for tag, _ in plain.tags)  # not one element more than usual
    assert "script" not in tags and "img" not in tags
    assert all(not name.startswith("on") for _, attrs in page.tags for name in attrs)
    text = "".join(page.all_text)
    for hostile in HOSTILE:
        assert hostile in text, hostile  # shown verbatim to the reader, templates unevaluated
    assert "&lt;script&gt;" in html and "<script" not in html
    assert "&#34;&gt;&lt;img" in html


def test_the_page_needs_no_network_and_runs_no_script():
    html = render_report(frozen_specimen(), CREATED_AT)
    page = Page(html)
    tags = {tag for tag, _ in page.tags}
    assert not {"script", "link", "img", "iframe", "object", "embed"} & tags
    assert "default-src 'none'" in html  # the Content-Security-Policy forbids every fetch
    for tag, attrs in page.tags:
        assert "src" not in attrs
        href = attrs.get("href")
        if href is not None:
            assert href.startswith("#") or href in ("readout.json", "../../index.html"), href
    assert re.findall(r"https?://[^\"'\s)]+", html) == ["http://www.w3.org/2000/svg"] * 3
    assert ":root" in section_style(html)  # the stylesheet is inlined


def section_style(html: str) -> str:
    return re.search(r"<style>(.*?)</style>", html, re.S).group(1)


# ── the Jinja setup and the template hash ───────────────────────────────────────────────

def test_the_environment_escapes_and_refuses_undefined_fields():
    env = render.environment()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ view.missing_field }}").render(view=build_report_view(
            frozen_specimen(), CREATED_AT))


def test_a_readout_missing_a_required_field_is_refused_by_name():
    readout = frozen_specimen()
    del readout["primary"]["low"]
    with pytest.raises(ValueError, match=r"primary\.low is missing"):
        render_report(readout, CREATED_AT)
    readout = frozen_specimen()
    readout["criteria"][0]["direction"] = "regression"
    with pytest.raises(ValueError, match="direction must be one of"):
        render_report(readout, CREATED_AT)


def test_template_hash_covers_every_template_file(tmp_path, monkeypatch):
    original = template_sha256()
    assert re.fullmatch("[0-9a-f]{64}", original) and template_sha256() == original
    copy_of_templates = tmp_path / "templates"
    shutil.copytree(render.templates_folder(), copy_of_templates)
    monkeypatch.setattr(render, "templates_folder", lambda: copy_of_templates)
    assert template_sha256() == original
    css = copy_of_templates / "report.css"
    css.write_text(css.read_text(encoding="utf-8") + "\n/* changed */\n", encoding="utf-8")
    changed = template_sha256()
    assert changed != original
    (copy_of_templates / "report.css").rename(copy_of_templates / "report2.css")
    assert template_sha256() not in (original, changed)  # a renamed file changes it too


def test_classification_seeds_and_a_thin_retrieval_section_render_from_the_real_functions():
    rng = np.random.default_rng(5)
    ideal = rng.choice(["positive", "negative", "neutral"], 80)
    baseline = np.where(rng.random(80) < 0.8, ideal, "neutral")
    variant = np.where(rng.random(80) < 0.7, ideal, "negative")
    classification = lc.compare_classification(ideal, baseline, variant, resamples=2000)
    outcomes = (rng.random((3, 80)) < [[0.7], [0.75], [0.72]])
    seeds = lc.compare_seeds({"incumbent": outcomes[0]},
                             {"tuned@seed1": outcomes[1], "tuned@seed2": outcomes[2]},
                             resamples=2000)
    runs = {arm: pd.DataFrame([("q1", "d1", 1), ("q1", "d2", 2), ("q2", "d3", 1),
                               ("q3", "d4", 1)], columns=["query_id", "doc_id", "rank"])
            for arm in ("baseline", "variant")}
    qrels = pd.DataFrame([("q1", "d1", 1), ("q2", "d9", 0), ("q3", "d8", 0)],
                         columns=["query_id", "doc_id", "relevant"])
    retrieval = lc.compare_retrieval(runs["baseline"], runs["variant"], qrels,
                                     settings=lc.RetrievalSettings(k=5, metrics=("recall",),
                                                                   zero_positive="separate"),
                                     resamples=1000)
    readout = regression_readout()
    readout.update(classification=classification.to_dict(), seeds=seeds.to_dict(),
                   retrieval=retrieval.to_dict())
    html = render_report(readout, CREATED_AT)
    block = section(html, "classification")
    assert "Accuracy" in block and "<th scope=\"row\">positive</th>" in block
    assert "case folding" in block  # the label normalisation is stated
    block = section(html, "seeds")
    assert "<code>tuned@seed2</code>" in block and "<code>incumbent</code>" in block
    assert "between seeds" in block
    block = section(html, "retrieval")
    assert "only 1 scored query" in block  # a skipped comparison says why
    assert "reported on their own below" in block and "Queries without a positive label" in block
    assert 'id="forest-retrieval"' not in html  # nothing was compared, so nothing is drawn
    # an accuracy design: the comparison is the primary, the section keeps the per-class counts
    readout["classification"] = {key: value for key, value in classification.to_dict().items()
                                 if key != "comparison"}
    block = section(render_report(readout, CREATED_AT), "classification")
    assert "Accuracy is the primary comparison above" in block
    assert "<th scope=\"row\">neutral</th>" in block


def test_a_clustered_comparison_says_it_resampled_clusters():
    rng = np.random.default_rng(9)
    users = np.repeat(np.arange(30), 4)
    baseline = rng.random(120) < 0.8
    variant = baseline & (rng.random(120) < 0.9)
    primary = lc.compare_binary(baseline, variant, clusters=users, resamples=2000).to_dict()
    readout = regression_readout()
    readout["primary"] = {"metric": "pass_rate", **primary}
    html = render_report(readout, CREATED_AT)
    assert (f"<dt>Resampled by cluster</dt><dd>30 clusters, design effect "
            f"{primary['design_effect']:.2f}</dd>") in section(html, "verdict")
    assert "Resampled by cluster" not in render_report(regression_readout(), CREATED_AT)


def test_guardrails_read_protected_slices_in_points_and_costs_in_percent():
    block = section(render_report(frozen_specimen(), CREATED_AT), "guardrails")
    rows = re.findall(r'<tr><th scope="row">(.*?)</tr>', block, re.S)
    slice_row = next(row for row in rows if row.startswith("protected slice task=safety"))
    # The rule and the observed p in separate columns (issue 15).
    assert f"{MINUS}4.2" in slice_row and "whole interval below 0 and Holm p below 0.05" in slice_row
    assert '<td class="num">1.000</td>' in slice_row
    cost_row = next(row for row in rows if row.startswith("p95 latency_ms"))
    assert f"{MINUS}10.0%" in cost_row and "+10.0%" in cost_row and ">held<" in cost_row


def test_the_interval_method_and_a_missing_minimum_evidence_are_shown():
    # Issue 12: the page names the interval the verdict is read from, and says why no
    # direction was read when the exact gate (or another minimum) blocked it.
    readout = copy.deepcopy(regression_readout())
    html = render_report(readout, CREATED_AT)
    assert "The verdict comes from the interval (Tango score interval)" in html
    assert 'id="minimum-evidence"' not in html
    readout["primary"].update(verdict="inconclusive", evidence="5 broke and 0 fixed: the exact "
                              "McNemar p = 0.0625 is not below 0.05")
    page = Page(render_report(readout, CREATED_AT))
    assert page.text("minimum-evidence").startswith("No direction is read: 5 broke and 0 fixed")
    assert "with at least 80% power" in page.text("detection-limit")

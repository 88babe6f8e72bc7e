"""A real browser opens a published readout from disk.

Headless Chromium (the Debian package ``chromium``, installed by ``.ci/run``) is driven by
Playwright through ``executable_path``; Playwright's own browser download is never used.
The report under test is built from the real comparison functions on synthetic data
(``build_specimen_readout``) and published with ``publish_readout`` into a temporary
reports folder. The browser must find the verdict sentence, the forest chart and the
broke/fixed lists, log no console error, and request nothing but the file itself.
Screenshots (wide, narrow) and a PDF print go to ``tests/artifacts/`` (git-ignored).

The same checks then run on demo reports read out through the Dagster pipeline (or, with
``LANGCHEF_REPORTS_UNDER_TEST=/path/to/reports``, on every version in that folder).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pytest

from langchef_core.readout.publish import publish_readout
from langchef_core.report import render_report, template_sha256, verdict_sentence, write_index
from tests.core.test_report_specimen import build_specimen_readout

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path(os.environ.get("LANGCHEF_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CREATED_AT = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
# A non-inferiority design answers first "Held at −5.0 points: …" (issue 15).
VERDICT = re.compile(r"^((Regression|Improvement|Inconclusive): [+\u2212]?\d|"
                     r"(Held|Failed|Unresolved) at \u2212\d)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not CHROMIUM.exists():
        message = (f"headless Chromium is not installed at {CHROMIUM}; install the Debian package "
                   "(apt-get install -y chromium) or set LANGCHEF_CHROMIUM")
        if os.environ.get("CI"):
            pytest.fail(message)  # .ci/run installs it: its absence in CI is a broken setup
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data dir
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1100, "height": 900}, offline=True)
        try:
            yield context
        finally:
            context.close()


@dataclass
class Visit:
    page: object
    url: str
    console_errors: list = field(default_factory=list)
    requests: list = field(default_factory=list)


def visit(context, path: Path) -> Visit:
    """Open a file in a fresh tab, recording console errors and every request."""
    page = context.new_page()
    seen = Visit(page=page, url=path.resolve().as_uri())
    page.on("console", lambda message: seen.console_errors.append(message.text)
            if message.type == "error" else None)
    page.on("pageerror", lambda error: seen.console_errors.append(str(error)))
    page.on("request", lambda request: seen.requests.append(request.url))
    page.goto(seen.url, wait_until="load")
    return seen


def check_report(context, path: Path) -> Visit:
    """The checks every published report must pass; returns the open page for more."""
    seen = visit(context, path)
    page = seen.page
    sentence = page.locator("#verdict-sentence")
    assert sentence.is_visible() and VERDICT.match(sentence.inner_text()), sentence.inner_text()
    forest = page.locator("svg#forest-primary")
    assert forest.is_visible() and forest.get_attribute("role") == "img"
    box = forest.bounding_box()
    assert box["width"] > 300 and box["height"] > 80
    assert forest.locator("g.row-primary").count() == 1
    if page.locator("#paired").count():  # a pass/fail primary lists the goldens that flipped
        for list_id in ("broke-list", "fixed-list"):
            assert page.locator(f"details#{list_id} > summary").is_visible()
    assert seen.console_errors == []
    assert seen.requests == [seen.url]  # the page itself, nothing else
    return seen


def test_a_published_report_reads_offline_in_a_real_browser(browser, tmp_path):
    readout = build_specimen_readout()
    reports = tmp_path / "reports"
    published = publish_readout(reports, readout, created_at=CREATED_AT, render_html=render_report,
                                manifest={"template_sha256": template_sha256()})
    write_index(reports, CREATED_AT)

    seen = check_report(browser, Path(published.report_path))
    page = seen.page
    assert page.locator("#verdict-sentence").inner_text() == verdict_sentence(
        readout["primary"], kind=readout["design"]["kind"])
    # The specimen is a non-inferiority design: its answer at the margin leads.
    assert page.locator("#verdict-word").inner_text() == "UNRESOLVED"
    assert page.locator("#detection-limit").inner_text().startswith(
        "The smallest effect this run could have seen is")
    rows = page.locator("svg#forest-primary g.row")
    assert rows.count() == 1 + len(readout["criteria"])
    assert rows.nth(0).locator("text.row-label").text_content() == "pass rate (primary)"

    broke = page.locator("details#broke-list")
    items = broke.locator("details.golden")
    assert broke.get_attribute("open") is not None and items.count() == len(readout["broke"])
    assert page.locator("details#fixed-list details.golden").count() == len(readout["fixed"])
    first = items.first
    output = first.locator("pre").nth(2)
    assert not output.is_visible()  # collapsed until asked for
    first.locator("summary").click()
    assert output.is_visible() and output.inner_text() == readout["broke"][0]["baseline_output"]

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "browser-report.png"), full_page=True)

    page.set_viewport_size({"width": 375, "height": 800})
    page.evaluate("window.scrollTo(0, 0)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scroll
    assert page.locator("svg#forest-primary").bounding_box()["width"] <= 375
    page.screenshot(path=str(ARTIFACTS / "browser-report-narrow.png"), full_page=False)

    page.emulate_media(media="print")
    hidden_on_screen = page.locator("details#fixed-list details.golden pre").first
    assert hidden_on_screen.is_visible()  # print opens every collapsed golden
    page.pdf(path=str(ARTIFACTS / "browser-report.pdf"), format="A4", print_background=True)
    assert seen.console_errors == [] and seen.requests == [seen.url]


def test_the_index_links_to_each_version_and_to_latest(browser, tmp_path):
    reports = tmp_path / "reports"
    readout = json.loads((Path(__file__).resolve().parents[1] / "reference" / "golden" /
                          "regression_readout.json").read_text(encoding="utf-8"))
    publish_readout(reports, readout, created_at=CREATED_AT, render_html=render_report)
    index = write_index(reports, CREATED_AT)
    seen = visit(browser, index)
    page = seen.page
    page.locator("a", has_text="Latest readout").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/stale-index/latest/index.html")
    assert page.locator("#verdict-word").inner_text() == "REGRESSION"
    page.go_back()
    page.locator("a", has_text="v1").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/stale-index/v1/index.html")
    assert seen.console_errors == []
    assert all(url.startswith("file://") for url in seen.requests)


def test_demo_readouts_pass_the_same_checks(browser, tmp_path):
    """The demo's own reports, read out through the Dagster pipeline (or, with
    ``LANGCHEF_REPORTS_UNDER_TEST``, every page of an existing reports folder)."""
    root = os.environ.get("LANGCHEF_REPORTS_UNDER_TEST")
    if not root:
        from langchef_core.demo import build_demo_workspace
        from langchef_core.inputs.workspace import Workspace
        from langchef_pipeline.materialize import readout_experiment
        build_demo_workspace(tmp_path / "demo")
        workspace = Workspace.at(tmp_path / "demo")
        for experiment in ("eager-hedging", "friendly-tone"):
            readout_experiment(workspace, experiment)
        root = workspace.reports
    # A refused readout has a page but no verdict (test_browser_demo_pages checks it).
    pages = [path for path in sorted(Path(root).glob("*/v*/index.html"))
             if "refused" not in json.loads((path.parent / "readout.json").read_text("utf-8"))]
    assert pages, f"no published report under {root}"
    for path in pages:
        check_report(browser, path).page.close()

"""Versioned report folders and reports/index.html: links, order, dedupe, atomic writes, paths."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from langchef_core.inputs.errors import InputError
from langchef_core.readout.publish import publish_readout
from langchef_core.report import (experiment_folder, read_listings, render_index, render_report,
                                  template_sha256, write_index)
from langchef_core.report import index as index_module
from langchef_core.report.filters import MINUS
from tests.core.test_report_render import CREATED_AT, regression_readout
from tests.core.test_report_specimen import frozen_specimen

BAD_NAMES = ["../escape", "..", "a/b", "a\\b", "/abs", "x/../../y", "", ".hidden", "a b"]


def publish(root: Path, readout: dict, when: datetime):
    return publish_readout(root, {**readout, "version": None}, created_at=when,
                           render_html=render_report,
                           manifest={"template_sha256": template_sha256()})


def three_versions(root: Path):
    """stale-index v1 and v2 (a new look with changed inputs), cheaper-generator v1."""
    first = regression_readout()
    publish(root, first, CREATED_AT)
    second = regression_readout()
    second["inputs"]["sha256"] = "34" * 32
    second["primary"].update(verdict="inconclusive", difference=-0.05, low=-0.1, high=0.01,
                             broke=6, fixed=1)
    publish(root, second, CREATED_AT + timedelta(days=2))
    publish(root, frozen_specimen(), CREATED_AT + timedelta(days=1))


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


def test_the_index_lists_every_experiment_and_version_newest_first(tmp_path):
    three_versions(tmp_path)
    page = write_index(tmp_path, CREATED_AT + timedelta(days=3))
    assert page == tmp_path / "index.html"
    html = page.read_text(encoding="utf-8")
    assert html.index("cheaper-generator") < html.index("stale-index")  # by name
    newer, older = 'href="stale-index/v2/index.html"', 'href="stale-index/v1/index.html"'
    assert html.index(newer) < html.index(older)
    assert "2 experiments, 3 published versions" in html
    assert "2026-11-04 10:00:00 UTC" in html and "2026-11-02 10:00:00 UTC" in html  # manifest dates
    # Tango interval of the regression example (issue 12; the bootstrap gave −28.9 to −12.2)
    assert (f"REGRESSION</span> Regression: {MINUS}20.0 points, 95% interval {MINUS}29.4 to "
            f"{MINUS}13.0; 18 goldens broke, none fixed.") in html
    assert "INCONCLUSIVE</span> Inconclusive:" in html
    assert "did not pass" in html and "passed" in html


def test_every_link_of_the_index_is_relative_and_resolves(tmp_path):
    three_versions(tmp_path)
    html = write_index(tmp_path, CREATED_AT).read_text(encoding="utf-8")
    links = hrefs(html)
    assert len(links) == 5  # three versions and two "latest"
    for link in links:
        assert not link.startswith(("/", "http", "file:")) and ".." not in link
        assert (tmp_path / link).is_file(), link
    latest = (tmp_path / "stale-index" / "latest" / "index.html").read_text(encoding="utf-8")
    assert latest == (tmp_path / "stale-index" / "v2" / "index.html").read_text(encoding="utf-8")
    # a report links back to the index through the same relative path from vN/ and latest/
    assert (tmp_path / "stale-index" / "latest" / "../../index.html").resolve() == \
        (tmp_path / "index.html").resolve()


def test_identical_inputs_publish_no_new_version_and_the_same_bytes(tmp_path):
    root, other = tmp_path / "a", tmp_path / "b"
    first = publish(root, regression_readout(), CREATED_AT)
    again = publish(root, regression_readout(), CREATED_AT + timedelta(hours=5))
    assert first.new and not again.new and again.version == first.version == 1
    assert [len(listing.versions) for listing in read_listings(root)] == [1]
    replay = publish(other, regression_readout(), CREATED_AT)  # same inputs, another machine
    for name in ("readout.json", "index.html", "manifest.json"):
        assert (Path(replay.folder) / name).read_bytes() == (Path(first.folder) / name).read_bytes()
    manifest = json.loads((Path(first.folder) / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["template_sha256"] == template_sha256()


def test_the_index_is_replaced_atomically(tmp_path, monkeypatch):
    publish(tmp_path, regression_readout(), CREATED_AT)
    page = write_index(tmp_path, CREATED_AT)
    before = page.read_bytes()
    assert oct(page.stat().st_mode & 0o777) == "0o644"

    def failing_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(index_module.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_index(tmp_path, CREATED_AT + timedelta(days=1))
    assert page.read_bytes() == before  # readers still see the previous index whole
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".index-")]


def test_rendering_the_index_is_deterministic_and_an_empty_folder_says_so(tmp_path):
    assert "No readout has been published yet." in render_index(tmp_path / "none", CREATED_AT)
    three_versions(tmp_path)
    assert render_index(tmp_path, CREATED_AT) == render_index(tmp_path, CREATED_AT)
    with pytest.raises(ValueError, match="timezone-aware"):
        render_index(tmp_path, datetime(2026, 11, 2))


@pytest.mark.parametrize("name", BAD_NAMES)
def test_experiment_names_that_could_leave_the_reports_folder_are_refused(tmp_path, name):
    readout = {**regression_readout(), "experiment": name}
    with pytest.raises(InputError, match="is not allowed"):
        publish(tmp_path, readout, CREATED_AT)
    with pytest.raises(InputError, match="is not allowed"):
        experiment_folder(tmp_path, name)
    assert not any(tmp_path.iterdir())  # nothing was written anywhere
    assert not (tmp_path.parent / "escape").exists()


def test_a_linked_experiment_folder_pointing_elsewhere_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "reports"
    root.mkdir()
    os.symlink(outside, root / "sneaky", target_is_directory=True)
    with pytest.raises(InputError, match="resolves outside the reports folder"):
        experiment_folder(root, "sneaky")
    assert read_listings(root) == []  # a link is not listed as an experiment


def test_folders_that_are_not_experiments_are_left_out(tmp_path):
    publish(tmp_path, regression_readout(), CREATED_AT)
    (tmp_path / ".staging-abc").mkdir()
    (tmp_path / "not an experiment").mkdir()
    (tmp_path / "assets").mkdir()  # a valid name without versions
    (tmp_path / "stale-index" / "v9-draft").mkdir()
    assert [listing.experiment for listing in read_listings(tmp_path)] == ["stale-index"]
    assert [entry.version for entry in read_listings(tmp_path)[0].versions] == [1]


def test_a_broken_version_folder_is_marked_damaged_and_named(tmp_path):
    published = publish(tmp_path, regression_readout(), CREATED_AT)
    manifest = Path(published.folder) / "manifest.json"
    manifest.unlink()

    def damaged_sentence():
        html = render_index(tmp_path, CREATED_AT)
        [entry] = read_listings(tmp_path)[0].versions
        assert entry.verdict == "damaged" and "DAMAGED" in html
        return entry.sentence

    assert re.search(r"manifest\.json: missing from a published version", damaged_sentence())
    manifest.write_text("{not json", encoding="utf-8")
    assert re.search(r"manifest\.json: not valid JSON", damaged_sentence())
    manifest.write_text("{}", encoding="utf-8")
    readout = Path(published.readout_path)
    moved = json.loads(readout.read_text(encoding="utf-8"))
    readout.write_text(json.dumps({**moved, "experiment": "other"}), encoding="utf-8")
    assert "sits in the folder of 'stale-index'" in damaged_sentence()


def test_a_version_edited_after_publishing_is_marked_damaged(tmp_path):
    published = publish(tmp_path, regression_readout(), CREATED_AT)
    readout = Path(published.readout_path)
    readout.write_text(readout.read_text(encoding="utf-8").replace('"regression"', '"improvement"', 1),
                       encoding="utf-8")
    [entry] = read_listings(tmp_path)[0].versions
    assert entry.verdict == "damaged"
    assert "does not match the SHA-256 its manifest.json records" in entry.sentence

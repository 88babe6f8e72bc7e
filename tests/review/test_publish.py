"""`langchef publish --to DEST`: the reports as a static site in a folder and in an S3 bucket
(moto's S3 API on 127.0.0.1). Versions are immutable (re-publishing identical reports writes
nothing; a version changed in DEST is refused before anything is written), the site manifest
holds every file's hash, and ``latest`` is a copy one folder beside its version. That every
link of the published site resolves is checked in Chromium (test_publish_browser.py)."""

import hashlib
import json
import os
from pathlib import Path

import pytest

from langchef_core.readout.publish import publish_readout
from langchef_core.report import render_report, write_index
from tests.review.test_changes import CREATED_AT, moved

pytestmark = pytest.mark.slow


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under a folder: (SHA-256, modification time in ns)."""
    return {path.relative_to(folder).as_posix(): (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                 path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def add_version(reports: Path, experiment: str) -> int:
    """A new version of an experiment, published as `langchef readout` publishes one (its
    inputs moved, ``latest`` moved to it)."""
    readout = json.loads((reports / experiment / "latest" / "readout.json").read_text())
    version = publish_readout(reports, moved(readout), created_at=CREATED_AT,
                              render_html=render_report).version
    write_index(reports, CREATED_AT)
    return version


def test_publish_to_a_folder_then_again_then_a_new_version(langchef, demo_workspace, tmp_path):
    site = tmp_path / "site"
    first = langchef("publish", "--workspace", demo_workspace, "--to", site, "--json")
    assert first.code == 0, first.stderr
    reports = demo_workspace / "reports"
    versions = sorted(reports.glob("*/v*/*"))
    assert len(versions) == 24
    for path in versions:  # every version file, byte for byte
        assert (site / path.relative_to(reports)).read_bytes() == path.read_bytes()
    for latest in reports.glob("*/latest"):  # latest: a copy, not a link
        assert not (site / latest.relative_to(reports)).is_symlink()
        assert (site / latest.relative_to(reports) / "readout.json").read_bytes() == \
            (latest / "readout.json").read_bytes()
    manifest = json.loads((site / "manifest.json").read_text())
    assert set(manifest["files"]) == set(snapshot(site)) - {"manifest.json"}
    for name, sha in manifest["files"].items():
        assert hashlib.sha256((site / name).read_bytes()).hexdigest() == sha

    before = snapshot(site)
    again = langchef("publish", "--workspace", demo_workspace, "--to", site)
    assert again.code == 0 and again.stdout.startswith("nothing to publish")
    assert snapshot(site) == before  # not a byte, not a timestamp

    version = add_version(reports, "stale-index")
    third = langchef("publish", "--workspace", demo_workspace, "--to", site, "--json")
    assert third.code == 0, third.stderr
    assert sorted(third.json["written"]) == sorted(
        [f"stale-index/v{version}/{name}" for name in ("index.html", "manifest.json",
                                                      "readout.json")]
        + ["index.html", "manifest.json", "stale-index/latest/index.html",
           "stale-index/latest/manifest.json", "stale-index/latest/readout.json"])
    after = snapshot(site)
    assert all(after[name] == before[name] for name in before if "/v1/" in name)


def test_a_version_changed_in_dest_is_refused_before_anything_is_written(langchef,
                                                                        demo_workspace, tmp_path):
    site = tmp_path / "site"
    assert langchef("publish", "--workspace", demo_workspace, "--to", site).code == 0
    tampered = site / "prompt-trim" / "v1" / "index.html"
    tampered.write_bytes(tampered.read_bytes().replace(b"INCONCLUSIVE", b"IMPROVEMENT"))
    add_version(demo_workspace / "reports", "stale-index")
    before = snapshot(site)
    refused = langchef("publish", "--workspace", demo_workspace, "--to", site)
    assert refused.code == 2, refused.stdout
    assert "prompt-trim/v1/index.html: was changed after it was published" in refused.stderr
    assert snapshot(site) == before  # the new version was not written either
    # A version that differs from the reports (another workspace's v1) is refused too, even
    # where the destination's manifest says nothing about it.
    (site / "manifest.json").unlink()
    tampered.write_bytes(b"another v1\n")
    other = langchef("publish", "--workspace", demo_workspace, "--to", site)
    assert other.code == 2 and "differs from the version in the reports" in other.stderr


def test_damaged_reports_are_refused_with_the_file_named(langchef, demo_workspace, tmp_path):
    readout = demo_workspace / "reports" / "eager-hedging" / "v1" / "readout.json"
    readout.write_text(readout.read_text().replace('"REGRESSION', '"IMPROVEMENT'))
    result = langchef("publish", "--workspace", demo_workspace, "--to", tmp_path / "site")
    assert result.code == 2 and "eager-hedging/v1: is damaged" in result.stderr
    assert not (tmp_path / "site").exists()
    inside = langchef("publish", "--workspace", demo_workspace,
                      "--to", demo_workspace / "reports" / "site")
    assert inside.code == 2 and "is the reports folder, inside it or around it" in inside.stderr


def test_publish_to_the_local_s3_server(langchef, demo_workspace, s3_bucket, tmp_path):
    import boto3
    import fsspec

    destination = f"s3://{s3_bucket}/pr-42"
    environment = {name: os.environ[name] for name in os.environ if name.startswith("AWS_")}
    first = langchef("publish", "--workspace", demo_workspace, "--to", destination, "--json",
                     env=environment)
    assert first.code == 0, first.stderr
    assert len(first.json["written"]) == 50
    s3 = boto3.client("s3")
    head = s3.head_object(Bucket=s3_bucket, Key="pr-42/index.html")
    assert head["ContentType"] == "text/html; charset=utf-8"
    assert s3.head_object(Bucket=s3_bucket, Key="pr-42/stale-index/v1/readout.json")[
        "ContentType"] == "application/json"

    again = langchef("publish", "--workspace", demo_workspace, "--to", destination,
                     env=environment)
    assert again.code == 0 and again.stdout.startswith("nothing to publish"), again.stderr

    fs, _ = fsspec.core.url_to_fs(destination)
    local = tmp_path / "downloaded"
    fs.get(f"{s3_bucket}/pr-42/", str(local), recursive=True)
    reports = demo_workspace / "reports"
    for path in reports.glob("*/v*/*"):
        assert (local / path.relative_to(reports)).read_bytes() == path.read_bytes()

    key = "pr-42/friendly-tone/v1/readout.json"
    body = s3.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
    s3.put_object(Bucket=s3_bucket, Key=key, Body=body.replace(b'"passed": false',
                                                               b'"passed": true'))
    refused = langchef("publish", "--workspace", demo_workspace, "--to", destination,
                       env=environment)
    assert refused.code == 2
    assert f"{destination}/friendly-tone/v1/readout.json: was changed" in refused.stderr


def test_an_unreachable_store_is_one_sentence(langchef, demo_workspace, s3_bucket):
    # The endpoint and keys come from the operator's environment only.
    environment = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "x",
                   "AWS_SECRET_ACCESS_KEY": "y", "AWS_MAX_ATTEMPTS": "1"}
    result = langchef("publish", "--workspace", demo_workspace, "--to", f"s3://{s3_bucket}/x",
                      env=environment)
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "could not read it (EndpointConnectionError" in result.stderr

"""The demo's eight published readouts, built once per session (about 40 s): what a review
of the demo would summarise, gate and publish."""

import shutil

import pytest

from tests.cli.conftest import langchef  # noqa: F401  (a pytest fixture)


@pytest.fixture(scope="session")
def demo_reports_once(tmp_path_factory):
    import os

    from langchef_pipeline.demo import run_demo

    root = tmp_path_factory.mktemp("review-demo") / "workspace"
    saved = os.environ.pop("DAGSTER_HOME", None)  # an ephemeral Dagster instance
    try:
        run_demo(root, out=lambda *_: None)
    finally:
        if saved is not None:
            os.environ["DAGSTER_HOME"] = saved
    return root


@pytest.fixture
def demo_workspace(demo_reports_once, tmp_path):
    """A private copy of the read-out demo workspace (links kept as links)."""
    copy = tmp_path / "demo"
    shutil.copytree(demo_reports_once, copy, symlinks=True)
    return copy


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 API (moto in server mode) on 127.0.0.1, and the standard AWS variables that
    point the storage libraries at it: credentials come from the environment, as in CI."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_bucket(s3_server, monkeypatch):
    """An empty bucket on the local S3 server; returns its name."""
    import uuid

    import boto3
    import fsspec

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3_server}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    fsspec.config.conf.pop("s3", None)
    bucket = f"reports-{uuid.uuid4().hex[:12]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    yield bucket
    import s3fs
    s3fs.S3FileSystem.clear_instance_cache()

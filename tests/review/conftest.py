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

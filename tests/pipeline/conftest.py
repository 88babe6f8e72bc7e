import shutil
import warnings

import dagster as dg
import pytest

from langchef_core.demo import build_demo_workspace
from langchef_core.inputs.workspace import Workspace

# Partitioned asset checks are a Dagster preview feature; the warning is not ours to fix.
warnings.filterwarnings("ignore", category=dg.PreviewWarning) if hasattr(dg, "PreviewWarning") else None


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "workspace"
    build_demo_workspace(root)
    return root


@pytest.fixture
def demo_workspace(demo_root, tmp_path) -> Workspace:
    """A private copy of the demo workspace (tests may read it out or break it)."""
    copy = tmp_path / "workspace"
    shutil.copytree(demo_root, copy)
    return Workspace.at(copy)

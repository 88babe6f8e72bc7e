"""The CI files `langchef init --ci github|gitlab` writes: a pull-request (merge-request)
workflow that reads out, gates with a JUnit report, publishes or uploads the reports and
posts one summary comment that later pushes update. The files are in ``ci/``."""

from __future__ import annotations

import re
from importlib.resources import files

# Where each CI system reads its configuration, relative to the repository root.
CI_FILES = {"github": ".github/workflows/langchef.yml", "gitlab": ".gitlab-ci.yml"}
PLACEHOLDER = "@@WORKSPACE@@"
# The workspace path lands in YAML and in shell lines: plain path characters only.
SAFE_PATH = re.compile(r"\A[A-Za-z0-9._][A-Za-z0-9._/-]*\Z")


def ci_file(system: str, workspace: str) -> str:
    """The CI file for ``system`` with the workspace path (relative to the repository root)."""
    if system not in CI_FILES:
        raise ValueError(f"no CI template for {system!r}; choose " + " or ".join(CI_FILES))
    if not SAFE_PATH.match(workspace) or ".." in workspace.split("/"):
        raise ValueError(f"the workspace path {workspace!r} cannot go into a CI file; run "
                         "`langchef init` from the repository root with a workspace inside it "
                         "whose path has only letters, digits, '.', '_', '-' and '/'")
    text = (files(__package__) / "ci" / f"{system}.yml").read_text(encoding="utf-8")
    return text.replace(PLACEHOLDER, workspace)

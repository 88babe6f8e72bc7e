"""Drive the installed `langchef` console script in a subprocess on temporary workspaces."""

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DESIGN = """\
# Pre-registered before any traffic.
experiment: {name}
hypothesis: Reranking raises the pass rate.
suite: qa
arms:
  baseline: base
  variant: rerank
kind: superiority
primary: pass_rate
judge: {{kind: recorded, id: judge-v1}}
criteria: [correctness, groundedness]
assumed_discordant_rate: 0.2
"""


def console_script() -> Path:
    beside = Path(sys.executable).parent / "langchef"
    found = beside if beside.exists() else shutil.which("langchef")
    assert found, "the `langchef` console script is not installed; run `pip install -e .`"
    return Path(found)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


def _environment(extra=None) -> dict:
    environment = {key: value for key, value in os.environ.items()
                   if key != "LANGCHEF_WORKSPACE"}
    environment.update(extra or {})
    return environment


@pytest.fixture
def langchef(tmp_path):
    """Run `langchef ARGS…` from tmp_path; returns exit code, stdout and stderr."""
    script = console_script()

    def run(*arguments, cwd=tmp_path, env=None) -> Result:
        completed = subprocess.run([str(script), *map(str, arguments)], cwd=cwd,
                                   env=_environment(env), capture_output=True, text=True,
                                   timeout=300)
        return Result(completed.returncode, completed.stdout, completed.stderr)

    return run


@pytest.fixture
def python_cli(tmp_path):
    """Run a Python snippet that calls `langchef_pipeline.cli.main` in a fresh interpreter."""

    def run(code: str, cwd=tmp_path) -> Result:
        completed = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_environment(),
                                   capture_output=True, text=True, timeout=300)
        return Result(completed.returncode, completed.stdout, completed.stderr)

    return run


@pytest.fixture
def workspace(tmp_path):
    """A workspace folder with the suite the default design names (goldens/qa.jsonl, 30
    goldens: `design check` and `approve` refuse a design whose suite does not exist)."""
    root = tmp_path / "evals"
    (root / "experiments").mkdir(parents=True)
    write_goldens(root, 30)
    return root


def write_design(root: Path, name: str = "rerank", text: str | None = None, **replace) -> Path:
    body = text if text is not None else DESIGN.format(name=name)
    for old, new in replace.items():
        assert old in body, old
        body = body.replace(old, new)
    path = root / "experiments" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def write_goldens(root: Path, n: int, suite: str = "qa") -> Path:
    path = root / "goldens" / f"{suite}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"example_id": f"q{i}", "input": "?"}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def one_sentence(stderr: str) -> str:
    """Errors are a single line on stderr."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def states(langchef, workspace) -> dict:
    """`langchef status --json`, keyed by experiment."""
    result = langchef("status", "--workspace", workspace, "--json")
    assert result.code == 0, result.stderr
    return {row["experiment"]: row for row in result.json["experiments"]}

"""Real eval tools make the logs these tests import: Inspect AI (`inspect eval` with the
offline mockllm provider), lm-evaluation-harness (its CLI with a local YAML task and a
planted local model) and promptfoo (the npm package with a local script provider).

Where each tool is found: ``LANGCHEF_TEST_INSPECT`` (the ``inspect`` executable; default:
beside this Python, then on PATH), ``LANGCHEF_TEST_LM_EVAL_PYTHON`` (a Python with
``lm-eval`` installed; lm-eval's dependencies clash with constraints.txt, so it lives in its
own venv) and ``LANGCHEF_TEST_PROMPTFOO`` (the ``promptfoo`` executable of an npm install).
`.ci/run` installs all three. A missing tool skips its tests on a developer's machine and
fails them in CI (``CI=true``), so CI can never pass without running them.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import console_script

TOOLS = Path(__file__).parent / "tools"

# Twelve goldens with known answers. Arm a is right on g01–g08, arm b on g01–g05 and
# g09–g11: from a to b, g06–g08 broke, g09–g11 were fixed, g12 is wrong in both.
QUESTIONS = [("What is 2+2?", "4"), ("Capital of France?", "Paris"),
             ("Colour of a clear sky?", "blue"), ("Legs on a spider?", "8"),
             ("H2O is commonly called?", "water"), ("10 divided by 2?", "5"),
             ("Opposite of hot?", "cold"), ("Largest planet?", "Jupiter"),
             ("Frozen water is called?", "ice"), ("Days in a week?", "7"),
             ("Metal that is liquid at room temperature?", "mercury"), ("Square root of 81?", "9")]
IDS = [f"g{number:02d}" for number in range(1, 13)]
A_CORRECT = set(IDS[:8])
B_CORRECT = set(IDS[:5]) | {"g09", "g10", "g11"}
BROKE = sorted(A_CORRECT - B_CORRECT)
FIXED = sorted(B_CORRECT - A_CORRECT)


def tool(variable: str, default: str | None) -> str:
    found = os.environ.get(variable) or default
    if found and Path(found).exists():
        return found
    if os.environ.get("CI") == "true":
        pytest.fail(f"{variable} is not set to an installed tool; .ci/run installs it")
    pytest.skip(f"set {variable} to run this test (see tests/importers/conftest.py)")


@pytest.fixture
def inspect_cli() -> str:
    beside = Path(sys.executable).parent / "inspect"
    return tool("LANGCHEF_TEST_INSPECT",
                str(beside) if beside.exists() else shutil.which("inspect"))


@pytest.fixture
def lm_eval_python() -> str:
    return tool("LANGCHEF_TEST_LM_EVAL_PYTHON", None)


@pytest.fixture
def promptfoo_cli() -> str:
    return tool("LANGCHEF_TEST_PROMPTFOO", shutil.which("promptfoo"))


def langchef(*arguments, cwd: Path) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "LANGCHEF_WORKSPACE"}
    return subprocess.run([str(console_script()), *map(str, arguments)], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=600)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr + result.stdout
    return result


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def approved_design(root: Path, *, judge: str, criteria: str, suite: str,
                    name: str = "imported", primary: str = "pass_rate", extra: str = "") -> None:
    """Pre-register and approve before any traffic, as a team would."""
    (root / "experiments").mkdir(parents=True, exist_ok=True)
    (root / "experiments" / f"{name}.yaml").write_text(
        f"experiment: {name}\nhypothesis: Arm b answers as well as arm a.\nsuite: {suite}\n"
        f"arms: {{baseline: a, variant: b}}\nkind: superiority\nprimary: {primary}\n"
        f"judge: {judge}\ncriteria: {criteria}\nassumed_discordant_rate: 0.3\n{extra}",
        encoding="utf-8")
    ok(langchef("approve", name, "--by", "Test Person", "--workspace", root, cwd=root))


def read_out(root: Path, name: str = "imported") -> dict:
    ok(langchef("readout", name, "--workspace", root, cwd=root))
    return json.loads((root / "reports" / name / "latest" / "readout.json").read_text())


def flipped(readout: dict) -> tuple[list, list]:
    return (sorted(row["example_id"] for row in readout["broke"]),
            sorted(row["example_id"] for row in readout["fixed"]))

"""Commands that need no pipeline start without importing it (issue 19).

`gate`, `power`, `status`, `design check` and `approve` run in a fresh interpreter, and the
modules it loaded are read back from ``sys.modules``: none imports dagster; `gate` needs
neither pandas nor scipy.stats, and neither does `power`. A test of
what is imported, not of time.
"""

import json

import pytest

from .conftest import write_design, write_goldens
from .test_cli_gate import readout, write

HEAVY = ("dagster", "pandas", "pandera", "scipy.stats", "jinja2", "pyarrow")

PROBE = """
import json, sys
from langchef_pipeline.cli import main
try:
    main({arguments!r})
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def loaded(python_cli, *arguments) -> list[str]:
    result = python_cli(PROBE.format(arguments=[str(a) for a in arguments], heavy=HEAVY))
    assert result.code == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_gate_imports_no_dagster_and_no_dataframes(python_cli, tmp_path):
    assert loaded(python_cli, "gate", write(tmp_path, readout())) == []


def test_power_imports_nothing_heavy(python_cli):
    # The exact power of the readout's rule is summed with scipy.special and solved with
    # scipy.optimize (issue 28): `power` no longer needs scipy.stats either.
    assert loaded(python_cli, "power", "--goldens", "400", "--discordant-rate", "0.2") == []


@pytest.mark.parametrize("command", [["status"], ["design", "check", "rerank"],
                                     ["approve", "rerank", "--by", "Ada"]])
def test_workspace_commands_import_no_dagster(python_cli, workspace, command):
    write_design(workspace)
    write_goldens(workspace, 50)
    found = loaded(python_cli, *command, "--workspace", workspace)
    assert "dagster" not in found, found
    assert "jinja2" not in found, found


def test_the_pipeline_imports_no_http_client_until_a_judge_calls(python_cli):
    """aiohttp (about 0.1 s) is imported when an OpenAI-compatible judge opens its session,
    not by every process that loads the pipeline: a readout with a recorded judge, the UI's
    run worker."""
    result = python_cli("import sys, langchef_pipeline.definitions\n"
                        "print(sorted(m for m in ('aiohttp', 'yarl') if m in sys.modules))")
    assert result.code == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"

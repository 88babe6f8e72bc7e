"""The statistics must stay usable without the orchestrator: langchef_core never imports dagster."""

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "langchef_core"
FORBIDDEN = ("dagster", "langchef_pipeline")


def test_core_sources_do_not_import_dagster_or_the_pipeline():
    offenders = []
    for source in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{source.name}: {name}" for name in names
                          if name.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_importing_core_loads_neither_dagster_nor_the_pipeline():
    probe = ("import sys, langchef_core, langchef_core.inputs.workspace, langchef_core.inputs.tables; "
             "import pkgutil, importlib; "
             "[importlib.import_module('langchef_core.' + m.name) "
             " for m in pkgutil.walk_packages(langchef_core.__path__) if not m.name.startswith('_')]; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'langchef_pipeline')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"

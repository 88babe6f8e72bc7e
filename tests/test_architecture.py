"""The layout is the architecture (langchef_core/README.md): the statistics stay usable without
the orchestrator or the rest of langchef, and each stage folder imports only those below it."""

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "langchef_core"
FORBIDDEN = ("dagster", "langchef_pipeline")

# Each folder of langchef_core and the folders it may import (the map in langchef_core/README.md).
# stats/ and inputs/ are the ground floor and never import each other.
MAY_IMPORT = {
    "stats": set(),
    "inputs": set(),
    "store": {"inputs"},
    "scoring": {"stats", "inputs", "store"},
    "designs": {"scoring", "stats", "inputs", "store"},
    "readout": {"designs", "scoring", "stats", "inputs", "store"},
    "demo": {"designs", "scoring", "stats", "inputs"},
    "importers": {"designs", "scoring", "inputs"},
    "report": {"readout", "inputs"},
    "review": {"readout", "stats", "inputs"},
}
# Third-party packages the statistics may use: numbers in, numbers (or a table) out.
STATS_THIRD_PARTY = {"numpy", "scipy", "pandas"}


def _imports(source: Path, *, names: bool = False):
    """(absolute module, line) of every import in a file, relative imports resolved;
    ``names``: ``from a import b`` also yields ``a.b`` (which may be a module)."""
    package = ["langchef_core", *source.relative_to(CORE).parts[:-1]]
    for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                yield node.module, node.lineno
                if names:
                    for alias in node.names:
                        yield f"{node.module}.{alias.name}", node.lineno
                continue
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                module = ".".join(base + [node.module])
                yield module, node.lineno
                if names:
                    for alias in node.names:
                        yield f"{module}.{alias.name}", node.lineno
            else:  # ``from . import bootstrap``: each name is a module
                for alias in node.names:
                    yield ".".join(base + [alias.name]), node.lineno


def _module(source: Path) -> str:
    parts = ["langchef_core", *source.relative_to(CORE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, dict[str, int]]:
    """module → {module of langchef_core it imports: line}, every import counted (also one
    inside a function: a lazy import is still a dependency). ``from package import name``
    depends on the module ``package.name`` when there is one, else on the package."""
    sources = {_module(source): source for source in CORE.rglob("*.py")}
    graph = {}
    for name, source in sources.items():
        edges = {}
        for target, line in _imports(source, names=True):
            while target and target not in sources:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one
    circle through it, e.g. ``[a, b, a]``."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(_circle(graph, component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _circle(graph, component: set[str]) -> list[str]:
    """One path from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node]):
            if target == start:
                return paths[node] + [start]
            if target in component and target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    raise AssertionError(f"no circle through {start}")  # pragma: no cover


def _folder(source: Path) -> str | None:
    parts = source.relative_to(CORE).parts
    return parts[0] if len(parts) > 1 else None


def test_core_sources_do_not_import_dagster_or_the_pipeline():
    offenders = [f"{source.relative_to(CORE)}:{line}: {name}"
                 for source in CORE.rglob("*.py") for name, line in _imports(source)
                 if name.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_every_core_module_lives_in_a_stage_folder():
    loose = sorted(source.name for source in CORE.glob("*.py")
                   if source.name not in ("__init__.py", "_version.py"))
    assert loose == []
    assert {path.name for path in CORE.iterdir() if path.is_dir() and path.name != "__pycache__"} \
        == set(MAY_IMPORT)


def test_each_folder_imports_only_the_folders_below_it():
    offenders = []
    for source in CORE.rglob("*.py"):
        folder = _folder(source)
        if folder is None:
            continue
        for name, line in _imports(source):
            parts = name.split(".")
            if parts[0] != "langchef_core":
                continue
            target = parts[1] if len(parts) > 1 else "langchef_core"
            if target == folder or target == "_version":
                continue
            if target not in MAY_IMPORT[folder]:
                offenders.append(f"{source.relative_to(CORE)}:{line}: {folder}/ imports {name}")
    assert offenders == []


def test_no_import_circle_between_core_modules():
    graph = _module_graph()
    circles = [" -> ".join(f"{module} (line {graph[module][after]})" if after else module
                           for module, after in zip(circle, [*circle[1:], None]))
               for circle in _cycles(graph)]
    assert circles == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b": 3}, "b": {"c": 1}, "c": {"a": 7, "d": 2}, "d": {}}
    assert _cycles(graph) == [["a", "b", "c", "a"]] and _cycles({"a": {"b": 1}, "b": {}}) == []


def test_stats_imports_nothing_of_langchef_and_only_numeric_packages():
    offenders = []
    for source in (CORE / "stats").rglob("*.py"):
        for name, line in _imports(source):
            top = name.split(".")[0]
            if top == "langchef_core":
                if not name.startswith("langchef_core.stats"):
                    offenders.append(f"{source.name}:{line}: {name}")
            elif top not in sys.stdlib_module_names and top != "__future__" \
                    and top not in STATS_THIRD_PARTY:
                offenders.append(f"{source.name}:{line}: {name}")
    assert offenders == []


def test_importing_stats_loads_nothing_else_of_langchef():
    probe = ("import sys, pkgutil, importlib, langchef_core.stats as s; "
             "[importlib.import_module('langchef_core.stats.' + m.name) for m in pkgutil.iter_modules(s.__path__)]; "
             "print(sorted({m.split('.')[1] for m in sys.modules "
             "              if m.startswith('langchef_core.') and m.split('.')[1] != 'stats'}))")
    # Importing langchef_core.stats runs langchef_core/__init__.py first, which loads the whole
    # public API; so ask a fresh interpreter that has it stubbed out.
    stub = ("import sys, types; "
            f"core = types.ModuleType('langchef_core'); core.__path__ = [{str(CORE)!r}]; "
            "sys.modules['langchef_core'] = core; ")
    result = subprocess.run([sys.executable, "-c", stub + probe], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_importing_core_loads_neither_dagster_nor_the_pipeline():
    probe = ("import sys, langchef_core, langchef_core.inputs.workspace, langchef_core.inputs.tables; "
             "import pkgutil, importlib; "
             "[importlib.import_module(m.name) "
             " for m in pkgutil.walk_packages(langchef_core.__path__, 'langchef_core.') "
             " if not m.name.rpartition('.')[2].startswith('_')]; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'langchef_pipeline')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# A module past these sizes holds more than one thing (HELPER_RULES: 400 for the CLI's, one
# module per command).
MAX_MODULE_LINES = 500
MAX_CLI_MODULE_LINES = 400
PIPELINE = CORE.parent / "langchef_pipeline"


def test_no_module_is_too_long():
    too_long = []
    for source in sorted([*CORE.rglob("*.py"), *PIPELINE.rglob("*.py")]):
        limit = MAX_CLI_MODULE_LINES if (PIPELINE / "cli") in source.parents else MAX_MODULE_LINES
        lines = len(source.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            too_long.append(f"{source.relative_to(CORE.parent)}: {lines} lines (at most {limit})")
    assert not too_long, "split these along a seam:\n" + "\n".join(too_long)


def test_the_map_names_every_core_module():
    # The map is where the next engineer looks first: a module it does not name is a room
    # nobody finds (Alembic's own files under store/migrations/ are named as the folder).
    text = (CORE / "README.md").read_text(encoding="utf-8")
    unnamed = [str(path.relative_to(CORE)) for path in sorted(CORE.rglob("*.py"))
               if path.name not in ("__init__.py", "_version.py") and "migrations" not in path.parts
               and f"`{path.stem}`" not in text and f"{path.stem}.py" not in text]
    assert unnamed == [], "name these in langchef_core/README.md: " + ", ".join(unnamed)

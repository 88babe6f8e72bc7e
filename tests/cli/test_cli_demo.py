"""`langchef demo` through the console script (issue 29, point 8): what it prints of each
experiment is what that experiment's runs hold, and every report it names exists."""

import re
from pathlib import Path

import pytest

from tests.core.test_demo_workspace import DESCRIBED_COUNTS, counts_from_runs


@pytest.mark.slow  # eight readouts through Dagster
def test_the_demo_says_of_each_experiment_what_its_runs_hold(langchef, tmp_path):
    root, home = tmp_path / "demo", tmp_path / "dagster_home"
    home.mkdir()
    result = langchef("demo", "--workspace", root, env={"DAGSTER_HOME": str(home)})
    assert result.code == 0, result.stderr
    printed = dict(re.findall(r"^([a-z-]+): (.+)$", result.stdout, flags=re.MULTILINE))
    for experiment, (pattern, names) in DESCRIBED_COUNTS.items():
        found = re.search(pattern, printed[experiment])
        assert found, (experiment, printed[experiment])
        counted = counts_from_runs(root, experiment)
        assert dict(zip(names, found.groups())) == {name: str(counted[name]) for name in names}
    reports = re.findall(r"report: (\S+index\.html)", result.stdout)
    assert len(reports) == 8 and all(Path(report).is_file() for report in reports)


def test_the_demo_goes_where_workspace_says_before_or_after_the_command(monkeypatch):
    # `langchef --workspace X demo` used to build the demo in demo-workspace: the demo's own
    # default reset the option given before the command.
    from langchef_pipeline.cli import build_parser

    monkeypatch.setenv("LANGCHEF_WORKSPACE", "the-teams-evals")  # never the demo's folder
    parse = build_parser().parse_args
    assert parse(["--workspace", "before", "demo"]).workspace == "before"
    assert parse(["demo", "--workspace", "after"]).workspace == "after"
    from langchef_pipeline.cli.demo import demo_folder
    assert demo_folder(parse(["demo"])) == "demo-workspace"
    assert demo_folder(parse(["--workspace", "before", "demo"])) == "before"

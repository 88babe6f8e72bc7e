"""Issue 13, defects 5 and 8 through the real console script: `langchef readout` killed
between publish steps is healed by the next `langchef readout`, and a linked
reports/<experiment> is refused with nothing written outside reports/."""

from __future__ import annotations

import os
import sqlite3

import pytest

from .conftest import one_sentence, recorded_workspace

NAME = "short-prompt"


@pytest.mark.slow  # two readouts through Dagster per step
@pytest.mark.parametrize("step", ["renamed", "latest"])
def test_a_readout_killed_mid_publish_is_healed_by_the_next_readout(langchef, tmp_path, step):
    root = tmp_path / "evals"
    recorded_workspace(root)
    crashed = langchef("readout", NAME, "--workspace", root, env={"LANGCHEF_FAULT_AT": step})
    assert crashed.code == 99, crashed.stderr
    folder = root / "reports" / NAME
    assert (folder / "v1").is_dir()  # published, but the ledger has no row yet
    healed = langchef("readout", NAME, "--workspace", root, "--json")
    assert healed.code == 0, healed.stderr
    assert healed.json["version"] == 1
    assert sorted(entry.name for entry in folder.iterdir()) == ["latest", "v1"]
    assert os.readlink(folder / "latest") == "v1"
    gate = langchef("gate", folder / "latest" / "readout.json")
    assert gate.code == 1 and "regressed" in gate.stdout  # the readout's own answer
    connection = sqlite3.connect(root / "langchef.sqlite")
    try:
        rows = connection.execute("SELECT version FROM readouts WHERE experiment = ?",
                                  (NAME,)).fetchall()
    finally:
        connection.close()
    assert rows == [(1,)]


@pytest.mark.slow  # one readout through Dagster
def test_a_linked_experiment_folder_is_refused_by_readout(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "reports").mkdir()
    (root / "reports" / NAME).symlink_to(outside, target_is_directory=True)
    result = langchef("readout", NAME, "--workspace", root)
    assert result.code == 2
    assert "is a link or a file, not the folder langchef writes versions into" in \
        one_sentence(result.stderr)
    assert list(outside.iterdir()) == []

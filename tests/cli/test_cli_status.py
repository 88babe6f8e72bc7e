"""`langchef status`: draft, approved, read out with versions, revoked, invalid."""

import json

import pytest

from .conftest import write_design


def write_readout(reports, name, version):
    folder = reports / name / f"v{version}"
    folder.mkdir(parents=True)
    (folder / "readout.json").write_text(json.dumps({"format": 1, "version": version}),
                                         encoding="utf-8")


# Several console-script runs in a row (about 2 s each): slow.
@pytest.mark.slow
def test_status_lists_every_state_with_versions(langchef, workspace):
    for name in ("alpha", "bravo", "charlie", "delta"):
        write_design(workspace, name=name)
    write_design(workspace, name="echo", **{"kind: superiority": "kind: non_inferiority"})
    for name in ("bravo", "charlie", "delta"):
        assert langchef("approve", name, "--by", "ada", "--workspace", workspace).code == 0
    for version in (1, 2, 10):
        write_readout(workspace / "reports", "charlie", version)
    write_design(workspace, name="delta", **{"suite: qa": "suite: qa2"})

    result = langchef("status", "--workspace", workspace, "--json")
    assert result.code == 0, result.stderr
    rows = {row["experiment"]: row for row in result.json["experiments"]}
    assert list(rows) == ["alpha", "bravo", "charlie", "delta", "echo"]
    assert [rows[name]["label"] for name in rows] == [
        "draft", "approved", "read out", "revoked (edited after approval)", "invalid"]
    assert rows["charlie"]["versions"] == [1, 2, 10]
    assert rows["bravo"]["approved_by"] == "ada" and rows["alpha"]["approved_by"] is None
    assert "field 'margin'" in rows["echo"]["sentence"]

    human = langchef("status", "--workspace", workspace)
    lines = {line.split()[0]: line for line in human.stdout.splitlines()
             if line.strip() and not line.startswith(" ")}
    assert "read out" in lines["charlie"] and "v1, v2, v10" in lines["charlie"]
    assert "revoked (edited after approval)" in lines["delta"]
    assert "draft" in lines["alpha"] and "invalid" in lines["echo"]
    assert "experiments/echo.yaml, field 'margin'" in human.stdout


def test_reports_elsewhere_and_the_environment_variable(langchef, workspace, tmp_path):
    write_design(workspace)
    assert langchef("approve", "rerank", "--by", "ada", "--workspace", workspace).code == 0
    write_readout(tmp_path / "site", "rerank", 1)
    result = langchef("status", "--reports", tmp_path / "site", "--json",
                      env={"LANGCHEF_WORKSPACE": str(workspace)})
    assert result.code == 0, result.stderr
    (row,) = result.json["experiments"]
    assert row["state"] == "read_out" and row["versions"] == [1]


def test_an_empty_workspace_says_so(langchef, workspace):
    result = langchef("status", "--workspace", workspace)
    assert result.code == 0 and "no experiments" in result.stdout

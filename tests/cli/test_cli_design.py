"""`langchef design check`: validation errors, canonical form and hash, power analysis."""

import hashlib

import pytest

from langchef_core.designs.parse import load_design

from .conftest import one_sentence, write_design, write_goldens


def test_check_prints_canonical_form_hash_power_and_state(langchef, workspace):
    path = write_design(workspace)
    write_goldens(workspace, 90)
    result = langchef("design", "check", "rerank", "--workspace", workspace)
    assert result.code == 0, result.stderr
    design = load_design(path)
    assert f"sha256      {design.sha256}" in result.stdout
    assert f"canonical   {design.canonical_json}" in result.stdout
    assert "with 90 goldens and an assumed discordant rate of 0.2" in result.stdout
    assert "approval    draft" in result.stdout

    as_json = langchef("design", "check", "rerank", "--workspace", workspace, "--json").json
    assert as_json["sha256"] == hashlib.sha256(as_json["canonical"].encode("utf-8")).hexdigest()
    assert as_json["sha256"] == design.sha256
    assert as_json["power"]["n_goldens"] == 90 and as_json["power"]["underpowered"] is False
    assert as_json["approval"]["state"] == "draft"


def test_an_invalid_design_is_one_sentence_on_stderr_naming_file_field_line(langchef, workspace):
    write_design(workspace, **{"kind: superiority": "kind: non_inferiority\nmargin: -0.03"})
    result = langchef("design", "check", "rerank", "--workspace", workspace)
    assert result.code == 2 and result.stdout == ""
    sentence = one_sentence(result.stderr)
    assert "experiments/rerank.yaml, field 'margin', line 9: must be positive" in sentence


def test_a_target_below_the_limit_reports_underpowered_and_goldens_needed(langchef, workspace):
    write_design(workspace, **{"assumed_discordant_rate: 0.2":
                               "assumed_discordant_rate: 0.2\ntarget_effect: 0.03\nmargin: 0.02"})
    write_goldens(workspace, 90)
    result = langchef("design", "check", "rerank", "--workspace", workspace, "--json")
    assert result.code == 0, result.stderr
    power = result.json["power"]
    assert power["underpowered"] is True
    assert [s["field"] for s in power["shortfalls"]] == ["target_effect", "margin"]
    assert all(s["goldens_needed"] > 90 for s in power["shortfalls"])
    assert "UNDERPOWERED" in power["sentence"] and "needs about" in power["sentence"]
    # A margin on a superiority design is allowed, and reported as not deciding the gate.
    assert any("superiority design" in note for note in result.json["notes"])


# Several console-script runs in a row (about 2 s each): slow.
@pytest.mark.slow
def test_comments_do_not_change_the_printed_hash_but_values_do(langchef, workspace):
    write_design(workspace)
    first = langchef("design", "check", "rerank", "--workspace", workspace, "--json").json["sha256"]
    write_design(workspace, **{"# Pre-registered before any traffic.": "# reworded",
                               "suite: qa": "suite: qa        # same suite"})
    assert langchef("design", "check", "rerank", "--workspace", workspace,
                    "--json").json["sha256"] == first
    write_design(workspace, **{"suite: qa": "suite: qa2"})
    write_goldens(workspace, 30, suite="qa2")
    assert langchef("design", "check", "rerank", "--workspace", workspace,
                    "--json").json["sha256"] != first


def test_a_missing_design_or_workspace_is_exit_2(langchef, workspace, tmp_path):
    missing = langchef("design", "check", "nope", "--workspace", workspace)
    assert missing.code == 2 and "experiments/nope.yaml: design file not found" in missing.stderr
    no_workspace = langchef("design", "check", "nope", "--workspace", tmp_path / "absent")
    assert no_workspace.code == 2 and "langchef init" in one_sentence(no_workspace.stderr)

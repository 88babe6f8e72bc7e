"""Approval by a person: the record, idempotence, revocation by edits, history, atomicity."""

import json
import os
from datetime import datetime, timedelta, timezone

import pytest

from langchef_core import __version__
from langchef_core.designs.approval import (APPROVED, DRAFT, INVALID, REVOKED, approval_status,
                                            approve, format_utc, parse_utc, read_approval)
from langchef_core.designs.model import DesignError
from langchef_core.designs.parse import load_workspace_design
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.workspace import Workspace

DESIGN = """\
experiment: rerank
hypothesis: Reranking raises the pass rate.   # a comment
suite: qa
arms: {baseline: base, variant: rerank}
kind: superiority
primary: pass_rate
judge: {kind: recorded, id: judge-v1}
criteria: [correctness]
"""

AT = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "rerank.yaml").write_text(DESIGN, encoding="utf-8")
    # approval checks the design against the workspace: its suite must exist
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "qa.jsonl").write_text(
        "".join(json.dumps({"example_id": f"q{i}", "input": "?"}) + "\n" for i in range(30)),
        encoding="utf-8")
    return Workspace(tmp_path)


def design_file(workspace):
    return workspace.experiments / "rerank.yaml"


def test_approval_record_holds_hash_approver_utc_time_and_version(workspace):
    outcome = approve(workspace, "rerank", by="  Ada Lovelace ", at=AT)
    assert outcome.status == "approved"
    record = json.loads(workspace.approval_path("rerank").read_text(encoding="utf-8"))
    design = load_workspace_design(workspace, "rerank")
    assert record["experiment"] == "rerank"
    assert record["design_sha256"] == design.sha256
    assert record["approved_by"] == "Ada Lovelace"
    assert record["approved_at"] == "2024-05-01T12:00:00Z"
    assert record["tool_version"] == __version__
    assert record["history"] == [] and record["underpowered"] is None
    assert approval_status(workspace, "rerank").state == APPROVED


def test_approval_time_defaults_to_now_in_utc(workspace):
    before = datetime.now(timezone.utc)
    approval = approve(workspace, "rerank", by="ada").approval
    assert before <= approval.approved_at <= datetime.now(timezone.utc)
    assert read_approval(workspace, "rerank").to_dict()["approved_at"].endswith("Z")


def test_time_in_another_zone_is_stored_in_utc(workspace):
    berlin = timezone(timedelta(hours=2))
    approve(workspace, "rerank", by="ada", at=datetime(2024, 5, 1, 14, 0, tzinfo=berlin))
    assert read_approval(workspace, "rerank").approved_at == AT


def test_approving_an_identical_design_again_writes_nothing(workspace):
    approve(workspace, "rerank", by="ada", at=AT)
    path = workspace.approval_path("rerank")
    before = path.read_bytes()
    outcome = approve(workspace, "rerank", by="bob", at=AT + timedelta(days=1))
    assert outcome.status == "already_approved"
    assert "already approved" in outcome.sentence and "by ada" in outcome.sentence
    assert path.read_bytes() == before


def test_editing_only_a_comment_keeps_the_approval(workspace):
    approve(workspace, "rerank", by="ada", at=AT)
    design_file(workspace).write_text(DESIGN.replace("# a comment", "# reworded comment\n"),
                                      encoding="utf-8")
    assert approval_status(workspace, "rerank").state == APPROVED


def test_editing_a_value_revokes_and_reapproval_keeps_history(workspace):
    first = approve(workspace, "rerank", by="ada", at=AT).approval
    design_file(workspace).write_text(DESIGN.replace("criteria: [correctness]",
                                                     "criteria: [correctness, tone]"),
                                      encoding="utf-8")
    status = approval_status(workspace, "rerank")
    assert status.state == REVOKED and status.label == "revoked (edited after approval)"
    assert "edited after approval" in status.sentence

    second = approve(workspace, "rerank", by="bob", at=AT + timedelta(hours=1))
    assert second.status == "reapproved"
    record = read_approval(workspace, "rerank")
    assert record.approved_by == "bob" and record.design_sha256 != first.design_sha256
    assert [item["design_sha256"] for item in record.history] == [first.design_sha256]
    assert record.history[0]["approved_by"] == "ada"
    assert approval_status(workspace, "rerank").state == APPROVED

    # A third version keeps both earlier records, oldest first.
    design_file(workspace).write_text(DESIGN.replace("judge-v1", "judge-v2"), encoding="utf-8")
    approve(workspace, "rerank", by="cy", at=AT + timedelta(hours=2))
    history = read_approval(workspace, "rerank").history
    assert [item["approved_by"] for item in history] == ["ada", "bob"]


def test_invalid_design_is_refused_and_nothing_is_written(workspace):
    design_file(workspace).write_text(DESIGN.replace("kind: superiority", "kind: better"),
                                      encoding="utf-8")
    with pytest.raises(DesignError, match="field 'kind', line 5"):
        approve(workspace, "rerank", by="ada")
    assert not workspace.approval_path("rerank").exists()
    assert approval_status(workspace, "rerank").state == INVALID


@pytest.mark.parametrize("approver", ["", "   ", None, "ada\nbob"])
def test_empty_or_malformed_approver_is_refused(workspace, approver):
    with pytest.raises(ValueError, match="approver"):
        approve(workspace, "rerank", by=approver)
    assert not workspace.approval_path("rerank").exists()


def test_a_time_without_zone_is_refused(workspace):
    with pytest.raises(ValueError, match="no time zone"):
        approve(workspace, "rerank", by="ada", at=datetime(2024, 5, 1, 12, 0))


def test_draft_until_approved_and_deleting_the_approval_returns_to_draft(workspace):
    assert approval_status(workspace, "rerank").state == DRAFT
    approve(workspace, "rerank", by="ada", at=AT)
    workspace.approval_path("rerank").unlink()
    assert approval_status(workspace, "rerank").state == DRAFT


def test_a_forged_approval_with_a_wrong_hash_is_refused_by_the_ledger(workspace):
    approve(workspace, "rerank", by="ada", at=AT)
    path = workspace.approval_path("rerank")
    record = json.loads(path.read_text(encoding="utf-8"))
    record["design_sha256"] = "0" * 64
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match="not recorded in the ledger langchef.sqlite"):
        approval_status(workspace, "rerank")


@pytest.mark.parametrize("change, field", [
    (lambda r: r.update(design_sha256="not-a-hash"), "design_sha256"),
    (lambda r: r.update(approved_at="2024-05-01T12:00:00"), "approved_at"),
    (lambda r: r.update(approved_by=""), "approved_by"),
    (lambda r: r.update(experiment="other"), "experiment"),
    (lambda r: r.update(history={"a": 1}), "history"),
])
def test_a_malformed_approval_file_is_an_input_error_naming_its_field(workspace, change, field):
    approve(workspace, "rerank", by="ada", at=AT)
    path = workspace.approval_path("rerank")
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match=f"approvals/rerank.json, column '{field}'"):
        read_approval(workspace, "rerank")


def test_an_unparseable_approval_file_is_an_input_error(workspace):
    workspace.approvals.mkdir()
    workspace.approval_path("rerank").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="approvals/rerank.json: could not be read as JSON"):
        read_approval(workspace, "rerank")


def test_write_is_atomic_a_failed_rename_leaves_the_old_record_and_no_temporary(workspace,
                                                                                monkeypatch):
    approve(workspace, "rerank", by="ada", at=AT)
    path = workspace.approval_path("rerank")
    before = path.read_bytes()
    design_file(workspace).write_text(DESIGN.replace("judge-v1", "judge-v9"), encoding="utf-8")

    def failing_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        approve(workspace, "rerank", by="bob")
    assert path.read_bytes() == before
    assert sorted(p.name for p in workspace.approvals.iterdir()) == ["rerank.json"]


def test_underpowered_approval_is_allowed_and_carries_the_warning(workspace):
    design_file(workspace).write_text(
        DESIGN.replace("kind: superiority", "kind: non_inferiority\nmargin: 0.02")
        + "assumed_discordant_rate: 0.2\n", encoding="utf-8")
    (workspace.root / "goldens" / "qa.jsonl").write_text(
        "".join(json.dumps({"example_id": f"q{i}", "input": "?"}) + "\n" for i in range(90)),
        encoding="utf-8")
    outcome = approve(workspace, "rerank", by="ada", at=AT)
    assert outcome.status == "approved" and "underpowered" in outcome.sentence
    record = read_approval(workspace, "rerank")
    assert record.underpowered["n_goldens"] == 90
    assert record.underpowered["shortfalls"][0]["field"] == "margin"
    assert record.underpowered["shortfalls"][0]["goldens_needed"] > 90
    assert record.power["detection_limit"] > 0.02


def test_utc_formatting_round_trips():
    moment = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=timezone.utc)
    assert format_utc(moment) == "2024-05-01T12:00:00.250000Z"
    assert parse_utc(format_utc(moment)) == moment
    with pytest.raises(ValueError, match="no time zone"):
        parse_utc("2024-05-01T12:00:00")

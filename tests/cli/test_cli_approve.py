"""`langchef approve`: the record, idempotence, edits after approval, refusals."""

import json

import pytest

from .conftest import one_sentence, states, write_design, write_goldens


# Several console-script runs in a row (about 2 s each): slow.
@pytest.mark.slow
def test_approve_then_idempotent_then_comment_edit_keeps_then_value_edit_revokes(langchef,
                                                                                 workspace):
    write_design(workspace)
    approved = langchef("approve", "rerank", "--by", "Ada Lovelace", "--workspace", workspace)
    assert approved.code == 0, approved.stderr
    assert "rerank approved by Ada Lovelace" in approved.stdout
    record_path = workspace / "approvals" / "rerank.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert record["approved_by"] == "Ada Lovelace" and record["approved_at"].endswith("Z")
    assert len(record["design_sha256"]) == 64 and record["tool_version"]
    before = record_path.read_bytes()

    again = langchef("approve", "rerank", "--by", "Bob", "--workspace", workspace)
    assert again.code == 0 and "already approved" in again.stdout
    assert record_path.read_bytes() == before

    # Editing only a comment keeps the approval.
    write_design(workspace, **{"# Pre-registered before any traffic.": "# edited comment"})
    assert states(langchef, workspace)["rerank"]["state"] == "approved"

    # Editing a value revokes it; re-approval keeps the old record in history.
    write_design(workspace, **{"criteria: [correctness, groundedness]": "criteria: [correctness]"})
    row = states(langchef, workspace)["rerank"]
    assert row["label"] == "revoked (edited after approval)"

    reapproved = langchef("approve", "rerank", "--by", "Bob", "--workspace", workspace, "--json")
    assert reapproved.code == 0 and reapproved.json["status"] == "reapproved"
    history = json.loads(record_path.read_text(encoding="utf-8"))["history"]
    assert [item["approved_by"] for item in history] == ["Ada Lovelace"]
    assert history[0]["design_sha256"] == record["design_sha256"]


def test_refusals_empty_approver_and_invalid_design(langchef, workspace):
    write_design(workspace)
    empty = langchef("approve", "rerank", "--by", "  ", "--workspace", workspace)
    assert empty.code == 2 and "approver is empty" in one_sentence(empty.stderr)
    write_design(workspace, **{"primary: pass_rate": "primary: bleu"})
    invalid = langchef("approve", "rerank", "--by", "ada", "--workspace", workspace)
    assert invalid.code == 2
    assert "experiments/rerank.yaml, field 'primary', line 9" in one_sentence(invalid.stderr)
    assert not (workspace / "approvals" / "rerank.json").exists()


def test_an_underpowered_design_can_be_approved_with_a_visible_warning(langchef, workspace):
    write_design(workspace, **{"assumed_discordant_rate: 0.2":
                               "assumed_discordant_rate: 0.2\ntarget_effect: 0.02"})
    write_goldens(workspace, 90)
    result = langchef("approve", "rerank", "--by", "ada", "--workspace", workspace)
    assert result.code == 0, result.stderr
    assert "WARNING underpowered" in result.stdout and "needs about" in result.stdout
    record = json.loads((workspace / "approvals" / "rerank.json").read_text(encoding="utf-8"))
    assert record["underpowered"]["shortfalls"][0]["field"] == "target_effect"
    assert record["underpowered"]["n_goldens"] == 90

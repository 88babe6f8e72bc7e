"""Tampering with approvals through the real console script: deletion and forgery."""

import json

import pytest

from .conftest import one_sentence, states, write_design


# Several console-script runs in a row (about 2 s each): slow.
@pytest.mark.slow
def test_deleting_or_forging_the_approval(langchef, workspace):
    write_design(workspace)
    write_design(workspace, name="other")
    for name in ("rerank", "other"):
        assert langchef("approve", name, "--by", "ada", "--workspace", workspace).code == 0
    (workspace / "approvals" / "rerank.json").unlink()
    forged_path = workspace / "approvals" / "other.json"
    forged = json.loads(forged_path.read_text(encoding="utf-8"))
    forged["design_sha256"] = "0" * 64
    forged_path.write_text(json.dumps(forged), encoding="utf-8")

    rows = states(langchef, workspace)
    assert rows["rerank"]["state"] == "draft"
    # The ledger holds no approval of that hash: the forged file is shown as invalid, and why.
    assert rows["other"]["state"] == "invalid"
    assert "not recorded in the ledger langchef.sqlite" in rows["other"]["sentence"]

    # A forged file that is not even a valid record is shown as invalid, and approve refuses
    # to overwrite it silently.
    forged_path.write_text('{"experiment": "other"}', encoding="utf-8")
    assert states(langchef, workspace)["other"]["state"] == "invalid"
    refused = langchef("approve", "other", "--by", "ada", "--workspace", workspace)
    assert refused.code == 2
    assert "approvals/other.json, column 'design_sha256'" in one_sentence(refused.stderr)

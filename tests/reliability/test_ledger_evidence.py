"""Issue 13, defects 3 and 6, and the ledger low items: approvals are evidence held by the
hash-chained ledger, so forged, edited or back-dated approval files and edited ledgers are
refused with a sentence naming the file and row; deleting the ledger loses no look."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from .conftest import one_sentence, recorded_workspace, rewrite_runs, write_jsonl

NAME = "short-prompt"


def states(langchef, root) -> dict:
    result = langchef("status", "--workspace", root, "--json")
    assert result.code == 0, result.stderr
    return {row["experiment"]: row for row in result.json["experiments"]}


def edit_approval(root, **changes):
    path = root / "approvals" / f"{NAME}.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record.update(changes)
    path.write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.parametrize("changes, words", [
    ({"approved_by": "Mallory"}, "approved by 'Rita Reviewer' at 2026-01-05T12:00:00Z; the file "
                                 "says 'Mallory'"),
    ({"approved_at": "2020-01-01T00:00:00Z"}, "the file says 'Rita Reviewer' at "
                                              "2020-01-01T00:00:00Z"),
])
def test_an_edited_or_back_dated_approval_file_is_refused(langchef, tmp_path, changes, words):
    root = tmp_path / "evals"
    recorded_workspace(root)
    edit_approval(root, **changes)
    row = states(langchef, root)[NAME]
    assert row["state"] == "invalid"
    assert row["sentence"].startswith(f"approvals/{NAME}.json: it differs from the ledger "
                                      "langchef.sqlite (approvals row 1:")
    assert words in row["sentence"]


@pytest.mark.slow  # one readout through Dagster
def test_a_hand_written_approval_of_a_never_approved_design_cannot_be_read_out(langchef,
                                                                              tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, approved=False)
    digest = langchef("design", "check", NAME, "--workspace", root, "--json").json["sha256"]
    (root / "approvals").mkdir()
    (root / "approvals" / f"{NAME}.json").write_text(json.dumps({
        "experiment": NAME, "design_sha256": digest, "approved_by": "Rita Reviewer",
        "approved_at": "2026-01-01T00:00:00Z", "tool_version": "0.1.0"}), encoding="utf-8")
    refused = langchef("readout", NAME, "--workspace", root)
    assert refused.code == 2
    sentence = one_sentence(refused.stderr)
    assert f"approvals/{NAME}.json: this approval of design {digest[:12]} is not recorded in " \
           "the ledger langchef.sqlite" in sentence
    assert f"approve the design again with `langchef approve {NAME} --by PERSON`" in sentence
    # Issue 15: the refusal is published as evidence (which check, why), never a verdict.
    refused = json.loads((root / "reports" / NAME / "v1" / "readout.json").read_text())
    assert refused["refused"]["check"] == "design" and "primary" not in refused


def tamper(root, *statements):
    connection = sqlite3.connect(root / "langchef.sqlite")
    try:
        for statement in statements:
            connection.execute(statement)
        connection.commit()
    finally:
        connection.close()


TRIGGER = ("CREATE TRIGGER approvals_refuse_{0} BEFORE {1} ON approvals "
           "BEGIN SELECT RAISE(ABORT, 'append-only'); END")


@pytest.mark.parametrize("statements, words", [
    (["DROP TRIGGER approvals_refuse_update",
      "UPDATE approvals SET approved_at = '2020-01-01T00:00:00Z'",
      TRIGGER.format("update", "UPDATE")], "approvals row 1 was changed after it was written"),
    (["DROP TRIGGER approvals_refuse_delete", "DELETE FROM approvals",
      TRIGGER.format("delete", "DELETE")], "approvals row 1 was removed"),
    (["INSERT INTO approvals (experiment, design_sha256, approved_by, approved_at, "
      "recorded_at, tool_version) VALUES ('x', '" + "0" * 64 + "', 'm', 'a', 'b', 'c')"],
     "approvals row 2 was added outside langchef"),
    (["DROP TRIGGER readouts_refuse_delete"], "lost its append-only trigger "
                                              "readouts_refuse_delete"),
])
def test_a_tampered_ledger_is_refused_naming_the_file_and_row(langchef, tmp_path, statements,
                                                             words):
    root = tmp_path / "evals"
    recorded_workspace(root)
    tamper(root, *statements)
    sentence = states(langchef, root)[NAME]["sentence"]
    assert sentence.startswith(f"{root / 'langchef.sqlite'}: the ledger was tampered with: ")
    assert words in sentence and "restore the ledger from a backup" in sentence
    approve = langchef("approve", NAME, "--by", "ada", "--workspace", root)
    assert approve.code == 2 and words in one_sentence(approve.stderr)


def test_a_damaged_ledger_is_one_sentence_naming_it(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root)
    (root / "langchef.sqlite").write_bytes(b"this is not a database" * 100)
    result = langchef("approve", NAME, "--by", "ada", "--workspace", root)
    assert result.code == 2
    sentence = one_sentence(result.stderr)
    assert sentence.startswith(f"langchef: error: {root / 'langchef.sqlite'}: the ledger cannot "
                               "be used (sqlite: file is not a database)")
    assert "restore it from a backup" in sentence


def test_a_ledger_that_cannot_be_created_is_one_sentence(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, approved=False)
    (root / "langchef.sqlite").mkdir()  # not writable as a file, whoever runs the test
    result = langchef("approve", NAME, "--by", "ada", "--workspace", root)
    assert result.code == 2
    assert "langchef.sqlite: the ledger cannot be used (sqlite: unable to open database file); " \
           "make the workspace folder and the ledger writable" in one_sentence(result.stderr)
    assert not (root / "approvals" / f"{NAME}.json").exists()  # no file without its row


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_workspace_is_one_sentence(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, approved=False)
    os.chmod(root, 0o555)
    try:
        result = langchef("approve", NAME, "--by", "ada", "--workspace", root)
    finally:
        os.chmod(root, 0o755)
    assert result.code == 2 and "writable" in one_sentence(result.stderr)


@pytest.mark.slow  # three readouts through Dagster
def test_deleting_the_ledger_does_not_reset_the_look_count(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, broke=12)
    assert langchef("readout", NAME, "--workspace", root).code == 0
    rewrite_runs(root, broke=6)
    assert langchef("readout", NAME, "--workspace", root).code == 0
    (root / "langchef.sqlite").unlink()
    # Without the ledger the approval is no longer evidence: a person approves again, and
    # only traffic after that approval can be read out.
    refused = langchef("readout", NAME, "--workspace", root)
    assert refused.code == 2 and "not recorded in the ledger" in refused.stderr
    assert langchef("approve", NAME, "--by", "Rita Reviewer", "--workspace", root).code == 0
    later = (datetime.now(timezone.utc) + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for arm, broke in (("current", 0), ("short", 3)):
        ids = [f"g{i:03d}" for i in range(40)]
        write_jsonl(root / "runs" / NAME / f"{arm}.jsonl", [
            {"example_id": i, "output": f"{arm} {i}", "created_at": later,
             "verdict": "fail" if int(i[1:]) < broke else "pass",
             "criterion": "Directness" if int(i[1:]) < broke else None,
             "judge": "upstream-judge@v3"} for i in ids])
    import time
    time.sleep(2.5)
    third = langchef("readout", NAME, "--workspace", root, "--json")
    assert third.code == 0, third.stderr
    # The refused attempt was published as v3, a refusal record that is not a look (issue 15).
    refusal = json.loads((root / "reports" / NAME / "v3" / "readout.json").read_text())
    assert "not recorded in the ledger" in refusal["refused"]["sentence"] and "looks" not in refusal
    readout = json.loads((root / "reports" / NAME / "v4" / "readout.json").read_text())
    assert readout["looks"]["look_number"] == 3
    assert any(w.get("code") == "repeated_look" for w in readout["warnings"])

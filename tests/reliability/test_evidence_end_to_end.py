"""Issue 30: evidence that holds end to end, through the real console script, on the SQLite
ledger and on PostgreSQL.

1. The gate checks a readout against the ledger's publication row (a consistently rewritten
   readout and manifest no longer pass; a missing manifest is a refusal), and away from the
   workspace against the operator's signature.
2. A sequential look is pinned to the goldens it read: a later look that dropped or re-dated
   goldens already read is refused naming one, and is no look.
3. A rolled-back (older copy) or foreign ledger is refused naming the newest manifest it
   fails to hold.
4. Concurrent approvals serialise: the approval file and its history equal the ledger's rows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipeline.conftest import demo_root  # noqa: F401 - the fixture
from tests.postgres import postgres_url  # noqa: F401 - the fixture

from .conftest import environment, one_sentence, recorded_workspace, rewrite_runs

NAME = "short-prompt"
KEY = "k" * 40
pytestmark = pytest.mark.slow  # readouts through Dagster


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, monkeypatch):
    """The ledger's database: the workspace's SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    return None


def version(root, number, experiment=NAME) -> Path:
    return root / "reports" / experiment / f"v{number}"


def rehash(folder: Path) -> None:
    """What a forger does next: the manifest's hash made to fit the edited readout."""
    import hashlib
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["readout.json"] = hashlib.sha256((folder / "readout.json").read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))


def forge_pass(root) -> None:
    """v1 (a regression) given the numbers of v2 (a pass), consistently: every label the gate
    re-derives agrees, and the manifest's hash fits."""
    passing = json.loads((version(root, 2) / "readout.json").read_text())
    assert passing["gate"]["passed"] is True
    (version(root, 1) / "readout.json").write_text(json.dumps({**passing, "version": 1}, indent=2))
    rehash(version(root, 1))


def two_readouts(langchef, root, env=None):
    recorded_workspace(root, broke=12)
    first = langchef("readout", NAME, "--workspace", root, env=env)
    assert first.code == 0, first.stderr
    assert json.loads((version(root, 1) / "readout.json").read_text())["gate"]["passed"] is False
    rewrite_runs(root, broke=0)
    second = langchef("readout", NAME, "--workspace", root, env=env)
    assert second.code == 0, second.stderr


def test_a_rewritten_readout_and_manifest_are_refused_by_the_ledger(langchef, tmp_path, backend):
    root = tmp_path / "evals"
    two_readouts(langchef, root)
    honest = langchef("gate", version(root, 1), "--json")
    assert honest.code == 1 and honest.json["verification"]["ledger"], honest.stderr
    stamp = json.loads((version(root, 2) / "manifest.json").read_text())
    assert {"ledger_head", "ledger_rows", "ledger_identity"} <= set(stamp)
    forge_pass(root)
    # Away from the workspace the same two files pass: the manifest alone proves nothing.
    carried = tmp_path / "carried" / "v1"
    shutil.copytree(version(root, 1), carried)
    loose = langchef("gate", carried)
    assert loose.code == 0 and "checked against its manifest only" in loose.stdout
    assert langchef("gate", carried, "--strict").code == 1
    for extra in ((), ("--workspace", root)):
        forged = langchef("gate", version(root, 1), *extra)
        assert forged.code == 2, forged.stdout
        assert "recorded another readout as short-prompt v1" in one_sentence(forged.stderr)
    (version(root, 1) / "manifest.json").unlink()
    missing = langchef("gate", version(root, 1))
    assert missing.code == 2 and "has no manifest.json beside it" in one_sentence(missing.stderr)
    # An older genuine version copied over the newer one does not pass as it either.
    shutil.rmtree(version(root, 1))
    shutil.copytree(version(root, 2), version(root, 1))
    moved = langchef("gate", version(root, 1))
    assert moved.code == 2 and "lies in short-prompt/v1" in one_sentence(moved.stderr)


def test_a_signed_readout_is_verified_away_from_its_workspace(langchef, tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    root = tmp_path / "evals"
    two_readouts(langchef, root, env={"LANGCHEF_SIGNING_KEY": KEY})
    artifact = tmp_path / "artifact"
    for number in (1, 2):
        shutil.copytree(version(root, number), artifact / f"v{number}")
    signed = langchef("gate", artifact / "v1", "--verify-key", "--json",
                      env={"LANGCHEF_SIGNING_KEY": KEY})
    assert signed.code == 1 and signed.json["verification"]["signature"], signed.stderr
    unkeyed = langchef("gate", artifact / "v1", "--verify-key")
    assert unkeyed.code == 2 and "LANGCHEF_SIGNING_KEY is not set" in unkeyed.stderr
    other = langchef("gate", artifact / "v1", "--verify-key", env={"LANGCHEF_SIGNING_KEY": "o" * 40})
    assert other.code == 2 and "was signed with another key" in one_sentence(other.stderr)
    passing = json.loads((artifact / "v2" / "readout.json").read_text())
    (artifact / "v1" / "readout.json").write_text(json.dumps({**passing, "version": 1}))
    rehash(artifact / "v1")
    forged = langchef("gate", artifact / "v1", "--verify-key", env={"LANGCHEF_SIGNING_KEY": KEY})
    assert forged.code == 2 and "changed after signing" in one_sentence(forged.stderr)
    assert langchef("gate", artifact / "v1").code == 0  # unsigned check: what the key adds


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_later_look_that_drops_goldens_already_read_is_refused(langchef, tmp_path, backend,
                                                                 demo_root):  # noqa: F811
    from langchef_core.demo.sequential import BASELINE, NAME as SEQUENTIAL, VARIANT
    root = tmp_path / "workspace"
    if backend is None:
        shutil.copytree(demo_root, root)
    else:  # approved into the PostgreSQL ledger
        from langchef_core.demo import build_demo_workspace
        build_demo_workspace(root)
    first = langchef("readout", SEQUENTIAL, "--workspace", root)
    assert first.code == 0, first.stderr  # the planted regression, stopped early
    looked = json.loads((version(root, 1, SEQUENTIAL) / "readout.json").read_text())
    n = looked["sequential"]["n"]
    runs = {arm: read_jsonl(root / "runs" / SEQUENTIAL / f"{arm}.jsonl") for arm in (BASELINE, VARIANT)}
    verdicts = {arm: {row["example_id"]: row["verdict"] for row in rows} for arm, rows in runs.items()}
    goldens_path = root / "goldens" / f"{looked['design']['suite']}.jsonl"
    goldens = read_jsonl(goldens_path)
    read = [golden["example_id"] for golden in goldens[:n]]
    broke = [e for e in read if verdicts[BASELINE][e] == "pass" and verdicts[VARIANT][e] == "fail"]
    assert broke
    # The forger's move: the goldens the variant broke re-dated to 2027, their rows dropped.
    for golden in goldens:
        if golden["example_id"] in broke:
            golden["created_at"] = "2027-01-01T00:00:00Z"
    write_jsonl(goldens_path, goldens)
    for arm, rows in runs.items():
        write_jsonl(root / "runs" / SEQUENTIAL / f"{arm}.jsonl",
                    [row for row in rows if row["example_id"] not in broke])
    second = langchef("readout", SEQUENTIAL, "--workspace", root)
    assert second.code == 2, second.stdout
    sentence = one_sentence(second.stderr)
    assert "look_extends_earlier_looks" in sentence and f"{broke[0]!r} was at position" in sentence
    refusal = json.loads((version(root, 2, SEQUENTIAL) / "readout.json").read_text())
    assert "looks" not in refusal  # refused: no look
    status = langchef("status", "--workspace", root, "--json")
    assert status.code == 0, status.stderr


def test_an_older_copy_or_another_workspaces_ledger_is_refused(langchef, tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    root, other = tmp_path / "evals", tmp_path / "other"
    recorded_workspace(root, broke=12)
    assert langchef("readout", NAME, "--workspace", root).code == 0
    backup = tmp_path / "backup.sqlite"
    shutil.copy(root / "langchef.sqlite", backup)
    rewrite_runs(root, broke=0)
    assert langchef("readout", NAME, "--workspace", root).code == 0
    shutil.copy(root / "langchef.sqlite", tmp_path / "newest.sqlite")
    shutil.copy(backup, root / "langchef.sqlite")
    rolled_back = langchef("readout", NAME, "--workspace", root)
    assert rolled_back.code == 2
    assert "this ledger is an older copy" in one_sentence(rolled_back.stderr)
    assert f"reports/{NAME}/v2/manifest.json" in rolled_back.stderr
    recorded_workspace(other, broke=3)
    assert langchef("readout", NAME, "--workspace", other).code == 0
    shutil.copy(other / "langchef.sqlite", root / "langchef.sqlite")
    foreign = langchef("readout", NAME, "--workspace", root)
    assert foreign.code == 2 and "is not the workspace's ledger" in one_sentence(foreign.stderr)
    shutil.copy(tmp_path / "newest.sqlite", root / "langchef.sqlite")
    assert langchef("status", "--workspace", root).code == 0
    # A lost ledger is started again (the documented way back): it succeeds the old one.
    (root / "langchef.sqlite").unlink()
    assert langchef("status", "--workspace", root).code == 0


def test_a_rolled_back_or_foreign_postgresql_ledger_is_refused(langchef, tmp_path, monkeypatch,
                                                                postgres_url):  # noqa: F811
    from tests.postgres import drop_schema, fresh_schema_url, server_url
    root = tmp_path / "evals"
    recorded_workspace(root, broke=12)
    assert langchef("readout", NAME, "--workspace", root).code == 0
    schema = postgres_url.rsplit("search_path%3D", 1)[1]
    base = server_url()
    dump = subprocess.run(["pg_dump", "--schema", schema, base], capture_output=True, text=True,
                          check=True).stdout
    rewrite_runs(root, broke=0)
    assert langchef("readout", NAME, "--workspace", root).code == 0
    restore = subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", base], input=(
        f"DROP SCHEMA {schema} CASCADE;\n" + dump), capture_output=True, text=True)
    assert restore.returncode == 0, restore.stderr
    rolled_back = langchef("readout", NAME, "--workspace", root)
    assert rolled_back.code == 2 and "this ledger is an older copy" in one_sentence(rolled_back.stderr)
    name, foreign_url = fresh_schema_url(base)
    try:
        other = tmp_path / "other"
        monkeypatch.setenv("LANGCHEF_DATABASE_URL", foreign_url)  # another team's database
        recorded_workspace(other, broke=3)
        assert langchef("readout", NAME, "--workspace", other,
                        env={"LANGCHEF_DATABASE_URL": foreign_url}).code == 0
        foreign = langchef("readout", NAME, "--workspace", root, env={"LANGCHEF_DATABASE_URL": foreign_url})
        assert foreign.code == 2 and "is not the workspace's ledger" in one_sentence(foreign.stderr)
    finally:
        drop_schema(base, name)


def test_concurrent_approvals_leave_the_file_equal_to_the_ledger(tmp_path, backend):
    from langchef_core.designs.approval import read_approval
    from langchef_core.designs.ledger import Ledger
    root = tmp_path / "evals"
    workspace = recorded_workspace(root, approved=False)
    go = tmp_path / "go"
    script = (f"import os, sys, time\nfrom pathlib import Path\n"
              f"while not Path({str(go)!r}).exists(): time.sleep(0.002)\n"
              "from langchef_pipeline.cli import main\n"
              f"sys.exit(main(['approve', {NAME!r}, '--by', sys.argv[1], '--workspace', {str(root)!r}]))\n")
    import langchef_pipeline.cli  # noqa: F401 - warm the import cache for the children
    processes = [subprocess.Popen([sys.executable, "-c", script, f"Approver {i}"],
                                  env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for i in range(4)]
    time.sleep(3)  # every interpreter waits at the starting line
    go.touch()
    outputs = [process.communicate(timeout=300) for process in processes]
    assert all(process.returncode == 0 for process in processes), outputs
    approved = [out for out, _ in outputs if " approved by " in out and "already" not in out]
    assert len(approved) == 1, outputs
    approval = read_approval(workspace, NAME)
    in_file = [record["approved_by"] for record in approval.history] + [approval.approved_by]
    with Ledger.for_workspace(workspace) as ledger:
        assert in_file == [entry.approved_by for entry in ledger.approvals(NAME)]

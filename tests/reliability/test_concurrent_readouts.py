"""Issue 16: many `langchef readout` processes at once, on the SQLite ledger and on the
PostgreSQL one. Several experiments and a duplicate of one are read out at the same moment
(each process waits for a start file, so they really overlap), then the duplicated
experiment's inputs change and it is read out twice at once again.

Expected, on both backends: each experiment's versions are 1..n with no gap and no number
taken twice, the ledger holds exactly one row per published version (none lost, none
doubled) and its hash chain verifies, the duplicates name the same version, and every
readout.json is byte-identical to the one a lone readout of the same inputs writes (in a
separate workspace, on the SQLite default), so neither the race nor the backend changes a byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langchef_core.designs.ledger import Ledger
from langchef_core.inputs.workspace import Workspace
from tests.cli.conftest import console_script
from tests.pipeline.factory import recorded_workspace
from tests.postgres import postgres_url  # noqa: F401 - the fixture

from .conftest import environment, rewrite_runs

EXPERIMENTS = ("alpha", "beta", "gamma")
# Each process waits for the start file, then runs the real console script.
WAIT_THEN_RUN = ("import os, sys, time\n"
                 "while not os.path.exists(sys.argv[1]):\n"
                 "    time.sleep(0.01)\n"
                 "os.execv(sys.argv[2], sys.argv[2:])\n")


def team_workspace(root: Path) -> Path:
    """Three approved experiments in one workspace (recorded judge: no endpoint needed)."""
    for name in EXPERIMENTS:
        recorded_workspace(root, name=name, broke=6 + EXPERIMENTS.index(name) * 3)
    return root


def readouts_at_once(root: Path, names: list[str], start: Path) -> list[dict]:
    script = str(console_script())
    processes = [subprocess.Popen(
        [sys.executable, "-c", WAIT_THEN_RUN, str(start), script, "readout", name,
         "--workspace", str(root), "--json"], env=environment(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for name in names]
    time.sleep(1.0)  # every interpreter at the starting line
    start.touch()
    outputs = [process.communicate(timeout=600) for process in processes]
    failed = [(name, err) for name, process, (_, err) in zip(names, processes, outputs)
              if process.returncode != 0]
    assert not failed, failed
    return [json.loads(out) for out, _ in outputs]


def one_at_a_time(root: Path, steps) -> dict[tuple[str, int], bytes]:
    """The reference: the same readouts taken one after another on the SQLite default."""
    env = {key: value for key, value in environment().items() if key != "LANGCHEF_DATABASE_URL"}
    written = {}
    for step in steps:
        if step == "change alpha":
            rewrite_runs(root, broke=2, name="alpha")
            continue
        done = subprocess.run([str(console_script()), "readout", step, "--workspace", str(root),
                               "--json"], env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        written[(step, result["version"])] = Path(result["readout"]).read_bytes()
    return written


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[tuple[str, int], bytes]:
    root = team_workspace(tmp_path_factory.mktemp("one-at-a-time"))
    return one_at_a_time(root, [*EXPERIMENTS, "change alpha", "alpha"])


def check_race(tmp_path: Path, reference: dict) -> dict:
    root = team_workspace(tmp_path / "team")
    started = time.perf_counter()
    first = readouts_at_once(root, [*EXPERIMENTS, "alpha"], tmp_path / "go1")
    rewrite_runs(root, broke=2, name="alpha")  # new inputs: alpha's next readout is v2
    second = readouts_at_once(root, ["alpha", "alpha", "beta"], tmp_path / "go2")
    seconds = time.perf_counter() - started

    by_name = {}
    for result in (*first, *second):
        by_name.setdefault(result["experiment"], []).append(result["version"])
    assert by_name == {"alpha": [1, 1, 2, 2], "beta": [1, 1], "gamma": [1]}
    with Ledger.for_workspace(Workspace.at(root)) as ledger:  # opening verifies the chain
        entries = ledger.readouts()
        looks = {(e.experiment, e.version): ledger.looks(e.design_sha256, e.inputs_sha256)
                 for e in entries}
    assert sorted((e.experiment, e.version) for e in entries) == \
        [("alpha", 1), ("alpha", 2), ("beta", 1), ("gamma", 1)]
    assert looks[("alpha", 2)].look_number == 2 and looks[("beta", 1)].look_number == 1
    reports = root / "reports"
    for name in EXPERIMENTS:
        on_disk = sorted(p.name for p in (reports / name).iterdir())
        # No staging folder left behind, no version skipped or taken twice.
        assert on_disk == (["latest", "v1", "v2"] if name == "alpha" else ["latest", "v1"])
    written = {key: (reports / key[0] / f"v{key[1]}" / "readout.json").read_bytes()
               for key in reference}
    assert written == reference  # byte for byte
    return {"processes": len(first) + len(second), "seconds": round(seconds, 1),
            "ledger rows": len(entries)}


@pytest.mark.slow  # seven readouts through Dagster, four at once (plus the reference's four)
def test_concurrent_readouts_on_the_sqlite_ledger(tmp_path, monkeypatch, reference):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    print("sqlite:", check_race(tmp_path, reference))
    assert (tmp_path / "team" / "langchef.sqlite").is_file()


@pytest.mark.slow  # seven readouts through Dagster, four at once
def test_concurrent_readouts_on_the_postgresql_ledger(tmp_path, postgres_url,  # noqa: F811
                                                     reference):
    print("postgresql:", check_race(tmp_path, reference))
    assert not (tmp_path / "team" / "langchef.sqlite").exists()

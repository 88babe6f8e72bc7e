"""Issue 13, defects 2, 5, 6 (look count), 8 and 10, and the staging low item: publishing is
one consistent step, and every run repairs what a crash left behind.

The crash tests run the real publishing code in a subprocess that ends itself with
os._exit() at a named step (LANGCHEF_FAULT_AT), then publish again and check that the
result is exactly what an uninterrupted run leaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langchef_core.designs.ledger import Ledger
from langchef_core.inputs.errors import InputError
from langchef_core.readout.publish import FAULT_STEPS, publish_readout, reconcile
from langchef_core.report import render_report
from tests.core.test_report_render import CREATED_AT, regression_readout

from .conftest import environment

PUBLISH = """\
import json, sys
from datetime import datetime, timezone
from pathlib import Path
from langchef_core.designs.ledger import Ledger
from langchef_core.readout.publish import publish_readout
from langchef_core.report import render_report, write_index
root, document = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
go = Path(sys.argv[3]) if len(sys.argv) > 3 else None
while go is not None and not go.exists():
    pass
moment = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
with Ledger(root / "langchef.sqlite") as ledger:
    published = publish_readout(root / "reports", document, created_at=moment,
                                render_html=render_report, ledger=ledger)
write_index(root / "reports", moment)
print(json.dumps(published.to_dict()))
"""


def document_file(tmp_path: Path, inputs: str = "12", name: str = "doc.json") -> Path:
    readout = regression_readout()
    readout["inputs"]["sha256"] = inputs * 32
    path = tmp_path / name
    path.write_text(json.dumps(readout), encoding="utf-8")
    return path


def publish_in_subprocess(root: Path, document: Path, fault: str | None = None):
    return subprocess.run(
        [sys.executable, "-c", PUBLISH, str(root), str(document)], cwd=root.parent,
        env=environment({"LANGCHEF_FAULT_AT": fault} if fault else None),
        capture_output=True, text=True, timeout=120)


def assert_healed(root: Path, versions=(1,), latest=1):
    folder = root / "reports" / "stale-index"
    on_disk = sorted(entry.name for entry in folder.iterdir())
    assert on_disk == sorted([*(f"v{v}" for v in versions), "latest"]), on_disk  # no leftovers
    assert os.readlink(folder / "latest") == f"v{latest}"
    with Ledger(root / "langchef.sqlite") as ledger:  # opening verifies the hash chain
        assert sorted(e.version for e in ledger.readouts(experiment="stale-index")) == list(versions)
    index = (root / "reports" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="stale-index/v{v}/index.html"' in index for v in versions)


@pytest.mark.slow  # two interpreters per step
@pytest.mark.parametrize("step", FAULT_STEPS)
def test_a_crash_at_any_publish_step_is_healed_by_the_next_run(tmp_path, step):
    root = tmp_path / "ws"
    root.mkdir()
    document = document_file(tmp_path)
    crashed = publish_in_subprocess(root, document, fault=step)
    assert crashed.returncode == 99, crashed.stderr  # it really died at that step
    healed = publish_in_subprocess(root, document)
    assert healed.returncode == 0, healed.stderr
    assert json.loads(healed.stdout)["version"] == 1
    assert_healed(root)


@pytest.mark.slow  # three interpreters
def test_latest_follows_the_current_inputs_back_to_an_earlier_version(tmp_path):
    # Defect 2 at the publishing level (the console-script run is in test_latest_gate.py).
    root = tmp_path / "ws"
    root.mkdir()
    first, second = document_file(tmp_path, "12", "a.json"), document_file(tmp_path, "34", "b.json")
    for document, expected in ((first, 1), (second, 2), (first, 1)):
        result = publish_in_subprocess(root, document)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["version"] == expected
        assert os.readlink(root / "reports" / "stale-index" / "latest") == f"v{expected}"
    assert_healed(root, versions=(1, 2), latest=1)


def test_a_latest_that_is_a_real_folder_is_refused_before_anything_is_published(tmp_path):
    root = tmp_path / "ws"
    (root / "reports" / "stale-index" / "latest").mkdir(parents=True)
    with Ledger(root / "langchef.sqlite") as ledger:
        with pytest.raises(InputError, match="latest: is a real folder or file, not the link"):
            publish_readout(root / "reports", regression_readout(), created_at=CREATED_AT,
                            render_html=render_report, ledger=ledger)
        assert ledger.readouts() == []
    assert sorted(p.name for p in (root / "reports" / "stale-index").iterdir()) == ["latest"]


def test_a_linked_experiment_folder_is_refused_and_nothing_is_written_outside(tmp_path):
    # Defect 8.
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "ws" / "reports").mkdir(parents=True)
    (tmp_path / "ws" / "reports" / "stale-index").symlink_to(outside, target_is_directory=True)
    with Ledger(tmp_path / "ws" / "langchef.sqlite") as ledger:
        with pytest.raises(InputError, match="is a link or a file, not the folder"):
            publish_readout(tmp_path / "ws" / "reports", regression_readout(),
                            created_at=CREATED_AT, render_html=render_report, ledger=ledger)
    assert list(outside.iterdir()) == []


@pytest.mark.slow  # fifteen interpreters
def test_concurrent_identical_readouts_publish_once(tmp_path):
    # Defect 10: five trials of three processes released at the same moment.
    document = document_file(tmp_path)
    for trial in range(5):
        root = tmp_path / f"ws{trial}"
        root.mkdir()
        go = tmp_path / f"go{trial}"
        processes = [subprocess.Popen([sys.executable, "-c", PUBLISH, str(root), str(document),
                                       str(go)], env=environment(), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for _ in range(3)]
        time.sleep(1.5)  # let every interpreter reach the starting line
        go.touch()
        outputs = [process.communicate(timeout=120) for process in processes]
        assert all(process.returncode == 0 for process in processes), outputs
        assert sorted(json.loads(out)["new"] for out, _ in outputs) == [False, False, True]
        assert_healed(root)


def test_deleting_the_ledger_does_not_reset_the_look_count(tmp_path):
    # Defect 6 at the ledger level (the console-script run is in test_ledger_evidence.py).
    root = tmp_path / "ws"
    for inputs in ("12", "34"):
        readout = regression_readout()
        readout["inputs"]["sha256"] = inputs * 32
        with Ledger(root / "langchef.sqlite") as ledger:
            publish_readout(root / "reports", readout, created_at=CREATED_AT,
                            render_html=render_report, ledger=ledger)
    design = regression_readout()["design"]["sha256"]
    (root / "langchef.sqlite").unlink()
    with Ledger(root / "langchef.sqlite") as ledger:
        assert ledger.looks(design, "56" * 32).look_number == 1  # what the defect did
        assert reconcile(ledger, root / "reports", "stale-index") == [1, 2]
        assert ledger.looks(design, "56" * 32).look_number == 3
        assert ledger.looks(design, "12" * 32).look_number == 1
        assert reconcile(ledger, root / "reports", "stale-index") == []  # once only


def test_a_damaged_old_version_is_marked_and_never_blocks_a_new_readout(tmp_path):
    # Low item: one truncated old readout.json.
    root = tmp_path / "ws"
    root.mkdir()
    assert publish_in_subprocess(root, document_file(tmp_path, "12", "a.json")).returncode == 0
    damaged = root / "reports" / "stale-index" / "v1" / "readout.json"
    damaged.write_bytes(damaged.read_bytes()[:100])
    result = publish_in_subprocess(root, document_file(tmp_path, "34", "b.json"))
    assert result.returncode == 0, result.stderr
    index = (root / "reports" / "index.html").read_text(encoding="utf-8")
    assert "DAMAGED" in index and "v1/readout.json: not valid JSON" in index
    assert 'href="stale-index/v2/index.html"' in index

"""Where step values live (langchef_pipeline/storage.py): files in a persistent instance's
storage, read back by a later run; nothing on disk for an ephemeral one (issue 19)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd

from langchef_pipeline import storage
from langchef_pipeline.storage import StepValueStorage


@dg.asset
def table() -> pd.DataFrame:
    return pd.DataFrame({"example_id": ["g1", "g2"], "retrieved": [["d1"], ["d2", "d3"]]})


@dg.asset
def width(table: pd.DataFrame) -> int:
    return int(table["retrieved"].map(len).sum())


def _files(folder) -> list[str]:
    root = Path(folder)
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def test_an_ephemeral_instance_passes_values_in_memory_and_writes_nothing():
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([table, width], instance=instance,
                                resources={"io_manager": StepValueStorage()})
        assert result.success and result.output_for_node("width") == 3
        stored = instance.storage_directory()
        assert not any(name.startswith(("table", "width")) for name in _files(stored))


def test_a_persistent_instance_writes_each_value_and_a_later_run_reads_it_from_disk(tmp_path):
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        first = dg.materialize([table, width], instance=instance,
                               resources={"io_manager": StepValueStorage()})
        assert first.success
        stored = _files(instance.storage_directory())
        assert "table" in stored and "width" in stored
        storage._MEMORY.clear()  # as in another process: only the file is left
        again = dg.materialize([table, width], selection=[width], instance=instance,
                               resources={"io_manager": StepValueStorage()})
        assert again.success and again.output_for_node("width") == 3

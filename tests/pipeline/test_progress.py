"""Every asset records rows and seconds; `langchef readout` announces slow steps on stderr."""

import io

import dagster as dg
import pandas as pd

from langchef_core.inputs.loading import TableLoad
from langchef_pipeline import progress
from langchef_pipeline.definitions import ASSETS


def test_a_measured_step_records_rows_seconds_and_rate(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(progress, "SLOW", 0.0)
    progress.report_to(stream)
    try:
        def goldens(table: TableLoad) -> dg.MaterializeResult:
            return dg.MaterializeResult(value=table, metadata={"file": "goldens/qa.jsonl"})

        load = TableLoad(label="goldens/qa.jsonl", path=None, frame=pd.DataFrame({"a": range(7)}))
        result = progress.measured(goldens)(load)
    finally:
        progress.report_to(None)
    assert result.value is load
    assert result.metadata["file"] == "goldens/qa.jsonl"
    assert result.metadata["rows"] == 7
    assert {"seconds", "rows/second"} <= set(result.metadata)
    assert "langchef: goldens done in" in stream.getvalue() and "7 rows" in stream.getvalue()


def test_every_asset_is_measured():
    # The sharded judging graph reports per shard (judging.py); every other asset is one op.
    graphs = [asset.key.to_user_string() for asset in ASSETS if isinstance(asset.node_def, dg.GraphDefinition)]
    assert graphs == ["judge_verdicts"]
    for asset in ASSETS:
        if isinstance(asset.node_def, dg.GraphDefinition):
            continue
        compute = asset.op.compute_fn.decorated_fn
        assert getattr(compute, "__wrapped__", None) is not None, asset.key

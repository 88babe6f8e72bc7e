"""An arm given as independently trained seeds is compared with seed variance counted."""

import pytest

from langchef_pipeline.materialize import failure_reasons, materialize_experiment

from .factory import seeded_workspace

pytestmark = pytest.mark.slow


def test_seeded_variant_reads_out_with_seed_spread_and_a_seed_aware_interval(tmp_path):
    workspace = seeded_workspace(tmp_path)
    result = materialize_experiment(workspace, "short-prompt")
    assert result.success, failure_reasons(result)
    readout = result.output_for_node("readout")
    seeds = readout["seeds"]
    assert len(seeds["variant"]["per_seed"]) == 3 and seeds["variant"]["sd"] > 0
    assert seeds["refused"] is False and seeds["comparison"]["variant_seeds"] == 3
    assert readout["primary"]["difference"] == pytest.approx(seeds["comparison"]["difference"])
    assert readout["primary"]["verdict"] == "regression"
    assert "seed" in readout["primary"]["p_value_method"]
    assert (workspace.reports / "short-prompt" / "v1" / "index.html").exists()


def test_one_checkpoint_rerun_as_seeds_is_refused(tmp_path):
    workspace = seeded_workspace(tmp_path, identical=True)
    result = materialize_experiment(workspace, "short-prompt")
    reasons = failure_reasons(result)
    assert not result.success and reasons[0].startswith("paired_comparison:"), reasons
    assert "seed1" in reasons[0]
    assert not list(workspace.reports.rglob("readout.json"))


def test_a_seed_missing_goldens_is_an_interim_look(tmp_path):
    workspace = seeded_workspace(tmp_path)
    run = workspace.run_path("short-prompt", "short@seed2")
    run.write_text("\n".join(run.read_text().splitlines()[:-5]) + "\n")
    reasons = failure_reasons(materialize_experiment(workspace, "short-prompt"))
    assert reasons[0].startswith("runs_are_complete:") and "short@seed2" in reasons[0], reasons

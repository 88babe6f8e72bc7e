"""The Dagster metadata of a comparison reads as text a reviewer can act on, including for a
suite too small for the exact test ever to decide (an infinite detection limit)."""

import numpy as np

import langchef_core as lc
from langchef_pipeline.metadata import verdict_line


def test_the_verdict_line_states_the_limit_or_that_there_is_none():
    quiet = lc.compare_binary(np.ones(90, dtype=bool), np.ones(90, dtype=bool))
    assert "smallest detectable effect 8.6%" in verdict_line(quiet, metric="pass_rate")
    tiny = lc.compare_binary(np.ones(5, dtype=bool), np.zeros(5, dtype=bool))
    line = verdict_line(tiny, metric="pass_rate")
    assert "no effect detectable (too few goldens for the test ever to decide)" in line
    assert "inf" not in line

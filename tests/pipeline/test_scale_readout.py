"""A 10^5-golden readout through the real console script, checked against numbers computed
independently from the generated arrays (benchmarks/scale_workspace.py): counts, rates,
per-criterion flips, per-arm p95 latency, and mean recall / reciprocal rank / nDCG at 10.

This checks the numbers at scale, not the time: speed is measured by benchmarks/bench_readout.py.
"""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import bench_readout  # noqa: E402
import scale_workspace  # noqa: E402

N = int(__import__("os").environ.get("LANGCHEF_SCALE_GOLDENS", 100_000))


@pytest.mark.slow
def test_a_hundred_thousand_goldens_read_out_to_the_independent_numbers(tmp_path):
    langchef = str(Path(sys.executable).with_name("langchef"))
    data = scale_workspace.write_workspace(tmp_path, N, langchef=langchef)
    for experiment in (scale_workspace.JUDGED, scale_workspace.RETRIEVAL):
        completed = subprocess.run([langchef, "readout", experiment, "--workspace", str(tmp_path)],
                                   capture_output=True, text=True, timeout=1200)
        assert completed.returncode in (0, 1), completed.stderr
    bench_readout.check(bench_readout.latest_readout(tmp_path, scale_workspace.JUDGED),
                        scale_workspace.expected_numbers(data))
    bench_readout.check_retrieval(bench_readout.latest_readout(tmp_path, scale_workspace.RETRIEVAL),
                                  scale_workspace.expected_retrieval(data))

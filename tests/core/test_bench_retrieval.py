"""benchmarks/bench_retrieval.py keeps working (issue 31): a tiny run, not timed.

The figures are the benchmark's to print; here only that langchef (from parquet and from JSON
lines) and pytrec_eval each run in a process of their own to the same means, and that the
report gives each tool's CPU time and the ratio langchef's CPU time allows on this machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_retrieval.py"


def test_each_tool_reaches_the_same_means_and_langchef_s_cpu_bound_is_reported(tmp_path):
    pytest.importorskip("pytrec_eval")  # the bench extra: make test installs it
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--queries", "300", "--docs", "20", "--corpus", "2000",
         "--libraries", "langchef-parquet,langchef-jsonl,pytrec_eval", "--json", str(out)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["library"]: r for r in json.loads(out.read_text())["results"]}
    assert set(results) == {"langchef-parquet", "langchef-jsonl", "pytrec_eval"}
    means = results["pytrec_eval"]["means"]
    assert 0 < means["recall"] < 1 and 0 < means["mrr"] < 1 and 0 < means["ndcg"] < 1
    for result in results.values():
        assert result["means"] == pytest.approx(means, abs=1e-12)
        assert 0 <= result["import_s"] < result["total_s"] and result["cpu_s"] > 0
    cores = len(os.sched_getaffinity(0))
    for name in ("langchef-parquet", "langchef-jsonl"):
        bound = results["pytrec_eval"]["total_s"] * cores / results[name]["cpu_s"]
        assert (f"{name}: " in done.stdout and
                f"CPU s on this machine's {cores} cores allow at most {bound:.1f}× the faster peer"
                in done.stdout)
